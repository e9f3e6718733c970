#pragma once
// What the variant-pair statistics (ld, prune) keep for the pairs that cross a partition
// boundary: the bit planes of the first rows of a partition (its head) and of its last rows (its
// tail), and the pairs between an earlier partition's tail and a later one's head, evaluated as
// the backends' bands evaluate pairs (stats/ld_math.hpp).

#include <algorithm>
#include <cstdint>
#include <vector>

#include "stats/ld_math.hpp"
#include "stats/pair_window.hpp"
#include "vczstats/archive.hpp"
#include "vczstats/variant_pairs.hpp"

namespace vczstats::stats::pairs {

/// Rows with their planes: the batch rows and ordinals of PairPlanes' variants.
struct BoundaryRows {
  std::vector<PairRow> rows;
  std::vector<std::int64_t> ordinals;
  std::int64_t words_per_row = 0;
  std::vector<std::uint64_t> words;

  std::size_t size() const { return rows.size(); }
  const std::uint64_t* planes(std::size_t k) const {
    return words.data() + static_cast<std::int64_t>(k) * words_per_row;
  }
  RowPlace place(std::size_t k) const { return {ordinals[k], rows[k].contig, rows[k].pos}; }
  void push(const PairRow& row, std::int64_t ordinal, const std::uint64_t* w, std::int64_t wpr) {
    words_per_row = wpr;
    rows.push_back(row);
    ordinals.push_back(ordinal);
    words.insert(words.end(), w, w + wpr);
  }
  /// Keep the rows for which @p keep(place) holds.
  template <class Keep>
  void filter(Keep&& keep) {
    BoundaryRows out;
    for (std::size_t k = 0; k < size(); ++k)
      if (keep(place(k))) out.push(rows[k], ordinals[k], planes(k), words_per_row);
    out.words_per_row = words_per_row;
    *this = std::move(out);
  }
  void shift(std::int64_t by) {
    for (auto& o : ordinals) o += by;
  }
  void append(const BoundaryRows& o) {
    for (std::size_t k = 0; k < o.size(); ++k)
      push(o.rows[k], o.ordinals[k], o.planes(k), o.words_per_row);
  }
  void save(ByteWriter& w) const {
    w.put_vector(rows);
    w.put_vector(ordinals);
    w.put(words_per_row);
    w.put_vector(words);
  }
  void load(ByteReader& r) {
    rows = r.get_vector<PairRow>();
    ordinals = r.get_vector<std::int64_t>();
    words_per_row = r.get<std::int64_t>();
    words = r.get_vector<std::uint64_t>();
    if (ordinals.size() != rows.size() ||
        words.size() !=
            rows.size() * static_cast<std::size_t>(std::max<std::int64_t>(words_per_row, 0)))
      throw FormatError("statistic state: boundary rows of another shape");
  }
};

/// The planes of a batch's rows appended to @p out; @p row_of(variant) gives the row's batch row
/// and ordinal (a std::pair).
template <class RowOf>
void add_planes(const PairPlanes& p, RowOf&& row_of, BoundaryRows& out) {
  for (std::size_t k = 0; k < p.variants.size(); ++k) {
    const auto [row, ordinal] = row_of(p.variants[k]);
    out.push(row, ordinal, p.words.data() + static_cast<std::int64_t>(k) * p.words_per_row,
             p.words_per_row);
  }
  out.words_per_row = p.words_per_row;
}

/// Every pair of the band between @p tail (rows of an earlier partition) and @p head (rows of
/// the partition right after it, ordinals already counted after the earlier one's), evaluated;
/// @p emit(const PairValue&) gets those that pass, a from the tail and b from the head.
template <class Emit>
void cross_pairs(const PairRequest& r, std::int64_t width, const BoundaryRows& tail,
                 const BoundaryRows& head, Emit&& emit) {
  const double prune_thr = ld::prune_threshold(r.min_r2);
  const std::int64_t words = r.haplotypes() ? (tail.words_per_row / 2) : (tail.words_per_row / 3);
  const bool focal = !r.focal.empty();
  for (std::size_t i = 0; i < tail.size(); ++i)
    for (std::size_t j = 0; j < head.size(); ++j) {
      if (!in_band(r, tail.place(i), head.place(j))) continue;
      const PairRow &a = tail.rows[i], &b = head.rows[j];
      if (!wanted(r, focal && is_focal(r, a.variant), focal && is_focal(r, b.variant), false))
        continue;
      PairValue v;
      if (!ld::evaluate_pair(r, prune_thr, width, ld::row_totals(a, r.haplotypes()),
                             ld::row_totals(b, r.haplotypes()), tail.planes(i), head.planes(j),
                             words, ld::ScalarCounts{}, v))
        continue;
      v.a = a.variant;
      v.b = b.variant;
      emit(v);
    }
}

}  // namespace vczstats::stats::pairs
