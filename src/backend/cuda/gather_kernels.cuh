#pragma once
// Sample-subset gather on the device (the device-decode path of site_pass_gpu.cpp): the rows of
// a decoded genotype chunk restricted to a block's selected samples, dense, as
// stream::GenotypeReader gathers them on the host.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace vczstats::cuda {

/// @brief dst[r][k] = src[r][columns[k]] for r < @p rows and k < @p count, each entry
/// @p call_bytes bytes (ploidy × element size); @p src_row_bytes: bytes of one stored row.
/// Device pointers; queued on @p stream.
void launch_gather_samples(const std::byte* src, std::int64_t src_row_bytes,
                           const std::int32_t* columns, std::int64_t count, std::int64_t call_bytes,
                           std::int64_t rows, std::byte* dst, cudaStream_t stream);

}  // namespace vczstats::cuda
