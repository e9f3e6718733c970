// CPU kernels of the matrix family (pair_kernels.hpp): bit planes from packed rows, and pair
// counts by popcount. The AVX2 kernel counts bits per byte with a nibble table (Mula's vpshufb
// popcount) and adds the bytes up once per pair (vpsadbw); the AVX-512 one (VPOPCNTDQ, on
// 256-bit vectors) counts 64-bit lanes in one instruction and takes four pairs (i, j..j+3) at a
// time, loading i's planes once for the four; the scalar one is their reference.

#include "backend/cpu/pair_kernels.hpp"

#include <immintrin.h>

#include <algorithm>

namespace vczstats::backend::pairs {

void transpose64(std::uint64_t a[64]) {
  // Swap ever smaller off-diagonal blocks: 32 x 32, then 16 x 16, ..., 1 x 1.
  std::uint64_t m = 0x00000000FFFFFFFFull;
  for (int j = 32; j != 0; j >>= 1, m ^= (m << j)) {
    for (int k = 0; k < 64; k = ((k | j) + 1) & ~j) {
      const std::uint64_t t = ((a[k] >> j) ^ a[k | j]) & m;
      a[k] ^= t << j;
      a[k | j] ^= t;
    }
  }
}

void make_planes(const PlaneBatch& b, std::int64_t w0, std::int64_t w1) {
  const std::int64_t row_groups = b.variants / 64, stride = b.stride();
  std::uint64_t het[64], hom[64], alt[64];
  for (std::int64_t w = w0; w < w1; ++w) {
    const std::int64_t first = 32 * w;
    const std::int64_t n = std::min<std::int64_t>(32, b.samples - first);
    for (std::int64_t rg = 0; rg < row_groups; ++rg) {
      const std::int64_t g = rg / 4, lane = rg % 4;
      if (64 * rg >= b.fill) {  // no rows: every call missing
        for (std::int64_t s = 0; s < n; ++s) {
          std::uint64_t* p = b.planes + (first + s) * stride + g * kPlaneWords;
          p[lane] = p[4 + lane] = p[8 + lane] = 0;
        }
        continue;
      }
      for (int r = 0; r < 64; ++r) {
        const std::int64_t k = 64 * rg + r;
        std::uint32_t lo = ~0u, hi = ~0u;  // missing
        if (k < b.fill) {
          const std::uint64_t word = b.rows[k * b.words_per_row + w];
          lo = compact_even(word);
          hi = compact_even(word >> 1);
        }
        het[r] = lo & ~hi;
        hom[r] = static_cast<std::uint32_t>(~lo);
        alt[r] = hi & ~lo;
      }
      transpose64(het);
      transpose64(hom);
      transpose64(alt);
      for (std::int64_t s = 0; s < n; ++s) {
        std::uint64_t* p = b.planes + (first + s) * stride + g * kPlaneWords;
        p[lane] = het[s];
        p[4 + lane] = hom[s];
        p[8 + lane] = alt[s];
      }
    }
  }
}

namespace {

constexpr std::uint32_t bit(PairCount c) {
  return pair_bit(c);
}

void add_out(const CountTargets& out, std::int64_t i, std::int64_t j, const std::int64_t c[]) {
  const std::int64_t at = (i - out.row_offset) * out.ld + j;
  for (int k = 0; k < kPairCounts; ++k)
    if (out.counts[k]) out.counts[k][at] += static_cast<std::int32_t>(c[k]);
}

template <std::uint32_t M>
__attribute__((target("avx2"))) inline __m256i popcount_bytes(__m256i v) {
  (void)M;
  const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2,
                                         1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i lo = _mm256_and_si256(v, low4);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);
  return _mm256_add_epi8(_mm256_shuffle_epi8(table, lo), _mm256_shuffle_epi8(table, hi));
}

__attribute__((target("avx2"))) inline std::int64_t sum_bytes(__m256i v) {
  const __m256i s = _mm256_sad_epu8(v, _mm256_setzero_si256());
  return _mm256_extract_epi64(s, 0) + _mm256_extract_epi64(s, 1) + _mm256_extract_epi64(s, 2) +
         _mm256_extract_epi64(s, 3);
}

/// One pair over every group; bytes are flushed every 31 groups (a byte holds at most 8 per
/// group).
template <std::uint32_t M>
__attribute__((target("avx2"))) void pair_avx2(const std::uint64_t* pi, const std::uint64_t* pj,
                                               std::int64_t groups, std::int64_t c[]) {
  for (int k = 0; k < kPairCounts; ++k) c[k] = 0;
  for (std::int64_t g0 = 0; g0 < groups; g0 += 31) {
    const std::int64_t g1 = std::min<std::int64_t>(groups, g0 + 31);
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0;
    for (std::int64_t g = g0; g < g1; ++g) {
      const auto* x = reinterpret_cast<const __m256i*>(pi + g * kPlaneWords);
      const auto* y = reinterpret_cast<const __m256i*>(pj + g * kPlaneWords);
      const __m256i hi = _mm256_loadu_si256(x), oi = _mm256_loadu_si256(x + 1);
      const __m256i hj = _mm256_loadu_si256(y), oj = _mm256_loadu_si256(y + 1);
      if constexpr ((M & bit(PairCount::HetHet)) != 0)
        a0 = _mm256_add_epi8(a0, popcount_bytes<M>(_mm256_and_si256(hi, hj)));
      if constexpr ((M & bit(PairCount::Ibs0)) != 0) {
        const __m256i bi = _mm256_loadu_si256(x + 2), bj = _mm256_loadu_si256(y + 2);
        const __m256i opposite =
            _mm256_and_si256(_mm256_and_si256(oi, oj), _mm256_xor_si256(bi, bj));
        a1 = _mm256_add_epi8(a1, popcount_bytes<M>(opposite));
      }
      if constexpr ((M & bit(PairCount::HomHet)) != 0)
        a2 = _mm256_add_epi8(a2, popcount_bytes<M>(_mm256_and_si256(oi, hj)));
      if constexpr ((M & bit(PairCount::HetHom)) != 0)
        a3 = _mm256_add_epi8(a3, popcount_bytes<M>(_mm256_and_si256(hi, oj)));
      if constexpr ((M & bit(PairCount::NonMissing)) != 0) {
        const __m256i both = _mm256_and_si256(_mm256_or_si256(oi, hi), _mm256_or_si256(oj, hj));
        a4 = _mm256_add_epi8(a4, popcount_bytes<M>(both));
      }
    }
    if constexpr ((M & bit(PairCount::HetHet)) != 0) c[0] += sum_bytes(a0);
    if constexpr ((M & bit(PairCount::Ibs0)) != 0) c[1] += sum_bytes(a1);
    if constexpr ((M & bit(PairCount::HomHet)) != 0) c[2] += sum_bytes(a2);
    if constexpr ((M & bit(PairCount::HetHom)) != 0) c[3] += sum_bytes(a3);
    if constexpr ((M & bit(PairCount::NonMissing)) != 0) c[4] += sum_bytes(a4);
  }
}

template <std::uint32_t M>
__attribute__((target("avx2"))) void tile_avx2(const PlaneBatch& b, std::int64_t i0,
                                               std::int64_t i1, std::int64_t j0, std::int64_t j1,
                                               const CountTargets& out) {
  const std::int64_t stride = b.stride(), groups = b.groups();
  std::int64_t c[kPairCounts];
  for (std::int64_t i = i0; i < i1; ++i) {
    const std::uint64_t* pi = b.planes + i * stride;
    const std::int64_t jend = std::min(j1, i + 1);
    for (std::int64_t j = j0; j < jend; ++j) {
      pair_avx2<M>(pi, b.planes + j * stride, groups, c);
      add_out(out, i, j, c);
    }
  }
}

/// Four pairs (i, j + t), t < J, over every group: 64-bit lane counts, summed at the end.
template <std::uint32_t M, int J>
__attribute__((target("avx2,avx512f,avx512vl,avx512vpopcntdq"))) inline void pairs_avx512(
    const std::uint64_t* pi, const std::uint64_t* pj0, std::int64_t stride, std::int64_t groups,
    std::int64_t c[][kPairCounts]) {
  __m256i acc[J][kPairCounts];
  for (int t = 0; t < J; ++t)
    for (int k = 0; k < kPairCounts; ++k) acc[t][k] = _mm256_setzero_si256();
  for (std::int64_t g = 0; g < groups; ++g) {
    const auto* x = reinterpret_cast<const __m256i*>(pi + g * kPlaneWords);
    const __m256i hi = _mm256_loadu_si256(x), oi = _mm256_loadu_si256(x + 1);
    const __m256i bi = _mm256_loadu_si256(x + 2);
    for (int t = 0; t < J; ++t) {
      const auto* y = reinterpret_cast<const __m256i*>(pj0 + t * stride + g * kPlaneWords);
      const __m256i hj = _mm256_loadu_si256(y), oj = _mm256_loadu_si256(y + 1);
      if constexpr ((M & bit(PairCount::HetHet)) != 0)
        acc[t][0] = _mm256_add_epi64(acc[t][0], _mm256_popcnt_epi64(_mm256_and_si256(hi, hj)));
      if constexpr ((M & bit(PairCount::Ibs0)) != 0) {
        const __m256i bj = _mm256_loadu_si256(y + 2);
        const __m256i opposite =
            _mm256_and_si256(_mm256_and_si256(oi, oj), _mm256_xor_si256(bi, bj));
        acc[t][1] = _mm256_add_epi64(acc[t][1], _mm256_popcnt_epi64(opposite));
      }
      if constexpr ((M & bit(PairCount::HomHet)) != 0)
        acc[t][2] = _mm256_add_epi64(acc[t][2], _mm256_popcnt_epi64(_mm256_and_si256(oi, hj)));
      if constexpr ((M & bit(PairCount::HetHom)) != 0)
        acc[t][3] = _mm256_add_epi64(acc[t][3], _mm256_popcnt_epi64(_mm256_and_si256(hi, oj)));
      if constexpr ((M & bit(PairCount::NonMissing)) != 0) {
        const __m256i both = _mm256_and_si256(_mm256_or_si256(oi, hi), _mm256_or_si256(oj, hj));
        acc[t][4] = _mm256_add_epi64(acc[t][4], _mm256_popcnt_epi64(both));
      }
    }
  }
  for (int t = 0; t < J; ++t)
    for (int k = 0; k < kPairCounts; ++k) {
      const __m256i a = acc[t][k];
      c[t][k] = _mm256_extract_epi64(a, 0) + _mm256_extract_epi64(a, 1) +
                _mm256_extract_epi64(a, 2) + _mm256_extract_epi64(a, 3);
    }
}

template <std::uint32_t M>
__attribute__((target("avx2,avx512f,avx512vl,avx512vpopcntdq"))) void tile_avx512(
    const PlaneBatch& b, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1,
    const CountTargets& out) {
  const std::int64_t stride = b.stride(), groups = b.groups();
  std::int64_t c[4][kPairCounts];
  for (std::int64_t i = i0; i < i1; ++i) {
    const std::uint64_t* pi = b.planes + i * stride;
    const std::int64_t jend = std::min(j1, i + 1);
    std::int64_t j = j0;
    for (; j + 4 <= jend; j += 4) {
      pairs_avx512<M, 4>(pi, b.planes + j * stride, stride, groups, c);
      for (int t = 0; t < 4; ++t) add_out(out, i, j + t, c[t]);
    }
    for (; j < jend; ++j) {
      pairs_avx512<M, 1>(pi, b.planes + j * stride, stride, groups, c);
      add_out(out, i, j, c[0]);
    }
  }
}

using TileFn = void (*)(const PlaneBatch&, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                        const CountTargets&);

/// The tile kernels of one instruction set, by mask.
struct Avx2Tiles {
  template <std::uint32_t M>
  static TileFn get() {
    return tile_avx2<M>;
  }
};
struct Avx512Tiles {
  template <std::uint32_t M>
  static TileFn get() {
    return tile_avx512<M>;
  }
};

/// The kernel of @p Tiles specialised for @p mask: the masks the statistics use, else all five
/// counts.
template <class Tiles>
TileFn kernel_for(std::uint32_t mask) {
  constexpr std::uint32_t hh = bit(PairCount::HetHet), i0 = bit(PairCount::Ibs0),
                          oh = bit(PairCount::HomHet), ho = bit(PairCount::HetHom),
                          nm = bit(PairCount::NonMissing);
  switch (mask) {
    case hh | i0 | oh | ho:
      return Tiles::template get<hh | i0 | oh | ho>();
    case i0 | oh | ho:
      return Tiles::template get<i0 | oh | ho>();
    case i0 | oh | ho | nm:
      return Tiles::template get<i0 | oh | ho | nm>();
    case nm:
      return Tiles::template get<nm>();
    default:
      return Tiles::template get<hh | i0 | oh | ho | nm>();
  }
}

}  // namespace

