// CPU pair-count kernels of the variant-pair family (ld_kernels.hpp). The portable and POPCNT
// kernels are stats/ld_math.hpp's loops compiled for each target; the AVX-512 one counts eight
// words per instruction (VPOPCNTQ) into vector accumulators and, for the last words of a row,
// loads under a mask; its four measures are one loop (count_avx512) over lists of plane pairs.

#include "backend/cpu/ld_kernels.hpp"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

namespace vczstats::backend::ldk {
namespace {

using stats::ld::GenotypeCounts;
using stats::ld::HaplotypeCounts;

// ---- portable and POPCNT ----------------------------------------------------------------------

/// masked_both_non_ref of each of @p count rows (@p row_words apart) with row @p j, into four
/// counts a row of @p out (the masks' beyond @p nmasks zero); rows of one word without a loop
/// over words or masks (ld-stats' rows of up to 64 haplotypes).
[[gnu::always_inline]] inline void masked_rows_loop(const std::uint64_t* rows, std::int64_t count,
                                                    std::int64_t row_words, const std::uint64_t* j,
                                                    std::int64_t w,
                                                    const std::uint64_t* const* masks, int nmasks,
                                                    std::int64_t* out) {
  if (w == 1) {
    const std::uint64_t jj = j[0];
    const std::uint64_t m0 = nmasks > 0 ? masks[0][0] : 0, m1 = nmasks > 1 ? masks[1][0] : 0,
                        m2 = nmasks > 2 ? masks[2][0] : 0;
    for (std::int64_t r = 0; r < count; ++r, out += 4) {
      const std::uint64_t both = rows[r * row_words] & jj;
      out[0] = __builtin_popcountll(both);
      out[1] = __builtin_popcountll(both & m0);
      out[2] = __builtin_popcountll(both & m1);
      out[3] = __builtin_popcountll(both & m2);
    }
    return;
  }
  for (std::int64_t r = 0; r < count; ++r, out += 4) {
    const std::uint64_t* i = rows + r * row_words;
    std::int64_t x[4] = {0, 0, 0, 0};
    for (std::int64_t k = 0; k < w; ++k) {
      const std::uint64_t both = i[k] & j[k];
      x[0] += __builtin_popcountll(both);
      for (int m = 0; m < nmasks; ++m) x[1 + m] += __builtin_popcountll(both & masks[m][k]);
    }
    for (int m = 0; m < 4; ++m) out[m] = x[m];
  }
}

#define VCZ_LD_KERNELS(suffix, attr)                                                           \
  attr void genotype_##suffix(const std::uint64_t* i, const std::uint64_t* j, std::int64_t w,  \
                              GenotypeCounts& c) {                                             \
    stats::ld::add_genotype_words(c, i, j, w, 0, w);                                           \
  }                                                                                            \
  attr void genotype_complete_##suffix(const std::uint64_t* i, const std::uint64_t* j,         \
                                       std::int64_t w, GenotypeCounts& c) {                    \
    stats::ld::add_genotype_words_complete(c, i, j, w, 0, w);                                  \
  }                                                                                            \
  attr void haplotype_##suffix(const std::uint64_t* i, const std::uint64_t* j, std::int64_t w, \
                               HaplotypeCounts& c) {                                           \
    stats::ld::add_haplotype_words(c, i, j, w, 0, w);                                          \
  }                                                                                            \
  attr void haplotype_complete_##suffix(const std::uint64_t* i, const std::uint64_t* j,        \
                                        std::int64_t w, HaplotypeCounts& c) {                  \
    stats::ld::add_haplotype_words_complete(c, i, j, 0, w);                                    \
  }                                                                                            \
  attr void masked_both_non_ref_##suffix(const std::uint64_t* i, const std::uint64_t* j,       \
                                         std::int64_t w, const std::uint64_t* const* masks,    \
                                         int nmasks, std::int64_t* out) {                      \
    std::int64_t x[4] = {0, 0, 0, 0};                                                          \
    for (std::int64_t k = 0; k < w; ++k) {                                                     \
      const std::uint64_t both = i[k] & j[k];                                                  \
      x[0] += __builtin_popcountll(both);                                                      \
      for (int m = 0; m < nmasks; ++m) x[1 + m] += __builtin_popcountll(both & masks[m][k]);   \
    }                                                                                          \
    for (int m = 0; m <= nmasks; ++m) out[m] += x[m];                                          \
  }                                                                                            \
  attr void masked_both_non_ref_rows_##suffix(                                                 \
      const std::uint64_t* r, std::int64_t n, std::int64_t rw, const std::uint64_t* j,         \
      std::int64_t w, const std::uint64_t* const* m, int nm, std::int64_t* out) {              \
    masked_rows_loop(r, n, rw, j, w, m, nm, out);                                              \
  }

