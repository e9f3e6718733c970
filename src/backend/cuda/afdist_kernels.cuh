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

}  // namespace vczstats::cuda
