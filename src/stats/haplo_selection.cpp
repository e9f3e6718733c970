// The selection scans: iHS, nSL (per population) and XP-EHH, XP-nSL (per pair of
// populations). Every usable site of the partition is a focal site; its EHH is integrated to
// the left and to the right by the segment kernels (stats/haplo_kernel.hpp) on the device
// compute() chose. A side whose walk ran out of rows is tried again with four times the rows,
// read from the store when the partition lacks them; sides still waiting at the partition's end
// are completed by settle() (on every MPI rank, reading beyond the partition's edges) or
// finish(). Scores are standardised at finish(), over all partitions.
// Definitions: tests/tools/POPGEN.md §11.

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "stats/haplo_rows.hpp"
#include "stats/haplo_runner.hpp"
#include "stats/statistic_support.hpp"
#include "vczstats/ancestral.hpp"
#include "vczstats/haplotypes.hpp"
#include "vczstats/testing.hpp"

namespace vczstats {
namespace {

using namespace stats::haplo;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// One side of a focal site.
struct Side {
  FocalResult result;
  std::int64_t context = 0;  ///< rows to give the next try
  std::uint8_t done = 0;
};

/// A focal site of the partition.
struct Entry {
  RowInfo info;
  Side side[2];               ///< 0: toward lower positions, 1: toward higher
  std::int32_t dropped = -1;  ///< the status that dropped it, -1: none
};

const char* scan_name(SelectionScan s) {
  switch (s) {
    case SelectionScan::Ihs:
      return "ihs";
    case SelectionScan::Nsl:
      return "nsl";
    case SelectionScan::Xpehh:
      return "xpehh";
    default:
      return "xpnsl";
  }
}

bool is_xp(SelectionScan s) {
  return s == SelectionScan::Xpehh || s == SelectionScan::Xpnsl;
}

/// The focal sites of one haplotype set and the work on them.
class ScanEngine {
 public:
  ScanEngine(const Query& q, HapSet set, SelectionScan scan, const SelectionOptions& o,
             std::shared_ptr<const GeneticMap> map, std::shared_ptr<StoreRows> store)
      : scan_(scan),
        o_(o),
        rows_(q, RowExtractor(set, filter(scan, o), std::move(map), contig_names(q)), store),
        n_(set.n),
        n_a_(set.n_a) {
    params_.cutoff = o.cutoff;
    params_.gap_scale = o.gap_scale;
    params_.max_gap = o.max_gap;
    params_.max_extend = o.max_extend;
    params_.max_extend_sites = o.max_extend_nsl;
    params_.trunc_ok = o.trunc_ok ? 1 : 0;
    params_.mode = scan == SelectionScan::Ihs     ? kModeIhs
                   : scan == SelectionScan::Nsl   ? kModeNsl
                   : scan == SelectionScan::Xpehh ? kModeXpehh
                                                  : kModeXpnsl;
    // Fixed sizes are a test hook (vczstats/testing.hpp), read when the scan is made.
    fixed_segment_ = hooks::selection_segment() > 0;
    fixed_context_ = hooks::selection_context() > 0;
    segment_ = fixed_segment_ ? hooks::selection_segment() : 2048;
    context_ = fixed_context_ ? hooks::selection_context() : 512;
    const bool unit = scan == SelectionScan::Nsl || scan == SelectionScan::Xpnsl;
    // nSL and XP-nSL never walk more than --max-extend-nsl sites.
    if (unit && o.max_extend_nsl > 0) cap_ = o.max_extend_nsl;
    if (cap_ > 0) context_ = std::min(context_, cap_);
  }

  static RowFilter filter(SelectionScan scan, const SelectionOptions& o) {
    RowFilter f;
    if (is_xp(scan))
      f.polymorphic = true;
    else
      f.maf = o.maf;
    return f;
  }

