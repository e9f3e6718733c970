#pragma once
// A crew of worker tasks on the shared thread pool (vczstats/thread_pool.hpp) that runs one job
// at a time while its owner prepares the next: a job is a list of phases, each a number of items
// claimed in order by the workers, with a barrier between phases. The matrix family's CPU
// accumulator submits a batch of variants as a job (planes, then tiles) and fills the next batch
// meanwhile. Started once per pass: no thread is created per job.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <vector>

#include "vczstats/thread_pool.hpp"

namespace vczstats::backend {

class WorkerCrew {
 public:
  struct Phase {
    std::int64_t items = 0;
    std::function<void(std::int64_t item, unsigned worker)> run;
  };

  explicit WorkerCrew(unsigned workers) : workers_(workers == 0 ? 1 : workers) {
    group_ = ThreadPool::shared().start(workers_, [this](unsigned w) { work(w); });
  }
  ~WorkerCrew() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    group_.join();  // workers catch everything
  }
  WorkerCrew(const WorkerCrew&) = delete;
  WorkerCrew& operator=(const WorkerCrew&) = delete;

  unsigned size() const { return workers_; }

  /// Wait for the job in flight, then start @p phases. Rethrows the last job's first error.
  void submit(std::vector<Phase> phases) {
    wait();
    std::lock_guard lock(mutex_);
    phases_ = std::move(phases);
    next_ = std::vector<std::atomic<std::int64_t>>(phases_.size());
    arrived_.assign(phases_.size(), 0);
    done_ = 0;
    busy_ = true;
    ++generation_;
    wake_.notify_all();
  }

  /// Wait until the job in flight (if any) is done. Rethrows its first error.
  void wait() {
    std::unique_lock lock(mutex_);
    idle_.wait(lock, [&] { return !busy_; });
    if (error_) {
      auto e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
  }

 private:
  void work(unsigned w) {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      for (std::size_t p = 0; p < phases_.size(); ++p) {
        const Phase& phase = phases_[p];
        for (std::int64_t i; !failed_.load() && (i = next_[p].fetch_add(1)) < phase.items;) {
          try {
            phase.run(i, w);
          } catch (...) {
            std::lock_guard lock(mutex_);
            if (!error_) error_ = std::current_exception();
            failed_.store(true);
          }
        }
        std::unique_lock lock(mutex_);  // barrier: every worker finished phase p
        if (++arrived_[p] == workers_)
          phase_cv_.notify_all();
        else
          phase_cv_.wait(lock, [&] { return arrived_[p] == workers_; });
      }
      std::lock_guard lock(mutex_);
      if (++done_ == workers_) {
        busy_ = false;
        failed_.store(false);
        idle_.notify_all();
      }
    }
  }

  unsigned workers_;
  std::mutex mutex_;
  std::condition_variable wake_, phase_cv_, idle_;
  std::vector<Phase> phases_;
  std::vector<std::atomic<std::int64_t>> next_;
  std::vector<unsigned> arrived_;
  unsigned done_ = 0;
  bool busy_ = false, stop_ = false;
  std::uint64_t generation_ = 0;
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  ThreadPool::Group group_;
};

}  // namespace vczstats::backend
