#pragma once
// Which rows pair with which in the variant-pair family (vczstats/variant_pairs.hpp): the band
// of a request, the rows a partition hands over for pairs across its boundaries, and the focal
// filter. Shared by the backends' bands and the statistics' merges.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "vczstats/variant_pairs.hpp"

namespace vczstats::stats::pairs {

/// Where a row is: its ordinal among the selected rows, contig and position.
struct RowPlace {
  std::int64_t ordinal = 0;
  std::int32_t contig = 0;
  std::int64_t pos = 0;
};

/// Whether rows @p a and @p b (a first) are in the band of @p r.
inline bool in_band(const PairRequest& r, const RowPlace& a, const RowPlace& b) {
  return a.contig == b.contig && b.ordinal - a.ordinal <= r.max_variants &&
         b.pos - a.pos <= r.max_bp;
}

/// Whether row @p b may pair with a row before the partition whose first row is @p first.
inline bool in_head(const PairRequest& r, const RowPlace& first, const RowPlace& b) {
  return b.contig == first.contig && b.ordinal - first.ordinal < r.max_variants &&
         b.pos - first.pos <= r.max_bp;
}

/// Whether row @p a may pair with a row after the partition whose last row is @p last.
inline bool in_tail(const PairRequest& r, const RowPlace& last, const RowPlace& a) {
  return a.contig == last.contig && last.ordinal - a.ordinal < r.max_variants &&
         last.pos - a.pos <= r.max_bp;
}

/// Whether global variant @p v is a focal row of @p r.
inline bool is_focal(const PairRequest& r, std::int64_t v) {
  return std::binary_search(r.focal.begin(), r.focal.end(), v);
}

/// Whether the pair (a, b), a before b (or a == b), is evaluated: every pair of the band, or
/// with focal_only the pairs with a focal end and the focal rows with themselves.
inline bool wanted(const PairRequest& r, bool focal_a, bool focal_b, bool same) {
  if (!r.focal_only) return !same;
  return same ? focal_b : (focal_a || focal_b);
}

}  // namespace vczstats::stats::pairs
