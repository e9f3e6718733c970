#pragma once
/// @file simulate.hpp
/// @brief Stores without htslib: a deterministic simulator of cohorts with a neutral site
/// frequency spectrum, linkage disequilibrium and population structure (simulate()), and
/// ms/scrm output converted to VCF Zarr (ms_to_vcz()). Both write the genotypes-only layout of
/// `vczstats convert` (bio2zarr's, vcf_zarr_version 0.4).

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace vczstats::simulate {

/// @brief What to simulate and how to write it.
///
/// The model (deterministic for a seed, whatever the thread count):
/// - Sites: each site's derived (ALT; REF is ancestral) allele has an ancestral frequency p drawn
///   from the neutral density proportional to 1/p on [1e-3 / H, 1] (H haplotypes). With one
///   population the site's derived count is Binomial(H, p), conditioned on 0 < count < H; this
///   gives the expected spectrum of the standard neutral coalescent, proportional to 1/i for
///   i = 1..H-1 (it is exact up to 0.1% at i = 1). With K populations each population k draws
///   its own frequency from Balding-Nichols, p_k ~ Beta(p (1-F)/F, (1-p) (1-F)/F), and its
///   count from Binomial(H_k, p_k), so F is the expected F_ST of a population against the
///   ancestral one and Hudson's F_ST between two populations.
/// - Linkage: each population's haplotypes are ordered (a permutation, like the leaf order of
///   a local genealogy), and a site's n_k carriers are n_k haplotypes consecutive in that order
///   from a random start. Between consecutive sites d bp apart a fraction 1 - exp(-d / ld_length)
///   of the haplotypes, chosen at random, recombine: they exchange places in the order. Nearby
///   sites therefore share carriers (haplotype blocks whose identity decays with distance). A
///   site reuses the carriers of one of the 16 previous sites with probability
///   shared_branches (mutations on one branch); its count then has every site's distribution.
/// - Positions: one site per interval of length/variants bp, uniform within it.
/// - Alleles: REF uniform over A, C, G, T; ALT a transition with probability 2/3.
/// - Missing calls: each call (all alleles of a sample at a site) independently with
///   probability `missing`; missing calls are unphased, the others phased.
struct SimulateOptions {
  std::int64_t samples = 1000;
  std::int64_t variants = 0;  ///< 0: theta * a_H * length (Watterson's expectation)
  std::int64_t length = 0;    ///< bp; 0: variants / (theta * a_H)
  double theta = 1e-3;        ///< population-scaled mutation rate per bp
  int ploidy = 2;
  int populations = 1;
  double fst = 0.05;   ///< Balding-Nichols F (with populations > 1)
  double missing = 0;  ///< probability that a call is missing
  /// Also write call_GQ and call_DP (int8; GQ uniform over 0-99, DP over 0-49, from a hash of
  /// the call), for the genotype masks --min-gq/--min-dp and their benchmarks.
  bool quality = false;
  double ld_length = 10000;      ///< bp over which a haplotype keeps its place with prob. 1/e
  double shared_branches = 0.7;  ///< probability that a site reuses a recent site's carriers
  std::uint64_t seed = 1;
  std::string contig = "1";
  std::int64_t variants_chunk_size = 1000;  ///< bio2zarr's default
  std::int64_t samples_chunk_size = 10000;  ///< bio2zarr's default
  int zarr_format = 2;
  unsigned threads = 0;  ///< 0 = all cores
  /// @brief Called after each batch of chunks: variants written and the total.
  std::function<void(std::int64_t done, std::int64_t total)> progress;
  /// @brief Polled between batches; when it becomes true simulate() throws IoError.
  const std::atomic<bool>* cancelled = nullptr;
};

/// @brief What simulate() or ms_to_vcz() wrote.
struct WriteReport {
  std::int64_t variants = 0;
  std::int64_t samples = 0;
  int ploidy = 0;
  std::int64_t contigs = 0;
  std::int64_t length = 0;  ///< bp per contig
  std::int64_t calls = 0;   ///< variants x samples x ploidy
  std::uint64_t stored_bytes = 0;
  std::uint64_t genotype_stored_bytes = 0;  ///< call_genotype alone
  double seconds = 0;
};

/// @brief The number of variants and the length that @p options imply (see SimulateOptions).
/// @throws UsageError when neither is given, or the variants do not fit the length.
std::pair<std::int64_t, std::int64_t> simulated_extent(const SimulateOptions& options);

/// @brief (sample, population) names of the simulated samples: sample i is "s<i>" with one
/// population ("all"), else "pop<k>_s<i>" in population "pop<k>" (populations are consecutive
/// blocks of samples of equal size, up to one).
std::vector<std::pair<std::string, std::string>> simulated_samples(const SimulateOptions& options);

/// @brief Simulate into a new directory store at @p store_dir.
/// @throws UsageError for invalid options, IoError for I/O failures or cancellation.
WriteReport simulate(const std::filesystem::path& store_dir, const SimulateOptions& options);

/// @brief How to convert ms output.
struct MsOptions {
  int ploidy = 2;           ///< consecutive haplotypes form one sample
  std::int64_t length = 0;  ///< bp per replicate; 0: nsites of -r, else 1,000,000
  bool first_only = false;  ///< only the first replicate
  std::int64_t variants_chunk_size = 1000;
  std::int64_t samples_chunk_size = 10000;
  int zarr_format = 2;
  unsigned threads = 0;
  /// @brief Called after each batch of chunks: variants written and the total.
  std::function<void(std::int64_t done, std::int64_t total)> progress;
  const std::atomic<bool>* cancelled = nullptr;
};

/// @brief Convert ms or scrm output (`//`, `segsites:`, `positions:`, one 0/1 line per
/// haplotype) into a directory store at @p store_dir: replicate r becomes contig "r" (1-based)
/// of length MsOptions::length, positions x in [0, 1) become floor(x * length) + 1, moved up
/// (then down, at the contig's end) by the fewest bp that make them strictly increasing;
/// REF A, ALT T (ms's 0 and 1). "-" reads standard input (held in memory); a file is mapped.
/// @throws FormatError naming the file and line for malformed input.
WriteReport ms_to_vcz(const std::string& input, const std::filesystem::path& store_dir,
                      const MsOptions& options);

}  // namespace vczstats::simulate
