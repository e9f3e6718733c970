#pragma once
/// @file run.hpp
/// @brief How a computation runs (threads, device, prefetch, progress) and what it reports.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vczstats/device.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats {

/// @brief Progress report: work units done out of the total, and variants done.
using ProgressFn = std::function<void(std::int64_t units_done, std::int64_t units_total,
                                      std::int64_t variants_done)>;

/// @brief How to run.
struct RunOptions {
  unsigned threads = 0;      ///< decode/compute threads (0: all cores)
  unsigned prefetch = 0;     ///< work items decoded ahead of the consumer (0: backend default)
  DeviceSpec device;         ///< cpu, gpu:N or auto
  unsigned gpu_streams = 0;  ///< CUDA streams of the GPU pipeline (0: 3)
  /// For benchmarks only: run the GPU the way the project's seed implementations did (one
  /// thread per variant, pageable copies, one stream, nothing overlapped), as a baseline.
  bool gpu_seed_baseline = false;
  ProgressFn progress;  ///< called after each work unit, on the calling thread (may be empty)
};

/// @brief What a run did and how long each stage took (for -v).
struct RunStats {
  std::string device;                 ///< e.g. "cpu, 16 threads"
  std::string note;                   ///< e.g. why auto fell back to the CPU (shown with -v)
  std::vector<std::string> warnings;  ///< things the user must see (always shown)
  vcz::SetupTimes setup;              ///< building the query (open store, samples, populations)
  double wall_seconds = 0;
  double read_decode_seconds = 0;  ///< summed over threads
  double gather_seconds = 0;       ///< sample-subset gathers, summed over threads
  double compute_seconds = 0;      ///< heavy pass, summed over threads (GPU: kernel time)
  double reduce_seconds = 0;       ///< merging and the statistics' reductions (consumer)
  double h2d_seconds = 0;      ///< GPU: host-to-device copies (CUDA events, summed over streams)
  double d2h_seconds = 0;      ///< GPU: device-to-host copies
  std::int64_t h2d_bytes = 0;  ///< GPU: bytes copied to the device
  std::int64_t decoded_bytes = 0;  ///< genotype bytes decoded
  std::int64_t calls = 0;          ///< genotype calls read (rows × samples × ploidy, per pass)
  std::int64_t variants = 0;       ///< variants selected
  std::int64_t units = 0;
};

}  // namespace vczstats
