// The sample-by-sample matrices: grm (plink2 --make-rel), king (plink2 --make-king and
// --make-king-table), distance (plink 1.9 --distance) and pca (plink2 --pca). The statistics are
// library objects (vczstats/matrix.hpp); this file parses options and writes their results in
// plink's layouts: a matrix file (text or binary, triangle or square) with an id file beside it.
// A matrix too large for --memory is computed in stripes of rows, one pass each.

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "processes.hpp"
#include "statistic_run.hpp"
#include "vczstats/error.hpp"
#include "vczstats/matrix.hpp"
#include "vczstats/runner.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::cli {
namespace {

struct MatrixCliOptions {
  CommonOptions common;
  double maf = 0;
  std::string extract;
  std::string shape;  ///< "" = plink's default: triangle as text, square in binary
  bool bin = false, bin4 = false;
  double memory_mb = 16384;
  std::int64_t rows_per_pass = 0;
};

void add_matrix_options(CLI::App& cmd, MatrixCliOptions& o, bool matrix_output = true) {
  add_common_options(cmd, o.common, FilterSet::NoMaf);
  cmd.add_option("--maf", o.maf,
                 "Keep variants whose minor allele frequency (REF against the other alleles, "
                 "over the selected samples' genotypes) is at least this (plink --maf)")
      ->check(CLI::Range(0.0, 0.5))
      ->group("Selection");
  cmd.add_option("--extract", o.extract,
                 "Keep variants whose ID is listed in this file, one per line (plink --extract; "
                 "e.g. the prune.in list of `vczstats prune`)")
      ->group("Selection");
  if (!matrix_output) return;
  cmd.add_option("--shape", o.shape,
                 "triangle (lower triangle), square, or square0 (zeros above the diagonal); "
                 "default as plink: triangle for text, square with --bin/--bin4")
      ->check(CLI::IsMember({"triangle", "square", "square0"}))
      ->group("Output");
  cmd.add_flag("--bin", o.bin, "Binary output: little-endian float64, row by row (plink 'bin')")
      ->group("Output");
  cmd.add_flag("--bin4", o.bin4, "Binary output: float32 (plink 'bin4')")->group("Output");
  cmd.add_option("--memory", o.memory_mb,
                 "MiB the matrix sums may take (host, and device with --device gpu); a larger "
                 "matrix is computed in stripes of rows, one pass over the store each "
                 "(triangle and square0 shapes)")
      ->capture_default_str()
      ->group("Execution");
  cmd.add_option("--rows-per-pass", o.rows_per_pass,
                 "Compute at most this many matrix rows per pass (0: as --memory allows); "
                 "the output does not depend on it (CPU)")
      ->group("Execution");
}

Query matrix_query(const MatrixCliOptions& o) {
  Query q = build_query(query_options(o.common), o.common);
  // After the count filters: the run's counting pass applies the list when they are pending.
  if (!o.extract.empty()) extract_variants(q, o.extract);
  return q;
}

/// How a matrix is laid out in the output file.
struct Layout {
  enum Shape { Triangle, Square, Square0 } shape = Triangle;
  bool diagonal = true;  ///< whether the triangle includes the diagonal
  double diagonal_value = 0;
  bool binary = false, single = false;
};

Layout layout_of(const MatrixCliOptions& o, bool triangle_diagonal) {
  Layout l;
  l.binary = o.bin || o.bin4;
  const std::string shape = o.shape.empty() ? (l.binary ? "square" : "triangle") : o.shape;
  l.shape = shape == "square"    ? Layout::Square
            : shape == "square0" ? Layout::Square0
                                 : Layout::Triangle;
  l.diagonal = triangle_diagonal;
  l.single = o.bin4;
  if (o.bin && o.bin4) throw UsageError("--bin and --bin4 exclude each other");
  if (l.binary && o.common.format == "json") throw UsageError("--bin writes binary, not json");
  return l;
}

/// Writes matrix rows as they come, stripe by stripe.
class MatrixWriter {
 public:
  MatrixWriter(const CommonOptions& o, Layout layout, std::int64_t samples)
      : out_(o.output), layout_(layout), n_(samples), json_(o.format == "json") {
    if (json_) buffer_ = "{\"rows\": [";
  }

