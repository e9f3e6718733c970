// The statistic families beyond the per-site and windowed ones: variant pairs (ld, prune),
// sample-by-sample matrices (grm, king, distance, pca) and the haplotype family (haplotypes,
// ehh, ihs, nsl, xpehh, xpnsl), as factories over a Query like make_diversity; they run through
// the library's Runner (compute() in module.cpp). The objects whose result has more than finish()'s
// table (PCA's eigenvalues and loadings, a selection scan's windows) keep those methods here.

#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "vczstats/bins.hpp"
#include "vczstats/compute.hpp"
#include "vczstats/error.hpp"
#include "vczstats/haplotypes.hpp"
#include "vczstats/ld.hpp"
#include "vczstats/matrix.hpp"
#include "vczstats/variants.hpp"

namespace vczstats::python {
namespace {

PairMeasure pair_measure(const std::string& measure) {
  if (measure == "r2") return PairMeasure::GenotypeR2;
  if (measure == "dprime") return PairMeasure::GenotypeEm;
  if (measure == "hap") return PairMeasure::Haplotype;
  throw UsageError("measure must be 'r2', 'dprime' or 'hap', not '" + measure + "'");
}

DistanceMetric distance_metric(const std::string& metric) {
  if (metric == "allele-ct") return DistanceMetric::AlleleCount;
  if (metric == "ibs") return DistanceMetric::Ibs;
  if (metric == "1-ibs") return DistanceMetric::OneMinusIbs;
  throw UsageError("metric must be 'allele-ct', 'ibs' or '1-ibs', not '" + metric + "'");
}

PcaMethod pca_method(const std::string& method) {
  if (method == "auto") return PcaMethod::Auto;
  if (method == "exact") return PcaMethod::Exact;
  if (method == "approx") return PcaMethod::Approx;
  throw UsageError("method must be 'auto', 'exact' or 'approx', not '" + method + "'");
}

SelectionScan selection_scan(const std::string& scan) {
  if (scan == "ihs") return SelectionScan::Ihs;
  if (scan == "nsl") return SelectionScan::Nsl;
  if (scan == "xpehh") return SelectionScan::Xpehh;
  if (scan == "xpnsl") return SelectionScan::Xpnsl;
  throw UsageError("unknown selection scan '" + scan + "'");
}

MatrixOptions matrix_options(double maf) {
  if (!(maf >= 0 && maf <= 0.5)) throw UsageError("maf must be between 0 and 0.5");
  MatrixOptions m;
  m.maf = maf;
  return m;
}

void bind_ld(py::module_& m, const py::keep_alive<0, 1>& keep) {
  m.def(
      "make_ld",
      [](const Query& q, const std::string& measure, std::int64_t window_variants,
         std::int64_t window_bp, double min_r2, const std::vector<std::string>& focal) {
        LdOptions o;
        o.measure = pair_measure(measure);
        o.window_variants = window_variants;
        o.window_bp = window_bp;
        o.min_r2 = min_r2;
        o.focal = focal;
        return make_ld(q, o);
      },
      py::arg("query"), py::arg("measure") = "r2", py::arg("window_variants") = 10,
      py::arg("window_bp") = 1000000, py::arg("min_r2") = 0.2,
      py::arg("focal") = std::vector<std::string>{}, keep);
  m.def(
      "make_ld_decay",
      [](const Query& q, const std::string& measure, const std::vector<std::int64_t>& edges,
         std::int64_t window_variants, std::int64_t window_size, bool per_population) {
        // The CLI's -P with count filters runs one query per population, since they count each
        // population's own samples; one query here would count them over all of them.
        if (per_population && (q.filters.counts() || q.expression_reads_counts()))
          throw UsageError(
              "ld_decay: sample_sets with count filters (maf, mac, geno, hwe, or an expression "
              "of the counts) would count them over every population's samples together; run "
              "ld_decay once per population (samples=...) to filter each by its own counts, as "
              "the CLI's ld --decay -P does");
        LdDecayOptions o;
        o.measure = pair_measure(measure);
        o.edges = edges;
        if (window_variants > 0) o.window_variants = window_variants;
        o.window_size = window_size;
        o.per_population = per_population;
        return make_ld_decay(q, o);
      },
      py::arg("query"), py::arg("measure"), py::arg("edges"), py::arg("window_variants"),
      py::arg("window_size"), py::arg("per_population") = false, keep);
  m.def(
      "make_ld_scores",
      [](const Query& q, const std::string& measure, std::int64_t window_variants,
         std::int64_t window_bp, double window_cm, const std::string& map) {
        LdScoreOptions o;
        o.measure = pair_measure(measure);
        o.window_variants = window_variants;
        o.window_bp = window_bp;
        o.window_cm = window_cm;
        o.map = map;
        return make_ld_scores(q, o);
      },
      py::arg("query"), py::arg("measure"), py::arg("window_variants"), py::arg("window_bp"),
      py::arg("window_cm"), py::arg("map"), keep);
  m.def("parse_bin_edges", &parse_bin_edges, py::arg("text"), py::arg("option"),
        "Bin edges in bp from 'E0,E1,...' or 'START:STOP:STEP' (kb/Mb suffixes), as the CLI.");
  m.def("check_bin_edges", &check_bin_edges, py::arg("edges"), py::arg("option"),
        "Raise ValueError unless the edges are two or more increasing integers from 0 on.");
  m.def(
      "make_ld_stats",
      [](const Query& q, const std::vector<std::int64_t>& edges, const std::vector<double>& r_edges,
         const std::string& map, bool genotypes) {
        LdStatsOptions o;
        o.edges = edges;
        o.r_edges = r_edges;
        o.map = map;
        o.genotypes = genotypes;
        return make_ld_stats(q, o);
      },
      py::arg("query"), py::arg("edges"), py::arg("r_edges") = std::vector<double>{},
      py::arg("map") = std::string(), py::arg("genotypes") = false, keep);
  m.def(
      "make_prune",
      [](const Query& q, std::int64_t window, bool window_kb, std::int64_t step, double r2) {
        PruneOptions o;
        o.window = window;
        o.window_kb = window_kb;
        o.step = step;
        o.r2 = r2;
        return make_prune(q, o);
      },
      py::arg("query"), py::arg("window") = 50, py::arg("window_kb") = false, py::arg("step") = 5,
      py::arg("r2") = 0.5, keep);
  m.def(
      "variant_ids",
      [](const vcz::VczStore& store, const std::vector<std::int64_t>& indices) {
        // IDs of variants by global index (CHROM:POS:REF:ALT where the store has none, as the
        // CLI writes them), read a block of the store at a time.
        std::vector<std::string> out(indices.size());
        {
          py::gil_scoped_release release;
          const vcz::VariantReader reader(store, false, true, /*key_missing_ids=*/true);
          constexpr std::int64_t kBlock = 1 << 14;
          std::int64_t block = -1;
          std::vector<std::string> ids;
          for (std::size_t i = 0; i < indices.size(); ++i) {
            const std::int64_t v = indices[i];
            if (v < 0 || v >= store.num_variants())
              throw UsageError("variant index " + std::to_string(v) + " out of range");
            if (v / kBlock != block) {
              block = v / kBlock;
              ids =
                  reader.read(block * kBlock, std::min(store.num_variants(), (block + 1) * kBlock))
                      .id;
            }
            out[i] = ids.empty() ? "." : ids[static_cast<std::size_t>(v - block * kBlock)];
          }
        }
        return out;
      },
      py::arg("store"), py::arg("indices"), "variant_id of variants by global index.");
}

void bind_matrices(py::module_& m, const py::keep_alive<0, 1>& keep) {
  py::class_<MatrixStatistic, Statistic>(m, "MatrixStatistic");
  py::class_<KingStatistic, MatrixStatistic>(m, "KingStatistic");
  py::class_<PcaStatistic, Statistic>(m, "PcaStatistic")
      .def("eigenvalues", &PcaStatistic::eigenvalues)
      .def("loadings_table",
           [](const PcaStatistic& s) { return table_to_python(s.loadings_table()); })
      .def("method", [](const PcaStatistic& s) {
        return s.method() == PcaMethod::Approx ? "approx" : "exact";
      });
  m.def(
      "extract_variants",
      [](Query& q, const std::string& path) {
        py::gil_scoped_release release;
        extract_variants(q, path);
      },
      py::arg("query"), py::arg("path"),
      "Keep the query's variants whose ID is listed in the file (plink --extract), after its "
      "count filters (applied by the run's counting pass when they are pending), as the CLI.");
  m.def(
      "make_grm",
      [](const Query& q, double maf, bool cov) {
        GrmOptions o;
        o.matrix = matrix_options(maf);
        o.cov = cov;
        return make_grm(q, o);
      },
      py::arg("query"), py::arg("maf") = 0.0, py::arg("cov") = false, keep);
  m.def(
      "make_king", [](const Query& q, double maf) { return make_king(q, matrix_options(maf)); },
      py::arg("query"), py::arg("maf") = 0.0, keep);
  m.def(
      "make_king_table",
      [](const Query& q, double maf, double min_kinship) {
        KingTableOptions o;
        o.matrix = matrix_options(maf);
        o.min_kinship = min_kinship;
        return make_king_table(q, o);
      },
      py::arg("query"), py::arg("maf") = 0.0,
      py::arg("min_kinship") = -std::numeric_limits<double>::infinity(), keep);
  m.def(
      "make_distance",
      [](const Query& q, double maf, const std::string& metric, bool flat_missing) {
        DistanceOptions o;
        o.matrix = matrix_options(maf);
        o.metric = distance_metric(metric);
        o.flat_missing = flat_missing;
        return make_distance(q, o);
      },
      py::arg("query"), py::arg("maf") = 0.0, py::arg("metric") = "allele-ct",
      py::arg("flat_missing") = false, keep);
  m.def(
      "make_pca",
      [](const Query& q, double maf, int components, const std::string& method, bool loadings,
         std::uint64_t seed) {
        PcaOptions o;
        o.maf = matrix_options(maf).maf;
        if (components < 1) throw UsageError("components must be at least 1");
        o.components = components;
        o.method = pca_method(method);
        o.loadings = loadings;
        o.seed = seed;
        return make_pca(q, o);
      },
      py::arg("query"), py::arg("maf") = 0.0, py::arg("components") = 10,
      py::arg("method") = "auto", py::arg("loadings") = false, py::arg("seed") = 1, keep);
}

void bind_haplotypes(py::module_& m, const py::keep_alive<0, 1>& keep) {
  py::class_<SelectionStatistic, Statistic>(m, "SelectionStatistic")
      .def("windows", [](const SelectionStatistic& s) { return table_to_python(s.windows()); });
  m.def("make_haplotype_windows", &make_haplotype_windows, py::arg("query"), keep);
  m.def(
      "make_ehh",
      [](const Query& q, const std::vector<std::pair<std::string, std::int64_t>>& focal,
         std::int64_t window, double maf, const std::string& map) {
        EhhOptions o;
        o.focal = focal;
        o.window = window;
        o.maf = maf;
        o.map = map;
        return make_ehh(q, o);
      },
      py::arg("query"), py::arg("focal"), py::arg("window") = 100000, py::arg("maf") = 0.05,
      py::arg("map") = "", keep);
  m.def(
      "make_selection_scan",
      [](const Query& q, const std::string& scan, const py::dict& options) {
        // Only the options the Python layer passes; the rest keep the library's defaults.
        SelectionOptions o;
        for (const auto& [key, value] : options) {
          const auto k = key.cast<std::string>();
          if (k == "maf")
            o.maf = value.cast<double>();
          else if (k == "cutoff")
            o.cutoff = value.cast<double>();
          else if (k == "gap_scale")
            o.gap_scale = value.cast<double>();
          else if (k == "max_gap")
            o.max_gap = value.cast<double>();
          else if (k == "max_extend")
            o.max_extend = value.cast<double>();
          else if (k == "max_extend_nsl")
            o.max_extend_nsl = value.cast<std::int64_t>();
          else if (k == "trunc_ok")
            o.trunc_ok = value.cast<bool>();
          else if (k == "map")
            o.map = value.cast<std::string>();
          else if (k == "bins")
            o.bins = value.cast<int>();
          else if (k == "min_bin_sites")
            o.min_bin_sites = value.cast<std::int64_t>();
          else if (k == "crit")
            o.crit = value.cast<double>();
          else if (k == "pairs")
            o.pairs = value.cast<std::string>();
          else
            throw UsageError("selection scan: unknown option '" + k + "'");
        }
        return make_selection_scan(q, selection_scan(scan), o);
      },
      py::arg("query"), py::arg("scan"), py::arg("options") = py::dict(), keep);
}

}  // namespace

void bind_families(py::module_& m) {
  const auto keep = py::keep_alive<0, 1>();
  bind_ld(m, keep);
  bind_matrices(m, keep);
  bind_haplotypes(m, keep);
}

}  // namespace vczstats::python
