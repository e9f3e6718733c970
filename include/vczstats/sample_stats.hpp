#pragma once
/// @file sample_stats.hpp
/// @brief Per-sample statistics: missingness (plink2 --missing, .smiss) and the inbreeding
/// coefficient F from homozygosity (plink2 --het), with population allele frequencies.

#include <cstdint>
#include <vector>

#include "vczstats/engine.hpp"
#include "vczstats/populations.hpp"

namespace vczstats::stats {

/// @brief What one sample accumulates over the selected sites.
struct SampleSums {
  std::int64_t obs_ct = 0;      ///< sites where the sample has a genotype slot (not all fill)
  std::int64_t missing_ct = 0;  ///< ... of which its genotype has a missing allele
  std::int64_t het_sites = 0;   ///< N of --het: its complete diploid calls at polymorphic sites
  std::int64_t o_hom = 0;       ///< ... of which homozygous
  double e_hom = 0;             ///< sum over those sites of sum_a p_a^2
};

/// @brief Per-sample sums over the plan, in selection order. --het's expectation uses, at each
/// site, the allele frequencies among the complete diploid calls of the sample's population, at
/// sites where that population shows at least two alleles (POPGEN.md §8). Two passes per work
/// unit (population counts, then per-sample sums; the genotypes are decoded twice), CPU only.
/// @p alleles: allele columns of the store.
std::vector<SampleSums> run_sample_stats(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                                         const vcz::SampleSelection& samples,
                                         const vcz::Populations& pops, int alleles,
                                         const RunOptions& run, RunStats* stats = nullptr);

}  // namespace vczstats::stats
