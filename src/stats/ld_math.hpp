#pragma once
// Per-pair math of the variant-pair family (ld, prune), written once for the CPU loops, the CUDA
// kernels and the statistics (which compute the pairs across partition boundaries):
//   * bit planes of a row from its packed 2-bit codes (vczstats/packed.hpp);
//   * pair counts by AND + popcount over the planes of two rows;
//   * r², D, D' from the counts, as plink 1.9 and vcftools compute them (tests/tools/POPGEN.md,
//     "Linkage"). The floating-point steps of r² are written so that the device compiler cannot
//     contract them into fused multiply-adds: CPU and GPU give the same bits (the EM of
//     GenotypeEm uses acos, cos, pow and log, whose last bits differ between the two).

#include <cmath>
#include <cstdint>
#include <cstring>

#include "stats/hd.hpp"
#include "stats/sample_math.hpp"
#include "vczstats/variant_pairs.hpp"

// The pair loops are inlined into the backends' kernels, so that a CPU kernel compiled for
// POPCNT (backend/cpu/ld_kernels.cpp) uses the instruction.
#if defined(__CUDACC__)
#define VCZ_LD_INLINE __host__ __device__ __forceinline__
#else
#define VCZ_LD_INLINE [[gnu::always_inline]] inline
#endif

namespace vczstats::stats::ld {

VCZ_LD_INLINE int popcount64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __popcll(x);
#else
  return __builtin_popcountll(x);
#endif
}

// Rounded products and sums, identical on host and device (stats/sample_math.hpp).
using sample::add;
using sample::mul;
VCZ_HD inline double sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

// ---- planes -----------------------------------------------------------------------------------

/// 64-bit words per plane of @p bits bits.
VCZ_HD constexpr std::int64_t plane_words(std::int64_t bits) {
  return (bits + 63) / 64;
}
/// Words of one row: three genotype planes (het, two non-REF, called) over @p samples, or two
/// haplotype planes (non-REF, called) over @p haplotypes.
VCZ_HD constexpr std::int64_t genotype_row_words(std::int64_t samples) {
  return 3 * plane_words(samples);
}
VCZ_HD constexpr std::int64_t haplotype_row_words(std::int64_t haplotypes) {
  return 2 * plane_words(haplotypes);
}

/// Bits 0, 2, ..., 62 of @p x moved to bits 0..31.
VCZ_HD inline std::uint64_t even_bits(std::uint64_t x) {
  x &= 0x5555555555555555ull;
  x = (x | (x >> 1)) & 0x3333333333333333ull;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0Full;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFull;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFull;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFull;
  return x;
}

/// Word @p w of the three genotype planes of a row of 2-bit codes (@p code_words words of 32
/// samples, @p samples samples): 64 samples per word; bits past the last sample are 0.
VCZ_HD inline void genotype_plane_word(const std::uint64_t* codes, std::int64_t code_words,
                                       std::int64_t samples, std::int64_t w, std::uint64_t& het,
                                       std::uint64_t& alt, std::uint64_t& called) {
  std::uint64_t lo = 0, hi = 0;
  for (int half = 0; half < 2; ++half) {
    const std::int64_t k = 2 * w + half;
    if (k >= code_words) break;
    const std::uint64_t c = codes[k];
    lo |= even_bits(c) << (32 * half);
    hi |= even_bits(c >> 1) << (32 * half);
  }
  const std::int64_t first = 64 * w;
  const std::uint64_t valid =
      samples - first >= 64 ? ~0ull : ((1ull << (samples - first)) - 1);  // padding codes are 0
  het = lo & ~hi;                                                         // code 1
  alt = hi & ~lo;                                                         // code 2
  called = ~(lo & hi) & valid;                                            // not code 3
}

/// Called, het and two-non-REF counts of a genotype row (planes of @p words words each).
struct GenotypeTotals {
  std::int64_t n = 0, het = 0, alt = 0;
};
VCZ_HD inline GenotypeTotals genotype_totals(const std::uint64_t* row, std::int64_t words) {
  GenotypeTotals t;
  for (std::int64_t w = 0; w < words; ++w) {
    t.het += popcount64(row[w]);
    t.alt += popcount64(row[words + w]);
    t.n += popcount64(row[2 * words + w]);
  }
  return t;
}

// ---- pair counts ------------------------------------------------------------------------------

