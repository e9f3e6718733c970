#pragma once
/// @file windows.hpp
/// @brief Windows over a stream of sites in genome order, with partial sums that merge across
/// partitions of the sites.
// Sites come in groups: a region of -r (the first region, in the order given, that selects the
// site), else a contig (tests/tools/POPGEN.md §3). A group spans [start, end]: by default
// (WindowSpan::Data) from its first to its last selected site, a region's own bounds where it
// gives them; with WindowSpan::Contig from base 1 (or the region start) to the contig length
// (or the region end), as vcftools. Without window options a group is one window;
// --window-size W --window-step S tiles the span with [b, b+W-1], b = start, start+S, ... as
// scikit-allel's position_windows: the first window with b + W >= end is the last and ends at
// end (so no 1-bp window trails a span that is a multiple of W plus one); when end is not
// known (no contig length) windows run to the last site. --window-variants N makes windows of
// N consecutive sites; --windows-file gives them explicitly. A window closes once no later site
// can fall in it, so memory holds only the W/S windows open at a time.
//
// Partitions: the sites of a run may be cut anywhere into consecutive partitions (MPI ranks,
// or tests), each with its own WindowAccumulator. A partition begins from the SiteCursor of the
// sites before it (computed from positions alone, see site_cursor in query.hpp) and rebuilds the
// windows that were open there as "head" windows with empty sums; merge() adds a partition's
// head windows into the open windows of the partition before it. The merged windows equal a
// single pass (sums in a different order: floats agree to rounding).

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "vczstats/archive.hpp"
#include "vczstats/error.hpp"

namespace vczstats::stats {

/// @brief Where a group's bp windows (and its single window without window options) start and
/// end.
enum class WindowSpan {
  Data,    ///< the first to the last selected site (a region's own bounds where it gives them)
  Contig,  ///< base 1 (or the region start) to the contig length (or the region end)
};

/// @brief How sites are grouped into windows.
struct WindowSpec {
  std::int64_t size = 0;      ///< bp window length (0: none)
  std::int64_t step = 0;      ///< bp step (0: size)
  std::int64_t variants = 0;  ///< sites per window (0: none)
  /// Windows given explicitly (a BED file): per contig index, [start, end] 1-based inclusive,
  /// sorted by start; they may overlap. Empty: none. Every window of a contig is listed once a
  /// site of it is seen.
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> intervals;
  WindowSpan span = WindowSpan::Data;  ///< bp windows and the one window of a group
};

/// @brief A group of sites: where windows start and end.
struct WindowGroup {
  std::int64_t key = -1;  ///< identifies the group (region index or contig)
  std::int32_t contig = 0;
  std::int64_t start = 1;
  std::int64_t end = 0;  ///< last base, when known
  bool known_end = false;
};

/// @brief The state of the site stream before a partition: what the partition needs to line
/// its windows and blocks up with a single pass. Computed from positions and alleles alone.
struct SiteCursor {
  bool any = false;              ///< a windowed site comes before the partition
  WindowGroup group;             ///< the group of the last windowed site
  std::int64_t pos = 0;          ///< its position
  std::int64_t group_sites = 0;  ///< windowed sites of that group before the partition
  std::int64_t biallelic = 0;    ///< selected biallelic sites before (f-statistics blocks)
  std::int64_t selected = 0;     ///< selected sites before, windowed or not (variant pairs)
};

/// @brief The most windows one group may have (a guard against a contig length or position
/// near 2^63 with a small window, which would otherwise emit windows for hours).
inline constexpr std::int64_t kMaxWindowsPerGroup = std::int64_t{1} << 31;

/// @brief Sums per window. Sums must be copyable and have `void merge(const Sums&)` (adding
/// another partition's sums of the same window).
template <class Sums>
class WindowAccumulator {
 public:
  struct Window {
    std::int32_t contig = 0;
    std::int64_t start = 0, end = 0;  ///< 1-based, inclusive
    std::int64_t sites = 0;
    Sums sums;
    std::int64_t group_key = -1, index = 0;  ///< identity within the run
    bool closed = false;
    bool head = false;  ///< rebuilt from the cursor: merged into the previous partition
  };

  WindowAccumulator(WindowSpec spec, std::function<Sums()> make)
      : spec_(std::move(spec)), make_(std::move(make)) {
    if (spec_.step == 0) spec_.step = spec_.size;
  }