  std::vector<Entry>& entries() { return entries_; }
  /// Rebuild the list of entries with a side to run (after load or merge).
  void reset_pending() {
    pending_.clear();
    for (std::size_t k = 0; k < entries_.size(); ++k) {
      const Entry& e = entries_[k];
      if (!e.side[0].done || !e.side[1].done) pending_.push_back(static_cast<std::int64_t>(k));
    }
  }
  const std::vector<Entry>& entries() const { return entries_; }
  std::int64_t n() const { return n_; }
  std::int64_t n_a() const { return n_a_; }

  /// Take a streamed unit's rows; each becomes a focal site.
  void append(const UnitData& u) {
    rows_.append(u);
    for (std::int64_t i = rows_.fresh_from(); i < rows_.size(); ++i) add_entry(rows_.info(i));
    appended_ += rows_.size() - rows_.fresh_from();
    rows_.take_fresh();
  }

  /// Run the sides that can run (all of them when @p final; otherwise only once a batch is
  /// worth it) on @p runner.
  void process(SegmentRunner& runner, bool final) {
    // A batch: enough segments to keep the device busy, within a memory budget for the rows
    // (256 MiB of bits).
    const std::int64_t budget = std::max<std::int64_t>(
        4 * segment_, (std::int64_t{256} << 20) / (8 * rows_.extractor().words()));
    const std::int64_t batch = std::min(runner.preferred_segments() * segment_, budget);
    // A scan of the waiting sides (ready(), trim()) costs O(pending), and a GPU's batch keeps
    // some 10^5 of them waiting: scanning after every unit made a GPU iHS of 1,000 units spend
    // most of its time here. Scan again only once the rows appended since the last scan may have
    // readied a batch: a row readies its own left side and, as a rule, a few right sides of the
    // sites whose context it completes. Sides it readies beyond that (a contig's end) wait for a
    // later scan or the final one; when a batch runs changes no result.
    constexpr std::int64_t kSidesPerRow = 4;
    if (!final && ready_at_scan_ + kSidesPerRow * (appended_ - appended_at_scan_) < batch) return;
    appended_at_scan_ = appended_;
    ready_at_scan_ = 0;
    for (int rounds = 0;; ++rounds) {
      if (rounds > 100000) throw Error("selection scan: the walks do not finish");
      std::vector<Item> items = ready(final);
      if (items.empty()) {
        if (!final) break;
        // Sides of entries whose rows the run lacks (a loaded state): load them from the store.
        const Entry* e = first_pending();
        if (!e) break;
        rows_.seek(e->info.variant);
        if (rows_.find(e->info.variant) < 0)
          throw Error("selection scan: a focal site is missing from its unit");
        continue;
      }
      if (!final && static_cast<std::int64_t>(items.size()) < batch) {
        ready_at_scan_ = static_cast<std::int64_t>(items.size());
        break;
      }
      run(runner, items, final);
    }
    trim();
  }

 private:
  struct Item {
    std::int64_t entry;
    int side;
    std::int64_t context;
    std::int64_t row = 0;
  };

  void add_entry(const RowInfo& info) {
    Entry e;
    e.info = info;
    e.side[0].context = e.side[1].context = context_;
    if (!is_xp(scan_) && info.ancestral != info.lo && info.ancestral != info.hi)
      e.dropped = -2;  // the ancestral allele is unknown or absent: not a focal site
    if (e.dropped != -1) e.side[0].done = e.side[1].done = 1;
    entries_.push_back(e);
    if (e.dropped == -1) pending_.push_back(static_cast<std::int64_t>(entries_.size()) - 1);
  }

  const Entry* first_pending() {
    for (std::int64_t k : pending_) {
      const Entry& e = entries_[static_cast<std::size_t>(k)];
      if (!e.side[0].done || !e.side[1].done) return &e;
    }
    return nullptr;
  }

