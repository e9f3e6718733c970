// Windowed scans: diversity (per population), divergence (per pair of populations) and stats
// (several statistics in one pass, long format). The statistics are library objects
// (vczstats/statistics.hpp); this file parses options and writes their tables.

#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/statistics.hpp"

namespace vczstats::cli {
namespace {

struct WindowCliOptions {
  CommonOptions common;
  WindowOptions windows;
  std::string ancestral = "ref";
  std::string accessible;
  std::string pairs;
};

void add_window_options(CLI::App& cmd, WindowCliOptions& o) {
  add_common_options(cmd, o.common);
  add_population_option(cmd, o.common);
  add_bp_window_options(cmd, o.windows, "the statistics");
  cmd.add_option("--ancestral", o.ancestral,
                 "Ancestral allele of the unfolded statistics: ref, aa (the store's "
                 "variant_AA, INFO/AA) or a FASTA file of the ancestral sequence")
      ->capture_default_str()
      ->group("Selection");
  cmd.add_option("--accessible", o.accessible,
                 "Accessibility mask: BED (*.bed) or CHROM BEG END file of the callable bases; "
                 "sites outside it are left out and per_bp values divide by the window's "
                 "accessible bases")
      ->group("Windows");
  cmd.add_option("--windows-file", o.windows.file,
                 "Windows from a file: BED (*.bed, 0-based half-open) or CHROM BEG END "
                 "(1-based inclusive); windows may overlap; every window of a contig with sites "
                 "is listed")
      ->group("Windows");
  cmd.add_option("--window-variants", o.windows.variants, "Windows of this many consecutive sites")
      ->check(CLI::PositiveNumber)
      ->group("Windows");
}

Query window_query(const WindowCliOptions& o) {
  QueryOptions q = query_options(o.common);
  q.windows = o.windows;
  q.ancestral = o.ancestral;
  q.accessible = o.accessible;
  return build_query(q);
}

void add_diversity(CLI::App& app) {
  auto o = std::make_shared<WindowCliOptions>();
  auto* cmd = app.add_subcommand(
      "diversity",
      "Diversity per population and window: pi (mean pairwise difference of called "
      "haplotypes, summed over sites and per bp), segregating sites, Watterson's theta, "
      "Tajima's D, singletons, and the unfolded theta_pi, theta_H, theta_L, Fay & Wu's H "
      "(raw and normalised) and Zeng's E with REF as the ancestral allele. Missing alleles are "
      "left out site by site. Definitions: tests/tools/POPGEN.md.");
  add_window_options(*cmd, *o);
  cmd->callback([o] {
    Query q = window_query(*o);
    run_table_command(o->common, q, [&q] { return make_diversity(q); });
  });
}

void add_divergence(CLI::App& app) {
  auto o = std::make_shared<WindowCliOptions>();
  auto* cmd = app.add_subcommand(
      "divergence",
      "Divergence per pair of populations and window: dxy, da, Hudson Fst (ratio of sums), "
      "Weir & Cockerham Fst (weighted = ratio of sums, as vcftools; and the mean of per-site "
      "values; multi-allelic sites included), Nei's Gst. Needs -P/--pops. Definitions: "
      "tests/tools/POPGEN.md.");
  add_window_options(*cmd, *o);
  cmd->add_option("--pairs", o->pairs,
                  "Population pairs A,B;C,D [default: every pair, in file order]")
      ->group("Selection");
  cmd->callback([o] {
    Query q = window_query(*o);
    run_table_command(o->common, q, [&q, &o] { return make_divergence(q, o->pairs); });
  });
}

void add_stats(CLI::App& app) {
  auto o = std::make_shared<WindowCliOptions>();
  std::string names;
  for (const auto& d : scan_statistics()) names += std::string(names.empty() ? "" : ", ") + d.name;
  auto* cmd = app.add_subcommand(
      "stats",
      "Several diversity and divergence statistics in one pass over the genotypes, per window: "
      "one row per window, statistic and population (or population pair, 'A,B'), columns "
      "chrom, start, end, statistic, populations, value. Statistics: " +
          names + ". Definitions: tests/tools/POPGEN.md (as diversity and divergence).");
  add_window_options(*cmd, *o);
  auto list = std::make_shared<std::string>("pi,theta_w,tajima_d,dxy,fst_hudson");
  cmd->add_option("--stats", *list, "Comma-separated statistics")->capture_default_str();
  cmd->add_option("--pairs", o->pairs, "Population pairs A,B;C,D [default: every pair]")
      ->group("Selection");
  auto pbs = std::make_shared<std::string>();
  cmd->add_option("--pbs", *pbs,
                  "Populations A,B,C of the pbs statistic (Yi et al. 2010): T = -ln(1 - Fst) "
                  "from windowed Hudson Fst, PBS_A = (T_AB + T_AC - T_BC) / 2")
      ->group("Selection");
  cmd->callback([o, list, pbs] {
    ScanOptions so;
    so.statistics = vcz::split_list(*list);
    so.pairs = o->pairs;
    so.pbs = *pbs;
    Query q = window_query(*o);
    run_table_command(o->common, q, [&q, &so] { return make_scan(q, so); });
  });
}

}  // namespace

void add_window_commands(CLI::App& app) {
  add_diversity(app);
  add_divergence(app);
  add_stats(app);
}

}  // namespace vczstats::cli