  void rows(const SampleMatrix& m) {
    if (layout_.binary && !layout_.single && layout_.shape != Layout::Square0) {
      direct_rows(m);
      return;
    }
    // Rows are formatted in blocks, each row into its own string on the shared pool, then
    // appended in order (a 10^4-sample matrix is 10^8 numbers).
    constexpr std::int64_t kBlock = 256;
    std::vector<std::string> text(static_cast<std::size_t>(kBlock));
    for (std::int64_t b0 = m.row_begin; b0 < m.row_end; b0 += kBlock) {
      const std::int64_t b1 = std::min(m.row_end, b0 + kBlock);
      ThreadPool::shared().parallel_for(b1 - b0, [&](std::int64_t k) {
        std::string& t = text[static_cast<std::size_t>(k)];
        t.clear();
        format_row(m, b0 + k, t);
      });
      for (std::int64_t k = 0; k < b1 - b0; ++k) {
        const std::int64_t i = b0 + k;
        if (row_end(i) == 0) continue;  // plink leaves out the empty first row
        if (json_) buffer_ += rows_ ? ",\n[" : "\n[";
        buffer_ += text[static_cast<std::size_t>(k)];
        if (json_) buffer_ += "]";
        ++rows_;
        if (buffer_.size() > (16u << 20)) flush();
      }
    }
  }

  void finish(const std::vector<std::string>& samples) {
    if (json_) {
      buffer_ += "\n], \"samples\": [";
      for (std::size_t i = 0; i < samples.size(); ++i)
        buffer_ += (i ? ", " : "") + nlohmann::json(samples[i]).dump();
      buffer_ += "]}\n";
    }
    flush();
    out_.commit();
  }

 private:
  /// Binary doubles straight from the matrix (a 10^4-sample square is 800 MB: no copy).
  void direct_rows(const SampleMatrix& m) {
    flush();
    const std::int64_t cols = m.cols();
    const double* base = m.values.data();
    auto put = [&](const double* p, std::int64_t count) {
      const auto n = static_cast<std::size_t>(count);
      if (n && std::fwrite(p, sizeof(double), n, out_.file()) != n)
        throw IoError("write failed: " + std::string(std::strerror(errno)));
    };
    if (layout_.shape != Layout::Triangle && cols == n_) {  // whole rows, back to back
      put(base, (m.row_end - m.row_begin) * cols);
    } else {
      for (std::int64_t i = m.row_begin; i < m.row_end; ++i)
        put(base + (i - m.row_begin) * cols, row_end(i));
    }
    rows_ += m.row_end - m.row_begin;
  }

  /// Columns [0, row_end(i)) of row i are written.
  std::int64_t row_end(std::int64_t i) const {
    if (layout_.shape != Layout::Triangle) return n_;  // square: one stripe of every row
    return i + (layout_.diagonal ? 1 : 0);
  }

  /// Append row @p i of @p m as the layout writes it (without json's brackets).
  void format_row(const SampleMatrix& m, std::int64_t i, std::string& out) const {
    const std::int64_t end = row_end(i);
    auto value = [&](std::int64_t j) {
      return layout_.shape == Layout::Square0 && j > i ? 0.0 : m.at(i, j);
    };
    if (layout_.binary) {
      if (!layout_.single && layout_.shape != Layout::Square0) {
        out.append(reinterpret_cast<const char*>(
                       &m.values[static_cast<std::size_t>((i - m.row_begin) * m.cols())]),
                   static_cast<std::size_t>(end) * sizeof(double));
        return;
      }
      for (std::int64_t j = 0; j < end; ++j) {
        const double v = value(j);
        if (layout_.single) {
          const auto f = static_cast<float>(v);
          out.append(reinterpret_cast<const char*>(&f), sizeof f);
        } else {
          out.append(reinterpret_cast<const char*>(&v), sizeof v);
        }
      }
      return;
    }
    for (std::int64_t j = 0; j < end; ++j) {
      if (j) out += json_ ? ", " : "\t";
      const double v = value(j);
      if (json_ && !std::isfinite(v))
        out += "null";
      else
        out += format_number(v);
    }
    if (!json_) out += "\n";
  }

  void flush() {
    write(out_, buffer_);
    buffer_.clear();
  }

