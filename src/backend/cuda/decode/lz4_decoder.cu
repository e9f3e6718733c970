// The device LZ4 decoder: one warp per task.

#include "backend/cuda/decode/lz4_decode.hpp"
#include "backend/cuda/decode/lz4_decoder.cuh"

namespace vczstats::cuda::decode {

namespace {

constexpr int kWarpsPerBlock = 4;

__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    lz4_decode_kernel(const DecodeTask* tasks, DecodeStatus* status, std::int64_t n) {
  const std::int64_t task =
      blockIdx.x * static_cast<std::int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
  const unsigned lane = threadIdx.x % 32;
  if (task >= n) return;  // whole warps leave together
  const DecodeTask t = tasks[task];
  DecodeStatus s;
  if (t.codec != TaskCodec::Lz4)
    s = decode_failure(DecodeError::Unsupported, 0, 0);
  else
    s = lz4_decode_lanes<32>(t, lane);
  if (lane == 0) status[task] = s;
}

}  // namespace

Lz4DeviceDecoder::Lz4DeviceDecoder(DevicePool& pool, cudaStream_t stream) {
  (void)pool;
  (void)stream;
}

void Lz4DeviceDecoder::decode(const DecodeTask* d_tasks, DecodeStatus* d_status, std::int64_t n,
                              cudaStream_t stream) {
  if (n <= 0) return;
  const auto blocks = static_cast<unsigned>((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  lz4_decode_kernel<<<blocks, kWarpsPerBlock * 32, 0, stream>>>(d_tasks, d_status, n);
  VCZ_CUDA_CHECK_LAUNCH("lz4_decode_kernel");
}

}  // namespace vczstats::cuda::decode
