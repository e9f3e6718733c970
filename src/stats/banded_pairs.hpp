#pragma once
// A variant-pair statistic that asks for more than one band over the same units (ld-stats of
// several populations: one band per set of haplotypes; ld --decay -P: one band per population).
// PairPasses (dispatch/pair_passes.cpp) finds it by dynamic_cast, makes one band per entry of
// pair_bands() and hands each batch to accumulate_band() with the entry's index; pair_request() and
// accumulate_pairs() are not used.

#include <cstdint>
#include <vector>

#include "vczstats/variant_pairs.hpp"

namespace vczstats::stats::pairs {

/// @brief One band of a statistic with several: its request, and the allele slots it counts.
struct PairBandRequest {
  PairRequest request;
  /// Count only the plane bits whose bit is set (one 64-bit word per 64 bits, as the planes:
  /// samples of a genotype request, allele slots of a haplotype request; empty: every bit), e.g.
  /// one population's samples or haplotypes (backend/pair_band.hpp).
  std::vector<std::uint64_t> mask;
};

/// @brief A statistic of several bands (see the file comment).
class BandedPairs {
 public:
  virtual ~BandedPairs() = default;
  /// @brief The bands, in the order of the indices accumulate_band() gets.
  virtual std::vector<const PairBandRequest*> pair_bands() const = 0;
  /// @brief A batch of band @p band (its units in plan order, then its final batch).
  virtual void accumulate_band(std::size_t band, PairBatch&& batch) = 0;
};

}  // namespace vczstats::stats::pairs
