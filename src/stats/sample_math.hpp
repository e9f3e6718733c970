#pragma once
// Per-call and per-site math of the per-sample sums (missingness, plink2 --het), shared by the
// CPU loops and the CUDA kernels. Results are bit-identical on both: the floating-point steps
// are written so that the device compiler cannot contract them into fused multiply-adds.

#include <cstdint>

#include "stats/hd.hpp"
#include "stats/tallies_math.hpp"

namespace vczstats::stats::sample {

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

/// The expected homozygosity of a site in one population from its tallies @p c
/// (stats/tallies_math.hpp): sum_a p_a^2 over the alleles of complete diploid calls, or -1 when
/// fewer than two alleles are present (the site does not count for --het).
VCZ_HD inline double site_weight(const std::int32_t* c, int alleles) {
  const double n = 2.0 * c[tallies::calls(alleles)];
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
  const int cls = tallies::scan_two(g, ploidy, a, n);
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
