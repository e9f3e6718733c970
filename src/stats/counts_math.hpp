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

/// Add one sample's call (ploidy slots at g) to the counts c of its population (width
/// alleles + CountsLayout::kExtra).
template <class T>
VCZ_HD inline void add_call(std::int32_t* c, const T* g, int ploidy, int alleles) {
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
    ++c[alleles + kCalled];
    if (a < T(alleles)) ++c[a];
    if (a == 0) {
      ++zeros;
    } else if (first_alt == 0) {
      first_alt = a;
    } else if (a != first_alt) {
      distinct_alt = true;
    }
  }
  const int cls = genotype_class(len, missing, zeros, distinct_alt);
  if (cls >= 0) ++c[alleles + cls];
}

}  // namespace vczstats::stats::counts
