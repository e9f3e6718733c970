#pragma once
// Per-call math of the allele-counts heavy pass, shared by the CPU loops and the CUDA kernels.
// Plain arithmetic on small values: no allocation, no exceptions.

#include <cstdint>

#include "stats/hd.hpp"
#include "vczstats/counts.hpp"

namespace vczstats::stats::counts {

/// The genotype class column of a sample (offset from the allele columns), or -1 when the
/// sample has no slot (all fill).
/// @p len slots before the first fill, @p missing any of them negative, @p zeros slots equal to
/// 0, @p distinct_alt the sample has two different non-zero alleles.
VCZ_HD inline int genotype_class(int len, bool missing, int zeros, bool distinct_alt) {
  if (len == 0) return -1;
  if (missing) return kMissing;
  if (zeros == len) return kHomRef;
  if (zeros > 0) return kHetRef;
  return distinct_alt ? kHetAlt : kHomAlt;
}

/// Scan one sample's call (ploidy slots at g): @p on_called(a) for each called allele a (the
/// slots before the first fill that are not negative), in order; returns the genotype class
/// column (genotype_class). The one definition of the per-call rules: the CPU loops and the
/// CUDA kernels differ only in what on_called does.
template <class T, class OnCalled>
VCZ_HD inline int scan_call(const T* g, int ploidy, OnCalled&& on_called) {
  int len = 0, zeros = 0;
  bool missing = false, distinct_alt = false;
  T first_alt = 0;
  for (int j = 0; j < ploidy; ++j) {
    const T a = g[j];
    if (a == T(-2)) break;
    ++len;
    if (a < 0) {
      missing = true;
      continue;
    }
    on_called(a);
    if (a == 0) {
      ++zeros;
    } else if (first_alt == 0) {
      first_alt = a;
    } else if (a != first_alt) {
      distinct_alt = true;
    }
  }
  return genotype_class(len, missing, zeros, distinct_alt);
}

/// Add one sample's call (ploidy slots at g) to the counts c of its population (width
/// alleles + CountsLayout::kExtra).
template <class T>
VCZ_HD inline void add_call(std::int32_t* c, const T* g, int ploidy, int alleles) {
  const int cls = scan_call(g, ploidy, [&](T a) {
    ++c[alleles + kCalled];
    if (static_cast<std::int64_t>(a) < alleles) ++c[a];  // not T(alleles): int8 wraps at 128
  });
  if (cls >= 0) ++c[alleles + cls];
}

}  // namespace vczstats::stats::counts