VCZ_LD_KERNELS(portable, )
VCZ_LD_KERNELS(popcnt, __attribute__((target("popcnt"))))
#undef VCZ_LD_KERNELS

// ---- AVX-512 VPOPCNTDQ ------------------------------------------------------------------------

#define VCZ_AVX512 __attribute__((target("avx512f,avx512vpopcntdq")))

VCZ_AVX512 inline std::int64_t hsum(__m512i v) {
  alignas(64) std::int64_t x[8];
  _mm512_store_si512(x, v);
  return ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]));
}

/// Words [w, w + 8) of plane @p p of a row (@p words per plane), zero past the row's end.
VCZ_AVX512 inline __m512i load8(const std::uint64_t* row, std::int64_t words, int p,
                                std::int64_t w) {
  const std::int64_t left = words - w;
  const __mmask8 m = left >= 8 ? __mmask8(0xFF) : static_cast<__mmask8>((1u << left) - 1);
  return _mm512_maskz_loadu_epi64(m, row + p * words + w);
}

VCZ_AVX512 inline __m512i pc_and(__m512i a, __m512i b, __m512i acc) {
  return _mm512_add_epi64(acc, _mm512_popcnt_epi64(_mm512_and_si512(a, b)));
}

/// Which planes of rows i and j a count ANDs (plane 0 first); the counts of a measure in order.
struct PlanePair {
  int i, j;
};
template <std::size_t K>
using PlanePairs = std::array<PlanePair, K>;

/// One loop for every measure: counts out[k] += popcount(plane kP[k].i of i AND plane kP[k].j
/// of j) over the rows' words, eight words per step, K vector accumulators; the planes 0..P-1
/// are loaded once per step. (The packs unroll the loops over counts and planes.)
template <std::size_t K, PlanePairs<K> kP, std::size_t... k, int... p>
VCZ_AVX512 void count_avx512(const std::uint64_t* i, const std::uint64_t* j, std::int64_t words,
                             std::int64_t (&out)[K], std::index_sequence<k...>,
                             std::integer_sequence<int, p...>) {
  const __m512i zero = _mm512_setzero_si512();
  __m512i acc[K] = {(static_cast<void>(k), zero)...};
  for (std::int64_t w = 0; w < words; w += 8) {
    const __m512i xi[] = {load8(i, words, p, w)...};
    const __m512i xj[] = {load8(j, words, p, w)...};
    ((acc[k] = pc_and(xi[kP[k].i], xj[kP[k].j], acc[k])), ...);
  }
  ((out[k] += hsum(acc[k])), ...);
}
template <std::size_t K, PlanePairs<K> kP>
VCZ_AVX512 void count_avx512(const std::uint64_t* i, const std::uint64_t* j, std::int64_t words,
                             std::int64_t (&out)[K]) {
  constexpr int planes = [] {
    int m = 0;
    for (const PlanePair& x : kP) m = std::max({m, x.i + 1, x.j + 1});
    return m;
  }();
  count_avx512<K, kP>(i, j, words, out, std::make_index_sequence<K>{},
                      std::make_integer_sequence<int, planes>{});
}

// Genotype planes: 0 het, 1 two non-REF, 2 called. Haplotype planes: 0 non-REF, 1 called.
constexpr PlanePairs<9> kGenotypePairs{
    {{2, 2}, {0, 2}, {1, 2}, {2, 0}, {2, 1}, {0, 0}, {0, 1}, {1, 0}, {1, 1}}};
constexpr PlanePairs<4> kCellPairs{{{0, 0}, {0, 1}, {1, 0}, {1, 1}}};
constexpr PlanePairs<4> kHaplotypePairs{{{1, 1}, {0, 1}, {1, 0}, {0, 0}}};
constexpr PlanePairs<1> kBothNonRef{{{0, 0}}};

VCZ_AVX512 void genotype_avx512(const std::uint64_t* i, const std::uint64_t* j, std::int64_t words,
                                GenotypeCounts& c) {
  std::int64_t x[9] = {c.n, c.r1, c.r2, c.c1, c.c2, c.t11, c.t12, c.t21, c.t22};
  count_avx512<9, kGenotypePairs>(i, j, words, x);
  c = {x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8]};
}

