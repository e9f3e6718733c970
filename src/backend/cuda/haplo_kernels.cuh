#pragma once
// The haplotype family on the device: packing a block's calls into haplotype bit planes (the
// heavy pass), and the segment kernel behind the GPU segment runner (stats/haplo_runner.hpp).

#include <cuda_runtime.h>

#include <cstdint>

#include "stats/haplo_kernel.hpp"
#include "vczstats/genotypes.hpp"

namespace vczstats::cuda {

/// @brief OR the haplotype planes of @p block into a unit's rows of @p words_per_plane words
/// per plane (rows × planes, zeroed by the caller before the unit's first block), at the
/// block's haplotype offset sample_offset × ploidy. @throws UsageError, CudaError.
void launch_pack_haplotypes(const GenotypeChunkView& block, int planes, std::uint64_t* words,
                            std::int64_t words_per_plane, cudaStream_t stream);

/// @brief Run the segments of @p batch (device pointers, device outputs) with @p lanes threads
/// per block and @p grid blocks, each with scratch_bytes(batch.n, lanes, batch.max_steps) of
/// @p scratch. @throws CudaError.
void launch_segments(const stats::haplo::BatchView& batch, int lanes, int grid, std::byte* scratch,
                     std::int64_t scratch_bytes, cudaStream_t stream);

}  // namespace vczstats::cuda