bool have_avx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}

bool have_kernel(PairKernel k) {
  static const bool avx512 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") &&
                             __builtin_cpu_supports("avx512vl") &&
                             __builtin_cpu_supports("avx512vpopcntdq");
  switch (k) {
    case PairKernel::Scalar:
      return true;
    case PairKernel::Avx2:
      return have_avx2();
    case PairKernel::Avx512:
      return avx512;
  }
  return false;
}

PairKernel best_kernel() {
  if (have_kernel(PairKernel::Avx512)) return PairKernel::Avx512;
  if (have_kernel(PairKernel::Avx2)) return PairKernel::Avx2;
  return PairKernel::Scalar;
}

void count_pairs(const PlaneBatch& b, std::uint32_t mask, std::int64_t i0, std::int64_t i1,
                 std::int64_t j0, std::int64_t j1, const CountTargets& out) {
  static const PairKernel best = best_kernel();
  count_pairs_with(best, b, mask, i0, i1, j0, j1, out);
}

void count_pairs_with(PairKernel k, const PlaneBatch& b, std::uint32_t mask, std::int64_t i0,
                      std::int64_t i1, std::int64_t j0, std::int64_t j1, const CountTargets& out) {
  if (mask == 0) return;
  if (k == PairKernel::Scalar || !have_kernel(k)) {
    count_pairs_scalar(b, mask, i0, i1, j0, j1, out);
    return;
  }
  CountTargets only = out;  // the all-counts kernel may count more than asked for
  for (int c = 0; c < kPairCounts; ++c)
    if (!(mask & pair_bit(static_cast<PairCount>(c)))) only.counts[c] = nullptr;
  (k == PairKernel::Avx512 ? kernel_for<Avx512Tiles>(mask) : kernel_for<Avx2Tiles>(mask))(
      b, i0, i1, j0, j1, only);
}

