#include "vczstats/thread_pool.hpp"

#include <algorithm>
#include <atomic>

namespace vczstats {

unsigned hardware_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

unsigned threads_for_work(unsigned requested, std::int64_t items) {
  const unsigned want = requested ? requested : hardware_threads();
  return static_cast<unsigned>(std::clamp<std::int64_t>(items, 1, want));
}

/// What the tasks of one group (or one parallel_for) share: how many are still running and the
/// first exception.
struct ThreadPool::Group::State {
  std::mutex mutex;
  std::condition_variable done;
  unsigned running = 0;
  std::exception_ptr error;

  void finish(std::exception_ptr e) {
    std::lock_guard lock(mutex);
    if (e && !error) error = e;
    if (--running == 0) done.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex);
    done.wait(lock, [&] { return running == 0; });
  }
};

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = hardware_threads();
  width_ = threads;
  // Workers start when work needs them (parallel_for, start()), not here: a run on a small store
  // does not start a thread per core.
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

ThreadPool& ThreadPool::shared() {
  static ThreadPool pool(hardware_threads());
  return pool;
}

void ThreadPool::worker_loop() {
  std::unique_lock lock(mutex_);
  --starting_;
  for (;;) {
    ++idle_;
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    --idle_;
    if (queue_.empty()) return;  // stopping, nothing left
    auto task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();  // tasks catch their own exceptions
    lock.lock();
  }
}

unsigned ThreadPool::threads_started() const {
  std::lock_guard lock(mutex_);
  return static_cast<unsigned>(workers_.size());
}

void ThreadPool::start_worker() {
  ++starting_;
  workers_.emplace_back([this] { worker_loop(); });
}

void ThreadPool::push(std::vector<std::function<void()>> tasks, bool concurrent) {
  const std::size_t n = tasks.size();
  {
    std::lock_guard lock(mutex_);
    for (auto& t : tasks) queue_.push_back(std::move(t));
    // Tasks that must run at the same time each need a thread that is free now (idle or just
    // starting) for every queued task: start workers until there are.
    if (concurrent)
      while (idle_ + starting_ < queue_.size()) start_worker();
  }
  // One wake-up per task: a few tasks do not wake every idle worker.
  for (std::size_t i = 0; i < n; ++i) wake_.notify_one();
}

unsigned ThreadPool::reserve_helpers(unsigned want) {
  std::lock_guard lock(mutex_);
  // Workers free for them now (idle or starting, less the tasks already waiting), then new ones
  // up to the pool's width; a busy pool lends none (the caller does the work itself).
  const std::size_t ready = idle_ + starting_;
  std::size_t free = ready > queue_.size() ? ready - queue_.size() : 0;
  while (free < want && workers_.size() + 1 < width_) {
    start_worker();
    ++free;
  }
  return static_cast<unsigned>(std::min<std::size_t>(free, want));
}

void ThreadPool::parallel_for(std::int64_t n, const std::function<void(std::int64_t)>& fn) {
  if (n <= 0) return;
  // Helpers are optional: one that starts after the caller finished the work returns at once,
  // so a busy pool never delays a parallel_for beyond the caller's own work.
  struct Shared {
    std::mutex mutex;
    std::condition_variable done;
    int running = 0;
    bool closed = false;
    std::exception_ptr error;
    std::atomic<std::int64_t> next{0};
    std::atomic<bool> failed{false};
  };
  auto sh = std::make_shared<Shared>();
  auto loop = [&fn, n](Shared& s) {
    for (std::int64_t i; !s.failed.load() && (i = s.next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lock(s.mutex);
        if (!s.error) s.error = std::current_exception();
        s.failed.store(true);
      }
    }
  };
  const auto helpers = reserve_helpers(
      static_cast<unsigned>(std::min<std::int64_t>(n - 1, static_cast<std::int64_t>(width_) - 1)));
  if (helpers > 0) {
    std::vector<std::function<void()>> tasks(helpers, [sh, loop] {
      {
        std::lock_guard lock(sh->mutex);
        if (sh->closed) return;
        ++sh->running;
      }
      loop(*sh);
      std::lock_guard lock(sh->mutex);
      if (--sh->running == 0) sh->done.notify_all();
    });
    push(std::move(tasks), false);
  }
  loop(*sh);
  std::unique_lock lock(sh->mutex);
  sh->closed = true;
  sh->done.wait(lock, [&] { return sh->running == 0; });
  if (sh->error) std::rethrow_exception(sh->error);
}

void ThreadPool::run_claimed(unsigned threads, std::int64_t n,
                             const std::function<void(std::int64_t)>& fn) {
  if (n <= 0) return;
  std::atomic<std::int64_t> next{0};
  auto work = [&](unsigned) {
    for (std::int64_t i; (i = next++) < n;) fn(i);
  };
  const auto helpers =
      static_cast<unsigned>(std::min<std::int64_t>(std::int64_t{std::max(threads, 1u)} - 1, n - 1));
  Group group;
  if (helpers > 0) group = start(helpers, work);
  work(0);
  group.join();
}

ThreadPool::Group ThreadPool::start(unsigned n, std::function<void(unsigned)> fn) {
  Group g;
  g.state_ = std::make_shared<Group::State>();
  if (n == 0) return g;
  g.state_->running = n;
  auto shared_fn = std::make_shared<std::function<void(unsigned)>>(std::move(fn));
  std::vector<std::function<void()>> tasks;
  for (unsigned i = 0; i < n; ++i)
    tasks.emplace_back([state = g.state_, shared_fn, i] {
      std::exception_ptr err;
      try {
        (*shared_fn)(i);
      } catch (...) {
        err = std::current_exception();
      }
      state->finish(err);
    });
  push(std::move(tasks), true);
  return g;
}

void ThreadPool::Group::join() {
  if (!state_) return;
  state_->wait();
  auto err = state_->error;
  state_.reset();
  if (err) std::rethrow_exception(err);
}

ThreadPool::Group::~Group() {
  if (state_) state_->wait();
}

}  // namespace vczstats
