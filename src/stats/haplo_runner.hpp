#pragma once
// Runs batches of haplotype segments (stats/haplo_kernel.hpp): on CPU threads, one lane per
// segment, or on a GPU (backend/cuda/haplo_runner.cu), one thread block per segment. Batches
// are host memory in and out; the GPU runner copies them over.

#include <memory>
#include <string>

#include "stats/haplo_kernel.hpp"

namespace vczstats::stats::haplo {

class SegmentRunner {
 public:
  virtual ~SegmentRunner() = default;
  /// Run every segment of @p batch and write its results (host memory).
  virtual void run(const BatchView& batch) = 0;
  /// Segments a batch should hold to keep the device busy.
  virtual std::int64_t preferred_segments() const = 0;
  /// For -v: "cpu, 16 threads" or "gpu 0 (...)".
  virtual std::string describe() const = 0;
};

/// The CPU runner: segments on @p threads threads of the shared pool (0: all cores; never more
/// than the cores), each segment with @p lanes lanes run one after another (1 but in tests).
std::unique_ptr<SegmentRunner> make_cpu_runner(unsigned threads, int lanes = 1);

}  // namespace vczstats::stats::haplo