VCZ_AVX512 void genotype_complete_avx512(const std::uint64_t* i, const std::uint64_t* j,
                                         std::int64_t words, GenotypeCounts& c) {
  std::int64_t x[4] = {c.t11, c.t12, c.t21, c.t22};
  count_avx512<4, kCellPairs>(i, j, words, x);
  c.t11 = x[0];
  c.t12 = x[1];
  c.t21 = x[2];
  c.t22 = x[3];
}

VCZ_AVX512 void haplotype_avx512(const std::uint64_t* i, const std::uint64_t* j, std::int64_t words,
                                 HaplotypeCounts& c) {
  std::int64_t x[4] = {c.n, c.a, c.b, c.ab};
  count_avx512<4, kHaplotypePairs>(i, j, words, x);
  c = {x[0], x[1], x[2], x[3]};
}

VCZ_AVX512 void haplotype_complete_avx512(const std::uint64_t* i, const std::uint64_t* j,
                                          std::int64_t words, HaplotypeCounts& c) {
  std::int64_t x[1] = {c.ab};
  count_avx512<1, kBothNonRef>(i, j, words, x);
  c.ab = x[0];
}

VCZ_AVX512 void masked_both_non_ref_avx512(const std::uint64_t* i, const std::uint64_t* j,
                                           std::int64_t words, const std::uint64_t* const* masks,
                                           int nmasks, std::int64_t* out) {
  __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                    _mm512_setzero_si512()};
  for (std::int64_t w = 0; w < words; w += 8) {
    const __m512i both = _mm512_and_si512(load8(i, words, 0, w), load8(j, words, 0, w));
    acc[0] = _mm512_add_epi64(acc[0], _mm512_popcnt_epi64(both));
    for (int m = 0; m < nmasks; ++m)
      acc[1 + m] = _mm512_add_epi64(
          acc[1 + m], _mm512_popcnt_epi64(_mm512_and_si512(both, load8(masks[m], words, 0, w))));
  }
  for (int m = 0; m <= nmasks; ++m) out[m] += hsum(acc[m]);
}

/// Rows of fewer than eight words a word at a time (POPCNT), longer ones eight.
__attribute__((target("avx512f,avx512vpopcntdq,popcnt"))) void masked_both_non_ref_rows_avx512(
    const std::uint64_t* rows, std::int64_t count, std::int64_t row_words, const std::uint64_t* j,
    std::int64_t words, const std::uint64_t* const* masks, int nmasks, std::int64_t* out) {
  if (words < 8) {
    masked_rows_loop(rows, count, row_words, j, words, masks, nmasks, out);
    return;
  }
  for (std::int64_t r = 0; r < count; ++r, out += 4) {
    out[0] = out[1] = out[2] = out[3] = 0;
    masked_both_non_ref_avx512(rows + r * row_words, j, words, masks, nmasks, out);
  }
}

const Kernels kPortable{"portable",
                        genotype_portable,
                        genotype_complete_portable,
                        haplotype_portable,
                        haplotype_complete_portable,
                        masked_both_non_ref_portable,
                        masked_both_non_ref_rows_portable};
const Kernels kPopcnt{"popcnt",
                      genotype_popcnt,
                      genotype_complete_popcnt,
                      haplotype_popcnt,
                      haplotype_complete_popcnt,
                      masked_both_non_ref_popcnt,
                      masked_both_non_ref_rows_popcnt};
const Kernels kAvx512{"avx512-vpopcntdq",
                      genotype_avx512,
                      genotype_complete_avx512,
                      haplotype_avx512,
                      haplotype_complete_avx512,
                      masked_both_non_ref_avx512,
                      masked_both_non_ref_rows_avx512};

bool has_popcnt() {
  return __builtin_cpu_supports("popcnt");
}
bool has_avx512_popcnt() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq");
}

}  // namespace

const Kernels& best_kernels() {
  static const Kernels& best = has_avx512_popcnt() ? kAvx512 : has_popcnt() ? kPopcnt : kPortable;
  return best;
}

int available_kernels(const Kernels** out, int max) {
  int n = 0;
  if (n < max) out[n++] = &kPortable;
  if (n < max && has_popcnt()) out[n++] = &kPopcnt;
  if (n < max && has_avx512_popcnt()) out[n++] = &kAvx512;
  return n;
}

}  // namespace vczstats::backend::ldk
