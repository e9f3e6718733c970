#pragma once
// Launcher of the randomized PCA's expansion kernel (backend/cuda/pca_product_gpu.cpp): rows of
// the packed genotype matrix to doubles, each code replaced by its variant's value.

#include <cuda_runtime.h>

#include <cstdint>

namespace vczstats::cuda {

/// @brief out[(v - r0) * samples + i] = values[4 v + code(v, i)] for rows v in [r0, r0 + rows)
/// and samples i < samples, where code(v, i) = (packed[v * words + i / 32] >> 2 (i % 32)) & 3
/// (device memory; @p rows at most 65,535). @throws CudaError.
void launch_expand_rows(const std::uint64_t* packed, std::int64_t words, const double* values,
                        std::int64_t r0, std::int64_t rows, std::int64_t samples, double* out,
                        cudaStream_t stream);

}  // namespace vczstats::cuda
