#pragma once
// The contract between the device decoders (backend/cuda/decode/): a batch of independent
// decode tasks, each one compressed stream (a zstd frame sequence, an LZ4 block, or stored
// bytes) decoded into an exact number of output bytes. The host side (framing: blosc headers,
// splits, shards) turns chunks into tasks; one kernel launch per codec decodes every task of a
// batch; a shuffle pass may follow. The same per-task decode functions compile for the host
// (plain C++, for tests against libzstd/liblz4/libblosc and for the fuzzers) and for the device.
//
// Error handling: a decoder never reads outside [src, src + src_size) nor writes outside
// [dst, dst + dst_size); on corrupt input it stores a non-zero DecodeError in the task's status
// and stops. The host then names the array and chunk of the failed task.

#include <cstdint>

#if defined(__CUDACC__)
#define VCZ_HD __host__ __device__
#else
#define VCZ_HD
#endif

namespace vczstats::cuda::decode {

/// @brief The codec of one task's stream.
enum class TaskCodec : std::uint8_t {
  Copy = 0,  ///< stored bytes: dst_size bytes copied from src
  Zstd = 1,  ///< one or more concatenated zstd frames (RFC 8878), skippable frames allowed
  Lz4 = 2,   ///< one raw LZ4 block (no frame header)
};

/// @brief Why a task failed (0: it did not). Stable values: tests and messages use them.
enum class DecodeError : std::int32_t {
  Ok = 0,
  Truncated = 1,         ///< input ended inside a header, block or bit stream
  Corrupt = 2,           ///< a field holds an impossible value (bad magic, table, offset...)
  OutputOverflow = 3,    ///< the stream decodes to more than dst_size bytes
  OutputShort = 4,       ///< the stream decodes to fewer than dst_size bytes
  Unsupported = 5,       ///< valid but not handled (e.g. a zstd dictionary id)
  WorkspaceTooSmall = 6, ///< the per-task workspace cannot hold what the stream needs
};

/// @brief One unit of decoding work. Pointers are device pointers on the device, host pointers
/// in host tests.
struct DecodeTask {
  const std::uint8_t* src = nullptr;
  std::uint8_t* dst = nullptr;
  std::uint64_t src_size = 0;
  std::uint64_t dst_size = 0;  ///< exact decoded size
  TaskCodec codec = TaskCodec::Copy;
};

/// @brief Result of one task, written by the decoder.
struct DecodeStatus {
  std::int32_t error = 0;     ///< DecodeError
  std::uint32_t detail = 0;   ///< decoder-specific (e.g. byte offset of the failure, clipped)
  std::uint64_t produced = 0; ///< bytes written
};

}  // namespace vczstats::cuda::decode