/// The two-locus genotype table of rows i (first) and j over the samples called at both: n,
/// i's het and two-non-REF counts (r1, r2), j's (c1, c2), and the four cells of i's class X and
/// j's class Y, X, Y in {1 het, 2 two non-REF} (the class-0 cells follow by subtraction).
struct GenotypeCounts {
  std::int64_t n = 0, r1 = 0, r2 = 0, c1 = 0, c2 = 0, t11 = 0, t12 = 0, t21 = 0, t22 = 0;
};

/// Add words [w0, w1) of two genotype rows (planes of @p words words) to @p c: nine popcounts.
VCZ_LD_INLINE void add_genotype_words(GenotypeCounts& c, const std::uint64_t* i,
                                      const std::uint64_t* j, std::int64_t words, std::int64_t w0,
                                      std::int64_t w1, std::int64_t stride = 1) {
  for (std::int64_t w = w0; w < w1; w += stride) {
    const std::uint64_t hi = i[w], ai = i[words + w], ci = i[2 * words + w];
    const std::uint64_t hj = j[w], aj = j[words + w], cj = j[2 * words + w];
    c.n += popcount64(ci & cj);
    c.r1 += popcount64(hi & cj);
    c.r2 += popcount64(ai & cj);
    c.c1 += popcount64(ci & hj);
    c.c2 += popcount64(ci & aj);
    c.t11 += popcount64(hi & hj);
    c.t12 += popcount64(hi & aj);
    c.t21 += popcount64(ai & hj);
    c.t22 += popcount64(ai & aj);
  }
}

/// The same when both rows are called at every sample: four popcounts (the margins are the
/// rows' totals, filled in by complete_margins()).
VCZ_LD_INLINE void add_genotype_words_complete(GenotypeCounts& c, const std::uint64_t* i,
                                               const std::uint64_t* j, std::int64_t words,
                                               std::int64_t w0, std::int64_t w1,
                                               std::int64_t stride = 1) {
  for (std::int64_t w = w0; w < w1; w += stride) {
    const std::uint64_t hi = i[w], ai = i[words + w];
    const std::uint64_t hj = j[w], aj = j[words + w];
    c.t11 += popcount64(hi & hj);
    c.t12 += popcount64(hi & aj);
    c.t21 += popcount64(ai & hj);
    c.t22 += popcount64(ai & aj);
  }
}
VCZ_HD inline void complete_margins(GenotypeCounts& c, const GenotypeTotals& i,
                                    const GenotypeTotals& j) {
  c.n = i.n;
  c.r1 = i.het;
  c.r2 = i.alt;
  c.c1 = j.het;
  c.c2 = j.alt;
}

/// Haplotype counts of rows i and j over the haplotypes called at both: n, non-REF at i (a), at
/// j (b), at both (ab).
struct HaplotypeCounts {
  std::int64_t n = 0, a = 0, b = 0, ab = 0;
};
VCZ_LD_INLINE void add_haplotype_words(HaplotypeCounts& c, const std::uint64_t* i,
                                       const std::uint64_t* j, std::int64_t words, std::int64_t w0,
                                       std::int64_t w1, std::int64_t stride = 1) {
  for (std::int64_t w = w0; w < w1; w += stride) {
    const std::uint64_t ai = i[w], ci = i[words + w], aj = j[w], cj = j[words + w];
    c.n += popcount64(ci & cj);
    c.a += popcount64(ai & cj);
    c.b += popcount64(ci & aj);
    c.ab += popcount64(ai & aj);
  }
}
VCZ_LD_INLINE void add_haplotype_words_complete(HaplotypeCounts& c, const std::uint64_t* i,
                                                const std::uint64_t* j, std::int64_t w0,
                                                std::int64_t w1, std::int64_t stride = 1) {
  for (std::int64_t w = w0; w < w1; w += stride) c.ab += popcount64(i[w] & j[w]);
}

// ---- values -----------------------------------------------------------------------------------

