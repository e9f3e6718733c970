#pragma once
// OrderedPrefetcher: N producers (tasks of the process's shared thread pool, not threads of
// their own) compute items 0..n-1 ahead of a single consumer, which receives them in index order.
// At most `depth` items exist at once (being produced or waiting), so memory in flight is bounded
// by depth × item size whatever n is. A producer's exception reaches the consumer's next() with
// its message intact, in index order: the items before it first, and of several failing items
// the one of the lowest index (so the error a run reports does not depend on timing);
// destruction (normal end, error or early exit of the consumer) stops the producers and joins
// them.

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "vczstats/thread_pool.hpp"

namespace vczstats::stream {

template <class Item>
class OrderedPrefetcher {
 public:
  using Produce = std::function<Item(std::int64_t index, unsigned producer)>;

  OrderedPrefetcher(std::int64_t n, unsigned producers, unsigned depth, Produce produce,
                    ThreadPool& pool = ThreadPool::shared())
      : n_(n), depth_(depth == 0 ? 1 : depth), produce_(std::move(produce)), slots_(depth_) {
    if (producers == 0) producers = 1;
    producers_ = pool.start(producers, [this](unsigned p) { run(p); });
  }

  ~OrderedPrefetcher() {
    cancel();
    producers_.join();  // run() catches everything: nothing is rethrown here
  }

  OrderedPrefetcher(const OrderedPrefetcher&) = delete;
  OrderedPrefetcher& operator=(const OrderedPrefetcher&) = delete;

  /// The next item in index order; nullopt after the last. Rethrows a producer's exception.
  std::optional<Item> next() {
    std::unique_lock lock(mutex_);
    if (consumed_ >= n_) return std::nullopt;
    Slot& slot = slots_[static_cast<std::size_t>(consumed_ % depth_)];
    ready_cv_.wait(lock, [&] { return slot.ready || (error_ && consumed_ >= error_index_); });
    if (!slot.ready) std::rethrow_exception(error_);
    std::optional<Item> item = std::move(slot.item);
    slot.item.reset();
    slot.ready = false;
    ++consumed_;
    lock.unlock();
    space_cv_.notify_one();  // one slot freed: one producer can claim it
    return item;
  }

  /// Stop handing out work; producers finish their current item and exit.
  void cancel() {
    {
      std::lock_guard lock(mutex_);
      cancelled_ = true;
    }
    space_cv_.notify_all();
    ready_cv_.notify_all();
  }

 private:
  struct Slot {
    std::optional<Item> item;
    bool ready = false;
  };

  void run(unsigned producer) {
    for (;;) {
      std::int64_t index;
      {
        std::unique_lock lock(mutex_);
        space_cv_.wait(lock, [&] {
          return cancelled_ || claimed_ >= n_ || claimed_ < consumed_ + depth_ ||
                 (error_ && claimed_ >= error_index_);
        });
        if (cancelled_ || claimed_ >= n_ || (error_ && claimed_ >= error_index_)) return;
        index = claimed_++;
      }
      try {
        Item item = produce_(index, producer);
        {
          std::lock_guard lock(mutex_);
          Slot& slot = slots_[static_cast<std::size_t>(index % depth_)];
          slot.item.emplace(std::move(item));
          slot.ready = true;
        }
        // Only the consumer waits for a ready item; the other producers wait for space, which
        // a made item does not free (waking them all per item is what made many threads slow).
        ready_cv_.notify_one();
      } catch (...) {
        {
          std::lock_guard lock(mutex_);
          // The items before it are still made (they were all claimed before it); no later one
          // is claimed.
          if (!error_ || index < error_index_) {
            error_ = std::current_exception();
            error_index_ = index;
          }
        }
        space_cv_.notify_all();  // the producers waiting for space stop
        ready_cv_.notify_all();
      }
    }
  }

  const std::int64_t n_;
  const std::int64_t depth_;
  Produce produce_;
  std::vector<Slot> slots_;
  std::mutex mutex_;
  std::condition_variable space_cv_, ready_cv_;
  std::int64_t claimed_ = 0;
  std::int64_t consumed_ = 0;
  bool cancelled_ = false;
  std::exception_ptr error_;
  std::int64_t error_index_ = 0;  // the item error_ came from
  ThreadPool::Group producers_;
};

}  // namespace vczstats::stream
