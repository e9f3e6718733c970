#pragma once
// The host side of a variant-pair band, shared by the CPU and GPU bands: which rows of each unit
// are selected, their ordinals, places and totals, the halo of rows a later row may pair with,
// the first partner of each new row, and the rows handed over for pairs across partitions.
// Rows are numbered by ordinal; the halo is rows [front(), end()).

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "backend/pair_band.hpp"
#include "stats/ld_math.hpp"
#include "stats/pair_window.hpp"
#include "vczstats/error.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/variants.hpp"

namespace vczstats::backend {

class BandRows {
 public:
  struct Row {
    std::int64_t variant = 0;
    stats::pairs::RowPlace place;
    bool focal = false;
    bool head = false;       ///< may pair with a row before the run (its planes are handed over)
    std::int64_t n = 0;      ///< called samples (haplotypes)
    std::int64_t het = 0;    ///< genotypes: het calls; haplotypes: 0
    std::int64_t alt = 0;    ///< genotypes: two-non-REF calls; haplotypes: non-REF alleles
    std::int64_t first = 0;  ///< ordinal of its first partner (itself when none)
    /// With a reducer (stats/banded_pairs.hpp): its coordinate, non-REF within each count mask.
    double coord = 0;
    std::array<std::int64_t, 3> masked_alt{};
  };

  /// @p width: bits per plane (-1: the selection's samples, or haplotypes; a band that compacts
  /// its planes to a mask's bits gives their number).
  explicit BandRows(const PairBandSpec& spec, std::int64_t width = -1)
      : spec_(spec), reader_(*spec.store, false, false) {
    const auto& r = spec.request;
    if (r.max_variants < 0 || r.max_bp < 0) throw UsageError("variant pairs: negative window");
    haplotypes_ = r.haplotypes();
    width_ = width >= 0 ? width : haplotypes_ ? spec.samples * spec.ploidy : spec.samples;
    words_ = stats::ld::plane_words(width_);
    row_words_ = haplotypes_ ? 2 * words_ : 3 * words_;
  }

  bool haplotypes() const { return haplotypes_; }
  /// Bits per plane (samples, or haplotypes) and words per plane and per row.
  std::int64_t width() const { return width_; }
  std::int64_t plane_words() const { return words_; }
  std::int64_t row_words() const { return row_words_; }

  /// Add unit @p u's selected rows (their totals are set later through row()); returns the unit
  /// rows (indices into the unit) of the new ordinals [end() before, end() after).
  const std::vector<std::int64_t>& add_unit(std::int64_t u) {
    const vcz::WorkUnit& unit = spec_.plan->units[static_cast<std::size_t>(u)];
    const vcz::VariantBlock vb = reader_.read(unit.begin, unit.end);
    unit_rows_.clear();
    for (std::int64_t r = 0; r < unit.size(); ++r) {
      if (!unit.mask.empty() && !unit.mask[static_cast<std::size_t>(r)]) continue;
      Row row;
      row.variant = unit.begin + r;
      row.place = {end(), vb.contig[static_cast<std::size_t>(r)],
                   vb.position[static_cast<std::size_t>(r)]};
      row.focal =
          !spec_.request.focal.empty() && stats::pairs::is_focal(spec_.request, row.variant);
      if (end() == 0) first_ = row.place;
      row.head = stats::pairs::in_head(spec_.request, first_, row.place);
      // The first partner: the band's rows start no earlier than the previous row's.
      std::int64_t lo = rows_.empty() ? row.place.ordinal : rows_.back().first;
      lo = std::max(lo, front_);
      while (lo < row.place.ordinal &&
             !stats::pairs::in_band(spec_.request, at(lo).place, row.place))
        ++lo;
      row.first = lo;
      rows_.push_back(row);
      unit_rows_.push_back(r);
    }
    return unit_rows_;
  }

  std::int64_t front() const { return front_; }
  std::int64_t end() const { return front_ + static_cast<std::int64_t>(rows_.size()); }
  Row& at(std::int64_t ordinal) { return rows_[static_cast<std::size_t>(ordinal - front_)]; }
  const Row& at(std::int64_t ordinal) const {
    return rows_[static_cast<std::size_t>(ordinal - front_)];
  }
  bool complete(std::int64_t ordinal) const { return at(ordinal).n == width_; }

  /// Whether the pair (i, j), i <= j, is evaluated (the band holds it; the focal filter).
  bool wanted(std::int64_t i, std::int64_t j) const {
    return stats::pairs::wanted(spec_.request, at(i).focal, at(j).focal, i == j);
  }

  /// The batch row of ordinal @p o.
  PairRow batch_row(std::int64_t o) const {
    const Row& r = at(o);
    PairRow p;
    p.variant = r.variant;
    p.pos = r.place.pos;
    p.contig = r.place.contig;
    p.n = r.n;
    if (haplotypes_) {
      p.sum = r.alt;
      p.ssq = r.alt;
    } else {
      p.sum = r.het + 2 * r.alt;
      p.ssq = r.het + 4 * r.alt;
    }
    return p;
  }

  /// Drop the rows no later row pairs with; returns how many went.
  std::int64_t evict() {
    if (rows_.empty()) return 0;
    const auto last = rows_.back().place;
    std::int64_t n = 0;
    while (!rows_.empty() && !stats::pairs::in_tail(spec_.request, last, rows_.front().place)) {
      rows_.pop_front();
      ++front_;
      ++n;
    }
    return n;
  }

  /// The ordinals handed over at the end: rows a row after the run may pair with.
  std::vector<std::int64_t> tail() const {
    std::vector<std::int64_t> out;
    if (rows_.empty()) return out;
    const auto last = rows_.back().place;
    for (std::int64_t o = front_; o < end(); ++o)
      if (stats::pairs::in_tail(spec_.request, last, at(o).place)) out.push_back(o);
    return out;
  }

 private:
  PairBandSpec spec_;
  vcz::VariantReader reader_;
  bool haplotypes_ = false;
  std::int64_t width_ = 0, words_ = 0, row_words_ = 0;
  std::deque<Row> rows_;
  std::int64_t front_ = 0;
  stats::pairs::RowPlace first_;
  std::vector<std::int64_t> unit_rows_;
};

/// Pairs found in @p blocks blocks of work on up to @p threads threads (the caller's among them):
/// @p block(b, part) appends block b's pairs to part; the parts are joined in block order.
template <class Block>
void pairs_in_blocks(unsigned threads, std::int64_t blocks, std::vector<PairValue>& out,
                     Block&& block) {
  if (blocks <= 0) return;
  std::vector<std::vector<PairValue>> parts(static_cast<std::size_t>(blocks));
  ThreadPool::shared().run_claimed(
      threads, blocks, [&](std::int64_t b) { block(b, parts[static_cast<std::size_t>(b)]); });
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
}

}  // namespace vczstats::backend