  /// The sides that can run now.
  std::vector<Item> ready(bool final) {
    std::vector<Item> items;
    for (std::int64_t k : pending_) {
      const Entry& e = entries_[static_cast<std::size_t>(k)];
      const std::int64_t i = rows_.find(e.info.variant);
      if (i < 0) continue;
      for (int s = 0; s < 2; ++s) {
        const Side& side = e.side[s];
        if (side.done) continue;
        if (s == 1 && !final) {
          const std::int64_t end = rows_.contig_end(i);
          if (end - 1 - i < side.context && !rows_.contig_last(end - 1)) continue;
        }
        items.push_back({k, s, side.context});
      }
    }
    return items;
  }

  /// Make sure the rows each item's context wants are in the run: read the store before the
  /// first row (for the left sides on its contig) and, when final, after the last.
  void extend(std::vector<Item>& items, bool final) {
    auto row_of = [&](const Item& it) {
      return rows_.find(entries_[static_cast<std::size_t>(it.entry)].info.variant);
    };
    std::int64_t need = 0, at = -1, want = 0;
    for (const Item& it : items) {
      const std::int64_t i = row_of(it);
      if (it.side == 0 && rows_.contig_begin(i) == 0 && it.context - i > need) {
        need = it.context - i;
        at = i;
        want = it.context;
      }
    }
    if (at >= 0) rows_.extend_back(at, want);
    if (final) {
      need = 0;
      at = -1;
      for (const Item& it : items) {
        const std::int64_t i = row_of(it);
        const std::int64_t after = rows_.size() - 1 - i;
        if (it.side == 1 && rows_.contig_end(i) == rows_.size() && it.context - after > need) {
          need = it.context - after;
          at = i;
          want = it.context;
        }
      }
      if (at >= 0) rows_.extend_front(at, want);
    }
    for (Item& it : items) it.row = row_of(it);
  }

  void run(SegmentRunner& runner, std::vector<Item>& items, bool final) {
    extend(items, final);
    // Segments short enough to give every lane block of the device work (unless set).
    const std::int64_t per_side = static_cast<std::int64_t>(items.size()) / 2 + 1;
    const std::int64_t length =
        fixed_segment_
            ? segment_
            : std::clamp<std::int64_t>(per_side / runner.preferred_segments(), 256, segment_);
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      return a.side != b.side         ? a.side < b.side
             : a.context != b.context ? a.context < b.context
                                      : a.row < b.row;
    });
    std::vector<Segment> segments;
    std::vector<std::int64_t> result_item;  // item of each result
    std::int64_t max_steps = 0;
    for (std::size_t k = 0; k < items.size();) {
      // A run of consecutive rows of one contig, side and context.
      std::size_t m = k + 1;
      const std::int64_t cb = rows_.contig_begin(items[k].row);
      while (m < items.size() && m - k < static_cast<std::size_t>(length) &&
             items[m].side == items[k].side && items[m].context == items[k].context &&
             items[m].row == items[m - 1].row + 1 && rows_.contig_begin(items[m].row) == cb)
        ++m;
      const std::int64_t fa = items[k].row, fb = items[m - 1].row + 1, c = items[k].context;
      Segment seg;
      seg.out = static_cast<std::int64_t>(result_item.size());
      if (items[k].side == 0) {
        seg.first = std::max(cb, fa - c);
        seg.dir = 1;
        seg.steps = fb - seg.first;
        seg.focal_from = fa - seg.first;
        seg.focal_to = seg.steps;
        seg.edge = seg.first == cb && rows_.contig_first(cb);
        for (std::size_t j = k; j < m; ++j) result_item.push_back(static_cast<std::int64_t>(j));
      } else {
        const std::int64_t ce = rows_.contig_end(fa);
        seg.first = std::min(ce - 1, fb - 1 + c);
        seg.dir = -1;
        seg.steps = seg.first - fa + 1;
        seg.focal_from = seg.first - (fb - 1);
        seg.focal_to = seg.steps;
        seg.edge = seg.first == ce - 1 && rows_.contig_last(ce - 1);
        for (std::size_t j = m; j-- > k;) result_item.push_back(static_cast<std::int64_t>(j));
      }
      max_steps = std::max(max_steps, seg.steps);
      segments.push_back(seg);
      k = m;
    }
    std::vector<FocalResult> results(result_item.size());
    BatchView b = batch_over(rows_, n_, n_a_);
    b.params = params_;
    b.segments = segments.data();
    b.nsegments = static_cast<std::int64_t>(segments.size());
    b.max_steps = max_steps;
    b.focal = results.data();
    runner.run(b);

