// CPU pair-count kernels of the variant-pair family (ld_kernels.hpp). The portable and POPCNT
// kernels are stats/ld_math.hpp's loops compiled for each target; the AVX-512 one counts eight
// words per instruction (VPOPCNTQ) into vector accumulators and, for the last words of a row,
// loads under a mask.

#include "backend/cpu/ld_kernels.hpp"

#include <immintrin.h>

namespace vczstats::backend::ldk {
namespace {

using stats::ld::GenotypeCounts;
using stats::ld::HaplotypeCounts;

// ---- portable and POPCNT ----------------------------------------------------------------------

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

VCZ_AVX512 void genotype_avx512(const std::uint64_t* i, const std::uint64_t* j, std::int64_t words,
                                GenotypeCounts& c) {
  __m512i n = _mm512_setzero_si512(), r1 = n, r2 = n, c1 = n, c2 = n, t11 = n, t12 = n, t21 = n,
          t22 = n;
  for (std::int64_t w = 0; w < words; w += 8) {
    const __m512i hi = load8(i, words, 0, w), ai = load8(i, words, 1, w),
                  ci = load8(i, words, 2, w);
    const __m512i hj = load8(j, words, 0, w), aj = load8(j, words, 1, w),
                  cj = load8(j, words, 2, w);
    n = pc_and(ci, cj, n);
    r1 = pc_and(hi, cj, r1);
    r2 = pc_and(ai, cj, r2);
    c1 = pc_and(ci, hj, c1);
    c2 = pc_and(ci, aj, c2);
    t11 = pc_and(hi, hj, t11);
    t12 = pc_and(hi, aj, t12);
    t21 = pc_and(ai, hj, t21);
    t22 = pc_and(ai, aj, t22);
  }
  c.n += hsum(n);
  c.r1 += hsum(r1);
  c.r2 += hsum(r2);
  c.c1 += hsum(c1);
  c.c2 += hsum(c2);
  c.t11 += hsum(t11);
  c.t12 += hsum(t12);
  c.t21 += hsum(t21);
  c.t22 += hsum(t22);
}

VCZ_AVX512 void genotype_complete_avx512(const std::uint64_t* i, const std::uint64_t* j,
                                         std::int64_t words, GenotypeCounts& c) {
  __m512i t11 = _mm512_setzero_si512(), t12 = t11, t21 = t11, t22 = t11;
  for (std::int64_t w = 0; w < words; w += 8) {
    const __m512i hi = load8(i, words, 0, w), ai = load8(i, words, 1, w);
    const __m512i hj = load8(j, words, 0, w), aj = load8(j, words, 1, w);
    t11 = pc_and(hi, hj, t11);
    t12 = pc_and(hi, aj, t12);
    t21 = pc_and(ai, hj, t21);
    t22 = pc_and(ai, aj, t22);
  }
  c.t11 += hsum(t11);
  c.t12 += hsum(t12);
  c.t21 += hsum(t21);
  c.t22 += hsum(t22);
}

VCZ_AVX512 void haplotype_avx512(const std::uint64_t* i, const std::uint64_t* j, std::int64_t words,
                                 HaplotypeCounts& c) {
  __m512i n = _mm512_setzero_si512(), a = n, b = n, ab = n;
  for (std::int64_t w = 0; w < words; w += 8) {
    const __m512i ai = load8(i, words, 0, w), ci = load8(i, words, 1, w);
    const __m512i aj = load8(j, words, 0, w), cj = load8(j, words, 1, w);
    n = pc_and(ci, cj, n);
    a = pc_and(ai, cj, a);
    b = pc_and(ci, aj, b);
    ab = pc_and(ai, aj, ab);
  }
  c.n += hsum(n);
  c.a += hsum(a);
  c.b += hsum(b);
  c.ab += hsum(ab);
}

VCZ_AVX512 void haplotype_complete_avx512(const std::uint64_t* i, const std::uint64_t* j,
                                          std::int64_t words, HaplotypeCounts& c) {
  __m512i ab = _mm512_setzero_si512();
  for (std::int64_t w = 0; w < words; w += 8)
    ab = pc_and(load8(i, words, 0, w), load8(j, words, 0, w), ab);
  c.ab += hsum(ab);
}

const Kernels kPortable{"portable", genotype_portable, genotype_complete_portable,
                        haplotype_portable, haplotype_complete_portable};
const Kernels kPopcnt{"popcnt", genotype_popcnt, genotype_complete_popcnt, haplotype_popcnt,
                      haplotype_complete_popcnt};
const Kernels kAvx512{"avx512-vpopcntdq", genotype_avx512, genotype_complete_avx512,
                      haplotype_avx512, haplotype_complete_avx512};

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
