// STAND-IN for the device zstd decoder (branch zstd); see zstd_stand_in.cuh.

#include "backend/cuda/decode/zstd_stand_in.cuh"

namespace vczstats::cuda::decode {

namespace {

__global__ void zstd_stand_in_kernel(const DecodeTask* tasks, DecodeStatus* status,
                                     std::int64_t n) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  (void)tasks;
  status[i].error = static_cast<std::int32_t>(DecodeError::Unsupported);
  status[i].detail = 0;
  status[i].produced = 0;
}

}  // namespace

ZstdDeviceDecoder::ZstdDeviceDecoder(DevicePool& pool, cudaStream_t stream) {
  (void)pool;
  (void)stream;
}

void ZstdDeviceDecoder::decode(const DecodeTask* d_tasks, DecodeStatus* d_status, std::int64_t n,
                               cudaStream_t stream) {
  if (n <= 0) return;
  const int threads = 128;
  const auto blocks = static_cast<unsigned>((n + threads - 1) / threads);
  zstd_stand_in_kernel<<<blocks, threads, 0, stream>>>(d_tasks, d_status, n);
  VCZ_CUDA_CHECK_LAUNCH("zstd_stand_in_kernel");
}

}  // namespace vczstats::cuda::decode
