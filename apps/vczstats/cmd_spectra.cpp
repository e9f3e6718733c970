// Whole-selection reductions over the allele counts: site frequency spectra and Patterson's
// f-statistics with block-jackknife standard errors (library objects in
// vczstats/statistics.hpp; definitions: tests/tools/POPGEN.md §6-7).

#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/statistics.hpp"

namespace vczstats::cli {
namespace {

void add_sfs(CLI::App& app) {
  struct Options {
    CommonOptions common;
    SfsOptions sfs;
    std::string ancestral = "ref";
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "sfs",
      "Site frequency spectrum per population: the number of sites with i derived alleles, "
      "i = 0..n (REF ancestral), over biallelic sites where every member of the population has "
      "a complete call of the store's ploidy (sites with missing calls are left out, not "
      "projected); one spectrum per n. --folded: minor allele counts. --joint A,B: the 2-D "
      "spectrum of two populations (with --folded: minor allele counts in each). --ancestral: REF "
      "(default), variant_AA or a FASTA. "
      "Output: population, n, derived (or folded), count.");
  add_common_options(*cmd, o->common);
  add_population_option(*cmd, o->common);
  cmd->add_flag("--folded", o->sfs.folded, "Fold the spectrum: min(i, n - i)");
  cmd->add_flag("--scaled", o->sfs.scaled,
                "Add a column scaled: count x i (unfolded) or count x i (n - i) / n (folded), "
                "constant in expectation under the standard neutral model");
  cmd->add_option("--joint", o->sfs.joint, "Joint spectrum of two populations A,B");
  cmd->add_option("--ancestral", o->ancestral,
                  "Ancestral allele: ref, aa (the store's variant_AA) or an ancestral FASTA; "
                  "sites where it is unknown are left out")
      ->capture_default_str();
  cmd->callback([o] {
    QueryOptions qo = query_options(o->common);
    qo.ancestral = o->ancestral;
    const Query q = build_query(qo, o->common.threads);
    run_table_command(o->common, q, [&q, &o] { return make_sfs(q, o->sfs); });
  });
}

void add_fstats(CLI::App& app) {
  struct Options {
    CommonOptions common;
    FstatsOptions f;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "fstats",
      "Patterson's f-statistics over biallelic sites (Patterson et al. 2012, unbiased "
      "estimators): f2(A,B); f3(C;A,B) normalised (f3*); D(A,B;C,D) (ABBA-BABA). Estimate = "
      "sum of numerators / sum of denominators over sites where both are defined; with "
      "--blocks N, a delete-one block jackknife over blocks of N consecutive biallelic sites "
      "gives the standard error and Z. Needs -P/--pops.");
  add_common_options(*cmd, o->common);
  add_population_option(*cmd, o->common);
  cmd->add_option("--f2", o->f.f2, "f2 of populations A,B");
  cmd->add_option("--f3", o->f.f3, "f3 of C,A,B: C the target, A and B the sources");
  cmd->add_option("--d", o->f.d, "Patterson's D of A,B,C,D");
  cmd->add_option("--blocks", o->f.blocks, "Jackknife block size in biallelic sites")
      ->check(CLI::PositiveNumber);
  cmd->callback([o] {
    const int given = !o->f.f2.empty() + !o->f.f3.empty() + !o->f.d.empty();
    if (given != 1) throw UsageError("fstats: give exactly one of --f2, --f3, --d");
    const Query q = build_query(query_options(o->common), o->common.threads);
    run_table_command(o->common, q, [&q, &o] { return make_fstats(q, o->f); });
  });
}

}  // namespace

void add_spectra_commands(CLI::App& app) {
  add_sfs(app);
  add_fstats(app);
}

}  // namespace vczstats::cli
