#pragma once
/// @file windows.hpp
/// @brief Streaming windows over sites in genome order.
// Windows over a stream of sites in genome order (tests/tools/POPGEN.md §3). Sites come in
// groups: a region of -r (the first region, in the order given, that selects the site), else a
// contig. Without window options a group is one window; --window-size W --window-step S tiles
// the group's span [start, end] with [b, b+W-1], b = start, start+S, ... (clipped at end when
// end is known: the region's end or the contig's length; otherwise windows run to the last
// site); --window-variants N makes windows of N consecutive sites. Each window holds an
// accumulator; a window is emitted (in order of start) once no later site can fall in it, so
// memory holds only the W/S windows open at a time, whatever the number of sites.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <vector>

namespace vczstats::stats {

/// @brief How sites are grouped into windows.
struct WindowSpec {
  std::int64_t size = 0;      ///< bp window length (0: none)
  std::int64_t step = 0;      ///< bp step (0: size)
  std::int64_t variants = 0;  ///< sites per window (0: none)
  /// Windows given explicitly (a BED file): per contig index, [start, end] 1-based inclusive,
  /// sorted by start; they may overlap. Empty: none. A contig's windows are all listed once a
  /// site of it is seen.
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> intervals;
};

/// @brief A group of sites: where windows start and end.
struct WindowGroup {
  std::int64_t key = -1;  ///< identifies the group (region index or contig)
  std::int32_t contig = 0;
  std::int64_t start = 1;
  std::int64_t end = 0;  ///< last base, when known
  bool known_end = false;
};

template <class Acc>
class WindowScanner {
 public:
  struct Window {
    std::int32_t contig = 0;
    std::int64_t start = 0, end = 0;  ///< 1-based, inclusive
    std::int64_t sites = 0;
    Acc acc;
  };
  using Emit = std::function<void(const Window&)>;

  WindowScanner(WindowSpec spec, std::function<Acc()> make, Emit emit)
      : spec_(spec), make_(std::move(make)), emit_(std::move(emit)) {
    if (spec_.step == 0) spec_.step = spec_.size;
  }

  /// @brief Add a site at @p pos of @p group; @p add(Acc&) adds it to one window.
  template <class Add>
  void add(const WindowGroup& group, std::int64_t pos, Add&& add) {
    if (group.key != group_.key || !started_) {
      finish();
      group_ = group;
      started_ = true;
      next_start_ = group.start;
      next_interval_ = 0;
    }
    last_pos_ = pos;
    if (!spec_.intervals.empty()) {
      const auto& iv = intervals();
      while (next_interval_ < iv.size() && iv[next_interval_].first <= pos) {
        open_.push_back(fresh(iv[next_interval_].first, iv[next_interval_].second));
        ++next_interval_;
      }
      emit_front_until(pos);
      for (auto& w : open_)
        if (w.start <= pos && pos <= w.end) {
          ++w.sites;
          add(w.acc);
        }
      return;
    }
    if (spec_.variants > 0) {
      if (open_.empty()) open_.push_back(fresh(pos, pos));
      Window& w = open_.front();
      w.end = pos;
      ++w.sites;
      add(w.acc);
      if (w.sites == spec_.variants) flush_all();
      return;
    }
    if (spec_.size == 0) {
      if (open_.empty()) open_.push_back(fresh(group_.start, group_.end));
      ++open_.front().sites;
      add(open_.front().acc);
      return;
    }
    const std::int64_t p = std::max(pos, group_.start);  // overlapping a region's start
    // Close the windows that end before p; open those that start at or before it.
    while (!open_.empty() && open_.front().end < p) emit_front();
    while (next_start_ <= p && (!group_.known_end || next_start_ <= group_.end)) {
      open_.push_back(fresh(next_start_, window_end(next_start_)));
      next_start_ += spec_.step;
      if (open_.back().end < p) emit_front_until(p);
    }
    for (auto& w : open_)
      if (w.start <= p && p <= w.end) {
        ++w.sites;
        add(w.acc);
      }
  }

  /// @brief Emit the windows left in the current group (and the empty ones up to its end).
  void finish() {
    if (!started_) return;
    if (!spec_.intervals.empty()) {
      const auto& iv = intervals();
      for (; next_interval_ < iv.size(); ++next_interval_)
        open_.push_back(fresh(iv[next_interval_].first, iv[next_interval_].second));
    }
    if (spec_.size > 0 && spec_.variants == 0 && group_.known_end) {
      while (next_start_ <= group_.end) {
        open_.push_back(fresh(next_start_, window_end(next_start_)));
        next_start_ += spec_.step;
      }
    }
    if (spec_.size == 0 && spec_.variants == 0 && !group_.known_end && !open_.empty())
      open_.front().end = last_pos_;
    flush_all();
    started_ = false;
    group_.key = -1;
  }

 private:
  Window fresh(std::int64_t start, std::int64_t end) {
    return Window{group_.contig, start, end, 0, make_()};
  }
  std::int64_t window_end(std::int64_t start) const {
    const std::int64_t e = start + spec_.size - 1;
    return group_.known_end ? std::min(e, group_.end) : e;
  }
  void emit_front() {
    emit_(open_.front());
    open_.pop_front();
  }
  // Emit leading windows that end before p (windows are ordered by start and, with a fixed
  // size, by end).
  void emit_front_until(std::int64_t p) {
    while (!open_.empty() && open_.front().end < p) emit_front();
  }
  void flush_all() {
    while (!open_.empty()) emit_front();
  }

  const std::vector<std::pair<std::int64_t, std::int64_t>>& intervals() const {
    static const std::vector<std::pair<std::int64_t, std::int64_t>> none;
    const auto c = static_cast<std::size_t>(group_.contig);
    return c < spec_.intervals.size() ? spec_.intervals[c] : none;
  }

  WindowSpec spec_;
  std::size_t next_interval_ = 0;
  std::function<Acc()> make_;
  Emit emit_;
  WindowGroup group_;
  bool started_ = false;
  std::int64_t next_start_ = 1, last_pos_ = 0;
  std::deque<Window> open_;
};

}  // namespace vczstats::stats
