// The haplotype family: haplotypes (haplotype diversity and Garud's H per window), ehh (EHH
// decay around focal sites), ihs and nsl (per population), xpehh and xpnsl (per pair). The
// statistics are library objects (vczstats/haplotypes.hpp); this file parses options and
// writes their tables. Definitions: tests/tools/POPGEN.md §11.

#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/haplotypes.hpp"
#include "vczstats/testing.hpp"

namespace vczstats::cli {
namespace {

struct HaploCliOptions {
  CommonOptions common;
  WindowOptions windows;
  std::string ancestral = "ref";
  SelectionOptions selection;
  std::string windows_output;
  std::int64_t segment = 0, context = 0;  // hidden test options (hooks::set_selection_kernel_sizes)
};

void add_windows(CLI::App& cmd, WindowOptions& w, const std::string& what) {
  add_bp_window_options(cmd, w, what);
  cmd.add_option("--window-variants", w.variants, "Windows of this many consecutive sites")
      ->check(CLI::PositiveNumber)
      ->group("Windows");
  cmd.add_option("--windows-file", w.file,
                 "Windows from a BED (*.bed) or CHROM BEG END (1-based) file")
      ->group("Windows");
}

void add_base(CLI::App& cmd, HaploCliOptions& o, FilterSet filters) {
  add_common_options(cmd, o.common, filters);
  add_population_option(cmd, o.common);
  cmd.add_option("--ancestral", o.ancestral,
                 "Ancestral allele: ref, aa (the store's variant_AA) or an ancestral FASTA; the "
                 "other allele of a site is the derived one")
      ->capture_default_str()
      ->group("Selection");
}

void add_selection(CLI::App& cmd, HaploCliOptions& o, SelectionScan scan) {
  SelectionOptions& s = o.selection;
  const bool xp = scan == SelectionScan::Xpehh || scan == SelectionScan::Xpnsl;
  const bool nsl = scan == SelectionScan::Nsl || scan == SelectionScan::Xpnsl;
  if (!xp)
    cmd.add_option("--maf", s.maf,
                   "Leave out sites whose minor allele frequency in the population is below this "
                   "(as flanks too, like selscan)")
        ->capture_default_str()
        ->group("Selection scan");
  if (scan != SelectionScan::Nsl)
    cmd.add_option("--cutoff", s.cutoff, "Integrate EHH until it falls to this value or below")
        ->capture_default_str()
        ->group("Selection scan");
  cmd.add_option("--gap-scale", s.gap_scale,
                 "A gap of G bp between sites longer than this counts as gap-scale/G of its length")
      ->capture_default_str()
      ->group("Selection scan");
  cmd.add_option("--max-gap", s.max_gap, "Drop a site whose EHH spans a gap longer than this (bp)")
      ->capture_default_str()
      ->group("Selection scan");
  if (nsl)
    cmd.add_option("--max-extend-nsl", s.max_extend_nsl,
                   "Stop this many sites from the focal site (<= 0: no limit)")
        ->capture_default_str()
        ->group("Selection scan");
  else
    cmd.add_option("--max-extend", s.max_extend,
                   "Stop this many bp from the focal site (<= 0: no limit)")
        ->capture_default_str()
        ->group("Selection scan");
  cmd.add_flag("--trunc-ok", s.trunc_ok,
               "Integrate up to a contig end instead of dropping the site when EHH has not decayed")
      ->group("Selection scan");
  if (!nsl)
    cmd.add_option("--map", s.map,
                   "Genetic map: plink .map (chrom, id, cM, bp) or HapMap-style table (header "
                   "Chromosome Position(bp) Rate(cM/Mb) Map(cM)); interpolated [default: physical "
                   "distance]")
        ->group("Selection scan");
  if (!xp)
    cmd.add_option("--bins", s.bins, "Derived allele frequency bins of the standardisation")
        ->capture_default_str()
        ->group("Selection scan");
  cmd.add_option("--min-bin-sites", s.min_bin_sites,
                 "A bin with fewer scores gives no standardised values")
      ->capture_default_str()
      ->group("Selection scan");
  cmd.add_option("--crit", s.crit, "|standardised score| >= crit counts as extreme in the windows")
      ->capture_default_str()
      ->group("Selection scan");
  if (xp)
    cmd.add_option("--pairs", s.pairs,
                   "Population pairs A,B;C,D (score > 0: selection in A) [default: every pair]")
        ->group("Selection");
  cmd.add_option("--windows-output", o.windows_output,
                 "Also write the per-window summary of the standardised scores to this file "
                 "(windows: the options below, default one per contig or region)")
      ->group("Windows");
  // Testing options: accepted, hidden from the help (group "").
  cmd.add_option("--segment", o.segment, "Focal sites per kernel segment (testing)")->group("");
  cmd.add_option("--context", o.context, "First flanking sites given per segment (testing)")
      ->group("");
  add_windows(cmd, o.windows, "the summary");
}

Query haplo_query(const HaploCliOptions& o) {
  QueryOptions q = query_options(o.common);
  q.windows = o.windows;
  q.ancestral = o.ancestral;
  return build_query(q, o.common);
}

void add_scan(CLI::App& app, const char* name, SelectionScan scan, const std::string& help) {
  auto o = std::make_shared<HaploCliOptions>();
  auto* cmd = app.add_subcommand(name, help);
  const bool xp = scan == SelectionScan::Xpehh || scan == SelectionScan::Xpnsl;
  add_base(*cmd, *o, xp ? FilterSet::All : FilterSet::NoMaf);  // a --maf of its own (selscan)
  add_selection(*cmd, *o, scan);
  cmd->callback([o, scan] {
    hooks::set_selection_kernel_sizes(o->segment, o->context);
    Query q = haplo_query(*o);
    run_table_command(
        o->common, q, [&q, o, scan] { return make_selection_scan(q, scan, o->selection); },
        [o](Statistic& s) {
          if (o->windows_output.empty()) return;
          CommonOptions w = o->common;
          w.output = o->windows_output;
          write_table(w, static_cast<SelectionStatistic&>(s).windows());
        });
  });
}

void add_haplotypes(CLI::App& app) {
  auto o = std::make_shared<HaploCliOptions>();
  auto* cmd = app.add_subcommand(
      "haplotypes",
      "Haplotype statistics per window and population: distinct haplotypes, haplotype "
      "diversity, Garud's H1, H12, H123 and H2/H1, over the window's sites where every "
      "haplotype is called (phased data required). Definitions: tests/tools/POPGEN.md §11.");
  add_common_options(*cmd, o->common);
  add_population_option(*cmd, o->common);
  add_windows(*cmd, o->windows, "the statistics [default: one window per contig or region]");
  cmd->callback([o] {
    Query q = haplo_query(*o);
    run_table_command(o->common, q, [&q] { return make_haplotype_windows(q); });
  });
}

void add_ehh(CLI::App& app) {
  auto o = std::make_shared<HaploCliOptions>();
  auto focal = std::make_shared<std::string>();
  auto e = std::make_shared<EhhOptions>();
  auto* cmd = app.add_subcommand(
      "ehh",
      "EHH decay around focal sites (selscan --ehh): per population, the EHH of the derived and "
      "of the ancestral carriers and of all haplotypes at every site within the window, with "
      "the distance in bp, in sites and on the genetic map. Definitions: tests/tools/POPGEN.md "
      "§11.");
  add_base(*cmd, *o, FilterSet::NoMaf);  // a --maf of its own (selscan)
  cmd->add_option("--focal", *focal, "Focal sites CHR:POS, comma-separated")->required();
  cmd->add_option("--ehh-window", e->window, "bp on each side of the focal site")
      ->capture_default_str();
  cmd->add_option("--maf", e->maf, "Leave out flanking sites with a lower minor allele frequency")
      ->capture_default_str();
  cmd->add_option("--map", e->map, "Genetic map (plink .map or HapMap-style table, as ihs --map)");
  cmd->callback([o, focal, e] {
    std::string regions;
    for (const auto& item : vcz::split_list(*focal)) {
      const auto colon = item.rfind(':');
      if (colon == std::string::npos)
        throw UsageError("--focal: expected CHR:POS, got '" + item + "'");
      std::int64_t pos = 0;
      try {
        pos = std::stoll(item.substr(colon + 1));
      } catch (const std::exception&) {
        throw UsageError("--focal: expected CHR:POS, got '" + item + "'");
      }
      e->focal.emplace_back(item.substr(0, colon), pos);
      regions += (regions.empty() ? "" : ",") + item.substr(0, colon) + ":" +
                 std::to_string(std::max<std::int64_t>(1, pos - e->window)) + "-" +
                 std::to_string(pos + e->window);
    }
    // Read only the windows, unless the user chose the regions.
    if (o->common.regions.empty() && o->common.regions_file.empty()) o->common.regions = regions;
    Query q = haplo_query(*o);
    run_table_command(o->common, q, [&q, e] { return make_ehh(q, *e); });
  });
}

}  // namespace

void add_haplotype_commands(CLI::App& app) {
  add_haplotypes(app);
  add_ehh(app);
  add_scan(app, "ihs", SelectionScan::Ihs,
           "iHS per site and population (Voight et al. 2006; selscan's definitions): log10 of "
           "the integrated EHH of the derived over the ancestral allele, and standardised in "
           "derived frequency bins. Phased data required. Definitions: tests/tools/POPGEN.md §11.");
  add_scan(app, "nsl", SelectionScan::Nsl,
           "nSL per site and population (Ferrer-Admetlla et al. 2014; selscan's definitions): as "
           "iHS with distances counted in sites. Definitions: tests/tools/POPGEN.md §11.");
  add_scan(app, "xpehh", SelectionScan::Xpehh,
           "XP-EHH per site and pair of populations (Sabeti et al. 2007; selscan's definitions): "
           "log10 of population A's integrated EHH over B's, standardised genome-wide. Needs -P. "
           "Definitions: tests/tools/POPGEN.md §11.");
  add_scan(app, "xpnsl", SelectionScan::Xpnsl,
           "XP-nSL per site and pair of populations (Szpiech et al. 2021; selscan's "
           "definitions): XP-EHH with distances counted in sites. Needs -P. Definitions: "
           "tests/tools/POPGEN.md §11.");
}

}  // namespace vczstats::cli
