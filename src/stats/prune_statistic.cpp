// `prune`: plink 1.9's --indep-pairwise (vczstats/ld.hpp) on the edges of the variant-pair band.
//
// The band hands over every pair of the pruning window whose r² is above the threshold (an
// "edge"), tested exactly as plink tests it. plink's greedy then runs here, window by window, on
// the edges alone: within a window of W variants (or W kb) the sweeps look, for each variant in
// order, for its first later partner joined by an edge; of the two, the one with the lower minor
// allele frequency goes (the later one on ties); sweeps repeat until one finds nothing; the
// window moves by S variants, keeping the survivors and the comparisons already made. Variants
// with no variance among their called samples are pruned on sight. A window is processed once
// all its rows (and so all its edges) have arrived; the rows before it are final.
//
// Partitions: the greedy's state at a partition's start depends on everything before it, so a
// partition that does not start the run only collects its rows and edges (and the planes of its
// first and last rows); merge() adds the edges across the boundary and lets the earlier
// partition's greedy run on.

#include <algorithm>
#include <deque>
#include <optional>

#include "stats/pair_boundary.hpp"
#include "stats/statistic_support.hpp"
#include "vczstats/ld.hpp"

namespace vczstats {
namespace {

constexpr double kMafTie = 1 - 0.00000000000005684341886080801486968994140625;  // 1 - 2^-44

class PruneStatistic final : public Statistic {
 public:
  PruneStatistic(const Query& q, const PruneOptions& o) : options_(o) {
    if (!q.store.has_genotypes()) throw FormatError(q.store.path() + ": prune needs call_genotype");
    if (q.samples.size() < 2) throw UsageError("prune needs at least two samples");
    if (o.window_kb ? o.window < 1 : o.window < 2)
      throw UsageError("--indep-pairwise: the window must be at least 2 variants or 1 kb");
    if (o.step < 1) throw UsageError("--indep-pairwise: the step must be at least 1");
    if (!(o.r2 >= 0 && o.r2 <= 1)) throw UsageError("--indep-pairwise: r2 must be in [0, 1]");
    request_.measure = PairMeasure::PruneEdge;
    request_.min_r2 = o.r2;
    if (o.window_kb)
      request_.max_bp = o.window * 1000;
    else
      request_.max_variants = o.window - 1;
    width_ = q.samples.size();
    contigs_ = stats::detail::contig_labels(q);
  }

  std::string name() const override { return "prune"; }
  PassNeeds needs() const override { return {}; }
  const PairRequest* pair_request() const override { return &request_; }
  void begin(const stats::SiteCursor& cursor) override { resolved_ = cursor.selected == 0; }

  void accumulate_pairs(PairBatch&& batch) override {
    auto row_of = [&](std::int64_t v) {
      const std::int64_t o = ordinal(v);
      return std::pair<const PairRow&, std::int64_t>(at(o).meta, o);
    };
    if (batch.unit < 0) {
      tail_ = {};
      stats::pairs::add_planes(batch.planes, row_of, tail_);
      return;
    }
    for (const PairRow& r : batch.rows) {
      Row row;
      row.meta = r;
      row.zero_variance = r.n * r.ssq - r.sum * r.sum == 0;
      rows_.push_back(std::move(row));
    }
    count_ += static_cast<std::int64_t>(batch.rows.size());
    if (!resolved_) stats::pairs::add_planes(batch.planes, row_of, head_);
    std::vector<std::int64_t> touched;
    for (const PairValue& v : batch.pairs) {
      const std::int64_t a = ordinal(v.a);
      if (a < 0) continue;
      at(a).edges.push_back(ordinal(v.b));
      touched.push_back(a);
    }
    for (const std::int64_t a : touched) {  // GPU bands hand pairs over in any order
      auto& e = at(a).edges;
      if (!std::is_sorted(e.begin(), e.end())) std::sort(e.begin(), e.end());
    }
    if (resolved_) run(false);
  }

  Table take_rows() override {
    Table t = empty_table();
    if (resolved_) emit(final_, t);
    return t;
  }