/// plink 1.9 --r2: r² of the allele counts x (i) and y (j) over the n samples called at both,
/// C² / (A B) with C = n Σxy - Σx Σy, A = n Σx² - (Σx)², B = n Σy² - (Σy)² (exact integers),
/// signed by C; NaN when a variance is 0.
VCZ_HD inline double genotype_r2(const GenotypeCounts& c) {
  const std::int64_t sx = c.r1 + 2 * c.r2, sxx = c.r1 + 4 * c.r2;
  const std::int64_t sy = c.c1 + 2 * c.c2, syy = c.c1 + 4 * c.c2;
  const std::int64_t sxy = c.t11 + 2 * (c.t12 + c.t21) + 4 * c.t22;
  const double cc = static_cast<double>(c.n * sxy - sx * sy);
  const double a = static_cast<double>(c.n * sxx - sx * sx);
  const double b = static_cast<double>(c.n * syy - sy * sy);
  return mul(std::fabs(cc), cc) / mul(a, b);
}

/// plink 1.9 --indep-pairwise's test of a pair: r² computed as plink computes it (from the
/// rows' own variances when neither has a missing call, else from those over the samples
/// called at both), compared with @p threshold = r2 × (1 + 2^-44).
VCZ_HD inline bool prune_edge(const GenotypeCounts& c, bool both_complete, double threshold) {
  const std::int64_t sx = c.r1 + 2 * c.r2, sxx = c.r1 + 4 * c.r2;
  const std::int64_t sy = c.c1 + 2 * c.c2, syy = c.c1 + 4 * c.c2;
  const std::int64_t sxy = c.t11 + 2 * (c.t12 + c.t21) + 4 * c.t22;
  const double cc = static_cast<double>(c.n * sxy - sx * sy);
  const double a = static_cast<double>(c.n * sxx - sx * sx);
  const double b = static_cast<double>(c.n * syy - sy * sy);
  const double scale = both_complete ? mul(1.0 / a, 1.0 / b) : 1.0 / mul(a, b);
  return mul(mul(cc, cc), scale) > threshold;
}

/// plink's --indep-pairwise threshold for r2: r2 × (1 + 2^-44).
inline double prune_threshold(double r2) {
  return r2 * (1 + 0.00000000000005684341886080801486968994140625);
}

/// r², D' (unsigned) of plink 1.9 --r2 dprime.
struct EmValues {
  double r2 = NAN, dprime = NAN;
};

namespace detail {

constexpr double kEpsilon = 0.000000000931322574615478515625;                     // 2^-30
constexpr double kSmallishEpsilon = 0.00000000002910383045673370361328125;        // 2^-35
constexpr double kSmallEpsilon = 0.00000000000005684341886080801486968994140625;  // 2^-44
constexpr double kPi = 3.1415926535897932;

/// The real roots of x³ + a x² + b x + c in increasing order (Cardano, trigonometric form for
/// three roots), roots closer than 2^-30 counted once; returns their number.
VCZ_HD inline int cubic_roots(double a, double b, double c, double* x) {
  const double a2 = a * a;
  const double q = (a2 - 3 * b) * (1.0 / 9.0);
  const double r = (2 * a2 * a - 9 * a * b + 27 * c) * (1.0 / 54.0);
  const double r2 = r * r, q3 = q * q * q, a3 = a * (1.0 / 3.0);
  if (r2 < q3) {
    double s = sqrt(q);
    const double t = acos(r / (q * s)) * (1.0 / 3.0);
    s *= -2;
    x[0] = s * cos(t) - a3;
    x[1] = s * cos(t + (2.0 * kPi / 3.0)) - a3;
    x[2] = s * cos(t - (2.0 * kPi / 3.0)) - a3;
    for (int i = 0; i < 2; ++i)  // sort three
      for (int k = 0; k < 2 - i; ++k)
        if (x[k] > x[k + 1]) {
          const double y = x[k];
          x[k] = x[k + 1];
          x[k + 1] = y;
        }
    if (x[1] - x[0] < kEpsilon) {
      x[1] = x[2];
      return x[1] - x[0] < kEpsilon ? 1 : 2;
    }
    return x[2] - x[1] < kEpsilon ? 2 : 3;
  }
  double u = -pow(fabs(r) + sqrt(r2 - q3), 1.0 / 3.0);
  if (u == 0.0) {
    x[0] = -a3;
    return 1;
  }
  if (r < 0.0) u = -u;
  const double v = q / u;
  x[0] = u + v - a3;
  if (fabs(u - v) >= kEpsilon * 8) return 1;
  if (u >= 0.0) {
    x[1] = x[0];
    x[0] = -u - a3;
  } else {
    x[1] = -u - a3;
  }
  return 2;
}

/// Log-likelihood of the haplotype frequencies when the double heterozygotes' share h splits
/// into @p incr more 11/22 haplotypes (and h - incr more 12/21).
VCZ_HD inline double em_lnlike(const double* known, double center, const double* f, double h,
                               double incr) {
  const double f11 = f[0] + incr, f12 = f[1] + (h - incr), f21 = f[2] + (h - incr),
               f22 = f[3] + incr;
  double l = center * log(f11 * f22 + f12 * f21);
  if (known[0] != 0.0) l += known[0] * log(f11);
  if (known[1] != 0.0) l += known[1] * log(f12);
  if (known[2] != 0.0) l += known[2] * log(f21);
  if (known[3] != 0.0) l += known[3] * log(f22);
  return l;
}

}  // namespace detail

