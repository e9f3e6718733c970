#pragma once
// Host framing of encoded chunks (plain C++, no CUDA headers): a chunk's container formats
// (blosc1 headers, block-start tables and split streams; numcodecs lz4's size header; v3
// sharding indexes and crc32c checksums) become decode tasks (decode_task.hpp) plus fill,
// unshuffle and scatter jobs (decode_jobs.hpp). Every size taken from a header is checked
// against the bytes present and the expected decoded size before it is used.
//
// A chunk is framed once with addresses relative to its encoded bytes (Input), its decoded
// output (Output) and scratch space (Scratch); resolve() turns them into pointers, host or
// device. Jobs run in this order: fills, tasks, shuffles, scatters.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/cuda/decode/decode_jobs.hpp"
#include "backend/cuda/decode/decode_task.hpp"
#include "vczstats/zarr.hpp"

namespace vczstats::cuda::decode {

/// @brief Which buffer a framed address points into.
enum class Region : std::uint8_t { Input, Output, Scratch };

/// @brief An address relative to a region of one chunk.
struct Ref {
  Region region = Region::Output;
  std::uint64_t offset = 0;
};

/// @brief A decode task before resolution.
struct FramedTask {
  Ref src;
  std::uint64_t src_size = 0;
  Ref dst;
  std::uint64_t dst_size = 0;
  TaskCodec codec = TaskCodec::Copy;
};

/// @brief A fill job before resolution.
struct FramedFill {
  Ref dst;
  std::uint64_t size = 0;
  std::uint8_t pattern[8] = {};
  std::uint32_t itemsize = 1;
};

/// @brief An unshuffle job before resolution.
struct FramedShuffle {
  Ref src;
  Ref dst;
  std::uint64_t size = 0;
  std::uint32_t typesize = 1;
  bool bit = false;
};

/// @brief A scatter job before resolution.
struct FramedScatter {
  Ref src;
  Ref dst;
  ScatterJob geometry;  ///< run, rows, ndim, count, stride (pointers unset)
};

/// @brief The framing of one chunk.
struct ChunkFrames {
  std::vector<FramedTask> tasks;
  std::vector<FramedFill> fills;
  std::vector<FramedShuffle> shuffles;
  std::vector<FramedScatter> scatters;
  std::uint64_t scratch_bytes = 0;  ///< scratch the chunk needs (16-byte aligned pieces)
  /// @brief Reserve @p n bytes of scratch; returns their Ref.
  Ref allocate_scratch(std::uint64_t n);
  /// @brief Forget everything (keeps capacity).
  void clear();
};

/// @brief Frame one present chunk of @p encoding. The encoded bytes are Input [0, size).
/// @throws FormatError (without the chunk's name: the caller adds it) when a header is corrupt,
/// a size is inconsistent, or a stage has no device decoder.
void frame_chunk(std::span<const std::byte> encoded, const zarr::ChunkEncoding& encoding,
                 ChunkFrames& out);

/// @brief Frame an absent chunk: one fill of the fill value.
void frame_absent_chunk(const zarr::ChunkEncoding& encoding, ChunkFrames& out);

/// @brief Jobs with real pointers, ready to run on the host or to copy to the device.
struct ResolvedJobs {
  std::vector<DecodeTask> tasks;
  std::vector<std::uint32_t> task_chunk;  ///< the batch entry each task belongs to
  std::vector<FillJob> fills;
  std::vector<ShuffleJob> shuffles;
  std::vector<ScatterJob> scatters;
  /// @brief Forget everything (keeps capacity).
  void clear();
};

/// @brief The three bases of a chunk's regions.
struct RegionBases {
  const std::uint8_t* input = nullptr;
  std::uint8_t* output = nullptr;
  std::uint8_t* scratch = nullptr;
};

/// @brief Append the jobs of @p frames, with @p bases, to @p out; tasks are tagged @p chunk.
void resolve(const ChunkFrames& frames, const RegionBases& bases, std::uint32_t chunk,
             ResolvedJobs& out);

/// @brief Name of a DecodeError value, e.g. "truncated input".
std::string decode_error_name(std::int32_t error);
/// @brief Name of a task codec: "copy", "zstd", "lz4".
std::string task_codec_name(TaskCodec codec);
/// @brief What went wrong with task @p t: its codec, sizes and the status.
std::string describe_failure(const DecodeTask& t, const DecodeStatus& s);

/// @brief A host decoder of one task (lz4_decode_host, zstd_decode_host or a test's own).
using HostTaskDecoder = DecodeStatus (*)(const DecodeTask&);

/// @brief The host decoders decode_chunk_host uses for each task codec.
struct HostDecoders {
  HostTaskDecoder lz4;
  HostTaskDecoder zstd;
  /// @brief The project's decoders (lz4_decode_host, zstd_decode_host).
  HostDecoders();
};

/// @brief Run resolved jobs on the host. Returns the index of the first failed task (its
/// status in @p failed), or nullopt when all succeeded.
std::optional<std::size_t> run_jobs_host(const ResolvedJobs& jobs, const HostDecoders& decoders,
                                         DecodeStatus* failed = nullptr);

/// @brief Decode one chunk on the host through the device path's framing and per-task decoders
/// (for tests, fuzzers and checking device results). @p encoded nullopt: an absent chunk.
/// @p out holds encoding.decoded_bytes() bytes.
/// @throws FormatError describing the failed stage (without the chunk's name).
void decode_chunk_host(std::optional<std::span<const std::byte>> encoded,
                       const zarr::ChunkEncoding& encoding, std::span<std::byte> out,
                       const HostDecoders& decoders = HostDecoders());

}  // namespace vczstats::cuda::decode
