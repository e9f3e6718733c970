#pragma once
// zstd (RFC 8878) decoding of one DecodeTask on the host, with the code the device kernel runs
// (zstd_core.hpp, instantiated for a warp of one lane). Plain C++: no CUDA headers.
//
// What it decodes: one or more concatenated zstd frames and skippable frames, every block type,
// literals section type, Huffman weight encoding and sequence table mode, repeat offsets, any
// window size (matches may reach back anywhere in the current frame's output inside dst).
// Frames with a dictionary id other than 0 are Unsupported. The content checksum is skipped, or
// verified (XXH64) when ZstdHostOptions::verify_checksum is set.

#include <cstdint>

#include "backend/cuda/decode/decode_task.hpp"

namespace vczstats::cuda::decode {

/// @brief What the decoder met, counted on the host (tests check that a corpus reaches every
/// part of the format). Index orders are given with each array.
struct ZstdDecodeStats {
  std::uint64_t frames = 0;            ///< zstd frames decoded
  std::uint64_t skippable_frames = 0;  ///< skippable frames skipped
  std::uint64_t checksums = 0;         ///< content checksums read (verified when asked)
  std::uint64_t blocks[3] = {};        ///< raw, RLE, compressed
  /// literals sections: raw, RLE, Huffman 1 stream, Huffman 4 streams, treeless 1 stream,
  /// treeless 4 streams
  std::uint64_t literals[6] = {};
  std::uint64_t huffman_weights[2] = {};  ///< Huffman tree descriptions: FSE-compressed, direct
  /// sequence table modes [literal lengths, offsets, match lengths][predefined, RLE, FSE, repeat]
  std::uint64_t table_modes[3][4] = {};
  std::uint64_t blocks_without_sequences = 0;  ///< compressed blocks with 0 sequences
  std::uint64_t sequences = 0;
  /// repeat offset codes [literal length == 0][offset value 1, 2, 3]
  std::uint64_t repeat_offsets[2][3] = {};
  std::uint64_t overlapping_matches = 0;  ///< matches whose offset is below their length
  std::uint64_t max_offset = 0;           ///< largest match offset
  /// Input refused (DecodeError::Corrupt) by a check of the format that libzstd 1.5.4 does
  /// not make, so that it decodes the input (the differential fuzzer, fuzz/gpu_decode.cpp, tells
  /// these apart from real disagreements):
  ///  - reserved bits of the sequences section's compression modes that are not zero;
  ///  - a 4-stream Huffman literals section with a stream that lacks its end mark or does not end
  ///    exactly where its bits do (libzstd's fast decoder checks only the bytes produced);
  ///  - a sequence bit stream read past its start (libzstd's end check lets an overflowed
  ///    stream pass, and it goes on with bits that are not in the input: refused here before
  ///    the sequence that reads them runs, whatever the output size), or with bits left after
  ///    the last sequence, no more than the state update the format skips after it and libzstd
  ///    makes;
  ///  - a block (its compressed size or its literals) larger than a window below 128 KiB, or
  ///    a raw or RLE block, or a block's decoded output, larger than the block limit.
  std::uint64_t libzstd_unchecked = 0;
  /// The last sequence bit stream not read exactly to its end: the bits left (0 when read past
  /// its start), and the bits of that state update.
  std::uint64_t unread_sequence_bits = 0;
  std::uint64_t last_update_bits = 0;
};

/// @brief Options of the host decoder.
struct ZstdHostOptions {
  /// Verify each frame's content checksum (XXH64); a mismatch is DecodeError::Corrupt.
  bool verify_checksum = false;
};

/// @brief Decode one task (TaskCodec::Zstd) on the host with the same code the kernel runs.
/// Another codec gives DecodeError::Unsupported. On failure, DecodeStatus::detail is the input
/// offset of the frame that failed and produced the bytes written so far.
DecodeStatus zstd_decode_host(const DecodeTask& task);

/// @brief zstd_decode_host with options, counting what it meets into @p stats when not null.
DecodeStatus zstd_decode_host(const DecodeTask& task, const ZstdHostOptions& options,
                              ZstdDecodeStats* stats = nullptr);

/// @brief XXH64 of @p size bytes at @p data with @p seed (the hash of zstd's content checksum).
std::uint64_t xxh64(const std::uint8_t* data, std::uint64_t size, std::uint64_t seed = 0);

}  // namespace vczstats::cuda::decode
