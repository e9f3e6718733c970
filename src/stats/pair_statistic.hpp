#pragma once
// The part the variant-pair statistics (ld, prune) share: their checks of the query, the
// request, the window of rows they keep (ordinals [front_, count_), each a Row whose `meta` is
// the band's PairRow), and the planes of a partition's first rows (its head) and last rows (its
// tail), with which merge() evaluates the pairs across a partition boundary that no band saw
// (stats/pair_boundary.hpp). A partition that does not start the run is unresolved: it keeps
// its head, and its rows until a merge resolves it.

#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include "stats/pair_boundary.hpp"
#include "stats/statistic_support.hpp"

namespace vczstats::stats::pairs {

template <class Row>
class PairStatistic : public Statistic {
 public:
  PassNeeds needs() const override { return {}; }
  const PairRequest* pair_request() const override { return &request_; }
  void begin(const stats::SiteCursor& cursor) override { resolved_ = cursor.selected == 0; }

 protected:
  /// @throws FormatError without call_genotype, UsageError with fewer than two samples
  /// (@p command names the command in the messages).
  PairStatistic(const Query& q, const std::string& command)
      : contigs_(stats::detail::contig_labels(q)) {
    if (!q.store.has_genotypes())
      throw FormatError(q.store.path() + ": " + command + " needs call_genotype");
    if (q.samples.size() < 2) throw UsageError(command + " needs at least two samples");
  }

  /// Take a batch's rows (each made a Row by @p make_row(const PairRow&)) and the planes of the
  /// unresolved partition's head; or, from the batch of the partition's last rows (unit < 0),
  /// its tail. Returns whether the batch brought rows (and pairs).
  template <class MakeRow>
  bool take_batch(const PairBatch& batch, MakeRow&& make_row) {
    auto row_of = [&](std::int64_t v) {
      const std::int64_t o = ordinal(v);
      return std::pair<const PairRow&, std::int64_t>(at(o).meta, o);
    };
    if (batch.unit < 0) {
      tail_ = {};
      add_planes(batch.planes, row_of, tail_);
      return false;
    }
    for (const PairRow& r : batch.rows) rows_.push_back(make_row(r));
    count_ += static_cast<std::int64_t>(batch.rows.size());
    if (!resolved_) add_planes(batch.planes, row_of, head_);
    return true;
  }

  /// Append the rows of the partition @p later, which comes right after this one (each row first
  /// given to @p moved(Row&, shift), shift being the number of our rows; without rows of ours,
  /// also the later one's dropped rows: it may have started the run), hand the pairs between
  /// our tail and its head to @p on_pair(const PairValue&), and keep the merged head and tail.
  template <class Moved, class OnPair>
  void merge_partition(PairStatistic& later, Moved&& moved, OnPair&& on_pair) {
    const std::int64_t shift = count_;
    const bool had_rows = count_ > 0;
    const RowPlace first = had_rows ? place(front_) : RowPlace{};
    for (auto& r : later.rows_) {
      moved(r, shift);
      rows_.push_back(std::move(r));
    }
    // Without rows of ours, the later partition may have started the run (no selected variant
    // before it) and dropped the rows it was done with.
    if (!had_rows) front_ = later.front_;
    count_ += later.count_;
    later.head_.shift(shift);
    later.tail_.shift(shift);
    cross_pairs(request_, width_, tail_, later.head_, on_pair);
    if (!resolved_) {  // the merged head: ours, and the later one's rows it still reaches
      if (!had_rows) {
        head_ = later.head_;
      } else {
        later.head_.filter([&](const RowPlace& p) { return in_head(request_, first, p); });
        head_.append(later.head_);
      }
    }
    if (later.count_ > 0) {  // the merged tail: ours still within reach, then the later one's
      const RowPlace last = place(count_ - 1);
      tail_.filter([&](const RowPlace& p) { return in_tail(request_, last, p); });
      tail_.append(later.tail_);
    }
    later.rows_.clear();
    later.count_ = 0;
  }

  /// The end of the rows from ordinal @p begin on that no later variant can pair with (their
  /// values are final); @p begin while the partition is unresolved.
  std::int64_t final_end(std::int64_t begin) const {
    if (!resolved_ || rows_.empty()) return begin;
    const RowPlace last = place(count_ - 1);
    std::int64_t end = begin;
    while (end < count_ && !in_tail(request_, last, place(end))) ++end;
    return end;
  }
  /// Drop the kept rows before ordinal @p limit that no later variant pairs with.
  void drop_rows(std::int64_t limit) {
    if (rows_.empty()) return;
    const RowPlace last = place(count_ - 1);
    while (front_ < limit && !in_tail(request_, last, place(front_))) {
      rows_.pop_front();
      ++front_;
    }
  }
  /// @throws Error unless @p later has kept every row (statistics that release rows).
  static void expect_whole(const PairStatistic& later, std::int64_t released) {
    if (later.front_ != 0 || released != 0)
      throw Error(later.name() + ": merging a partition that already released rows");
  }

