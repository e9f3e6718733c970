#pragma once
// zstd decoding of a batch of DecodeTasks on the GPU: one warp per task, a persistent grid of
// warps taking task indices from a counter (zstd_core.hpp has the per-task code, which the host
// tests run too). Only host declarations here (no kernels), so plain C++ files can include it.

#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/decode/decode_task.hpp"

namespace vczstats::cuda::decode {

/// @brief Decodes batches of zstd tasks on one device. Holds a workspace of 128 KiB (the literal
/// buffer) per resident warp, sized from the device's occupancy at construction (about 330 MiB
/// on an H100). decode() calls are ordered through an event, whatever streams they use, because
/// they share the workspace.
class ZstdDeviceDecoder {
 public:
  /// @brief Allocates its workspace from @p pool on @p stream (backend/cuda/cuda_util.cuh:
  /// DevicePool, DeviceBuffer). The current device must be the pool's. @throws CudaError.
  ZstdDeviceDecoder(DevicePool& pool, cudaStream_t stream);
  ~ZstdDeviceDecoder();
  ZstdDeviceDecoder(const ZstdDeviceDecoder&) = delete;
  ZstdDeviceDecoder& operator=(const ZstdDeviceDecoder&) = delete;

  /// @brief Queue the decoding of @p n tasks (device array) on @p stream; statuses go to
  /// @p d_status (device array). Asynchronous; no host sync. Tasks whose codec is not
  /// TaskCodec::Zstd are skipped: their status is left as it was. @throws CudaError (launch).
  void decode(const DecodeTask* d_tasks, DecodeStatus* d_status, std::int64_t n,
              cudaStream_t stream);

  /// @brief Warps the kernel keeps resident (one task each at a time).
  std::int64_t warps() const { return warps_; }
  /// @brief Device memory the decoder holds.
  std::int64_t workspace_bytes() const { return workspace_.size(); }

 private:
  DeviceBuffer workspace_;  // per warp: the literal buffer; then the task counter
  Event done_;              // the last decode() (or the allocation) is complete after it
  cudaStream_t alloc_stream_ = nullptr;
  std::int64_t warps_ = 0;
  std::int64_t blocks_ = 0;
};

}  // namespace vczstats::cuda::decode
