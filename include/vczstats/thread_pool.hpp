#pragma once
/// @file thread_pool.hpp
/// @brief A pool of worker threads shared by every run of a process: blocking parallel loops
/// and groups of long-running tasks (the scheduler's producers), so no run spawns threads.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "vczstats/zarr.hpp"

namespace vczstats {

/// @brief Number of hardware threads (at least 1).
unsigned hardware_threads();

/// @brief Threads for @p items work items that run in parallel: @p requested (-t; 0 = every
/// hardware thread), but never more than the items (at least 1): a small store on many cores
/// starts no thread that would find nothing to do.
unsigned threads_for_work(unsigned requested, std::int64_t items);

/// @brief Worker threads taking tasks from one queue. parallel_for blocks until every index has
/// run (the calling thread works too); start() runs a group of tasks concurrently and returns at
/// once. The first exception of a task is rethrown to whoever waits for it. Workers start when
/// work needs them: a parallel_for of n indices starts at most n - 1 (up to the pool's width)
/// and takes only workers that are free then; the pool grows when a group needs more idle
/// workers than it has, so groups never wait for each other's threads.
class ThreadPool : public zarr::Executor {
 public:
  /// @brief A pool @p threads wide (0 = hardware_threads()): parallel_for uses at most that many
  /// threads counting the caller. No worker starts before work needs it.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool() override;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// @brief The process-wide pool (hardware_threads() wide), created on first use.
  static ThreadPool& shared();

  /// @brief Threads a parallel_for uses, the caller included.
  unsigned size() const { return width_; }

  /// @brief Worker threads started so far (they stay until the pool ends).
  unsigned threads_started() const;

  /// @brief Run fn(i) for i in [0, n), spread over the workers and the calling thread. Indices
  /// are handed out in increasing order. Safe to call from several threads at once.
  void parallel_for(std::int64_t n, const std::function<void(std::int64_t)>& fn) override;

  /// @brief Tasks started together; the destructor waits for them (after cancel() when the
  /// owner leaves early, the tasks themselves must notice and return).
  class Group {
   public:
    Group() = default;
    Group(Group&&) noexcept = default;
    Group& operator=(Group&&) noexcept = default;
    ~Group();
    /// @brief Wait for every task of the group; rethrows the first exception of one.
    void join();

   private:
    friend class ThreadPool;
    struct State;
    std::shared_ptr<State> state_;
  };

  /// @brief Run fn(0), ..., fn(n - 1) concurrently, each on its own worker (the pool grows when
  /// fewer than n workers are idle), and return at once.
  Group start(unsigned n, std::function<void(unsigned)> fn);

  /// @brief Run fn(i) for i in [0, n), indices claimed in increasing order by the calling thread
  /// and a group of up to @p threads - 1 workers of its own (started as by start()), and wait.
  /// Unlike parallel_for it gets its threads while other tasks (e.g. a pass's readers) hold the
  /// pool's workers. The first exception of a worker is rethrown.
  void run_claimed(unsigned threads, std::int64_t n, const std::function<void(std::int64_t)>& fn);

 private:
  void worker_loop();
  void push(std::vector<std::function<void()>> tasks, bool concurrent);
  /// Start a worker (mutex_ held).
  void start_worker();
  /// How many of @p want optional helpers a parallel_for gets: workers free now, or started.
  unsigned reserve_helpers(unsigned want);

  unsigned width_ = 1;
  std::vector<std::thread> workers_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  std::size_t idle_ = 0, starting_ = 0;
  bool stop_ = false;
};

}  // namespace vczstats
