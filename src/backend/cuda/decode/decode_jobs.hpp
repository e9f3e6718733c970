#pragma once
// The jobs that follow or precede the decode tasks of a batch, one source for the host and the
// device: fills (absent chunks and inner chunks), blosc's byte and bit unshuffle of one block,
// and the copy of a shard's inner chunk into its box of the shard. The device kernels
// (decode_kernels.cu) and the host loops (framing.cpp) call the same per-item functions.

#include <cstdint>

#include "backend/cuda/decode/decode_task.hpp"

namespace vczstats::cuda::decode {

/// @brief Fill size bytes with a repeated element of itemsize (<= 8) bytes.
struct FillJob {
  std::uint8_t* dst = nullptr;
  std::uint64_t size = 0;
  std::uint8_t pattern[8] = {};
  std::uint32_t itemsize = 1;
};

/// @brief Undo blosc's shuffle of one block: src holds the shuffled block, dst receives it.
/// Byte shuffle: byte j of element i sits at src[j * n + i] (n = size / typesize). Bit shuffle:
/// bit b of byte j of element i sits at bit i % 8 of src[(8 j + b) * n / 8 + i / 8] (n is a
/// multiple of 8; blocks that are not stay as they are and need no job). The size % typesize
/// bytes after the n elements are copied as they are.
struct ShuffleJob {
  const std::uint8_t* src = nullptr;
  std::uint8_t* dst = nullptr;
  std::uint64_t size = 0;
  std::uint32_t typesize = 1;
  std::uint32_t bit = 0;  ///< 1: bit shuffle, 0: byte shuffle
};

/// @brief Dimensions of a ScatterJob's row grid.
inline constexpr int kScatterDims = 8;

/// @brief Copy a C-order inner chunk into its box of a shard: rows of run bytes, row r of the
/// source (at src + r * run) going to dst + sum(index_d * stride_d) for the C-order multi-index
/// of r over count[0..ndim).
struct ScatterJob {
  const std::uint8_t* src = nullptr;
  std::uint8_t* dst = nullptr;
  std::uint64_t run = 0;
  std::uint64_t rows = 0;
  std::int32_t ndim = 0;
  std::int64_t count[kScatterDims] = {};
  std::int64_t stride[kScatterDims] = {};
};

/// @brief Byte i of a fill.
VCZ_HD inline void fill_byte(const FillJob& j, std::uint64_t i) {
  j.dst[i] = j.pattern[i % j.itemsize];
}

/// @brief Elements of a shuffle job (n above).
VCZ_HD inline std::uint64_t shuffle_elements(const ShuffleJob& j) {
  return j.size / j.typesize;
}

/// @brief Byte unshuffle of element @p i.
VCZ_HD inline void byte_unshuffle_element(const ShuffleJob& j, std::uint64_t i) {
  const std::uint64_t n = shuffle_elements(j);
  for (std::uint32_t b = 0; b < j.typesize; ++b) j.dst[i * j.typesize + b] = j.src[b * n + i];
}

/// @brief Transpose an 8x8 bit matrix: bit c of byte r becomes bit r of byte c.
VCZ_HD inline std::uint64_t transpose8x8(std::uint64_t x) {
  std::uint64_t t = (x ^ (x >> 7)) & 0x00AA00AA00AA00AAull;
  x = x ^ t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000CCCC0000CCCCull;
  x = x ^ t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000F0F0F0F0ull;
  x = x ^ t ^ (t << 28);
  return x;
}

/// @brief Byte @p b of element group @p g (elements 8g..8g+7) after bit unshuffle, as the
/// 8 bytes (one per element) of a little-endian word.
VCZ_HD inline std::uint64_t bit_unshuffle_gather(const ShuffleJob& j, std::uint64_t g,
                                                 std::uint32_t b) {
  const std::uint64_t row = shuffle_elements(j) / 8;
  const std::uint8_t* p = j.src + static_cast<std::uint64_t>(b) * 8 * row + g;
  std::uint64_t x = 0;
  for (int k = 0; k < 8; ++k) x |= static_cast<std::uint64_t>(p[k * row]) << (8 * k);
  return transpose8x8(x);
}

/// @brief Bit unshuffle of element group @p g (elements 8g..8g+7).
VCZ_HD inline void bit_unshuffle_group(const ShuffleJob& j, std::uint64_t g) {
  for (std::uint32_t b = 0; b < j.typesize; ++b) {
    const std::uint64_t y = bit_unshuffle_gather(j, g, b);
    for (int k = 0; k < 8; ++k)
      j.dst[(8 * g + k) * j.typesize + b] = static_cast<std::uint8_t>(y >> (8 * k));
  }
}

/// @brief Copy the size % typesize bytes after the elements, byte @p i of them.
VCZ_HD inline void shuffle_tail_byte(const ShuffleJob& j, std::uint64_t i) {
  const std::uint64_t at = shuffle_elements(j) * j.typesize + i;
  j.dst[at] = j.src[at];
}

/// @brief Destination offset of scatter row @p r.
VCZ_HD inline std::uint64_t scatter_row_offset(const ScatterJob& j, std::uint64_t r) {
  std::uint64_t off = 0;
  for (int d = j.ndim - 1; d >= 0; --d) {
    const auto c = static_cast<std::uint64_t>(j.count[d]);
    off += (r % c) * static_cast<std::uint64_t>(j.stride[d]);
    r /= c;
  }
  return off;
}

}  // namespace vczstats::cuda::decode