    std::vector<std::int64_t> lengths;
    for (std::size_t r = 0; r < results.size(); ++r) {
      const Item& it = items[static_cast<std::size_t>(result_item[r])];
      Entry& e = entries_[static_cast<std::size_t>(it.entry)];
      Side& side = e.side[it.side];
      const FocalResult& f = results[r];
      if (f.status == kIncomplete) {
        side.context = it.context * 4;
        continue;
      }
      side.result = f;
      side.done = 1;
      if (f.status == kOk) lengths.push_back(f.steps);
      if (f.status != kOk && f.status != kTruncated) {
        e.dropped = f.status;
        e.side[0].done = e.side[1].done = 1;
      }
    }
    // Later sites start with enough rows for 99% of the walks so far (the others run again).
    if (!fixed_context_ && !lengths.empty()) {
      auto q = lengths.begin() + static_cast<std::ptrdiff_t>(lengths.size() * 99 / 100);
      std::nth_element(lengths.begin(), q, lengths.end());
      context_ = std::max(context_, *q + *q / 4 + 1);
      if (cap_ > 0) context_ = std::min(context_, cap_);
    }
    pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                  [&](std::int64_t k) {
                                    const Entry& e = entries_[static_cast<std::size_t>(k)];
                                    return e.side[0].done && e.side[1].done;
                                  }),
                   pending_.end());
  }

  /// Drop the rows no waiting side and no later site will want.
  void trim() {
    std::int64_t keep = rows_.size();
    for (std::int64_t k : pending_) {
      const Entry& e = entries_[static_cast<std::size_t>(k)];
      const std::int64_t i = rows_.find(e.info.variant);
      if (i < 0) continue;
      keep = std::min(keep, e.side[0].done ? i : i - e.side[0].context);
    }
    keep = std::min(keep, rows_.size() - 2 * context_);  // the flank of the sites to come
    rows_.trim(keep);
  }

  SelectionScan scan_;
  SelectionOptions o_;
  RowSource rows_;
  std::int64_t n_ = 0, n_a_ = 0;
  WalkParams params_;
  std::int64_t segment_ = 2048, context_ = 512, cap_ = 0;
  bool fixed_segment_ = false, fixed_context_ = false;
  std::vector<Entry> entries_;
  std::vector<std::int64_t> pending_;  ///< entries with a side to run, in order
  // Rows appended in all, and at the last scan of the waiting sides; the sides ready then.
  std::int64_t appended_ = 0, appended_at_scan_ = 0, ready_at_scan_ = 0;
};

/// Window summary sums over standardised scores.
struct ScoreSums {
  std::int64_t n = 0, gt = 0, lt = 0, crit = 0;
  double max = -std::numeric_limits<double>::infinity();
  double min = std::numeric_limits<double>::infinity();
  void merge(const ScoreSums& o) {
    n += o.n;
    gt += o.gt;
    lt += o.lt;
    crit += o.crit;
    max = std::max(max, o.max);
    min = std::min(min, o.min);
  }
};