  Table finish() override {
    run(true);
    Table t = empty_table();
    emit(count_, t);
    return t;
  }

  void merge(Statistic& later_base) override {
    auto& later = stats::detail::same_statistic(*this, later_base);
    if (later.resolved_ && later.count_ > 0 && count_ > 0)
      throw Error("prune: merging a partition that began as the first");
    const std::int64_t shift = count_;
    const bool had_rows = count_ > 0;
    const stats::pairs::RowPlace first = had_rows ? place(front_) : stats::pairs::RowPlace{};
    for (auto& r : later.rows_) {
      for (auto& e : r.edges) e += shift;
      rows_.push_back(std::move(r));
    }
    count_ += later.count_;
    later.head_.shift(shift);
    later.tail_.shift(shift);
    stats::pairs::cross_pairs(request_, width_, tail_, later.head_, [&](const PairValue& v) {
      const std::int64_t a = ordinal(v.a);
      if (a >= 0) at(a).edges.push_back(ordinal(v.b));  // a before the window: never asked
    });
    if (!resolved_) {
      if (!had_rows) {
        head_ = later.head_;
      } else {
        later.head_.filter([&](const stats::pairs::RowPlace& p) {
          return stats::pairs::in_head(request_, first, p);
        });
        head_.append(later.head_);
      }
    }
    if (later.count_ > 0) {
      const stats::pairs::RowPlace last = place(count_ - 1);
      tail_.filter([&](const stats::pairs::RowPlace& p) {
        return stats::pairs::in_tail(request_, last, p);
      });
      tail_.append(later.tail_);
    }
    later.rows_.clear();
    later.count_ = 0;
    if (resolved_) run(false);
  }

  void save(ByteWriter& w) const override {
    w.put_string(name());
    w.put<std::uint8_t>(resolved_);
    w.put(front_);
    w.put(count_);
    w.put<std::uint64_t>(rows_.size());
    for (const Row& r : rows_) {
      w.put(r.meta);
      w.put<std::uint8_t>(r.pruned);
      w.put<std::uint8_t>(r.zero_variance);
      w.put_vector(r.edges);
    }
    w.put<std::uint8_t>(in_contig_);
    w.put(s_);
    w.put(e_);
    w.put(next_);
    w.put(final_);
    w.put(emitted_);
    w.put_vector(live_);
    head_.save(w);
    tail_.save(w);
  }

  void load(ByteReader& r) override {
    r.expect(name());
    resolved_ = r.get<std::uint8_t>() != 0;
    front_ = r.get<std::int64_t>();
    count_ = r.get<std::int64_t>();
    const auto n = r.get<std::uint64_t>();
    if (n != static_cast<std::uint64_t>(count_ - front_))
      throw FormatError("statistic state: prune rows do not add up");
    rows_.clear();
    for (std::uint64_t k = 0; k < n; ++k) {
      Row row;
      row.meta = r.get<PairRow>();
      row.pruned = r.get<std::uint8_t>() != 0;
      row.zero_variance = r.get<std::uint8_t>() != 0;
      row.edges = r.get_vector<std::int64_t>();
      rows_.push_back(std::move(row));
    }
    in_contig_ = r.get<std::uint8_t>() != 0;
    s_ = r.get<std::int64_t>();
    e_ = r.get<std::int64_t>();
    next_ = r.get<std::int64_t>();
    final_ = r.get<std::int64_t>();
    emitted_ = r.get<std::int64_t>();
    live_ = r.get_vector<Live>();
    head_.load(r);
    tail_.load(r);
  }

 private:
  struct Row {
    PairRow meta;
    bool pruned = false;
    bool zero_variance = false;       // no variance among its called samples: pruned on loading
    std::vector<std::int64_t> edges;  // ordinals of later rows joined by an edge, sorted
  };
  /// An entry of the window: a row and the first partner it has not been compared with yet
  /// (plink's live_indices and start_arr).
  struct Live {
    std::int64_t ord = 0, start = 0;
  };

