#pragma once
// The device LZ4 decoder: one warp per task, all lanes parsing the sequence headers and sharing
// the literal and match copies (lz4_decode.hpp holds the per-task code, shared with the host).

#include <cstdint>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/decode/decode_task.hpp"

namespace vczstats::cuda::decode {

/// @brief Decodes batches of LZ4 block tasks on the device.
class Lz4DeviceDecoder {
 public:
  /// @brief LZ4 needs no workspace; @p pool and @p stream are taken for symmetry with the
  /// zstd decoder.
  Lz4DeviceDecoder(DevicePool& pool, cudaStream_t stream);
  /// @brief Decode the @p n tasks at @p d_tasks (device memory) into their destinations and
  /// write one status each to @p d_status, queued on @p stream. Tasks of another codec get
  /// Unsupported.
  void decode(const DecodeTask* d_tasks, DecodeStatus* d_status, std::int64_t n,
              cudaStream_t stream);
};

}  // namespace vczstats::cuda::decode