  Output out_;
  Layout layout_;
  std::int64_t n_;
  bool json_;
  std::string buffer_;
  std::int64_t rows_ = 0;
};

/// The plink2 id file beside a matrix: "#IID" then one sample per line.
void write_ids(const CommonOptions& o, const std::vector<std::string>& samples) {
  if (o.output.empty() || o.output == "-") return;
  Output out(o.output + ".id");
  std::string text = "#IID\n";
  for (const auto& s : samples) text += s + "\n";
  write(out, text);
  out.commit();
}

MatrixOptions stripe_options(const MatrixCliOptions& o, std::int64_t r0, std::int64_t r1) {
  MatrixOptions m;
  m.maf = o.maf;
  m.row_begin = r0;
  m.row_end = r1;
  return m;
}

using StripePlan = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// The stripes of rows of a matrix statistic (made by @p make over all rows), one pass each.
StripePlan stripes(
    const MatrixCliOptions& o, std::int64_t n, bool whole,
    const std::function<std::unique_ptr<MatrixStatistic>(const MatrixOptions&)>& make) {
  return plan_matrix_stripes(*make(stripe_options(o, 0, -1))->sample_matrix(), n,
                             o.memory_mb * 1048576.0, o.rows_per_pass, whole);
}

/// Compute a matrix statistic stripe by stripe (vczstats::run_matrix_stripes: under MPI the
/// ranks take the stripes in rounds, or split a stripe's rows) and write it on the writing
/// process: @p write_stripe gets each stripe's statistic, in order.
void run_stripes(const MatrixCliOptions& o, Query& q, const StripePlan& parts,
                 const std::function<std::unique_ptr<MatrixStatistic>(const MatrixOptions&)>& make,
                 const std::function<void(MatrixStatistic&)>& write_stripe) {
  std::size_t warned = q.warnings.size();
  run_matrix_stripes(
      q,
      [&](std::int64_t r0, std::int64_t r1) -> std::shared_ptr<Statistic> {
        return make(stripe_options(o, r0, r1));
      },
      parts, run_options(o.common),
      RunnerRanks{mpi_ranks(), o.common.device.find(':') != std::string::npos},
      [&](Statistic& s) { write_stripe(static_cast<MatrixStatistic&>(s)); },
      [&](const RunnerResult& r) {
        print_warnings(q, warned);
        warned = q.warnings.size();
        report_run(o.common, r.stats);
        if (o.common.verbose)
          for (const auto& line : r.rank_lines) fmt::print(stderr, "vczstats: {}\n", line);
      });
}

/// A matrix statistic stripe by stripe, written on the writing process.
void run_matrix(const MatrixCliOptions& o, Query& q, Layout layout,
                const std::function<std::unique_ptr<MatrixStatistic>(const MatrixOptions&)>& make) {
  const std::int64_t n = q.samples.size();
  const auto parts = stripes(o, n, layout.shape == Layout::Square, make);
  std::optional<MatrixWriter> writer;
  if (primary_process()) writer.emplace(o.common, layout, n);
  std::vector<std::string> samples;
  run_stripes(o, q, parts, make, [&](MatrixStatistic& s) {
    const auto t0 = std::chrono::steady_clock::now();
    const SampleMatrix& matrix = s.finish_matrix();
    const auto t1 = std::chrono::steady_clock::now();
    writer->rows(matrix);
    const auto t2 = std::chrono::steady_clock::now();
    samples = matrix.samples;
    if (!o.common.verbose) return;
    if (parts.size() > 1)
      fmt::print(stderr, "vczstats: rows {}..{} of {} ({} variants)\n", matrix.row_begin,
                 matrix.row_end, n, matrix.variants);
    fmt::print(stderr,
               "vczstats:   matrix           {:.3f} s  the values from the sums (GPU: none "
               "left)\nvczstats:   write            {:.3f} s  formatting and writing the rows\n",
               std::chrono::duration<double>(t1 - t0).count(),
               std::chrono::duration<double>(t2 - t1).count());
  });
  if (!writer) return;
  writer->finish(samples);
  write_ids(o.common, samples);
}

void add_grm(CLI::App& app) {
  auto o = std::make_shared<MatrixCliOptions>();
  auto cov = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "grm",
      "Genomic relationship matrix (plink2 --make-rel): for each pair, the sum over variants of "
      "x_i x_j with x = (g - 2f) / sqrt(2f(1 - f)), g the count of non-REF alleles and f their "
      "frequency over the selected samples (0 when missing), divided by the variants both "
      "samples have called. -o FILE writes the matrix, FILE.id the samples.");
  add_matrix_options(*cmd, *o);
  cmd->add_flag("--cov", *cov, "plink2 'cov': g - 2f without variance standardisation");
  cmd->callback([o, cov] {
    Query q = matrix_query(*o);
    GrmOptions g;
    g.cov = *cov;
    run_matrix(*o, q, layout_of(*o, true), [&](const MatrixOptions& m) {
      g.matrix = m;
      return make_grm(q, g);
    });
  });
}

