#pragma once
// Per-call and per-site math of the per-sample sums (missingness, plink2 --het), shared by the
// CPU loops and the CUDA kernels. Results are bit-identical on both: the floating-point steps
// are written so that the device compiler cannot contract them into fused multiply-adds.

#include <cstdint>

#include "stats/counts_math.hpp"
#include "stats/hd.hpp"

namespace vczstats::stats::sample {

/// Scan one call with the shared per-call rules, keeping its first two called alleles in @p a
/// and their number in @p n; returns the genotype class column (counts::genotype_class).
template <class T>
VCZ_HD inline int scan_two(const T* g, int ploidy, T (&a)[2], int& n) {
  n = 0;
  return counts::scan_call(g, ploidy, [&](T x) {
    if (n < 2) a[n] = x;
    ++n;
  });
}

/// Phase 0: add one sample's call to its population's counts @p c (alleles + 1 columns: the
/// alleles of complete diploid calls, then the number of such calls).
template <class T>
VCZ_HD inline void add_complete(std::int32_t* c, const T* g, int ploidy, int alleles) {
  T a[2] = {};
  int n;
  const int cls = scan_two(g, ploidy, a, n);
  if (cls < 0 || cls == kMissing || n != 2) return;  // not a complete diploid call
  for (const T x : a)
    if (static_cast<std::int64_t>(x) < alleles) ++c[x];
  ++c[alleles];
}

VCZ_HD inline double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
VCZ_HD inline double add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

/// The expected homozygosity of a site in one population from its phase-0 counts @p c:
/// sum_a p_a^2 over the alleles of complete diploid calls, or -1 when fewer than two alleles
/// are present (the site does not count for --het).
VCZ_HD inline double site_weight(const std::int32_t* c, int alleles) {
  const double n = 2.0 * c[alleles];
  int present = 0;
  double sum = 0;
  for (int a = 0; a < alleles; ++a) {
    present += c[a] > 0 ? 1 : 0;
    const double p = c[a] / n;
    sum = add(sum, mul(p, p));
  }
  return present >= 2 ? sum : -1.0;
}

/// Phase 1: what one sample's call at a site adds to its sums (@p w: the site's weight in the
/// sample's population).
struct CallSums {
  std::int64_t obs = 0, missing = 0, het_sites = 0, o_hom = 0;
  double e_hom = 0;
};
template <class T>
VCZ_HD inline void add_sample(CallSums& s, const T* g, int ploidy, double w) {
  T a[2] = {};
  int n;
  const int cls = scan_two(g, ploidy, a, n);
  if (cls < 0) return;  // no slot
  ++s.obs;
  if (cls == kMissing) {
    ++s.missing;
    return;
  }
  if (n != 2 || w < 0) return;
  ++s.het_sites;
  s.o_hom += a[0] == a[1] ? 1 : 0;
  s.e_hom = add(s.e_hom, w);
}

}  // namespace vczstats::stats::sample
