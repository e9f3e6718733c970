// The randomized PCA's expansion kernel (pca_kernels.cuh): one grid row per variant; the
// threads of a warp write 32 consecutive doubles and read one packed word between them.

#include <algorithm>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/pca_kernels.cuh"

namespace vczstats::cuda {
namespace {

__global__ void expand_rows_kernel(const std::uint64_t* __restrict__ packed, std::int64_t words,
                                   const double* __restrict__ values, std::int64_t r0,
                                   std::int64_t samples, double* __restrict__ out) {
  const std::int64_t v = r0 + blockIdx.y;
  const std::uint64_t* row = packed + v * words;
  const double* value = values + 4 * v;
  double* o = out + static_cast<std::int64_t>(blockIdx.y) * samples;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < samples; i += stride)
    o[i] = value[(row[i >> 5] >> (2 * (i & 31))) & 3];
}

}  // namespace

void launch_expand_rows(const std::uint64_t* packed, std::int64_t words, const double* values,
                        std::int64_t r0, std::int64_t rows, std::int64_t samples, double* out,
                        cudaStream_t stream) {
  if (rows <= 0 || samples <= 0) return;
  constexpr int kThreads = 256;
  // Enough blocks across a row to fill the device with a few rows; each thread loops beyond.
  const auto across =
      static_cast<unsigned>(std::min<std::int64_t>((samples + kThreads - 1) / kThreads, 64));
  const dim3 grid(across, static_cast<unsigned>(rows));
  expand_rows_kernel<<<grid, kThreads, 0, stream>>>(packed, words, values, r0, samples, out);
  VCZ_CUDA_CHECK_LAUNCH("expand_rows_kernel");
}

}  // namespace vczstats::cuda
