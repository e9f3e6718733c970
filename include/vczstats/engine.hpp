#pragma once
/// @file engine.hpp
/// @brief Running a statistic over a chunk plan on a backend (CPU threads or CUDA).

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "vczstats/afdist.hpp"
#include "vczstats/counts.hpp"
#include "vczstats/device.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats {

/// @brief Where to compute.
enum class Device { Cpu, Gpu, Auto };

/// @brief Parse "cpu", "gpu" or "auto". @throws UsageError.
Device parse_device(const std::string& name);

/// @brief Progress report: work units done out of the total, and variants done.
using ProgressFn = std::function<void(std::int64_t units_done, std::int64_t units_total,
                                      std::int64_t variants_done)>;

/// @brief How to run.
struct RunOptions {
  unsigned threads = 0;   ///< decode/compute threads (0: all cores)
  unsigned prefetch = 0;  ///< work units decoded ahead of the consumer (0: 2 × threads)
  Device device = Device::Auto;
  unsigned gpu_streams = 0;  ///< CUDA streams of the GPU pipeline (0: 3)
  ProgressFn progress;       ///< called after each work unit (may be empty)
};

/// @brief What a run did and how long each stage took (for -v).
struct RunStats {
  std::string device;                 ///< e.g. "cpu, 16 threads"
  std::string note;                   ///< e.g. why auto fell back to the CPU (shown with -v)
  std::vector<std::string> warnings;  ///< things the user must see (always shown)
  double wall_seconds = 0;
  double read_decode_seconds = 0;  ///< summed over threads
  double gather_seconds = 0;       ///< sample-subset gathers, summed over threads
  double compute_seconds = 0;      ///< heavy pass, summed over threads
  double reduce_seconds = 0;       ///< per-site reductions in the consumer
  double h2d_seconds = 0;      ///< GPU: host-to-device copies (CUDA events, summed over streams)
  double d2h_seconds = 0;      ///< GPU: device-to-host copies
  std::int64_t h2d_bytes = 0;  ///< GPU: bytes copied to the device
  std::int64_t decoded_bytes = 0;  ///< genotype bytes decoded
  std::int64_t calls = 0;          ///< genotype calls counted (rows × samples × ploidy)
  std::int64_t variants = 0;       ///< variants selected
  std::int64_t units = 0;
};

/// @brief afdist over the plan's variants and the selected samples.
/// @throws UsageError (e.g. --device gpu without a GPU), FormatError, IoError.
stats::AfdistResult run_afdist(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                               const vcz::SampleSelection& samples,
                               const stats::AfdistOptions& options, const RunOptions& run,
                               RunStats* stats = nullptr);

/// @brief Receives each work unit's finished per-site counts (unit.size() × site_width int32,
/// masked variants included), in plan order, on the calling thread.
using CountsConsumer = std::function<void(std::int64_t unit_index, const vcz::WorkUnit& unit,
                                          std::span<const std::int32_t> counts)>;

/// @brief The allele-counts heavy pass over the plan's variants and the selected samples (in
/// selection order, which @p pass's population map follows), handing each unit's counts to
/// @p consume. Same counts on every backend, thread count and chunking.
/// @throws UsageError, FormatError, IoError, CudaError.
void run_allele_counts(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                       const vcz::SampleSelection& samples, const stats::AlleleCountsPass& pass,
                       const RunOptions& run, RunStats* stats, const CountsConsumer& consume);

}  // namespace vczstats
