// Per-site tables over the allele-counts heavy pass: freq, geno-counts, hardy, missing. One row
// per selected site and population (long format), streamed in genome order.

#include <fmt/format.h>

#include <functional>
#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/counts.hpp"
#include "vczstats/hardy.hpp"
#include "vczstats/variants.hpp"

namespace vczstats::cli {
namespace {

using stats::CountsLayout;

/// What a row function sees: one site of one population.
struct SiteRow {
  const vcz::VariantBlock& variants;
  std::int64_t r;         ///< row in the block
  const std::int32_t* c;  ///< the population's counts (CountsLayout::width() columns)
  const CountsLayout& layout;
  std::int32_t at(int column) const { return c[layout.alleles + column]; }
};

using RowFn = std::function<void(const SiteRow&, std::vector<std::string>&)>;

struct TableSpec {
  const char* name;
  const char* help;
  std::vector<TableWriter::Column> columns;  ///< after chrom, pos, id, ref, alt, population
  RowFn row;
};

std::vector<TableWriter::Column> site_columns() {
  return {{"chrom", false}, {"pos", true},  {"id", false},
          {"ref", false},   {"alt", false}, {"population", false}};
}

std::string join_alts(const vcz::VariantBlock& vb, std::int64_t r) {
  const int n = vb.num_alleles(r);
  if (n < 2) return ".";
  std::string s;
  for (int k = 1; k < n; ++k) s += (k > 1 ? "," : "") + vb.allele(r, k);
  return s;
}

void add_table_command(CLI::App& app, TableSpec spec) {
  auto o = std::make_shared<CommonOptions>();
  auto* cmd = app.add_subcommand(spec.name, spec.help);
  add_common_options(*cmd, *o);
  add_population_option(*cmd, *o);
  auto s = std::make_shared<TableSpec>(std::move(spec));
  cmd->callback([o, s] {
    auto q = build_query(*o);
    const vcz::VariantReader reader(q.store, /*with_alleles=*/true, /*with_ids=*/true);
    const stats::AlleleCountsPass pass = allele_counts_pass(q);
    const CountsLayout& layout = pass.layout();
    Output out(o->output);
    auto columns = site_columns();
    columns.insert(columns.end(), s->columns.begin(), s->columns.end());
    TableWriter table(out, o->format, columns);
    std::vector<std::string> cells;
    RunStats rs;
    run_allele_counts(
        q.store, q.plan, q.samples, pass, run_options(*o), &rs,
        [&](std::int64_t, const vcz::WorkUnit& unit, std::span<const std::int32_t> counts) {
          const auto vb = reader.read(unit.begin, unit.end);
          for (std::int64_t r = 0; r < unit.size(); ++r) {
            if (!unit.mask.empty() && !unit.mask[static_cast<std::size_t>(r)]) continue;
            for (int p = 0; p < layout.pops; ++p) {
              const std::int32_t* c =
                  counts.data() + r * layout.site_width() + std::int64_t{p} * layout.width();
              cells.clear();
              cells.push_back(q.store.contig_ids()[static_cast<std::size_t>(
                  vb.contig[static_cast<std::size_t>(r)])]);
              cells.push_back(std::to_string(vb.position[static_cast<std::size_t>(r)]));
              cells.push_back(vb.id[static_cast<std::size_t>(r)]);
              cells.push_back(vb.allele(r, 0));
              cells.push_back(join_alts(vb, r));
              cells.push_back(q.pops.names[static_cast<std::size_t>(p)]);
              s->row(SiteRow{vb, r, c, layout}, cells);
              table.row(cells);
            }
          }
        });
    table.finish();
    out.commit();
    report_run(*o, rs);
  });
}

std::string ratio(std::int64_t num, std::int64_t den) {
  return den > 0 ? format_number(static_cast<double>(num) / static_cast<double>(den)) : "NA";
}

}  // namespace

void add_site_table_commands(CLI::App& app) {
  add_table_command(
      app, {"freq",
            "Allele counts and frequencies per site and population (as plink2 --freq counts): "
            "alt_cts = copies of each ALT allele (comma-separated), obs_ct = called alleles, "
            "alt_freqs = alt_cts / obs_ct (NA when nothing is called).",
            {{"alt_cts", false}, {"obs_ct", true}, {"alt_freqs", false}},
            [](const SiteRow& s, std::vector<std::string>& cells) {
              const int n = std::max(2, s.variants.num_alleles(s.r));
              const std::int32_t obs = s.at(stats::kCalled);
              std::string cts, freqs;
              for (int k = 1; k < n && k < s.layout.alleles; ++k) {
                cts += (k > 1 ? "," : "") + std::to_string(s.c[k]);
                freqs += (k > 1 ? "," : "") + ratio(s.c[k], obs);
              }
              cells.push_back(cts);
              cells.push_back(std::to_string(obs));
              cells.push_back(freqs);
            }});
  add_table_command(
      app, {"geno-counts",
            "Genotype counts per site and population (as plink2 --geno-counts, haploid calls "
            "counted as homozygous): hom_ref_ct (all REF), het_ref_alt_ct (REF and an ALT), "
            "two_alt_geno_ct (no REF: hom_alt_ct + het_alt_ct), missing_ct (any allele "
            "missing).",
            {{"hom_ref_ct", true},
             {"het_ref_alt_ct", true},
             {"two_alt_geno_ct", true},
             {"hom_alt_ct", true},
             {"het_alt_ct", true},
             {"missing_ct", true}},
            [](const SiteRow& s, std::vector<std::string>& cells) {
              cells.push_back(std::to_string(s.at(stats::kHomRef)));
              cells.push_back(std::to_string(s.at(stats::kHetRef)));
              cells.push_back(std::to_string(s.at(stats::kHomAlt) + s.at(stats::kHetAlt)));
              cells.push_back(std::to_string(s.at(stats::kHomAlt)));
              cells.push_back(std::to_string(s.at(stats::kHetAlt)));
              cells.push_back(std::to_string(s.at(stats::kMissing)));
            }});
  add_table_command(
      app, {"hardy",
            "Hardy-Weinberg equilibrium of REF against the other alleles, per site and population "
            "(as the REF row of plink2 --hardy): hom_ref_ct, het_ref_ct (REF and an ALT), "
            "two_alt_ct (no REF), observed and expected (2pq) heterozygosity, the two-sided "
            "exact test p-value (Wigginton et al. 2005) and the inbreeding coefficient "
            "f = 1 - o_het / e_het. Calls with a missing allele are left out.",
            {{"hom_ref_ct", true},
             {"het_ref_ct", true},
             {"two_alt_ct", true},
             {"o_het", true},
             {"e_het", true},
             {"p_hwe", true},
             {"f", true}},
            [](const SiteRow& s, std::vector<std::string>& cells) {
              const std::int64_t hom1 = s.at(stats::kHomRef), het = s.at(stats::kHetRef),
                                 hom2 = s.at(stats::kHomAlt) + s.at(stats::kHetAlt);
              const std::int64_t n = hom1 + het + hom2;
              cells.push_back(std::to_string(hom1));
              cells.push_back(std::to_string(het));
              cells.push_back(std::to_string(hom2));
              cells.push_back(ratio(het, n));
              const double p =
                  n > 0 ? static_cast<double>(2 * hom1 + het) / static_cast<double>(2 * n) : 0.0;
              const double e_het = 2 * p * (1 - p);
              cells.push_back(n > 0 ? format_number(e_het) : "NA");
              cells.push_back(n > 0 ? format_number(stats::hwe_exact_p(het, hom1, hom2)) : "NA");
              // Inbreeding coefficient of the site: 1 - observed / expected heterozygosity.
              cells.push_back(e_het > 0 ? format_number(1.0 - static_cast<double>(het) /
                                                                  static_cast<double>(n) / e_het)
                                        : "NA");
            }});
  add_table_command(
      app, {"missing",
            "Missing genotypes per site and population (as plink2 --missing, .vmiss): "
            "missing_ct = samples with a missing allele, obs_ct = samples with a genotype slot "
            "(all-fill samples excluded), f_miss = missing_ct / obs_ct.",
            {{"missing_ct", true}, {"obs_ct", true}, {"f_miss", true}},
            [](const SiteRow& s, std::vector<std::string>& cells) {
              const std::int64_t miss = s.at(stats::kMissing);
              const std::int64_t obs = miss + s.at(stats::kHomRef) + s.at(stats::kHetRef) +
                                       s.at(stats::kHomAlt) + s.at(stats::kHetAlt);
              cells.push_back(std::to_string(miss));
              cells.push_back(std::to_string(obs));
              cells.push_back(ratio(miss, obs));
            }});
}

}  // namespace vczstats::cli
