// Per-site tables over the allele counts: freq, geno-counts, hardy, missing (library objects in
// vczstats/statistics.hpp). One row per selected site and population (long format), streamed in
// genome order with the site's CHROM, POS, ID, REF and ALT.

#include <memory>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "processes.hpp"
#include "statistic_run.hpp"
#include "vczstats/statistics.hpp"

namespace vczstats::cli {
namespace {

std::string join_alts(const vcz::VariantBlock& vb, std::int64_t r) {
  const int n = vb.num_alleles(r);
  if (n < 2) return ".";
  std::string s;
  for (int k = 1; k < n; ++k) s += (k > 1 ? "," : "") + vb.allele(r, k);
  return s;
}

void add_table_command(CLI::App& app, const char* name, SiteTable kind, const char* help) {
  auto o = std::make_shared<CommonOptions>();
  auto* cmd = app.add_subcommand(name, help);
  add_common_options(*cmd, *o);
  add_population_option(*cmd, *o);
  cmd->callback([o, kind] {
    Query q = build_query(query_options(*o), *o);
    StatisticRun run(*o, q, [&q, kind] { return make_site_table(q, kind); });
    std::optional<Output> out;
    if (primary_process()) out.emplace(o->output);
    // The statistic's columns after variant, contig, pos, population.
    constexpr int kFirst = 4;
    std::vector<TableWriter::Column> columns{{"chrom", false}, {"pos", true},
                                             {"id", false},    {"ref", false},
                                             {"alt", false},   {"population", false}};
    const Table empty = run.statistic().take_rows();
    for (auto& c : table_columns(empty, kFirst)) columns.push_back(c);
    std::optional<TableWriter> table;
    if (out) table.emplace(out->file(), o->format, columns);
    RowStream rows;
    rows.needs.alleles = true;
    rows.needs.ids = true;
    // Every row is final after its unit (the rows' variant fields are the unit's).
    rows.unit_rows = [&q](const UnitData& u, Statistic& s,
                          const std::function<void(const Cells&)>& row) {
      const Table t = s.take_rows();
      const auto& variant = t.column("variant").ints;
      const auto& population = t.column("population");
      Cells cells;
      for (std::int64_t i = 0; i < t.rows(); ++i) {
        const std::int64_t r = variant[static_cast<std::size_t>(i)] - u.unit->begin;
        const auto& vb = *u.variants;
        cells.clear();
        cells.push_back(
            q.store.contig_ids()[static_cast<std::size_t>(vb.contig[static_cast<std::size_t>(r)])]);
        cells.push_back(std::to_string(vb.position[static_cast<std::size_t>(r)]));
        cells.push_back(vb.id[static_cast<std::size_t>(r)]);
        cells.push_back(vb.allele(r, 0));
        cells.push_back(join_alts(vb, r));
        cells.push_back(population.label(i));
        table_cells(t, i, cells, kFirst);
        row(cells);
      }
    };
    rows.write = [&](const Cells& cells) { table->row(cells); };
    if (!run.compute(rows)) return;  // another MPI rank writes
    table->finish();
    out->commit();
    run.report();
  });
}

}  // namespace

void add_site_table_commands(CLI::App& app) {
  add_table_command(
      app, "freq", SiteTable::Freq,
      "Allele counts and frequencies per site and population (as plink2 --freq counts): "
      "alt_cts = copies of each ALT allele (comma-separated), obs_ct = called alleles, "
      "alt_freqs = alt_cts / obs_ct (NA when nothing is called).");
  add_table_command(
      app, "geno-counts", SiteTable::GenoCounts,
      "Genotype counts per site and population (as plink2 --geno-counts, haploid calls "
      "counted as homozygous): hom_ref_ct (all REF), het_ref_alt_ct (REF and an ALT), "
      "two_alt_geno_ct (no REF: hom_alt_ct + het_alt_ct), missing_ct (any allele "
      "missing).");
  add_table_command(
      app, "hardy", SiteTable::Hardy,
      "Hardy-Weinberg equilibrium of REF against the other alleles, per site and population "
      "(as the REF row of plink2 --hardy): hom_ref_ct, het_ref_ct (REF and an ALT), "
      "two_alt_ct (no REF), observed and expected (2pq) heterozygosity, the two-sided "
      "exact test p-value (Wigginton et al. 2005) and the inbreeding coefficient "
      "f = 1 - o_het / e_het. Calls with a missing allele are left out.");
  add_table_command(
      app, "missing", SiteTable::Missing,
      "Missing genotypes per site and population (as plink2 --missing, .vmiss): "
      "missing_ct = samples with a missing allele, obs_ct = samples with a genotype slot "
      "(all-fill samples excluded), f_miss = missing_ct / obs_ct.");
}

}  // namespace vczstats::cli
