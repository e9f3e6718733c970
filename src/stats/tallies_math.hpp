#pragma once
// Tallies of complete diploid calls per site and population, shared by the CPU loop and the
// CUDA kernel: for each allele its copies, then for each allele its heterozygous carriers, then
// the number of complete diploid calls (2 × alleles + 1 columns). Weir & Cockerham's Fst (the
// per-allele p and h of vcftools --weir-fst-pop) and the per-sample sums' expected
// homozygosity (plink2 --het) read them.

#include <cstdint>

#include "stats/counts_math.hpp"
#include "stats/hd.hpp"

namespace vczstats::stats::tallies {

/// Columns of one population.
VCZ_HD constexpr int width(int alleles) {
  return 2 * alleles + 1;
}
/// Offset of the heterozygous-carrier columns.
VCZ_HD constexpr int het(int alleles) {
  return alleles;
}
/// Offset of the number of complete diploid calls.
VCZ_HD constexpr int calls(int alleles) {
  return 2 * alleles;
}

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

/// Add one sample's call (ploidy slots at g) to its population's tallies @p t. Only complete
/// diploid calls count: two slots, both called.
template <class T>
VCZ_HD inline void add_call(std::int32_t* t, const T* g, int ploidy, int alleles) {
  T a[2] = {};
  int n;
  const int cls = scan_two(g, ploidy, a, n);
  if (cls < 0 || cls == kMissing || n != 2) return;
  const bool in0 = static_cast<std::int64_t>(a[0]) < alleles;
  const bool in1 = static_cast<std::int64_t>(a[1]) < alleles;
  if (in0) ++t[a[0]];
  if (in1) ++t[a[1]];
  if (a[0] != a[1]) {
    if (in0) ++t[het(alleles) + a[0]];
    if (in1) ++t[het(alleles) + a[1]];
  }
  ++t[calls(alleles)];
}

}  // namespace vczstats::stats::tallies
