#pragma once
/// @file thread_pool.hpp
/// @brief A fixed pool of worker threads with a blocking parallel_for.

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace vczstats {

/// @brief Number of hardware threads (at least 1).
unsigned hardware_threads();

/// @brief A fixed set of worker threads. parallel_for blocks until every index has run; the
/// first exception thrown by a task is rethrown in the caller after the others finished.
class ThreadPool {
 public:
  /// @brief Start @p threads workers (0 = hardware_threads()).
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()); }

  /// @brief Run fn(i) for i in [0, n), spread over the workers (and the calling thread).
  /// Indices are handed out in increasing order.
  void parallel_for(std::int64_t n, const std::function<void(std::int64_t)>& fn);

 private:
  void worker_loop();
  void run_tasks(std::unique_lock<std::mutex>& lock);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(std::int64_t)>* task_ = nullptr;
  std::int64_t task_n_ = 0;
  std::int64_t next_ = 0;
  std::int64_t finished_ = 0;
  std::uint64_t generation_ = 0;
  int active_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
  std::mutex call_mutex_;  // one parallel_for at a time
};

}  // namespace vczstats
