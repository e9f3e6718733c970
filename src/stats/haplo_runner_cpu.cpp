// The CPU segment runner: segments of a batch spread over a group of the shared pool's threads,
// each with its own scratch memory, one lane per segment (the sequential form of the kernel).

#include <algorithm>
#include <atomic>
#include <vector>

#include "stats/haplo_runner.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::stats::haplo {
namespace {

class CpuRunner final : public SegmentRunner {
 public:
  // Never more threads than cores: the segments are compute alone, and their number follows the
  // threads (preferred_segments), so extra threads would only cut the walks shorter (iHS on
  // Ag1000G with -t 64 on 2 cores did twice the work of -t 2).
  CpuRunner(unsigned threads, int lanes)
      : threads_(std::min(threads ? threads : hardware_threads(), hardware_threads())),
        lanes_(std::max(lanes, 1)) {}

  void run(const BatchView& b) override {
    if (b.nsegments <= 0) return;
    const auto tasks = static_cast<unsigned>(
        std::min<std::int64_t>(b.nsegments, static_cast<std::int64_t>(threads_)));
    const std::int64_t bytes = scratch_bytes(b.n, lanes_, b.max_steps);
    std::atomic<std::int64_t> next{0};
    auto work = [&](unsigned) {
      std::vector<std::uint64_t> memory(static_cast<std::size_t>(bytes / 8 + 1), 0);
      const Scratch s =
          scratch_at(reinterpret_cast<std::byte*>(memory.data()), b.n, lanes_, b.max_steps);
      const HostBlock block{lanes_};
      for (std::int64_t g; (g = next.fetch_add(1)) < b.nsegments;)
        run_segment(block, b, b.segments[g], s);
    };
    if (tasks <= 1) {
      work(0);
      return;
    }
    // A group of its own (the pool grows if the heavy pass's producers hold every worker).
    ThreadPool::shared().start(tasks, work).join();
  }

  std::int64_t preferred_segments() const override { return 4 * std::int64_t{threads_}; }

  std::string describe() const override { return "cpu, " + std::to_string(threads_) + " threads"; }

 private:
  unsigned threads_;
  int lanes_;
};

}  // namespace

std::unique_ptr<SegmentRunner> make_cpu_runner(unsigned threads, int lanes) {
  return std::make_unique<CpuRunner>(threads, lanes);
}

}  // namespace vczstats::stats::haplo