/// plink 1.9's two-locus EM (--r2 dprime): haplotype counts known from every genotype but the
/// double heterozygotes, whose split maximises the likelihood (a root of a cubic, or a boundary
/// point). Like plink, among several candidates it keeps the last one whose likelihood exceeds
/// the first candidate's. Alleles: "1" = REF, "2" = the others.
VCZ_HD inline EmValues genotype_em(const GenotypeCounts& c) {
  using namespace detail;
  EmValues v;
  // The 3 × 3 table (row: class of i, column: class of j; 0 REF/REF, 1 het, 2 non-REF).
  const std::int64_t t10 = c.r1 - c.t11 - c.t12, t20 = c.r2 - c.t21 - c.t22;
  const std::int64_t t01 = c.c1 - c.t11 - c.t21, t02 = c.c2 - c.t12 - c.t22;
  const std::int64_t t00 = c.n - t01 - t02 - c.r1 - c.r2;
  const double known[4] = {
      static_cast<double>(2 * t00 + t01 + t10), static_cast<double>(2 * t02 + t01 + c.t12),
      static_cast<double>(2 * t20 + t10 + c.t21), static_cast<double>(2 * c.t22 + c.t12 + c.t21)};
  const double center = static_cast<double>(c.t11);
  const double twice = known[0] + known[1] + known[2] + known[3] + 2 * center;
  if (twice == 0.0) return v;
  const double recip = 1.0 / twice;
  double f[4];
  for (int k = 0; k < 4; ++k) f[k] = known[k] * recip;
  const double p1122 = f[0] * f[3], p1221 = f[1] * f[2];
  const double h = center * recip;  // half the double heterozygotes' share
  const double f1x = f[0] + f[1] + h, f2x = 1.0 - f1x;
  const double fx1 = f[0] + f[2] + h, fx2 = 1.0 - fx1;
  double f11 = f[0];
  if (c.t11 != 0) {
    double s[3];
    int lo = 0, hi = 1;
    if (p1122 != 0.0 || p1221 != 0.0) {
      hi = cubic_roots(0.5 * (f[0] + f[3] - f[1] - f[2] - 3 * h),
                       0.5 * (p1122 + p1221 + h * (f[1] + f[2] - f[0] - f[3] + h)),
                       -0.5 * h * p1122, s);
      while (hi && s[hi - 1] > h + kSmallishEpsilon) --hi;
      while (lo < hi && s[lo] < -kSmallishEpsilon) ++lo;
      if (lo == hi) {  // a double root at a boundary lost to rounding: try both ends
        lo = 0;
        hi = 2;
        s[0] = 0;
        s[1] = h;
      } else {
        if (s[lo] < 0) s[lo] = 0;
        if (s[hi - 1] > h) s[hi - 1] = h;
      }
    } else {
      s[0] = 0;
      const double xx = f[0] + f[3], xy = f[1] + f[2];
      if (xx + kSmallishEpsilon < h + xy && xy + kSmallishEpsilon < h + xx) {
        hi = 3;
        s[1] = (h + xy - xx) * 0.5;
        s[2] = h;
      } else {
        hi = 2;
        s[1] = h;
      }
    }
    double best = s[lo];
    if (hi > lo + 1) {
      const double first = em_lnlike(known, center, f, h, best);
      for (int k = lo + 1; k < hi; ++k)
        if (em_lnlike(known, center, f, h, s[k]) > first) best = s[k];
    }
    f11 += best;
  } else if (p1122 == 0.0 && p1221 == 0.0) {
    return v;  // a variant is monomorphic among the samples called at both
  }
  const double expected = fx1 * f1x;
  const double d = f11 - expected;
  if (fabs(d) < kSmallEpsilon) {
    v.r2 = 0;
    v.dprime = 0;
    return v;
  }
  v.r2 = fabs(d) * d / (expected * f2x * fx2);
  v.dprime = d >= 0 ? d / fmin(fx1 * f2x, fx2 * f1x) : -d / fmin(expected, fx2 * f2x);
  return v;
}

