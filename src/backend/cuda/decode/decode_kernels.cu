// Kernels of the jobs around the decode tasks: one grid row of blocks per job (blockIdx.x picks
// the job, blockIdx.y a slice of it), so one launch covers a whole batch.

#include <algorithm>

#include "backend/cuda/decode/decode_kernels.cuh"
#include "backend/cuda/decode/lz4_decode.hpp"

namespace vczstats::cuda::decode {

namespace {

constexpr int kThreads = 256;
constexpr std::uint64_t kMaxSlices = 1024;

/// Blocks per job so that each thread handles about @p per_thread items of @p max_items.
unsigned slices_for(std::uint64_t max_items, std::uint64_t per_thread) {
  const std::uint64_t per_block = kThreads * per_thread;
  return static_cast<unsigned>(
      std::clamp<std::uint64_t>((max_items + per_block - 1) / per_block, 1, kMaxSlices));
}

/// This thread's first item and stride over a job of @p items items.
struct SliceRange {
  std::uint64_t first, stride;
};
__device__ SliceRange slice_range() {
  return {static_cast<std::uint64_t>(blockIdx.y) * blockDim.x + threadIdx.x,
          static_cast<std::uint64_t>(gridDim.y) * blockDim.x};
}

__global__ void copy_tasks_kernel(const DecodeTask* tasks, DecodeStatus* status) {
  const DecodeTask t = tasks[blockIdx.x];
  const SliceRange r = slice_range();
  if (t.codec != TaskCodec::Copy || t.src_size != t.dst_size) {
    if (r.first == 0)
      status[blockIdx.x] = t.codec != TaskCodec::Copy
                               ? decode_failure(DecodeError::Unsupported, 0, 0)
                               : copy_decode_lanes(t, 0, 1);  // only computes the failure
    return;
  }
  const auto src = reinterpret_cast<std::uintptr_t>(t.src);
  const auto dst = reinterpret_cast<std::uintptr_t>(t.dst);
  std::uint64_t done = 0;
  if (((src | dst) & 15) == 0) {
    const std::uint64_t words = t.dst_size / 16;
    const auto* s = reinterpret_cast<const uint4*>(t.src);
    auto* d = reinterpret_cast<uint4*>(t.dst);
    for (std::uint64_t i = r.first; i < words; i += r.stride) d[i] = s[i];
    done = words * 16;
  } else if (((src | dst) & 3) == 0) {
    const std::uint64_t words = t.dst_size / 4;
    const auto* s = reinterpret_cast<const std::uint32_t*>(t.src);
    auto* d = reinterpret_cast<std::uint32_t*>(t.dst);
    for (std::uint64_t i = r.first; i < words; i += r.stride) d[i] = s[i];
    done = words * 4;
  }
  for (std::uint64_t i = done + r.first; i < t.dst_size; i += r.stride) t.dst[i] = t.src[i];
  if (r.first == 0) {
    DecodeStatus ok;
    ok.produced = t.dst_size;
    status[blockIdx.x] = ok;
  }
}

__global__ void fill_kernel(const FillJob* jobs) {
  const FillJob j = jobs[blockIdx.x];
  const SliceRange r = slice_range();
  const auto dst = reinterpret_cast<std::uintptr_t>(j.dst);
  std::uint64_t done = 0;
  if ((dst & 15) == 0 && 16 % j.itemsize == 0) {
    uint4 v;
    auto* b = reinterpret_cast<std::uint8_t*>(&v);
    for (int k = 0; k < 16; ++k) b[k] = j.pattern[k % j.itemsize];
    const std::uint64_t words = j.size / 16;
    auto* d = reinterpret_cast<uint4*>(j.dst);
    for (std::uint64_t i = r.first; i < words; i += r.stride) d[i] = v;
    done = words * 16;
  }
  for (std::uint64_t i = done + r.first; i < j.size; i += r.stride) fill_byte(j, i);
}

/// Bit unshuffle, 1-byte elements: a thread turns 8 row bytes into 8 output bytes (one word).
__device__ void bit_unshuffle_bytes(const ShuffleJob& j, const SliceRange& r) {
  const std::uint64_t groups = shuffle_elements(j) / 8;
  const bool aligned = (reinterpret_cast<std::uintptr_t>(j.dst) & 7) == 0;
  for (std::uint64_t g = r.first; g < groups; g += r.stride) {
    const std::uint64_t y = bit_unshuffle_gather(j, g, 0);
    if (aligned) {
      reinterpret_cast<std::uint64_t*>(j.dst)[g] = y;
    } else {
      for (int k = 0; k < 8; ++k) j.dst[8 * g + k] = static_cast<std::uint8_t>(y >> (8 * k));
    }
  }
}

__global__ void unshuffle_kernel(const ShuffleJob* jobs) {
  const ShuffleJob j = jobs[blockIdx.x];
  const SliceRange r = slice_range();
  const std::uint64_t n = shuffle_elements(j);
  if (j.bit) {
    if (j.typesize == 1)
      bit_unshuffle_bytes(j, r);
    else
      for (std::uint64_t g = r.first; g < n / 8; g += r.stride) bit_unshuffle_group(j, g);
  } else {
    for (std::uint64_t i = r.first; i < n; i += r.stride) byte_unshuffle_element(j, i);
  }
  const std::uint64_t tail = j.size - n * j.typesize;
  for (std::uint64_t i = r.first; i < tail; i += r.stride) shuffle_tail_byte(j, i);
}

/// One warp per row of a scatter job.
__global__ void scatter_kernel(const ScatterJob* jobs) {
  const ScatterJob j = jobs[blockIdx.x];
  const unsigned lane = threadIdx.x % 32;
  const std::uint64_t warp =
      static_cast<std::uint64_t>(blockIdx.y) * (blockDim.x / 32) + threadIdx.x / 32;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.y) * (blockDim.x / 32);
  for (std::uint64_t row = warp; row < j.rows; row += warps) {
    const std::uint8_t* s = j.src + row * j.run;
    std::uint8_t* d = j.dst + scatter_row_offset(j, row);
    for (std::uint64_t i = lane; i < j.run; i += 32) d[i] = s[i];
  }
}

dim3 job_grid(std::int64_t n, unsigned slices) {
  return dim3(static_cast<unsigned>(n), slices, 1);
}

}  // namespace