class SelectionScanStatistic final : public SelectionStatistic {
 public:
  SelectionScanStatistic(const Query& q, SelectionScan scan, const SelectionOptions& o)
      : q_(q), scan_(scan), o_(o), contigs_(contig_names(q)) {
    store_ = std::make_shared<StoreRows>(q);
    std::shared_ptr<const GeneticMap> map;
    if (!o.map.empty()) map = std::make_shared<GeneticMap>(o.map);
    if (o.bins < 1) throw UsageError("--bins must be at least 1");
    if (!(o.cutoff > 0 && o.cutoff < 1)) throw UsageError("--cutoff must be in (0, 1)");
    if (!(o.maf >= 0 && o.maf < 0.5)) throw UsageError("--maf must be in [0, 0.5)");
    if (is_xp(scan)) {
      const auto pairs = q.population_pairs(o.pairs);
      if (pairs.empty())
        throw UsageError(std::string(scan_name(scan)) + " needs two populations (-P)");
      for (const auto& [a, b] : pairs) {
        HapSet set = pair_set(q, a, b);
        if (set.n_a < 2 || set.n - set.n_a < 2)
          throw UsageError(std::string(scan_name(scan)) + ": populations " +
                           q.pops.names[static_cast<std::size_t>(a)] + " and " +
                           q.pops.names[static_cast<std::size_t>(b)] + " need two haplotypes each");
        engines_.push_back(std::make_unique<ScanEngine>(q, std::move(set), scan, o, map, store_));
        labels_.push_back({a, b});
      }
    } else {
      for (int p = 0; p < q.pops.count(); ++p) {
        engines_.push_back(
            std::make_unique<ScanEngine>(q, population_set(q, p), scan, o, map, store_));
        labels_.push_back({p, -1});
      }
    }
  }

  std::string name() const override { return scan_name(scan_); }

  PassNeeds needs() const override {
    PassNeeds n;
    n.need(ProductNeed(kPhasedHaplotypes));
    n.positions = true;
    n.alleles = q_.ancestral != "ref" || SiteFilter(q_).needs_ref_length();
    n.ancestral = true;
    return n;
  }

  void attach(const Backend& b) override { runner_ = b.segment_runner(); }

  void accumulate(const UnitData& u) override {
    for (auto& e : engines_) {
      e->append(u);
      e->process(runner(), false);
    }
  }

  void merge(Statistic& later) override {
    auto& o = stats::detail::same_statistic(*this, later);
    for (std::size_t k = 0; k < engines_.size(); ++k) {
      auto& mine = engines_[k]->entries();
      auto& theirs = o.engines_[k]->entries();
      mine.insert(mine.end(), theirs.begin(), theirs.end());
      theirs.clear();
    }
    reindex();
  }

  void save(ByteWriter& w) const override {
    w.put_string(name());
    w.put<std::uint64_t>(engines_.size());
    for (const auto& e : engines_) w.put_vector(e->entries());
  }

  void load(ByteReader& r) override {
    r.expect(name());
    if (r.get<std::uint64_t>() != engines_.size())
      throw FormatError("statistic state: " + name() + " of other populations");
    for (auto& e : engines_) e->entries() = r.get_vector<Entry>();
    reindex();
  }

  /// The walks that wait for rows beyond the partition's edges, run here on every MPI rank;
  /// finish() then has only what no rank could finish (none).
  void settle() override {
    for (auto& e : engines_) e->process(runner(), true);
  }

  Table finish() override {
    settle();  // what no partition could finish alone (all of it when nothing settled before)
    return table();
  }

  Table windows() const override { return windows_; }

 private:
  SegmentRunner& runner() {
    if (!runner_) runner_ = make_cpu_runner(0);
    return *runner_;
  }

  /// Rebuild each engine's waiting list from its entries (after load or merge).
  void reindex() {
    for (auto& e : engines_) e->reset_pending();
  }

  struct Scored {
    std::int64_t engine, entry;
    double score, std = kNaN;
  };