  /// @brief Start a partition after the sites summarised by @p c (a default cursor: the start).
  void begin(const SiteCursor& c) {
    pending_.clear();
    started_ = false;
    if (!c.any) return;
    start_group(c.group);
    last_pos_ = c.pos;
    group_sites_ = c.group_sites;
    if (!spec_.intervals.empty()) {
      const auto& iv = intervals();
      std::size_t done = 0;  // the longest prefix closed in front: end < pos
      while (done < iv.size() && iv[done].first <= c.pos && iv[done].second < c.pos) ++done;
      next_interval_ = done;
      while (next_interval_ < iv.size() && iv[next_interval_].first <= c.pos) {
        push(static_cast<std::int64_t>(next_interval_), iv[next_interval_].first,
             iv[next_interval_].second, true);
        ++next_interval_;
      }
    } else if (spec_.variants > 0) {
      if (group_sites_ % spec_.variants != 0)
        push(group_sites_ / spec_.variants, 0, c.pos, true);  // its start is in an earlier part
    } else if (spec_.size == 0) {
      push(0, group_.start, group_.known_end ? group_.end : c.pos, true);
    } else {
      const std::int64_t p = std::max(c.pos, group_.start);
      const std::int64_t hi = last_index_at(p);
      for (std::int64_t k = std::max<std::int64_t>(0, first_index_ending_at(p)); k <= hi; ++k)
        if (window_end(k) >= p) push(k, window_start(k), window_end(k), true);
      next_k_ = hi + 1;
    }
  }

  /// @brief Add a site at @p pos of @p group; @p add(Sums&) adds it to one window.
  template <class Add>
  void add(const WindowGroup& group, std::int64_t pos, Add&& add) {
    if (!started_ || group.key != group_.key) {
      finish_group();
      start_group(group);
    }
    last_pos_ = pos;
    ++group_sites_;
    if (!spec_.intervals.empty()) {
      const auto& iv = intervals();
      while (next_interval_ < iv.size() && iv[next_interval_].first <= pos) {
        push(static_cast<std::int64_t>(next_interval_), iv[next_interval_].first,
             iv[next_interval_].second, false);
        ++next_interval_;
      }
      close_front(pos);
      for_open(pos, add);
      return;
    }
    if (spec_.variants > 0) {
      if (pending_.empty() || pending_.back().closed)
        push((group_sites_ - 1) / spec_.variants, pos, pos, false);
      Window& w = pending_.back();
      w.end = pos;
      count(w, add);
      if (group_sites_ % spec_.variants == 0) w.closed = true;
      return;
    }
    if (spec_.size == 0) {
      if (pending_.empty() || pending_.back().closed)
        push(0, group_.start, group_.known_end ? group_.end : pos, false);
      Window& w = pending_.back();
      if (!group_.known_end) w.end = pos;
      count(w, add);
      return;
    }
    const std::int64_t p = std::max(pos, group_.start);  // overlapping a region's start
    close_front(p);
    const std::int64_t hi = last_index_at(p);
    if (hi >= kMaxWindowsPerGroup) too_many_windows();
    for (; next_k_ <= hi; ++next_k_) {
      push(next_k_, window_start(next_k_), window_end(next_k_), false);
      if (pending_.back().end < p) close_front(p);
      backlog();
    }
    for_open(p, add);
  }

  /// @brief Called (when set) while many closed windows wait, e.g. across a long gap between
  /// sites, so the owner can take_closed() them and keep memory bounded.
  void on_backlog(std::function<void()> fn) { on_backlog_ = std::move(fn); }

  /// @brief Remove and return the closed windows that are final here (heads excluded), in
  /// order.
  std::vector<Window> take_closed() {
    std::vector<Window> out, heads;
    while (!pending_.empty() && pending_.front().head) {  // heads stay for merge()
      heads.push_back(std::move(pending_.front()));
      pending_.pop_front();
    }
    while (!pending_.empty() && pending_.front().closed) {
      out.push_back(std::move(pending_.front()));
      pending_.pop_front();
    }
    for (auto it = heads.rbegin(); it != heads.rend(); ++it) pending_.push_front(std::move(*it));
    return out;
  }

  /// @brief Windows waiting (heads included).
  std::size_t pending() const { return pending_.size(); }
  /// @brief Call @p fn(Sums&) on the sums of every window waiting (e.g. at the end of a unit).
  template <class Fn>
  void for_each_sums(Fn&& fn) {
    for (auto& w : pending_) fn(w.sums);
  }
  /// @brief Call @p f(const Window&) on every window waiting (heads included), in order.
  template <class F>
  void for_each_pending(F&& f) const {
    for (const auto& w : pending_) f(w);
  }
  /// @brief Head windows waiting (they lead pending).
  std::size_t heads() const {
    std::size_t n = 0;
    while (n < pending_.size() && pending_[n].head) ++n;
    return n;
  }
  /// @brief Remove and return the first @p n windows after the heads, which must be closed.
  std::vector<Window> take_front(std::size_t n) {
    const std::size_t h = heads();
    if (h + n > pending_.size()) throw Error("windows: taking more than are waiting");
    std::vector<Window> out;
    for (std::size_t i = 0; i < n; ++i) {
      if (!pending_[h + i].closed) throw Error("windows: taking an open window");
      out.push_back(std::move(pending_[h + i]));
    }
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(h),
                   pending_.begin() + static_cast<std::ptrdiff_t>(h + n));
    return out;
  }

