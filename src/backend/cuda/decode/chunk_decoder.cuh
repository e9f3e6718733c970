#pragma once
// The batched device chunk decoder: a batch of encoded chunks (their bytes in pinned host
// memory) is framed on the host (framing.hpp), copied to the device in two copies (the bytes,
// the job descriptors) and decoded there with one launch per stage: fills, stored copies, LZ4,
// zstd, unshuffles, shard scatters, all queued on one stream without synchronising. Failed
// tasks leave a status; check() names the store, array and chunk of the first one.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/decode/decode_task.hpp"
#include "vczstats/zarr.hpp"

namespace vczstats::cuda::decode {

/// @brief One chunk of a batch.
struct EncodedChunk {
  std::uint64_t offset = 0;  ///< of its encoded bytes in the batch's input
  std::uint64_t size = 0;    ///< encoded bytes
  bool present = true;       ///< false: an absent chunk, decoded to the fill value
  const zarr::ChunkEncoding* encoding = nullptr;  ///< must outlive the enqueue() call
  std::byte* d_dst = nullptr;  ///< device destination of encoding->decoded_bytes() bytes
  std::string name;            ///< "STORE: array ARRAY: chunk KEY", for messages
};

/// @brief Sizes of the last batch, for reports and benchmarks.
struct DecodeBatchStats {
  std::uint64_t chunks = 0;
  std::uint64_t input_bytes = 0;
  std::uint64_t output_bytes = 0;
  std::uint64_t copy_tasks = 0, lz4_tasks = 0, zstd_tasks = 0;
  std::uint64_t fills = 0, shuffles = 0, scatters = 0;
};

/// @brief Decodes batches of encoded chunks on the device. One batch in flight at a time: call
/// check() after the stream has passed a batch and before the next enqueue().
class DeviceChunkDecoder {
 public:
  /// @brief Device memory comes from @p pool; work is queued on @p stream.
  DeviceChunkDecoder(DevicePool& pool, cudaStream_t stream);
  ~DeviceChunkDecoder();
  DeviceChunkDecoder(const DeviceChunkDecoder&) = delete;
  DeviceChunkDecoder& operator=(const DeviceChunkDecoder&) = delete;

  /// @brief Frame @p chunks on the host and queue their decoding on the stream; returns without
  /// waiting. @p input (pinned host memory) holds every present chunk's bytes at its offset; it
  /// must stay unchanged until input_consumed() has completed.
  /// @throws FormatError naming the chunk when a header is corrupt or a stage has no device
  /// decoder (nothing is queued then); CudaError.
  void enqueue(std::span<const std::byte> input, std::span<const EncodedChunk> chunks);
  /// @brief The host half of enqueue(): frame the chunks and build the job lists (may run
  /// while the device still works on the previous batch).
  void prepare(std::span<const std::byte> input, std::span<const EncodedChunk> chunks);
  /// @brief The device half of enqueue(): queue the copies and launches of the prepared batch.
  /// @p after_copies (optional) runs once the host-to-device copies are queued and before the
  /// kernels are (to time them apart with events on the stream).
  void launch(const std::function<void()>& after_copies = {});
  /// @brief After the stream was synchronised past the last enqueue(): throws FormatError
  /// naming the first failed task's chunk and the problem.
  void check() const;
  /// @brief Recorded on the stream once the last batch's input has been copied.
  cudaEvent_t input_consumed() const;
  /// @brief The stream the decoder queues on.
  cudaStream_t stream() const { return stream_; }
  /// @brief What the last batch held.
  const DecodeBatchStats& last_batch() const { return stats_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  cudaStream_t stream_;
  DecodeBatchStats stats_;
};

/// @brief A pinned host buffer that collects the encoded chunks of one batch: add() reads a
/// chunk's stored bytes from its array and appends them (growing the buffer as needed).
class EncodedBatch {
 public:
  /// @brief Append chunk @p chunk_index of @p array, to be decoded into @p d_dst.
  void add(const zarr::Array& array, std::span<const std::int64_t> chunk_index, std::byte* d_dst);
  /// @brief Append raw encoded bytes (@p bytes nullopt: an absent chunk).
  void add_bytes(std::optional<std::span<const std::byte>> bytes,
                 const zarr::ChunkEncoding& encoding, std::byte* d_dst, std::string name);
  /// @brief Forget the chunks (keeps the buffer).
  void clear();
  /// @brief The bytes collected so far.
  std::span<const std::byte> input() const;
  /// @brief The chunks collected so far.
  std::span<const EncodedChunk> chunks() const { return chunks_; }

 private:
  PinnedBuffer buffer_;
  std::uint64_t used_ = 0;
  std::vector<EncodedChunk> chunks_;
};

}  // namespace vczstats::cuda::decode