void launch_copy_tasks(const DecodeTask* d_tasks, DecodeStatus* d_status, std::int64_t n,
                       std::uint64_t max_bytes, cudaStream_t stream) {
  if (n <= 0) return;
  copy_tasks_kernel<<<job_grid(n, slices_for(max_bytes / 16 + 1, 4)), kThreads, 0, stream>>>(
      d_tasks, d_status);
  VCZ_CUDA_CHECK_LAUNCH("copy_tasks_kernel");
}

void launch_fills(const FillJob* d_jobs, std::int64_t n, std::uint64_t max_bytes,
                  cudaStream_t stream) {
  if (n <= 0) return;
  fill_kernel<<<job_grid(n, slices_for(max_bytes / 16 + 1, 4)), kThreads, 0, stream>>>(d_jobs);
  VCZ_CUDA_CHECK_LAUNCH("fill_kernel");
}

void launch_unshuffles(const ShuffleJob* d_jobs, std::int64_t n, std::uint64_t max_bytes,
                       cudaStream_t stream) {
  if (n <= 0) return;
  unshuffle_kernel<<<job_grid(n, slices_for(max_bytes / 8 + 1, 2)), kThreads, 0, stream>>>(d_jobs);
  VCZ_CUDA_CHECK_LAUNCH("unshuffle_kernel");
}

void launch_scatters(const ScatterJob* d_jobs, std::int64_t n, std::uint64_t max_rows,
                     cudaStream_t stream) {
  if (n <= 0) return;
  scatter_kernel<<<job_grid(n, slices_for(max_rows * 32 + 1, 4)), kThreads, 0, stream>>>(d_jobs);
  VCZ_CUDA_CHECK_LAUNCH("scatter_kernel");
}

}  // namespace vczstats::cuda::decode