  /// @brief Absorb @p later, the partition right after this one (begun from this one's end).
  /// @throws Error when the partitions do not line up.
  void merge(WindowAccumulator& later) {
    auto h = later.pending_.begin();
    for (auto& w : pending_) {
      if (w.closed) continue;
      if (h == later.pending_.end() || !h->head || h->group_key != w.group_key ||
          h->index != w.index)
        throw Error(
            "window partitions do not line up (a partition did not begin where the "
            "previous one ended)");
      w.sites += h->sites;
      w.sums.merge(h->sums);
      if (h->sites > 0) w.end = h->end;  // ends that follow sites (variant and group windows)
      w.closed = h->closed;
      h = later.pending_.erase(h);
    }
    if (h != later.pending_.end() && h->head)
      throw Error("window partitions do not line up (unmatched window at a partition start)");
    for (auto& w : later.pending_) pending_.push_back(std::move(w));
    later.pending_.clear();
    group_ = later.group_;
    started_ = later.started_;
    next_k_ = later.next_k_;
    next_interval_ = later.next_interval_;
    last_pos_ = later.last_pos_;
    group_sites_ = later.group_sites_;
  }

  /// @brief Write the state (@p save_sums(ByteWriter&, const Sums&) writes one window's sums).
  template <class SaveSums>
  void save(ByteWriter& w, SaveSums&& save_sums) const {
    w.put(group_);
    w.put<std::uint8_t>(started_);
    w.put(next_k_);
    w.put<std::uint64_t>(next_interval_);
    w.put(last_pos_);
    w.put(group_sites_);
    w.put<std::uint64_t>(pending_.size());
    for (const auto& x : pending_) {
      w.put(x.contig);
      w.put(x.start);
      w.put(x.end);
      w.put(x.sites);
      w.put(x.group_key);
      w.put(x.index);
      w.put<std::uint8_t>(x.closed);
      w.put<std::uint8_t>(x.head);
      save_sums(w, x.sums);
    }
  }
  /// @brief Replace the state with a saved one (@p load_sums(ByteReader&, Sums&)).
  template <class LoadSums>
  void load(ByteReader& r, LoadSums&& load_sums) {
    group_ = r.get<WindowGroup>();
    started_ = r.get<std::uint8_t>() != 0;
    next_k_ = r.get<std::int64_t>();
    next_interval_ = static_cast<std::size_t>(r.get<std::uint64_t>());
    last_pos_ = r.get<std::int64_t>();
    group_sites_ = r.get<std::int64_t>();
    const auto n = r.get<std::uint64_t>();
    pending_.clear();
    for (std::uint64_t i = 0; i < n; ++i) {
      Window x{0, 0, 0, 0, make_(), -1, 0, false, false};
      x.contig = r.get<std::int32_t>();
      x.start = r.get<std::int64_t>();
      x.end = r.get<std::int64_t>();
      x.sites = r.get<std::int64_t>();
      x.group_key = r.get<std::int64_t>();
      x.index = r.get<std::int64_t>();
      x.closed = r.get<std::uint8_t>() != 0;
      x.head = r.get<std::uint8_t>() != 0;
      load_sums(r, x.sums);
      pending_.push_back(std::move(x));
    }
  }

  /// @brief Close the last group (its empty windows up to a known end included) and return
  /// every window left, in order.
  std::vector<Window> finish() {
    finish_group();
    std::vector<Window> out(std::make_move_iterator(pending_.begin()),
                            std::make_move_iterator(pending_.end()));
    pending_.clear();
    return out;
  }

 private:
  template <class Add>
  static void count(Window& w, Add& add) {
    ++w.sites;
    add(w.sums);
  }

  // Open windows are a suffix of pending_ (windows close from the front): add the site to
  // those that hold p.
  template <class Add>
  void for_open(std::int64_t p, Add& add) {
    for (auto it = pending_.rbegin(); it != pending_.rend() && !it->closed; ++it)
      if (it->start <= p && p <= it->end) count(*it, add);
  }

  void backlog() {
    if (on_backlog_ && pending_.size() >= kBacklog) on_backlog_();
  }
  static constexpr std::size_t kBacklog = 4096;

  void push(std::int64_t index, std::int64_t start, std::int64_t end, bool head) {
    Window w{group_.contig, start, end, 0, make_(), group_.key, index, false, head};
    pending_.push_back(std::move(w));
  }

