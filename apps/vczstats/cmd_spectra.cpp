// Whole-selection reductions over the allele counts: site frequency spectra and Patterson's
// f-statistics with block-jackknife standard errors (library objects in
// vczstats/statistics.hpp; definitions: tests/tools/POPGEN.md §6-7).

#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "statistic_run.hpp"
#include "vczstats/statistics.hpp"

namespace vczstats::cli {
namespace {

// --format fs: the one spectrum, unfolded from the statistic and folded as dadi folds, in
// dadi's and moments' text format; the run's note as a comment line.
void write_fs(const CommonOptions& common, Query& q, SfsOptions sfs) {
  if (sfs.preview) throw UsageError("--format fs: not with --project-preview");
  const bool fold = sfs.folded;
  sfs.folded = sfs.scaled = false;
  StatisticRun run(common, q, [&q, &sfs] { return make_sfs(q, sfs); });
  RowStream rows;
  rows.write = [](const Cells&) {};
  if (!run.compute(rows)) return;  // another MPI rank writes
  const Table t = run.statistic().finish();
  const std::string text = fs_text(spectrum_array(t, fold));
  Output out(common.output);
  write(out, (t.note.empty() ? "" : "# " + t.note + "\n") + text);
  out.commit();
  report_note(common, t.note);
  run.report();
}

void add_sfs(CLI::App& app) {
  struct Options {
    CommonOptions common;
    SfsOptions sfs;
    WindowOptions windows;
    std::string ancestral = "ref";
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "sfs",
      "Site frequency spectrum per population: the number of sites with i derived alleles, "
      "i = 0..n (REF ancestral), over biallelic sites where every member of the population has "
      "a complete call of the store's ploidy (sites with missing calls are left out); one "
      "spectrum per n. --folded: minor allele counts. --joint A,B: the 2-D spectrum of two "
      "populations (with --folded: minor allele counts in each). --ancestral: REF (default), "
      "variant_AA or a FASTA. Output: population, n, derived (or folded), count.\n"
      "--project N (or POP=N,...): projection over missing calls (Marth et al. 2004; dadi's and "
      "moments' project, easySFS): every biallelic site with at least N called alleles in the "
      "population (alleles of its non-missing calls, a partly missing call's called ones "
      "included) adds to class j its hypergeometric probability C(d,j) C(n-d,N-j) / C(n,N) of j "
      "derived alleles among N drawn from its n called alleles, d derived; sites with fewer are "
      "left out and counted in the note (-v, --log, JSON, the .fs comment). Counts are then "
      "expected numbers of sites (floats). With --joint A[,B,C,D] (1 to 4 populations), a site "
      "needs N called alleles in every one and adds the product of their probabilities; the "
      "dense spectrum takes (N1+1)...(NK+1) entries of 8 x (3K+2) bytes (array and table), "
      "refused above --memory. Multi-allelic sites are left out, as without --project. "
      "--project-preview: per population and n = 2..N (N: --project's, else its alleles up to "
      "500), "
      "the sites with at least n called alleles and the expected number of them segregating "
      "after projection to n (easySFS --preview). --format fs: the spectrum as a dadi/moments "
      ".fs file (one spectrum: one population, or --joint). --window-size/--windows-file "
      "(with --project): one spectrum per window, rows chrom, start, end, then the "
      "spectrum's columns.");
  add_common_options(*cmd, o->common);
  add_population_option(*cmd, o->common);
  cmd->remove_option(cmd->get_option("--format"));
  cmd->add_option("--format", o->common.format,
                  "tsv, json, or fs (dadi/moments frequency spectrum: dimensions, folded or "
                  "unfolded and quoted population names; values; mask, 1 masked)")
      ->check(CLI::IsMember({"tsv", "json", "fs"}))
      ->capture_default_str()
      ->group("Output");
  cmd->add_flag("--folded", o->sfs.folded, "Fold the spectrum: min(i, n - i)");
  cmd->add_flag("--scaled", o->sfs.scaled,
                "Add a column scaled: count x i (unfolded) or count x i (n - i) / n (folded), "
                "constant in expectation under the standard neutral model");
  cmd->add_option("--joint", o->sfs.joint,
                  "Joint spectrum of two populations A,B (with --project: 1 to 4, A[,B,C,D])");
  cmd->add_option("--project", o->sfs.project,
                  "Project each site's called alleles to N (one size for every population) or "
                  "POP=N,... (those populations) by hypergeometric sampling");
  cmd->add_flag("--project-preview", o->sfs.preview,
                "Per population and n: sites with at least n called alleles and the expected "
                "segregating sites after projection to n (columns population, n, sites, "
                "segregating_sites)");
  cmd->add_option("--memory", o->sfs.memory_mb,
                  "MiB a projected joint spectrum may take (dense array and table)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group("Execution");
  cmd->add_option("--ancestral", o->ancestral,
                  "Ancestral allele: ref, aa (the store's variant_AA) or an ancestral FASTA; "
                  "sites where it is unknown are left out")
      ->capture_default_str();
  add_bp_window_options(*cmd, o->windows, "the projected spectra (with --project)");
  cmd->add_option("--windows-file", o->windows.file,
                  "With --project: one spectrum per window of this file (BED, 0-based "
                  "half-open, or CHROM BEG END, 1-based inclusive)")
      ->group("Windows");
  cmd->callback([o] {
    QueryOptions qo = query_options(o->common);
    qo.ancestral = o->ancestral;
    qo.windows = o->windows;
    const bool windowed = o->windows.size > 0 || !o->windows.file.empty();
    if (windowed && o->sfs.project.empty())
      throw UsageError("sfs: windows (--window-size, --windows-file) need --project");
    if (windowed && o->common.format == "fs")
      throw UsageError("--format fs holds one spectrum: not with windows");
    Query q = build_query(qo);
    if (o->common.format == "fs") return write_fs(o->common, q, o->sfs);
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
    Query q = build_query(query_options(o->common));
    run_table_command(o->common, q, [&q, &o] { return make_fstats(q, o->f); });
  });
}

}  // namespace

void add_spectra_commands(CLI::App& app) {
  add_sfs(app);
  add_fstats(app);
}

}  // namespace vczstats::cli