void count_pairs_scalar(const PlaneBatch& b, std::uint32_t mask, std::int64_t i0, std::int64_t i1,
                        std::int64_t j0, std::int64_t j1, const CountTargets& out) {
  const std::int64_t stride = b.stride(), groups = b.groups();
  for (std::int64_t i = i0; i < i1; ++i) {
    const std::uint64_t* pi = b.planes + i * stride;
    for (std::int64_t j = j0; j < std::min(j1, i + 1); ++j) {
      const std::uint64_t* pj = b.planes + j * stride;
      std::int64_t c[kPairCounts] = {};
      for (std::int64_t g = 0; g < groups; ++g)
        for (int w = 0; w < 4; ++w) {
          const std::int64_t at = g * kPlaneWords + w;
          const std::uint64_t hi = pi[at], oi = pi[at + 4], bi = pi[at + 8];
          const std::uint64_t hj = pj[at], oj = pj[at + 4], bj = pj[at + 8];
          c[0] += __builtin_popcountll(hi & hj);
          c[1] += __builtin_popcountll(oi & oj & (bi ^ bj));
          c[2] += __builtin_popcountll(oi & hj);
          c[3] += __builtin_popcountll(hi & oj);
          c[4] += __builtin_popcountll((oi | hi) & (oj | hj));
        }
      for (int k = 0; k < kPairCounts; ++k)
        if (!(mask & pair_bit(static_cast<PairCount>(k)))) c[k] = 0;
      add_out(out, i, j, c);
    }
  }
}

}  // namespace vczstats::backend::pairs