void add_king(CLI::App& app) {
  auto o = std::make_shared<MatrixCliOptions>();
  auto table = std::make_shared<bool>(false);
  auto filter = std::make_shared<double>(-INFINITY);
  auto* cmd = app.add_subcommand(
      "king",
      "KING-robust kinship between samples (plink2 --make-king): over the variants both have "
      "called, 1/2 - (4 IBS0 + het1hom2 + het2hom1) / (4 (HETHET + min(het1hom2, het2hom1))); "
      "multi-allelic sites count REF against the other alleles. -o FILE writes the matrix "
      "(diagonal 0.5), FILE.id the samples; --table writes plink2's --make-king-table instead.");
  add_matrix_options(*cmd, *o);
  cmd->add_flag("--table", *table,
                "One row per pair instead of the matrix: sample1 sample2 nsnp hethet ibs0 "
                "kinship (hethet and ibs0 as proportions of nsnp; plink2 --make-king-table)")
      ->group("Output");
  cmd->add_option("--table-filter", *filter,
                  "With --table: leave out pairs whose kinship is below this "
                  "(plink2 --king-table-filter)")
      ->group("Output");
  cmd->callback([o, table, filter] {
    Query q = matrix_query(*o);
    if (!*table) {
      run_matrix(*o, q, layout_of(*o, false),
                 [&](const MatrixOptions& m) { return make_king(q, m); });
      return;
    }
    if (o->bin || o->bin4) throw UsageError("--table writes text");
    const std::int64_t n = q.samples.size();
    std::optional<Output> out;
    std::optional<TableWriter> w;
    if (primary_process()) {
      out.emplace(o->common.output);
      w.emplace(
          out->file(), o->common.format,
          std::vector<TableWriter::Column>{
              {"sample1", false}, {"sample2", false}, {"nsnp"}, {"hethet"}, {"ibs0"}, {"kinship"}});
    }
    auto make = [&](const MatrixOptions& m) -> std::unique_ptr<MatrixStatistic> {
      return make_king(q, m, true);
    };
    std::vector<std::string> cells;
    run_stripes(*o, q, stripes(*o, n, false, make), make, [&](MatrixStatistic& stripe) {
      auto& s = static_cast<KingStatistic&>(stripe);
      const SampleMatrix& matrix = s.finish_matrix();
      for (std::int64_t i = std::max<std::int64_t>(matrix.row_begin, 1); i < matrix.row_end; ++i)
        for (std::int64_t j = 0; j < i; ++j) {
          const KingPair p = s.pair(i, j);
          if (p.kinship < *filter) continue;
          const double nsnp = static_cast<double>(p.nsnp);
          cells = {matrix.samples[static_cast<std::size_t>(i)],
                   matrix.samples[static_cast<std::size_t>(j)],
                   std::to_string(p.nsnp),
                   format_number(static_cast<double>(p.hethet) / nsnp),
                   format_number(static_cast<double>(p.ibs0) / nsnp),
                   format_number(p.kinship)};
          w->row(cells);
        }
    });
    if (!w) return;
    w->finish();
    out->commit();
  });
}

void add_distance(CLI::App& app) {
  auto o = std::make_shared<MatrixCliOptions>();
  auto metric = std::make_shared<std::string>("allele-ct");
  auto flat = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand(
      "distance",
      "Distances between samples (plink 1.9 --distance): allele-ct = sum over the variants both "
      "have called of |g_i - g_j|, scaled up for the variants either misses (by the variants' "
      "expected distances f(1-f)(f^2-f+1), or by their number with --flat-missing); ibs = 1 - "
      "allele-ct / (2 variants); 1-ibs = allele-ct / (2 variants). -o FILE writes the matrix, "
      "FILE.id the samples.");
  add_matrix_options(*cmd, *o);
  cmd->add_option("--metric", *metric, "allele-ct, ibs or 1-ibs")
      ->check(CLI::IsMember({"allele-ct", "ibs", "1-ibs"}))
      ->capture_default_str();
  cmd->add_flag("--flat-missing", *flat,
                "Scale for missing calls by the number of variants (plink 1.9 'flat-missing')");
  cmd->callback([o, metric, flat] {
    Query q = matrix_query(*o);
    DistanceOptions d;
    d.metric = *metric == "ibs"     ? DistanceMetric::Ibs
               : *metric == "1-ibs" ? DistanceMetric::OneMinusIbs
                                    : DistanceMetric::AlleleCount;
    d.flat_missing = *flat;
    // plink 1.9 writes the ibs triangle with its diagonal of ones as text, without it in binary.
    const bool diagonal = d.metric == DistanceMetric::Ibs && !(o->bin || o->bin4);
    run_matrix(*o, q, layout_of(*o, diagonal), [&](const MatrixOptions& m) {
      d.matrix = m;
      return make_distance(q, d);
    });
  });
}