  Table table() {
    const bool xp = is_xp(scan_);
    const bool unit = scan_ == SelectionScan::Nsl || scan_ == SelectionScan::Xpnsl;
    auto pops = stats::detail::population_labels(q_);
    Table t;
    t.add("chrom", Column::Kind::Label, contigs_);
    t.add("pos", Column::Kind::Int);
    t.add("variant", Column::Kind::Int);
    if (xp) {
      t.add("pop1", Column::Kind::Label, pops);
      t.add("pop2", Column::Kind::Label, pops);
      t.add("freq1", Column::Kind::Float);
      t.add("freq2", Column::Kind::Float);
      t.add(unit ? "sl1" : "ihh1", Column::Kind::Float);
      t.add(unit ? "sl2" : "ihh2", Column::Kind::Float);
    } else {
      t.add("population", Column::Kind::Label, pops);
      t.add("freq", Column::Kind::Float);
      t.add(unit ? "sl1" : "ihh1", Column::Kind::Float);
      t.add(unit ? "sl0" : "ihh0", Column::Kind::Float);
    }
    const std::string stat = name();
    t.add(stat, Column::Kind::Float);
    t.add(stat + "_std", Column::Kind::Float);
    if (!xp)
      for (const char* c : {"1_left", "1_right", "0_left", "0_right"})
        t.add((unit ? std::string("sl") : std::string("ihh")) + c, Column::Kind::Float);

    // Scores, then standardisation within each set (frequency bins; XP: one bin).
    std::vector<std::vector<Scored>> scored(engines_.size());
    std::int64_t dropped[8] = {};
    for (std::size_t k = 0; k < engines_.size(); ++k) {
      const auto& entries = engines_[k]->entries();
      for (std::size_t i = 0; i < entries.size(); ++i) {
        const Entry& e = entries[i];
        if (e.dropped != -1) {
          ++dropped[e.dropped == -2 ? 7 : std::min(e.dropped, 6)];
          continue;
        }
        const auto [num, den] = integrals(e);
        if (!(num > 0) || !(den > 0)) {
          ++dropped[6];
          continue;
        }
        scored[k].push_back(
            {static_cast<std::int64_t>(k), static_cast<std::int64_t>(i), std::log10(num / den)});
      }
      standardise(scored[k], *engines_[k], xp);
    }
    // Rows by variant, then set.
    std::vector<Scored> all;
    for (auto& s : scored) all.insert(all.end(), s.begin(), s.end());
    std::stable_sort(all.begin(), all.end(), [&](const Scored& a, const Scored& b) {
      return variant_of(a) < variant_of(b);
    });
    for (const Scored& s : all) {
      const ScanEngine& eng = *engines_[static_cast<std::size_t>(s.engine)];
      const Entry& e = eng.entries()[static_cast<std::size_t>(s.entry)];
      int c = 0;
      t.push_int(c++, e.info.contig);
      t.push_int(c++, e.info.pos);
      t.push_int(c++, e.info.variant);
      const auto& label = labels_[static_cast<std::size_t>(s.engine)];
      t.push_int(c++, label.first);
      if (xp) {
        t.push_int(c++, label.second);
        t.push_float(c++, derived_frequency(e, eng.n_a(), e.info.carriers_a));
        t.push_float(
            c++, derived_frequency(e, eng.n() - eng.n_a(), e.info.carriers - e.info.carriers_a));
      } else {
        t.push_float(c++, derived_frequency(e, eng.n(), e.info.carriers));
      }
      const auto [num, den] = integrals(e);
      t.push_float(c++, num);
      t.push_float(c++, den);
      t.push_float(c++, s.score);
      t.push_float(c++, s.std);
      if (!xp) {
        const int d = derived_bit(e);
        for (int cls : {d, 1 - d})
          for (int side : {0, 1}) t.push_float(c++, e.side[side].result.ihh[cls]);
      }
    }
    t.note = note(dropped);
    make_windows(all);
    return t;
  }

  std::int64_t variant_of(const Scored& s) const {
    return engines_[static_cast<std::size_t>(s.engine)]
        ->entries()[static_cast<std::size_t>(s.entry)]
        .info.variant;
  }

  /// The bit (allele class) of the derived allele (iHS, nSL).
  static int derived_bit(const Entry& e) { return e.info.ancestral == e.info.lo ? 1 : 0; }