/// vcftools --hap-r2 over the n haplotypes called at both: REF frequencies p (i) and q (j),
/// D = p11 - p q, D' = D / Dmax (signed), r² = D² / (p(1-p) q(1-q)) as vcftools computes it.
struct HaplotypeValues {
  double r2 = NAN, d = NAN, dprime = NAN;
};
VCZ_HD inline HaplotypeValues haplotype_values(const HaplotypeCounts& c) {
  HaplotypeValues v;
  const double n = static_cast<double>(c.n);
  const double x11 = static_cast<double>(c.n - c.a - c.b + c.ab);  // REF at both
  const double x12 = static_cast<double>(c.b - c.ab);              // REF at i only
  const double x21 = static_cast<double>(c.a - c.ab);              // REF at j only
  const double x22 = static_cast<double>(c.ab);
  const double rel11 = x11 / n;
  const double p1 = add(x11, x12) / n, p2 = add(x21, x22) / n;
  const double q1 = add(x11, x21) / n, q2 = add(x12, x22) / n;
  v.d = sub(rel11, mul(p1, q1));
  const double dmax = v.d < 0 ? fmin(mul(p1, q1), mul(p2, q2)) : fmin(mul(p1, q2), mul(p2, q1));
  v.dprime = v.d / dmax;
  const double var1 = sub(p1, mul(p1, p1)), var2 = sub(q1, mul(q1, q1));
  const double cov = sub(rel11, mul(p1, q1));
  v.r2 = mul(cov, cov) / mul(var1, var2);
  return v;
}

// ---- genotype tables (GenotypeTable) ---------------------------------------------------------

/// Bits per count of a packed genotype table: nine counts in the 256 bits of a PairValue's n,
/// r2, d and dprime (a pair's values stay 48 bytes for every other measure).
constexpr int kTableBits = 28;
constexpr std::int64_t kTableLimit = std::int64_t{1} << kTableBits;

/// @p c (every count below kTableLimit) packed into @p v's n, r2, d, dprime (as bits).
VCZ_HD inline void pack_genotype_table(const GenotypeCounts& c, PairValue& v) {
  const std::int64_t x[9] = {c.n, c.r1, c.r2, c.c1, c.c2, c.t11, c.t12, c.t21, c.t22};
  std::uint64_t w[4] = {0, 0, 0, 0};
  for (int k = 0; k < 9; ++k) {
    const int at = kTableBits * k, word = at / 64, shift = at % 64;
    const auto u = static_cast<std::uint64_t>(x[k]);
    w[word] |= u << shift;
    if (shift + kTableBits > 64) w[word + 1] |= u >> (64 - shift);
  }
  memcpy(&v.n, &w[0], 8);
  memcpy(&v.r2, &w[1], 8);
  memcpy(&v.d, &w[2], 8);
  memcpy(&v.dprime, &w[3], 8);
}

/// The table pack_genotype_table() packed into @p v.
inline GenotypeCounts unpack_genotype_table(const PairValue& v) {
  std::uint64_t w[4];
  std::memcpy(&w[0], &v.n, 8);
  std::memcpy(&w[1], &v.r2, 8);
  std::memcpy(&w[2], &v.d, 8);
  std::memcpy(&w[3], &v.dprime, 8);
  std::int64_t x[9];
  constexpr std::uint64_t mask = (std::uint64_t{1} << kTableBits) - 1;
  for (int k = 0; k < 9; ++k) {
    const int at = kTableBits * k, word = at / 64, shift = at % 64;
    std::uint64_t u = w[word] >> shift;
    if (shift + kTableBits > 64) u |= w[word + 1] << (64 - shift);
    x[k] = static_cast<std::int64_t>(u & mask);
  }
  return {x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8]};
}