void add_pca(CLI::App& app) {
  struct PcaCli {
    MatrixCliOptions m;
    int components = 10;
    bool approx = false, exact = false;
    std::string loadings, eigenvalues, project;
    std::uint64_t seed = 1;
  };
  auto o = std::make_shared<PcaCli>();
  auto* cmd = app.add_subcommand(
      "pca",
      "Principal components of the samples (plink2 --pca): the top eigenvectors of the GRM "
      "(exact, up to 50,000 samples by default) or a randomized approximation (--approx: "
      "Galinsky et al. 2016, plink2 --pca approx). -o writes the eigenvectors (sample pc1 ...); "
      "--eigenvalues and --loadings write the eigenvalues and the variant loadings; --project "
      "LOADINGS projects the selected samples onto an earlier run's loadings instead.");
  add_matrix_options(*cmd, o->m, false);
  cmd->add_option("-k,--components", o->components, "Principal components")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_flag("--approx", o->approx, "Randomized PCA (plink2 --pca approx)");
  cmd->add_flag("--exact", o->exact, "Eigenvectors of the whole GRM, whatever the sample count");
  cmd->add_option("--eigenvalues", o->eigenvalues, "Write the eigenvalues (pc eigenvalue) here")
      ->group("Output");
  cmd->add_option("--loadings", o->loadings,
                  "Write the variant loadings here: chrom pos id ref alt alt_freq pc1 ... (the "
                  "ALT dosage's weights, plink2's var-wts; keeps the packed genotypes in memory), "
                  "and the eigenvalues beside it in FILE.eigenval (read by --project)")
      ->group("Output");
  cmd->add_option("--project", o->project,
                  "Project the selected samples onto the loadings of an earlier run (variants "
                  "matched by chrom, pos, ref and alt) and write their coordinates")
      ->group("Output");
  cmd->add_option("--seed", o->seed, "Seed of the randomized method")->capture_default_str();
  cmd->callback([o] {
    Query q = matrix_query(o->m);
    if (o->approx && o->exact) throw UsageError("--approx and --exact exclude each other");
    if (!o->project.empty()) {
      const PcaLoadings loadings = PcaLoadings::read(o->project);
      StatisticRun run(o->m.common, q, [&] { return make_pca_projection(q, loadings); });
      if (!run.compute({})) return;  // another MPI rank writes
      write_table(o->m.common, run.statistic().finish());
      run.report();
      return;
    }
    PcaOptions p;
    p.maf = o->m.maf;
    p.components = o->components;
    p.method = o->approx ? PcaMethod::Approx : o->exact ? PcaMethod::Exact : PcaMethod::Auto;
    p.loadings = !o->loadings.empty();
    p.seed = o->seed;
    StatisticRun run(o->m.common, q, [&] { return make_pca(q, p); });
    if (!run.compute({})) return;  // another MPI rank writes
    auto& s = static_cast<PcaStatistic&>(run.statistic());
    const Table vectors = s.finish();
    write_table(o->m.common, vectors);
    if (!o->eigenvalues.empty()) {
      CommonOptions c = o->m.common;
      c.output = o->eigenvalues;
      write_table(c, s.eigenvalue_table());
    }
    if (!o->loadings.empty()) {
      CommonOptions c = o->m.common;
      c.output = o->loadings;
      write_table(c, s.loadings_table());
      c.output = o->loadings + ".eigenval";  // read back by --project
      write_table(c, s.eigenvalue_table());
    }
    run.report();
  });
}

}  // namespace

void add_matrix_commands(CLI::App& app) {
  add_grm(app);
  add_king(app);
  add_distance(app);
  add_pca(app);
}

}  // namespace vczstats::cli