  /// Frequency of the non-ancestral allele among @p n haplotypes of which @p hi carry the
  /// higher allele; NaN when the ancestral allele is not one of the two.
  static double derived_frequency(const Entry& e, std::int64_t n, std::int64_t hi) {
    const double f = static_cast<double>(hi) / static_cast<double>(n);
    if (e.info.ancestral == e.info.lo) return f;
    if (e.info.ancestral == e.info.hi) return static_cast<double>(n - hi) / static_cast<double>(n);
    return kNaN;
  }

  /// (numerator, denominator) of the score: derived and ancestral (iHS, nSL), A and B (XP).
  std::pair<double, double> integrals(const Entry& e) const {
    const auto sum = [&](int cls) { return e.side[0].result.ihh[cls] + e.side[1].result.ihh[cls]; };
    if (is_xp(scan_)) return {sum(0), sum(1)};
    const int d = derived_bit(e);
    return {sum(d), sum(1 - d)};
  }

  /// selscan norm: within bins of derived frequency (bin b: the first with freq < (b + 1) /
  /// bins), (score - mean) / sd with the sample variance; bins with fewer than min_bin_sites
  /// scores give NaN. XP: one bin.
  void standardise(std::vector<Scored>& s, const ScanEngine& eng, bool xp) const {
    const int bins = xp ? 1 : o_.bins;
    const double step = 1.0 / bins;
    std::vector<int> bin(s.size(), -1);
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (xp) {
        bin[i] = 0;
        continue;
      }
      const Entry& e = eng.entries()[static_cast<std::size_t>(s[i].entry)];
      const double f = derived_frequency(e, eng.n(), e.info.carriers);
      for (int b = 0; b < bins; ++b)
        if (f < 0.0 + (b + 1) * step) {
          bin[i] = b;
          break;
        }
    }
    std::vector<double> sum(static_cast<std::size_t>(bins), 0),
        sq(static_cast<std::size_t>(bins), 0);
    std::vector<std::int64_t> count(static_cast<std::size_t>(bins), 0);
    for (std::size_t i = 0; i < s.size(); ++i)
      if (bin[i] >= 0) {
        sum[static_cast<std::size_t>(bin[i])] += s[i].score;
        ++count[static_cast<std::size_t>(bin[i])];
      }
    std::vector<double> mean(static_cast<std::size_t>(bins), kNaN);
    for (int b = 0; b < bins; ++b)
      if (count[static_cast<std::size_t>(b)] > 0)
        mean[static_cast<std::size_t>(b)] = sum[static_cast<std::size_t>(b)] /
                                            static_cast<double>(count[static_cast<std::size_t>(b)]);
    for (std::size_t i = 0; i < s.size(); ++i)
      if (bin[i] >= 0) {
        const double d = s[i].score - mean[static_cast<std::size_t>(bin[i])];
        sq[static_cast<std::size_t>(bin[i])] += d * d;
      }
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (bin[i] < 0) continue;
      const auto b = static_cast<std::size_t>(bin[i]);
      if (count[b] < o_.min_bin_sites || count[b] < 2) continue;
      const double var = sq[b] / static_cast<double>(count[b] - 1);
      s[i].std = (s[i].score - mean[b]) / std::sqrt(var);
    }
  }

  std::string note(const std::int64_t* dropped) const {
    const bool xp = is_xp(scan_);
    std::string n =
        std::string(scan_name(scan_)) + ": log10 ratio of integrated EHH (selscan 2 " +
        "definitions, tests/tools/POPGEN.md §11); positions " +
        (o_.map.empty() ? std::string("physical (bp)") : "from the genetic map " + o_.map) +
        "; standardised " +
        (xp ? std::string("genome-wide")
            : "in " + std::to_string(o_.bins) + " derived-frequency bins") +
        " (bins with fewer than " + std::to_string(o_.min_bin_sites) + " scores: NA); " +
        vcz::AncestralAlleles::describe(q_.ancestral) +
        "; sites dropped: " + std::to_string(dropped[kEdge]) + " reached a contig end, " +
        std::to_string(dropped[kGap]) + " a gap > " +
        std::to_string(static_cast<std::int64_t>(o_.max_gap)) + " bp, " +
        std::to_string(dropped[kFewCarriers] + dropped[6]) +
        " fewer than two carriers or a zero integral";
    if (!xp) n += ", " + std::to_string(dropped[7]) + " no known ancestral allele";
    return n;
  }

  void make_windows(const std::vector<Scored>& all) {
    const bool xp = is_xp(scan_);
    auto pops = stats::detail::population_labels(q_);
    Table w;
    w.add("chrom", Column::Kind::Label, contigs_);
    w.add("start", Column::Kind::Int);
    w.add("end", Column::Kind::Int);
    if (xp) {
      w.add("pop1", Column::Kind::Label, pops);
      w.add("pop2", Column::Kind::Label, pops);
    } else {
      w.add("population", Column::Kind::Label, pops);
    }
    for (const char* c : {"n_scores"}) w.add(c, Column::Kind::Int);
    for (const char* c : {"frac_gt", "frac_lt", "frac_crit", "max_score", "min_score"})
      w.add(c, Column::Kind::Float);
    w.note =
        "windows over the sites with a standardised score; start and end are 1-based and "
        "inclusive; frac_gt, frac_lt, frac_crit: score >= crit, <= -crit, |score| >= crit "
        "with crit = " +
        std::to_string(o_.crit);
    const SiteFilter filter(q_);
    for (std::size_t k = 0; k < engines_.size(); ++k) {
      stats::WindowAccumulator<ScoreSums> acc(q_.windows, [] { return ScoreSums{}; });
      std::vector<stats::WindowAccumulator<ScoreSums>::Window> windows;
      acc.on_backlog([&] {
        auto c = acc.take_closed();
        windows.insert(windows.end(), c.begin(), c.end());
      });
      for (const Scored& s : all) {
        if (s.engine != static_cast<std::int64_t>(k) || std::isnan(s.std)) continue;
        const Entry& e = engines_[k]->entries()[static_cast<std::size_t>(s.entry)];
        const auto g = filter.group(e.info.contig, e.info.pos, e.info.ref_length);
        if (!g) continue;
        acc.add(*g, e.info.pos, [&](ScoreSums& x) {
          ++x.n;
          x.gt += s.std >= o_.crit;
          x.lt += s.std <= -o_.crit;
          x.crit += std::abs(s.std) >= o_.crit;
          x.max = std::max(x.max, s.std);
          x.min = std::min(x.min, s.std);
        });
      }
      auto rest = acc.finish();
      windows.insert(windows.end(), rest.begin(), rest.end());
      for (const auto& win : windows) {
        int c = 0;
        w.push_int(c++, win.contig);
        w.push_int(c++, win.start);
        w.push_int(c++, win.end);
        w.push_int(c++, labels_[k].first);
        if (xp) w.push_int(c++, labels_[k].second);
        const auto& x = win.sums;
        const double n = static_cast<double>(x.n);
        w.push_int(c++, x.n);
        for (double v :
             {x.n ? static_cast<double>(x.gt) / n : kNaN,
              x.n ? static_cast<double>(x.lt) / n : kNaN,
              x.n ? static_cast<double>(x.crit) / n : kNaN, x.n ? x.max : kNaN, x.n ? x.min : kNaN})
          w.push_float(c++, v);
      }
    }
    windows_ = std::move(w);
  }

  const Query& q_;
  SelectionScan scan_;
  SelectionOptions o_;
  std::shared_ptr<const std::vector<std::string>> contigs_;
  std::shared_ptr<StoreRows> store_;
  std::vector<std::unique_ptr<ScanEngine>> engines_;
  std::vector<std::pair<int, int>> labels_;
  std::unique_ptr<SegmentRunner> runner_;
  Table windows_;
};

}  // namespace

std::unique_ptr<SelectionStatistic> make_selection_scan(const Query& q, SelectionScan scan,
                                                        const SelectionOptions& options) {
  return std::make_unique<SelectionScanStatistic>(q, scan, options);
}

}  // namespace vczstats
