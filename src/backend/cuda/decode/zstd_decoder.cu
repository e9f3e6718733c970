// The zstd decoding kernel: a persistent grid of warps; each warp takes the next task index from
// a counter in device memory and decodes the task with zstd_core.hpp, its tables in shared
// memory and its literal buffer in the workspace.
//
// Resources (nvcc 13.0, sm_90, -O3, -Xptxas -v): 128 registers, no stack frame, no spills,
// 41,888 bytes of static shared memory per block of 4 warps; __launch_bounds__(128, 4) gives 4
// blocks (16 warps) per SM. With (128, 5) ptxas caps registers at 96 and spills 220 bytes.

#include "backend/cuda/decode/zstd_decoder.cuh"

#include "backend/cuda/decode/warp.hpp"
#include "backend/cuda/decode/zstd_core.hpp"

namespace vczstats::cuda::decode {

namespace {

constexpr int kWarpsPerBlock = 4;  // 4 x ~10.5 KiB of static shared memory per block
constexpr int kThreads = kWarpsPerBlock * 32;

__global__ void __launch_bounds__(kThreads, 4)
    zstd_decode_kernel(const DecodeTask* __restrict__ tasks, DecodeStatus* __restrict__ status,
                       std::int64_t n, std::uint8_t* __restrict__ workspace,
                       unsigned long long* __restrict__ next_task) {
  __shared__ zstd::WarpShared shared[kWarpsPerBlock];
  const DeviceWarp w;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const std::int64_t global_warp = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + warp;
  std::uint8_t* literals = workspace + global_warp * zstd::kLiteralBufferBytes;
  for (;;) {
    unsigned long long t = 0;
    if (w.leader()) t = atomicAdd(next_task, 1ull);
    t = __shfl_sync(0xFFFFFFFFu, t, 0);
    if (t >= static_cast<unsigned long long>(n)) break;
    const DecodeTask task = tasks[t];
    if (task.codec != TaskCodec::Zstd) continue;
    const DecodeStatus st = zstd::decode_task(w, task, shared[warp], literals, false, nullptr);
    if (w.leader()) status[t] = st;
    __syncwarp();
  }
}

}  // namespace

ZstdDeviceDecoder::ZstdDeviceDecoder(DevicePool& pool, cudaStream_t stream)
    : alloc_stream_(stream) {
  int sms = 0, per_sm = 0;
  VCZ_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, pool.device()));
  VCZ_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, zstd_decode_kernel, kThreads, 0));
  if (per_sm < 1) per_sm = 1;
  blocks_ = static_cast<std::int64_t>(sms) * per_sm;
  warps_ = blocks_ * kWarpsPerBlock;
  workspace_ = DeviceBuffer(pool, warps_ * zstd::kLiteralBufferBytes + 256, stream);
  done_.record(stream);
}

ZstdDeviceDecoder::~ZstdDeviceDecoder() {
  // The workspace is freed in the order of its allocation stream: after the last decode().
  cudaStreamWaitEvent(alloc_stream_, done_.get(), 0);
}

void ZstdDeviceDecoder::decode(const DecodeTask* d_tasks, DecodeStatus* d_status, std::int64_t n,
                               cudaStream_t stream) {
  if (n <= 0) return;
  VCZ_CUDA_CHECK(cudaStreamWaitEvent(stream, done_.get(), 0));
  auto* counter =
      reinterpret_cast<unsigned long long*>(workspace_.data() + warps_ * zstd::kLiteralBufferBytes);
  VCZ_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), stream));
  const std::int64_t needed = (n + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const auto grid = static_cast<unsigned>(needed < blocks_ ? needed : blocks_);
  zstd_decode_kernel<<<grid, kThreads, 0, stream>>>(d_tasks, d_status, n,
                                                    workspace_.as<std::uint8_t>(), counter);
  VCZ_CUDA_CHECK_LAUNCH("zstd_decode_kernel");
  done_.record(stream);
}

}  // namespace vczstats::cuda::decode
