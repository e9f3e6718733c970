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
#include <limits>
#include <optional>
#include <string>

#include "stats/pair_statistic.hpp"
#include "stats/statistic_support.hpp"
#include "vczstats/ld.hpp"

namespace vczstats {
namespace {

constexpr double kMafTie = 1 - 0.00000000000005684341886080801486968994140625;  // 1 - 2^-44

struct PruneRow {
  PairRow meta;
  bool pruned = false;
  bool zero_variance = false;       // no variance among its called samples: pruned on loading
  std::vector<std::int64_t> edges;  // ordinals of later rows joined by an edge, sorted
};

class PruneStatistic final : public stats::pairs::PairStatistic<PruneRow> {
 public:
  PruneStatistic(const Query& q, const PruneOptions& o) : PairStatistic(q, "prune"), options_(o) {
    if (o.window_kb ? o.window < 1 : o.window < 2)
      throw UsageError("--indep-pairwise: the window must be at least 2 variants or 1 kb");
    if (o.window_kb && o.window > std::numeric_limits<std::int64_t>::max() / 1000)
      throw UsageError("--indep-pairwise: the window of " + std::to_string(o.window) +
                       " kb is larger than any contig");
    if (o.step < 1) throw UsageError("--indep-pairwise: the step must be at least 1");
    if (!(o.r2 >= 0 && o.r2 <= 1)) throw UsageError("--indep-pairwise: r2 must be in [0, 1]");
    request_.measure = PairMeasure::PruneEdge;
    request_.min_r2 = o.r2;
    if (o.window_kb)
      request_.max_bp = o.window * 1000;
    else
      request_.max_variants = o.window - 1;
    width_ = q.samples.size();
  }

  std::string name() const override { return "prune"; }

  void accumulate_pairs(PairBatch&& batch) override {
    const bool rows = take_batch(batch, [](const PairRow& r) {
      Row row;
      row.meta = r;
      row.zero_variance = r.n * r.ssq - r.sum * r.sum == 0;
      return row;
    });
    if (!rows) return;
    std::vector<std::int64_t> touched;
    for (const PairValue& v : batch.pairs) {
      const std::int64_t a = ordinal_or_gone(v.a);
      if (a < 0) continue;
      at(a).edges.push_back(ordinal_or_gone(v.b));
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
    merge_partition(
        later,
        [](Row& r, std::int64_t shift) {
          for (auto& e : r.edges) e += shift;
        },
        [&](const PairValue& v) {
          const std::int64_t a = ordinal_or_gone(v.a);
          if (a >= 0) at(a).edges.push_back(ordinal_or_gone(v.b));  // a before the window
        });
    if (resolved_) run(false);
  }

  void save(ByteWriter& w) const override {
    save_rows(w, [](ByteWriter& to, const Row& r) {
      to.put(r.meta);
      to.put<std::uint8_t>(r.pruned);
      to.put<std::uint8_t>(r.zero_variance);
      to.put_vector(r.edges);
    });
    w.put<std::uint8_t>(in_contig_);
    w.put(s_);
    w.put(e_);
    w.put(next_);
    w.put(final_);
    w.put(emitted_);
    w.put_vector(live_);
  }

  void load(ByteReader& r) override {
    load_rows(r, [](ByteReader& from) {
      Row row;
      row.meta = from.get<PairRow>();
      row.pruned = from.get<std::uint8_t>() != 0;
      row.zero_variance = from.get<std::uint8_t>() != 0;
      row.edges = from.get_vector<std::int64_t>();
      return row;
    });
    in_contig_ = r.get<std::uint8_t>() != 0;
    s_ = r.get<std::int64_t>();
    e_ = r.get<std::int64_t>();
    next_ = r.get<std::int64_t>();
    final_ = r.get<std::int64_t>();
    emitted_ = r.get<std::int64_t>();
    live_ = r.get_vector<Live>();
  }

 private:
  using Row = PruneRow;
  /// An entry of the window: a row and the first partner it has not been compared with yet
  /// (plink's live_indices and start_arr).
  struct Live {
    std::int64_t ord = 0, start = 0;
  };

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
    const std::int64_t limit =
        stats::detail::saturating_add(at(s).meta.pos, options_.window * 1000);
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
  // The greedy: the window [s_, e_) of the contig being pruned and its entries; rows before
  // final_ are decided, before emitted_ handed out; next_ starts the next contig.
  bool in_contig_ = false;
  std::int64_t s_ = 0, e_ = 0, next_ = 0, final_ = 0, emitted_ = 0;
  std::vector<Live> live_;
};

}  // namespace

std::unique_ptr<Statistic> make_prune(const Query& q, const PruneOptions& options) {
  return std::make_unique<PruneStatistic>(q, options);
}

}  // namespace vczstats