  void start_group(const WindowGroup& g) {
    group_ = g;
    started_ = true;
    next_k_ = 0;
    next_interval_ = 0;
    group_sites_ = 0;
    if (spec_.size > 0 && spec_.variants == 0 && spec_.intervals.empty() && g.known_end &&
        last_index_at(g.end) >= kMaxWindowsPerGroup)
      too_many_windows();
  }

  void finish_group() {
    if (!started_) return;
    for (auto& w : pending_) w.closed = true;
    if (!spec_.intervals.empty()) {
      const auto& iv = intervals();
      for (; next_interval_ < iv.size(); ++next_interval_) {
        push(static_cast<std::int64_t>(next_interval_), iv[next_interval_].first,
             iv[next_interval_].second, false);
        pending_.back().closed = true;
        backlog();
      }
    }
    if (spec_.size > 0 && spec_.variants == 0 && spec_.intervals.empty() && group_.known_end)
      for (const std::int64_t hi = last_index_at(group_.end); next_k_ <= hi; ++next_k_) {
        push(next_k_, window_start(next_k_), window_end(next_k_), false);
        pending_.back().closed = true;
        backlog();
      }
    started_ = false;
  }

  // Close the open windows at the front that end before p (windows are ordered by start and,
  // with a fixed size, by end; explicit windows may overlap, and then only the front ones go).
  // Open windows are a suffix of pending_: find where it starts from the back.
  void close_front(std::int64_t p) {
    auto it = pending_.end();
    while (it != pending_.begin() && !std::prev(it)->closed) --it;
    for (; it != pending_.end() && it->end < p; ++it) it->closed = true;
  }

  // bp windows: window k starts at group.start + k * step. Saturating arithmetic: positions and
  // sizes may be anything up to 2^63 - 1.
  static constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t window_start(std::int64_t k) const {
    if (k > 0 && spec_.step > (kMax - group_.start) / k) return kMax;
    return group_.start + k * spec_.step;
  }
  // With a known end, a window whose start + size reaches the end is the last one and ends at
  // the end (scikit-allel's position_windows).
  std::int64_t window_end(std::int64_t k) const {
    const std::int64_t s = window_start(k);
    if (group_.known_end && s >= group_.end - spec_.size) return group_.end;
    return s > kMax - (spec_.size - 1) ? kMax : s + (spec_.size - 1);
  }
  // The index of the last window of a group with a known end (-1: none): the first window
  // reaching the end, or the last one starting at or before it (windows with gaps between
  // them).
  std::int64_t last_index() const {
    const std::int64_t d = group_.end - group_.start;
    if (d < 0) return -1;
    const std::int64_t by_start = d / spec_.step;
    const std::int64_t r = d - spec_.size;  // windows k with k * step < r end before the end
    const std::int64_t by_reach = r <= 0 ? 0 : r / spec_.step + (r % spec_.step != 0);
    return std::min(by_start, by_reach);
  }
  // The last window index starting at or before p (-1 when none), within a known end.
  std::int64_t last_index_at(std::int64_t p) const {
    if (group_.known_end) p = std::min(p, group_.end);
    if (p < group_.start) return -1;
    const std::int64_t k = (p - group_.start) / spec_.step;
    return group_.known_end ? std::min(k, last_index()) : k;
  }
  // The first window index whose end reaches p.
  std::int64_t first_index_ending_at(std::int64_t p) const {
    const std::int64_t d = p - group_.start - (spec_.size - 1);  // start_k >= p - size + 1
    const std::int64_t k = d <= 0 ? 0 : (d + spec_.step - 1) / spec_.step;
    return group_.known_end ? std::min(k, std::max<std::int64_t>(last_index(), 0)) : k;
  }
  [[noreturn]] void too_many_windows() const {
    throw UsageError("--window-size " + std::to_string(spec_.size) + " --window-step " +
                     std::to_string(spec_.step) + " would make more than " +
                     std::to_string(kMaxWindowsPerGroup) +
                     " windows on one contig or region (its length or a position is too large); "
                     "give -r/--regions or larger windows");
  }

  const std::vector<std::pair<std::int64_t, std::int64_t>>& intervals() const {
    static const std::vector<std::pair<std::int64_t, std::int64_t>> none;
    const auto c = static_cast<std::size_t>(group_.contig);
    return c < spec_.intervals.size() ? spec_.intervals[c] : none;
  }

  WindowSpec spec_;
  std::function<Sums()> make_;
  WindowGroup group_;
  bool started_ = false;
  std::int64_t next_k_ = 0;
  std::size_t next_interval_ = 0;
  std::int64_t last_pos_ = 0, group_sites_ = 0;
  std::deque<Window> pending_;
  std::function<void()> on_backlog_;
};

}  // namespace vczstats::stats
