#pragma once
// STAND-IN, to be deleted when branch zstd lands: ZstdDeviceDecoder with the interface of
// src/backend/cuda/decode/zstd_decoder.cuh; it marks every task Unsupported. Replace the
// include of this file (chunk_decoder.cu) by "backend/cuda/decode/zstd_decoder.cuh" and delete
// zstd_stand_in.{hpp,cuh,cu}.

#include <cstdint>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/decode/decode_task.hpp"

namespace vczstats::cuda::decode {

/// @brief Stand-in for the device zstd decoder: reports Unsupported for every task.
class ZstdDeviceDecoder {
 public:
  ZstdDeviceDecoder(DevicePool& pool, cudaStream_t stream);
  /// @brief Mark the @p n tasks at @p d_tasks Unsupported in @p d_status (queued on @p stream).
  void decode(const DecodeTask* d_tasks, DecodeStatus* d_status, std::int64_t n,
              cudaStream_t stream);
};

}  // namespace vczstats::cuda::decode