// ---- the request's test --------------------------------------------------------------------

/// The values of a genotype pair for measure @p m (GenotypeR2, GenotypeEm, PruneEdge,
/// GenotypeTable) into @p v (r2 unsigned), and whether the pair passes: |r2| >= @p min_r2 (NaN
/// never), or, for PruneEdge, plink's test against @p prune_thr (prune_threshold()); a
/// GenotypeTable pair always (its table packed).
VCZ_HD inline bool genotype_pair(PairMeasure m, const GenotypeCounts& c, bool both_complete,
                                 double min_r2, double prune_thr, PairValue& v) {
  if (m == PairMeasure::GenotypeTable) {
    pack_genotype_table(c, v);
    return true;
  }
  v.n = c.n;
  if (m == PairMeasure::PruneEdge) return prune_edge(c, both_complete, prune_thr);
  if (m == PairMeasure::GenotypeEm) {
    const EmValues e = genotype_em(c);
    v.r2 = fabs(e.r2);
    v.dprime = e.dprime;
  } else {
    v.r2 = fabs(genotype_r2(c));
  }
  return v.r2 >= min_r2;
}

/// The values of a haplotype pair into @p v, and whether r2 >= @p min_r2 (NaN never).
VCZ_HD inline bool haplotype_pair(const HaplotypeCounts& c, double min_r2, PairValue& v) {
  const HaplotypeValues h = haplotype_values(c);
  v.n = c.n;
  v.r2 = h.r2;
  v.d = h.d;
  v.dprime = h.dprime;
  return v.r2 >= min_r2;
}

/// Scalar pair counts (the reference of the backends' kernels; the statistics use them for the
/// pairs across partition boundaries).
struct ScalarCounts {
  static void genotype(const std::uint64_t* i, const std::uint64_t* j, std::int64_t w,
                       GenotypeCounts& c) {
    add_genotype_words(c, i, j, w, 0, w);
  }
  static void genotype_complete(const std::uint64_t* i, const std::uint64_t* j, std::int64_t w,
                                GenotypeCounts& c) {
    add_genotype_words_complete(c, i, j, w, 0, w);
  }
  static void haplotype(const std::uint64_t* i, const std::uint64_t* j, std::int64_t w,
                        HaplotypeCounts& c) {
    add_haplotype_words(c, i, j, w, 0, w);
  }
  static void haplotype_complete(const std::uint64_t* i, const std::uint64_t* j, std::int64_t w,
                                 HaplotypeCounts& c) {
    add_haplotype_words_complete(c, i, j, 0, w);
  }
};

/// Evaluate the pair of rows i and j (planes @p pi, @p pj of @p words words per plane; totals
/// @p ti, @p tj; @p width samples or haplotypes) for request @p r with counting functions @p k
/// (ScalarCounts, or a backend's kernels); fills @p v but its a and b.
template <class Counts>
inline bool evaluate_pair(const PairRequest& r, double prune_thr, std::int64_t width,
                          const GenotypeTotals& ti, const GenotypeTotals& tj,
                          const std::uint64_t* pi, const std::uint64_t* pj, std::int64_t words,
                          const Counts& k, PairValue& v) {
  const bool complete = ti.n == width && tj.n == width;
  if (r.haplotypes()) {
    HaplotypeCounts c;
    if (complete) {
      k.haplotype_complete(pi, pj, words, c);
      c.n = ti.n;
      c.a = ti.alt;
      c.b = tj.alt;
    } else {
      k.haplotype(pi, pj, words, c);
    }
    return haplotype_pair(c, r.min_r2, v);
  }
  GenotypeCounts c;
  if (complete) {
    k.genotype_complete(pi, pj, words, c);
    complete_margins(c, ti, tj);
  } else {
    k.genotype(pi, pj, words, c);
  }
  return genotype_pair(r.measure, c, complete, r.min_r2, prune_thr, v);
}

/// The totals of a batch row (haplotypes: alt holds the non-REF alleles, het 0).
inline GenotypeTotals row_totals(const PairRow& p, bool haplotypes) {
  if (haplotypes) return {p.n, 0, p.sum};
  const std::int64_t alt = (p.ssq - p.sum) / 2;
  return {p.n, p.sum - 2 * alt, alt};
}

}  // namespace vczstats::stats::ld
