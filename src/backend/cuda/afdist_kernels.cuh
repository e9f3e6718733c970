#pragma once
// Launchers of the afdist kernels. Every call takes the stream it is queued on; every launch is
// checked; nothing here synchronises.

#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/afdist_lanes.hpp"
#include "vczstats/afdist.hpp"

namespace vczstats::cuda {

/// @brief A genotype block resident on the device and the per-site counts it adds to.
struct HeavyArgs {
  const std::byte* data = nullptr;  ///< 16-byte aligned; rows × samples × ploidy × elem bytes
  int elem_bytes = 1;
  std::int64_t rows = 0;
  std::int64_t samples = 0;
  int ploidy = 2;
  stats::AfdistSite* sites = nullptr;  ///< one per row; the block's counts are ADDED (merge_site)
  stats::AfdistMethod method = stats::AfdistMethod::Bcftools;
};

/// @brief Queue the heavy pass of one sample block on @p stream. Blocks of the same rows must be
/// queued on the same stream (they update the same sites). @throws CudaError, UsageError (a
/// path that does not fit the layout, a misaligned block).
void launch_afdist_heavy(const HeavyArgs& args, cudaStream_t stream,
                         HeavyPath path = HeavyPath::Auto);

/// @brief The seed-style heavy pass (one thread per variant looping over its samples with
/// element loads) that the pipeline's baseline mode runs, for comparison only. Same sites.
void launch_afdist_baseline(const HeavyArgs& args, cudaStream_t stream);

/// @brief Finished per-site counts to reduce into a histogram.
struct HistogramArgs {
  const stats::AfdistSite* sites = nullptr;
  std::int64_t rows = 0;
  const std::uint8_t* mask = nullptr;  ///< one flag per row (1 = selected), or null: all
  stats::AfdistMethod method = stats::AfdistMethod::Bcftools;
  std::int64_t num_samples = 0;     ///< selected samples (zarr-afdist's n)
  const float* edges_f = nullptr;   ///< bins + 1 edges (bcftools)
  const double* edges_d = nullptr;  ///< bins + 1 edges (zarr-afdist)
  int bins = 0;
  unsigned long long* hist = nullptr;  ///< bins counts, ADDED to (integer atomics: deterministic)
};

/// @brief Queue the reduction of finished sites into the histogram on @p stream.
void launch_afdist_histogram(const HistogramArgs& args, cudaStream_t stream);

}  // namespace vczstats::cuda