  Row& at(std::int64_t o) { return rows_[static_cast<std::size_t>(o - front_)]; }
  const Row& at(std::int64_t o) const { return rows_[static_cast<std::size_t>(o - front_)]; }
  stats::pairs::RowPlace place(std::int64_t o) const {
    return {o, at(o).meta.contig, at(o).meta.pos};
  }
  /// The ordinal of variant @p v, or -1 when its row is gone (before the window).
  std::int64_t ordinal(std::int64_t v) const {
    const auto it =
        std::lower_bound(rows_.begin(), rows_.end(), v,
                         [](const Row& r, std::int64_t x) { return r.meta.variant < x; });
    if (it == rows_.end() || it->meta.variant != v) {
      if (!rows_.empty() && v < rows_.front().meta.variant) return -1;
      throw Error("prune: a pair names a variant the statistic has not seen");
    }
    return front_ + (it - rows_.begin());
  }

  double maf(std::int64_t o) const {
    const PairRow& m = at(o).meta;
    if (m.n == 0) return 0.5;
    return static_cast<double>(std::min(m.sum, 2 * m.n - m.sum)) / static_cast<double>(2 * m.n);
  }
  bool edge(std::int64_t i, std::int64_t j) const {
    const auto& e = at(i).edges;
    return std::binary_search(e.begin(), e.end(), j);
  }

  /// The first ordinal in [from, count_) of another contig than @p contig, or, at the end of
  /// the rows, count_ when @p finished (nullopt: unknown yet).
  std::optional<std::int64_t> contig_end(std::int64_t from, std::int32_t contig, std::int64_t limit,
                                         bool finished) const {
    for (std::int64_t o = from; o < std::min(limit, count_); ++o)
      if (at(o).meta.contig != contig) return o;
    if (limit <= count_) return std::nullopt;  // none before the limit: the caller's answer
    if (finished) return count_;
    return std::nullopt;
  }

  /// The end of a window of rows from @p from, starting at @p s: S (or W) rows in count mode,
  /// the rows within W kb of s in kb mode; within the contig. nullopt: not known yet.
  std::optional<std::int64_t> window_end(std::int64_t s, std::int64_t from, std::int64_t rows,
                                         bool finished) const {
    const std::int32_t c = at(s).meta.contig;
    if (!options_.window_kb) {
      if (const auto ce = contig_end(from, c, from + rows, finished))
        return std::min(*ce, from + rows);
      if (from + rows <= count_) return from + rows;
      return std::nullopt;
    }
    const std::int64_t limit = at(s).meta.pos + options_.window * 1000;
    for (std::int64_t o = from; o < count_; ++o)
      if (at(o).meta.contig != c || at(o).meta.pos > limit) return o;
    if (finished) return count_;
    return std::nullopt;
  }

  /// plink's sweeps over the current window: until one prunes nothing, each entry in order
  /// looks for its first later partner not compared yet that an edge joins it to, and the pair's
  /// lower-MAF variant goes.
  void sweep() {
    const auto size = static_cast<std::int64_t>(live_.size());
    if (size < 2) return;
    auto pruned = [&](std::int64_t k) { return at(live_[static_cast<std::size_t>(k)].ord).pruned; };
    bool any;
    do {
      any = false;
      for (std::int64_t k = 0; k + 1 < size; ++k) {
        Live& x = live_[static_cast<std::size_t>(k)];
        if (at(x.ord).pruned) continue;
        std::int64_t k2 = k + 1;
        while (live_[static_cast<std::size_t>(k2)].ord < x.start)
          if (++k2 == size) break;
        for (; k2 < size; ++k2) {
          const std::int64_t y = live_[static_cast<std::size_t>(k2)].ord;
          if (pruned(k2) || !edge(x.ord, y)) continue;
          any = true;
          if (maf(x.ord) < kMafTie * maf(y)) {
            at(x.ord).pruned = true;
          } else {
            at(y).pruned = true;
            ++k2;
            while (k2 < size && pruned(k2)) ++k2;
            if (k2 < size) x.start = live_[static_cast<std::size_t>(k2)].ord;
          }
          break;
        }
        if (k2 == size) x.start = e_;
      }
    } while (any);
  }

