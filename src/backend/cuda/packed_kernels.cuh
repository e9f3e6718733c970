#pragma once
// Launcher of the packing kernel: a sample block resident on the device into 2-bit dosage codes
// (vczstats/packed.hpp), ORed into a unit's packed rows at the block's sample offset (words at
// a block boundary are shared by two blocks; their bits are disjoint).

#include <cuda_runtime.h>

#include <cstdint>

#include "vczstats/genotypes.hpp"

namespace vczstats::cuda {

/// @brief OR the codes of @p block into @p words (rows × @p words_per_row, zeroed by the caller
/// before the unit's first block). @throws UsageError, CudaError.
void launch_pack(const GenotypeChunkView& block, std::uint64_t* words, std::int64_t words_per_row,
                 cudaStream_t stream);

}  // namespace vczstats::cuda