  /// The shared state, rows written by @p save_row(ByteWriter&, const Row&).
  template <class SaveRow>
  void save_rows(ByteWriter& w, SaveRow&& save_row) const {
    w.put_string(name());
    w.put<std::uint8_t>(resolved_);
    w.put(front_);
    w.put(count_);
    w.put<std::uint64_t>(rows_.size());
    for (const Row& r : rows_) save_row(w, r);
    head_.save(w);
    tail_.save(w);
  }
  /// The shared state saved by save_rows(), rows read by @p load_row(ByteReader&) -> Row.
  template <class LoadRow>
  void load_rows(ByteReader& r, LoadRow&& load_row) {
    r.expect(name());
    resolved_ = r.get<std::uint8_t>() != 0;
    front_ = r.get<std::int64_t>();
    count_ = r.get<std::int64_t>();
    const auto n = r.get<std::uint64_t>();
    if (n != static_cast<std::uint64_t>(count_ - front_))
      throw FormatError("statistic state: " + name() + " rows do not add up");
    rows_.clear();
    for (std::uint64_t k = 0; k < n; ++k) rows_.push_back(load_row(r));
    head_.load(r);
    tail_.load(r);
  }

  Row& at(std::int64_t o) { return rows_[static_cast<std::size_t>(o - front_)]; }
  const Row& at(std::int64_t o) const { return rows_[static_cast<std::size_t>(o - front_)]; }
  RowPlace place(std::int64_t o) const {
    const PairRow& m = at(o).meta;
    return {o, m.contig, m.pos};
  }
  /// The ordinal of variant @p v, or -1 when its row is gone (before the kept rows).
  /// @throws Error when the statistic has not seen it.
  std::int64_t ordinal_or_gone(std::int64_t v) const {
    const auto it =
        std::lower_bound(rows_.begin(), rows_.end(), v,
                         [](const Row& r, std::int64_t x) { return r.meta.variant < x; });
    if (it == rows_.end() || it->meta.variant != v) {
      if (!rows_.empty() && v < rows_.front().meta.variant) return -1;
      throw Error(name() + ": a pair names a variant the statistic has not seen");
    }
    return front_ + (it - rows_.begin());
  }
  /// The ordinal of variant @p v, a kept row. @throws Error otherwise.
  std::int64_t ordinal(std::int64_t v) const {
    const std::int64_t o = ordinal_or_gone(v);
    if (o < 0) throw Error(name() + ": a pair names a variant the statistic has dropped");
    return o;
  }
  /// ordinal() trying @p hint (where the last lookup of its kind found its row; updated) and the
  /// few rows after it before the search: a batch's pairs come in runs of one row with the rows
  /// that follow one another.
  std::int64_t ordinal_near(std::int64_t v, std::int64_t& hint) const {
    for (std::int64_t o = std::max(hint, front_); o < count_ && o < hint + 4; ++o)
      if (at(o).meta.variant == v) return hint = o;
    return hint = ordinal(v);
  }

  PairRequest request_;
  std::int64_t width_ = 0;  // samples, or haplotypes of a haplotype request
  std::shared_ptr<const std::vector<std::string>> contigs_;
  bool resolved_ = true;  // starts the run: rows may be decided and released
  std::deque<Row> rows_;  // ordinals [front_, count_)
  std::int64_t front_ = 0, count_ = 0;
  BoundaryRows head_, tail_;
};

/// A pair statistic whose rows each lead output rows, released in order once no later variant
/// can pair with the row (ld, ld --ld-scores). @p Derived gives empty_table() (the columns),
/// add_pair(const PairValue&) and emit(Row&, Table&) (a released row's output rows).
template <class Derived, class Row>
class ReleasingPairStatistic : public PairStatistic<Row> {
 public:
  Table take_rows() override {
    Table t = self().empty_table();
    release(this->final_end(released_), t);
    return t;
  }

  Table finish() override {
    Table t = self().empty_table();
    release(this->count_, t);
    return t;
  }

  void merge(Statistic& later_base) override {
    auto& later = stats::detail::same_statistic(self(), later_base);
    this->expect_whole(later, later.released_);
    this->merge_partition(
        later, [](Row&, std::int64_t) {}, [&](const PairValue& v) { self().add_pair(v); });
  }

 protected:
  using PairStatistic<Row>::PairStatistic;

  /// The shared state and the released count, rows written by @p save_row (as save_rows()).
  template <class SaveRow>
  void save_released(ByteWriter& w, SaveRow&& save_row) const {
    this->save_rows(w, save_row);
    w.put(released_);
  }
  /// What save_released() wrote, rows read by @p load_row (as load_rows()).
  template <class LoadRow>
  void load_released(ByteReader& r, LoadRow&& load_row) {
    this->load_rows(r, load_row);
    released_ = r.get<std::int64_t>();
  }

  std::int64_t released_ = 0;  // rows whose output rows are handed out

 private:
  Derived& self() { return static_cast<Derived&>(*this); }

  /// Emit the rows led by ordinals [released_, end) into @p t, then drop the rows no later
  /// variant pairs with.
  void release(std::int64_t end, Table& t) {
    for (; released_ < end; ++released_) self().emit(this->at(released_), t);
    this->drop_rows(released_);
  }
};

}  // namespace vczstats::stats::pairs
