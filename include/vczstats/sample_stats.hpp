#pragma once
/// @file sample_stats.hpp
/// @brief Per-sample sums of the heavy pass: missingness (plink2 --missing, .smiss) and the
/// homozygosity behind the inbreeding coefficient F (plink2 --het).

#include <cstdint>

#include "vczstats/exact_sum.hpp"

namespace vczstats::stats {

/// @brief What one sample accumulates over the selected sites.
struct SampleSums {
  std::int64_t obs_ct = 0;      ///< sites where the sample has a genotype slot (not all fill)
  std::int64_t missing_ct = 0;  ///< ... of which its genotype has a missing allele
  std::int64_t het_sites = 0;   ///< N of --het: its complete diploid calls at polymorphic sites
  std::int64_t o_hom = 0;       ///< ... of which homozygous
  ExactSum e_hom;               ///< sum over those sites of sum_a p_a^2 (exact: any order of units)

  /// @brief Add another block's or partition's sums.
  void merge(const SampleSums& o) {
    obs_ct += o.obs_ct;
    missing_ct += o.missing_ct;
    het_sites += o.het_sites;
    o_hom += o.o_hom;
    e_hom += o.e_hom;
  }
};

}  // namespace vczstats::stats
