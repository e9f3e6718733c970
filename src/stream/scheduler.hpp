#pragma once
// The one scheduler of the heavy passes, shared by the CPU threads and the GPU pipeline.
//
// Work items are (unit, phase, sample block) triples in plan order: unit-major, then phase,
// then block. Producers (tasks of the shared thread pool) claim items in that order and produce
// them (decode, gather, and on the CPU the heavy pass itself); the consumer (the calling thread)
// receives them in order and merges them (CPU: adds block counts into the unit's; GPU: copies
// to the device and queues kernels). After the last block of a unit's phase the consumer's
// phase_done(unit, phase) runs: it may post what the next phase needs (e.g. per-site weights
// from the unit's complete counts); producers of phase p > 0 of that unit wait for it before
// they start. Items are claimed in index order and phase-0 items never wait, so the wait always
// ends. At most `depth` items exist at once, which bounds memory whatever the plan's size.

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <utility>

#include "stream/prefetcher.hpp"
#include "vczstats/error.hpp"

namespace vczstats::stream {

/// @brief One item of work.
struct WorkItem {
  std::int64_t unit = 0;
  int phase = 0;
  std::int64_t block = 0;
  std::int64_t index = 0;  ///< position in the run's order
};

/// @brief The shape of a run: units × phases × blocks items on `workers` producers.
struct Schedule {
  std::int64_t units = 0;
  std::int64_t blocks = 0;
  int phases = 1;
  unsigned workers = 1;
  unsigned depth = 2;
};

/// @brief What the backend does at each step (see the file comment).
template <class Payload>
struct ScheduleHooks {
  std::function<Payload(const WorkItem&, unsigned worker)> produce;  ///< pool threads
  std::function<void(const WorkItem&, Payload&)> consume;            ///< calling thread, in order
  std::function<void(std::int64_t unit, int phase)> phase_done;      ///< calling thread (optional)
};

/// @brief Releases producers of a unit's later phases once the consumer finished the one before.
class PhaseBoard {
 public:
  void post(std::int64_t unit, int phase) {
    {
      std::lock_guard lock(mutex_);
      done_.insert({unit, phase});
    }
    cv_.notify_all();
  }
  /// @brief Wait until post(unit, phase) ran. @throws Error after stop().
  void wait(std::int64_t unit, int phase) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return stopped_ || done_.contains({unit, phase}); });
    if (stopped_) throw Error("heavy pass stopped");
  }
  void forget(std::int64_t unit, int phase) {
    std::lock_guard lock(mutex_);
    done_.erase({unit, phase});
  }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::set<std::pair<std::int64_t, int>> done_;
  bool stopped_ = false;
};

/// @brief Run every item of @p s through @p hooks (see the file comment). Producer errors reach
/// the caller with their message; on any exception producers are stopped and joined before
/// this returns.
template <class Payload>
void run_schedule(const Schedule& s, const ScheduleHooks<Payload>& hooks) {
  const std::int64_t per_unit = static_cast<std::int64_t>(s.phases) * s.blocks;
  const std::int64_t n = s.units * per_unit;
  auto item_of = [&](std::int64_t i) {
    return WorkItem{i / per_unit, static_cast<int>((i % per_unit) / s.blocks), i % s.blocks, i};
  };
  PhaseBoard board;
  OrderedPrefetcher<Payload> prefetcher(n, s.workers, s.depth, [&](std::int64_t i, unsigned w) {
    const WorkItem item = item_of(i);
    if (item.phase > 0) board.wait(item.unit, item.phase - 1);  // before decoding: bounds memory
    return hooks.produce(item, w);
  });
  struct Stop {  // wakes producers waiting on the board, whatever way we leave
    PhaseBoard& board;
    OrderedPrefetcher<Payload>& prefetcher;
    ~Stop() {
      board.stop();
      prefetcher.cancel();
    }
  } stop{board, prefetcher};
  for (std::int64_t i = 0; i < n; ++i) {
    auto payload = prefetcher.next();
    const WorkItem item = item_of(i);
    hooks.consume(item, *payload);
    if (item.block == s.blocks - 1) {
      if (hooks.phase_done) hooks.phase_done(item.unit, item.phase);
      if (item.phase + 1 < s.phases) board.post(item.unit, item.phase);
      if (item.phase > 0) board.forget(item.unit, item.phase - 1);
    }
  }
}

}  // namespace vczstats::stream
