#include "vczstats/thread_pool.hpp"

#include <algorithm>

namespace vczstats {

unsigned hardware_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = hardware_threads();
  // The calling thread also works inside parallel_for, so start one fewer worker.
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_tasks(std::unique_lock<std::mutex>& lock) {
  // Called with the lock held; releases it while a task runs.
  while (next_ < task_n_) {
    const std::int64_t i = next_++;
    const bool failed = static_cast<bool>(error_);
    lock.unlock();
    if (!failed) {
      try {
        (*task_)(i);
      } catch (...) {
        std::lock_guard g(mutex_);
        if (!error_) error_ = std::current_exception();
      }
    }
    lock.lock();
    if (++finished_ == task_n_) done_.notify_all();
  }
}

void ThreadPool::worker_loop() {
  std::uint64_t seen = 0;
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || (generation_ != seen && next_ < task_n_); });
    if (stop_) return;
    seen = generation_;
    ++active_;
    run_tasks(lock);
    --active_;
    done_.notify_all();
  }
}

void ThreadPool::parallel_for(std::int64_t n, const std::function<void(std::int64_t)>& fn) {
  if (n <= 0) return;
  std::lock_guard call(call_mutex_);
  std::unique_lock lock(mutex_);
  task_ = &fn;
  task_n_ = n;
  next_ = 0;
  finished_ = 0;
  error_ = nullptr;
  ++generation_;
  wake_.notify_all();
  run_tasks(lock);
  done_.wait(lock, [&] { return finished_ == task_n_ && active_ == 0; });
  task_ = nullptr;
  task_n_ = 0;
  auto err = error_;
  error_ = nullptr;
  lock.unlock();
  if (err) std::rethrow_exception(err);
}

}  // namespace vczstats
