#pragma once
// The CPU kernels of the matrix family: packed variant-major rows (vczstats/packed.hpp) turned
// into sample-major bit planes, and the pair counts of sample_matrix.hpp counted over a batch of
// variants with popcounts (AVX-512 VPOPCNTDQ or AVX2 when the CPU has it, else 64-bit popcount).
//
// Planes of one batch of K variants (K a multiple of 256): for each sample, K/256 groups of 12
// words: het[4], hom[4], hom_alt[4] (bit k of group g, word w is variant 256 g + 64 w + k).
// A missing call has no bit set; hom = hom REF or hom ALT.

#include <cstdint>

#include "vczstats/sample_matrix.hpp"

namespace vczstats::backend::pairs {

inline constexpr int kPlaneWords = 12;  ///< words of one sample's 256-variant group

/// Transpose a 64 x 64 bit matrix in place: bit c of a[r] moves to bit r of a[c].
void transpose64(std::uint64_t a[64]);

/// The even bits (0, 2, ..., 62) of @p x as a 32-bit value.
inline std::uint32_t compact_even(std::uint64_t x) {
  x &= 0x5555555555555555ull;
  x = (x | (x >> 1)) & 0x3333333333333333ull;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFull;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFull;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFull;
  return static_cast<std::uint32_t>(x);
}

/// A batch's staged rows and planes.
struct PlaneBatch {
  const std::uint64_t* rows = nullptr;  ///< fill rows of words_per_row packed words
  std::int64_t fill = 0;                ///< rows staged (the rest of the K are missing)
  std::int64_t words_per_row = 0;
  std::int64_t samples = 0;
  std::int64_t variants = 0;        ///< K
  std::uint64_t* planes = nullptr;  ///< samples x (K / 256) x kPlaneWords
  std::int64_t groups() const { return variants / 256; }
  std::int64_t stride() const { return groups() * kPlaneWords; }
};

/// Planes of the samples of packed words [w0, w1) of every row (rows past fill: missing).
void make_planes(const PlaneBatch& b, std::int64_t w0, std::int64_t w1);

/// Where a tile writes: count arrays (null when not requested) of a row-major matrix whose row r
/// is sample row_offset + r, ld columns.
struct CountTargets {
  std::int32_t* counts[kPairCounts] = {};
  std::int64_t row_offset = 0, ld = 0;
};

/// Add the requested pair counts (@p mask of pair_bit) of samples i in [i0, i1) and j in [j0, j1)
/// with j <= i over the batch's planes.
void count_pairs(const PlaneBatch& b, std::uint32_t mask, std::int64_t i0, std::int64_t i1,
                 std::int64_t j0, std::int64_t j1, const CountTargets& out);

/// The same, one pair at a time with 64-bit popcounts (the reference of the tests).
void count_pairs_scalar(const PlaneBatch& b, std::uint32_t mask, std::int64_t i0, std::int64_t i1,
                        std::int64_t j0, std::int64_t j1, const CountTargets& out);

/// Whether count_pairs uses AVX2.
bool have_avx2();

/// The kernels of count_pairs: it uses the best one the CPU has.
enum class PairKernel {
  Scalar,  ///< count_pairs_scalar
  Avx2,    ///< vpshufb popcount per byte
  Avx512,  ///< VPOPCNTDQ (with AVX-512 VL) on 256-bit vectors, four pairs at a time
};

/// Whether the CPU can run kernel @p k.
bool have_kernel(PairKernel k);

/// count_pairs with kernel @p k (the scalar one when the CPU lacks it), for the tests.
void count_pairs_with(PairKernel k, const PlaneBatch& b, std::uint32_t mask, std::int64_t i0,
                      std::int64_t i1, std::int64_t j0, std::int64_t j1, const CountTargets& out);

}  // namespace vczstats::backend::pairs