  /// Add row @p o to the window (plink loads it: no variance, pruned).
  void load(std::int64_t o) {
    if (at(o).zero_variance) at(o).pruned = true;
    live_.push_back({o, o + 1});
  }

  /// Process every window whose rows have all arrived (all of them when @p finished).
  void run(bool finished) {
    const std::int64_t step = options_.step;
    for (;;) {
      if (!in_contig_) {
        if (next_ >= count_) return;
        const auto e =
            window_end(next_, next_ + 1, options_.window_kb ? 0 : options_.window - 1, finished);
        if (!e) return;
        s_ = next_;
        e_ = *e;
        live_.clear();
        for (std::int64_t o = s_; o < e_; ++o) load(o);
        live_.back().start = e_;
        in_contig_ = true;
        sweep();
      }
      // Move the window: S rows on (not past the contig's end), then up to W rows from its new
      // start (plink adds S rows at the end, which is the same while S <= W; with S > W it
      // overruns its window buffer), or the rows within W kb of the new start.
      const std::int32_t c = at(s_).meta.contig;
      const auto ce = contig_end(s_ + 1, c, s_ + step + 1, finished);
      std::int64_t s = s_ + step;
      if (ce)
        s = std::min(s, *ce);
      else if (s_ + step >= count_)
        return;              // the contig may go on: wait
      if (ce && s == *ce) {  // the contig is done
        final_ = s;
        next_ = s;
        in_contig_ = false;
        continue;
      }
      const std::int64_t from = std::max(e_, s);
      const auto e = window_end(s, from, s + options_.window - from, finished);
      if (!e) return;
      s_ = s;
      std::vector<Live> kept;
      for (const Live& x : live_)
        if (x.ord >= s_ && !at(x.ord).pruned) kept.push_back(x);
      live_ = std::move(kept);
      const std::size_t old = live_.size();
      for (std::int64_t o = from; o < *e; ++o) {
        if (live_.size() > old) live_.back().start = o;
        load(o);
      }
      if (live_.size() > old) live_.back().start = *e;
      e_ = *e;
      final_ = s_;
      sweep();
    }
  }

  Table empty_table() const {
    Table t;
    t.add("variant", Column::Kind::Int);
    t.add("chrom", Column::Kind::Label, contigs_);
    t.add("pos", Column::Kind::Int);
    t.add("kept", Column::Kind::Int);
    t.note = "plink 1.9 --indep-pairwise " + std::to_string(options_.window) +
             (options_.window_kb ? " kb " : " ") + std::to_string(options_.step) + " " +
             std::to_string(options_.r2) + "; kept = 1: prune.in, 0: prune.out";
    return t;
  }

  /// Emit rows [emitted_, end) and drop the rows before the window.
  void emit(std::int64_t end, Table& t) {
    for (; emitted_ < end; ++emitted_) {
      const Row& r = at(emitted_);
      t.push_int(0, r.meta.variant);
      t.push_int(1, r.meta.contig);
      t.push_int(2, r.meta.pos);
      t.push_int(3, r.pruned ? 0 : 1);
    }
    const std::int64_t keep = in_contig_ ? std::min(emitted_, s_) : emitted_;
    while (front_ < keep && !rows_.empty()) {
      rows_.pop_front();
      ++front_;
    }
  }

  PruneOptions options_;
  PairRequest request_;
  std::int64_t width_ = 0;
  std::shared_ptr<const std::vector<std::string>> contigs_;
  bool resolved_ = true;
  std::deque<Row> rows_;  // ordinals [front_, count_)
  std::int64_t front_ = 0, count_ = 0;
  // The greedy: the window [s_, e_) of the contig being pruned and its entries; rows before
  // final_ are decided, before emitted_ handed out; next_ starts the next contig.
  bool in_contig_ = false;
  std::int64_t s_ = 0, e_ = 0, next_ = 0, final_ = 0, emitted_ = 0;
  std::vector<Live> live_;
  stats::pairs::BoundaryRows head_, tail_;
};

}  // namespace

std::unique_ptr<Statistic> make_prune(const Query& q, const PruneOptions& options) {
  return std::make_unique<PruneStatistic>(q, options);
}

}  // namespace vczstats
