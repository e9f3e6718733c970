// vczstats simulate: a deterministic generator of cohorts with a neutral spectrum, linkage
// disequilibrium and population structure, written as a VCF Zarr store (see simulate.hpp).

#include <fmt/format.h>

#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/error.hpp"
#include "vczstats/simulate.hpp"

namespace vczstats::cli {
namespace {

struct SimulateCliOptions : StoreWriteOptions {
  simulate::SimulateOptions sim;
  std::string pops_file;
};

void run_simulate(SimulateCliOptions& o) {
  // Check the options (and the extent they imply) before creating anything.
  o.sim.variants_chunk_size = o.variants_chunk_size;
  o.sim.samples_chunk_size = o.samples_chunk_size;
  o.sim.zarr_format = o.zarr_format;
  o.sim.threads = o.threads;
  simulate::simulated_extent(o.sim);
  OutputStore out(o.output, o.force);
  o.sim.cancelled = &out.cancelled();
  if (auto bar = progress_bar(o.progress))
    o.sim.progress = [bar](std::int64_t done, std::int64_t total) { bar(done, total, done); };
  const auto store = out.work() / "store";
  const auto report = simulate::simulate(store, o.sim);
  if (!o.pops_file.empty()) {
    Output pops(o.pops_file);
    std::string text = "sample\tpopulation\n";
    for (const auto& [sample, pop] : simulate::simulated_samples(o.sim))
      text += sample + "\t" + pop + "\n";
    write(pops, text);
    pops.commit();
  }
  out.commit_store(store);
  if (o.verbose) report_store_written(o.output, report);
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto o = std::make_shared<SimulateCliOptions>();
  auto& s = o->sim;
  auto* cmd = app.add_subcommand(
      "simulate",
      "Simulate a cohort into a VCF Zarr store (the layout of convert: sample_id, contigs, "
      "variant_position, variant_allele, variant_id, call_genotype int8, _phased, _mask; blosc "
      "zstd 7, bit shuffle for genotypes). Deterministic for a --seed, whatever -t.\n"
      "Model: biallelic sites, REF ancestral. Each site's ancestral derived-allele frequency p "
      "has the neutral density 1/p; its derived count among the H = samples x ploidy haplotypes "
      "is Binomial(H, p), kept when 0 < count < H. The expected site frequency spectrum is then "
      "the standard neutral coalescent's, proportional to 1/i (i = 1..H-1): singletons are "
      "1/a_H of the sites, a_H = sum 1/i, and Tajima's D is 0 in expectation; unlike a "
      "coalescent, sites are conditionally independent given the haplotype order below, so the "
      "spectrum varies less along the genome than in a coalescent with the same theta (no "
      "genealogy-wide fluctuations), and the number of sites is Watterson's expectation, "
      "theta x a_H x length, not a random one. With --pops K, population k's frequency is "
      "Balding-Nichols, Beta(p(1-F)/F, (1-p)(1-F)/F) with F = --fst (Hudson's F_ST between "
      "populations is about F), and its count Binomial in its own haplotypes.\n"
      "Linkage: the haplotypes of a population are kept in an order, like the leaf order of a "
      "local genealogy; a site's carriers in a population are consecutive in that order (from a "
      "random start), so nearby sites share carriers. Between sites d bp apart a fraction "
      "1 - exp(-d / --ld-length) of the haplotypes recombine: they exchange places at random. "
      "This is a copying mosaic: a haplotype keeps its neighbours (and their alleles) for about "
      "--ld-length bp. A site reuses the carriers (the clade) of one of the 16 previous sites "
      "with probability --shared-branches, as mutations on one branch of a local genealogy "
      "do; its count then has the same distribution, so the spectrum is unchanged. With the "
      "defaults, the mean r^2 of common sites (MAF > 5%) against distance follows scrm's with "
      "rho = theta = 0.001/bp within about 0.05 up to 20 kb (0.34 below 500 bp, 0.18 at "
      "2-5 kb), and decays faster beyond; the genotypes compress about as scrm's do.\n"
      "Missing calls: each (sample, site) with probability --missing, written ./. (unphased); "
      "the other calls are phased. Samples are s0, s1, ... (pop<k>_s<i> with --pops > 1; "
      "--pops-file writes the table for -P).");
  add_store_write_options(*cmd, *o, "Threads [default: all cores]");
  cmd->add_option("--samples", s.samples, "Samples")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{100'000'000}))
      ->capture_default_str();
  cmd->add_option("--variants", s.variants,
                  "Sites [default: theta x a_H x --length, Watterson's expectation]")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{2'147'483'646}));
  cmd->add_option("--length", s.length, "Contig length in bp [default: --variants / (theta x a_H)]")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{2'147'483'646}));
  cmd->add_option("--theta", s.theta, "Population-scaled mutation rate per bp (sets the density)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--ploidy", s.ploidy, "Ploidy")->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_option("--pops", s.populations,
                  "Populations: consecutive blocks of samples of equal size")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--fst", s.fst, "Balding-Nichols F of each population (with --pops > 1)")
      ->check(CLI::Range(0.0, 0.999))
      ->capture_default_str();
  cmd->add_option("--missing", s.missing, "Probability that a call is missing")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_flag("--gq-dp", s.quality,
                "Also write call_GQ (0-99) and call_DP (0-49), uniform from a hash of each call, "
                "for --min-gq/--min-dp");
  cmd->add_option("--ld-length", s.ld_length,
                  "Linkage scale in bp: a haplotype keeps its place in the order over d bp with "
                  "probability exp(-d / this)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--shared-branches", s.shared_branches,
                  "Probability that a site reuses the carriers of a recent site")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--seed", s.seed, "Random seed")->capture_default_str();
  cmd->add_option("--contig", s.contig, "Contig name")->capture_default_str();
  cmd->add_option("--pops-file", o->pops_file,
                  "Also write the sample -> population table (for -P/--pops) to this file");
  cmd->callback([o] { run_store_command([&] { run_simulate(*o); }); });
}

}  // namespace vczstats::cli
