// Sample-subset gather on the device (gather_kernels.cuh).

#include <algorithm>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/gather_kernels.cuh"

namespace vczstats::cuda {
namespace {

/// One thread per output call; T is a word of the call's size (the chunk base is 256-byte
/// aligned and every offset a multiple of the call size, so the loads are aligned).
template <class T>
__global__ void gather_words(const std::byte* __restrict__ src, std::int64_t src_row_bytes,
                             const std::int32_t* __restrict__ columns, std::int64_t count,
                             std::int64_t rows, std::byte* __restrict__ dst) {
  const std::int64_t n = rows * count;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = i / count, k = i - r * count;
    const T* row = reinterpret_cast<const T*>(src + r * src_row_bytes);
    reinterpret_cast<T*>(dst)[i] = row[columns[k]];
  }
}

/// Any call size: byte by byte.
__global__ void gather_bytes(const std::byte* __restrict__ src, std::int64_t src_row_bytes,
                             const std::int32_t* __restrict__ columns, std::int64_t count,
                             std::int64_t call_bytes, std::int64_t rows,
                             std::byte* __restrict__ dst) {
  const std::int64_t n = rows * count * call_bytes;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t call = i / call_bytes, byte = i - call * call_bytes;
    const std::int64_t r = call / count, k = call - r * count;
    dst[i] = src[r * src_row_bytes + columns[k] * call_bytes + byte];
  }
}

}  // namespace

void launch_gather_samples(const std::byte* src, std::int64_t src_row_bytes,
                           const std::int32_t* columns, std::int64_t count, std::int64_t call_bytes,
                           std::int64_t rows, std::byte* dst, cudaStream_t stream) {
  const std::int64_t n = rows * count;
  if (n <= 0) return;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>(
      std::min<std::int64_t>((n + kThreads - 1) / kThreads, std::int64_t{1} << 16));
  switch (call_bytes) {
    case 1:
      gather_words<std::uint8_t>
          <<<blocks, kThreads, 0, stream>>>(src, src_row_bytes, columns, count, rows, dst);
      break;
    case 2:
      gather_words<std::uint16_t>
          <<<blocks, kThreads, 0, stream>>>(src, src_row_bytes, columns, count, rows, dst);
      break;
    case 4:
      gather_words<std::uint32_t>
          <<<blocks, kThreads, 0, stream>>>(src, src_row_bytes, columns, count, rows, dst);
      break;
    case 8:
      gather_words<std::uint64_t>
          <<<blocks, kThreads, 0, stream>>>(src, src_row_bytes, columns, count, rows, dst);
      break;
    default:
      gather_bytes<<<blocks, kThreads, 0, stream>>>(src, src_row_bytes, columns, count, call_bytes,
                                                    rows, dst);
      break;
  }
  VCZ_CUDA_CHECK(cudaGetLastError());
}

}  // namespace vczstats::cuda
