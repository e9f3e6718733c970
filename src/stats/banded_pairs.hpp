#pragma once
// A variant-pair statistic that asks for more than one band over the same units (ld-stats of
// several populations: one band per set of haplotypes; ld --decay -P: one band per population).
// PairPasses (dispatch/pair_passes.cpp) finds it by dynamic_cast, makes one band per entry of
// pair_bands() and hands each batch to accumulate_band() with the entry's index; pair_request() and
// accumulate_pairs() are not used.

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "vczstats/variant_pairs.hpp"

namespace vczstats::stats::moments {
struct DeviceReduction;  // stats/ld_moments_terms.hpp
}

namespace vczstats::stats::pairs {

/// @brief A band row as a reducer sees it: its place, its coordinate, its totals over the band's
/// bits and within each of the reducer's count masks.
struct ReducedRow {
  std::int64_t variant = 0, pos = 0;
  std::int32_t contig = 0;
  double coord = 0;                          ///< PairReducer::coordinate()
  std::int64_t n = 0, alt = 0;               ///< haplotypes called, and non-REF among them
  std::array<std::int64_t, 3> masked_alt{};  ///< non-REF within count mask k
};

/// @brief The sums of some of a band's pairs (PairReducer::start), merged by addition: exact, so
/// any split of the pairs (threads, units) gives the same sums.
class PairSum {
 public:
  virtual ~PairSum() = default;
  /// @brief The wanted pair (i before j) of two haplotype rows: @p ab haplotypes non-REF at both
  /// (every bit of the band), @p masked_ab[k] of them within count mask k.
  virtual void add(const ReducedRow& i, const ReducedRow& j, std::int64_t ab,
                   const std::array<std::int64_t, 3>& masked_ab) = 0;
  /// @brief The wanted pairs (i[k], j), k < @p count (rows before j, in order), with their
  /// counts @p x (four a pair: ab, then masked_ab): add() of each unless overridden.
  virtual void add_row(const ReducedRow* i, std::int64_t count, const ReducedRow& j,
                       const std::int64_t* x) {
    for (std::int64_t k = 0; k < count; ++k, x += 4) add(i[k], j, x[0], {x[1], x[2], x[3]});
  }
  /// @brief Add @p other, a sum of the same reducer.
  virtual void merge(const PairSum& other) = 0;
};

/// @brief Sums a haplotype band's pairs where the band counts them instead of handing them over:
/// the band then hands each unit's PairSum over in PairBatch::reduced, and no pairs. A backend may
/// leave the reducer unused and hand over the pairs (the GPU band does): the statistic takes
/// either. Only on a band without a mask.
class PairReducer {
 public:
  virtual ~PairReducer() = default;
  /// @brief Up to three masks of the planes' bits (as PairBandRequest::mask) whose counts add()
  /// gets besides the band's.
  virtual const std::vector<std::vector<std::uint64_t>>& count_masks() const = 0;
  /// @brief A row's coordinate (ReducedRow::coord), once per row.
  virtual double coordinate(std::int32_t contig, std::int64_t pos) const = 0;
  /// @brief An empty sum.
  virtual std::unique_ptr<PairSum> start() const = 0;
  /// @brief What a device needs to sum the pairs itself (ld-stats: the basis, the bins, the
  /// populations; stats/ld_moments_terms.hpp), or null: a device band then hands over the pairs.
  virtual const moments::DeviceReduction* device() const { return nullptr; }
  /// @brief The sum holding the device's per-bin sums @p words (DeviceReduction's layout); null
  /// without device().
  virtual std::unique_ptr<PairSum> device_sum(const std::uint64_t* /*words*/) const {
    return nullptr;
  }
};

/// @brief One band of a statistic with several: its request, and the allele slots it counts.
struct PairBandRequest {
  PairRequest request;
  /// Count only the plane bits whose bit is set (one 64-bit word per 64 bits, as the planes:
  /// samples of a genotype request, allele slots of a haplotype request; empty: every bit), e.g.
  /// one population's samples or haplotypes (backend/pair_band.hpp).
  std::vector<std::uint64_t> mask;
  /// Sum the band's pairs with this reducer (see PairReducer), if the backend can.
  std::shared_ptr<const PairReducer> reducer;
  /// Rows and boundary planes only, no pairs: for a band whose pairs another band's reducer
  /// counts through its count masks. Honoured only by a backend that uses reducers.
  bool rows_only = false;
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
