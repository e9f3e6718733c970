#pragma once
// Per-call and per-site math of afdist, shared by the CPU loops and the CUDA kernels.
// Everything here is plain arithmetic on small values: no allocation, no exceptions.

#include <cstdint>

#include "stats/hd.hpp"
#include "vczstats/afdist.hpp"

namespace vczstats::stats::afdist {

/// Add one sample's call (ploidy slots at g) with bcftools' rules.
/// - AN/AC as +fill-tags counts them: per sample, the distinct called alleles; a sample whose
///   called alleles are all the same allele adds 2 copies when it has >= 2 slots and no missing
///   slot, else 1; a sample with several distinct alleles adds 1 to each (so 0/1 adds one REF
///   and one ALT, and 0/0/1 too: bcftools' polyploid rule).
/// - af-dist's dosage: only samples whose non-fill length equals the record ploidy and that have
///   no missing allele count; dosage = copies of allele 1.
template <class T>
VCZ_HD inline void bcftools_add_sample(AfdistSite& s, const T* g, int ploidy) {
  int len = 0;       // slots before the first fill (-2): the sample's ploidy at this site
  int called = 0;    // non-missing slots
  int dosage = 0;    // copies of allele 1
  int distinct = 0;  // distinct called alleles
  bool has1 = false;
  for (int j = 0; j < ploidy; ++j) {
    const T a = g[j];
    if (a == T(-2)) break;
    ++len;
    if (a < 0) continue;
    // Stop at the first earlier copy: O(ploidy) for the usual calls of few distinct alleles
    // (O(ploidy^2) at worst; stores are limited to vcz::kMaxPloidy).
    bool seen = false;
    for (int k = 0; k < j && !seen; ++k) seen = g[k] == a;
    distinct += seen ? 0 : 1;
    ++called;
    if (a == T(1)) {
      ++dosage;
      has1 = true;
    }
  }
  if (called > 0) {
    if (distinct == 1) {
      const int w = (called == len && called >= 2) ? 2 : 1;
      s.an += w;
      s.ac1 += has1 ? w : 0;
    } else {
      s.an += distinct;
      s.ac1 += has1 ? 1 : 0;
    }
  }
  if (len > s.ploidy) {  // a longer call sets the record ploidy; shorter ones no longer count
    s.ploidy = len;
    s.n_dosage1 = 0;
    s.n_dosage2 = 0;
  }
  if (len == s.ploidy && called == len && len > 0) {
    s.n_dosage1 += dosage == 1 ? 1 : 0;
    s.n_dosage2 += dosage == 2 ? 1 : 0;
  }
}

/// Add one diploid call with the zarr_afdist definition.
template <class T>
VCZ_HD inline void zarr_add_sample(AfdistSite& s, const T* g) {
  const T a = g[0], b = g[1];
  s.ref_count += (a == 0 ? 1 : 0) + (b == 0 ? 1 : 0);
  s.het += a != b ? 1 : 0;
  s.hom_alt += (a == b && a != 0) ? 1 : 0;
}

/// The site of diploid-record counts gathered by the branch-free fast paths (CPU and GPU):
/// an/ac1 over every call; dosage counts among complete length-2 calls and among length-1
/// (haploid) ones; the record ploidy is 2 when any call has length 2, else 1 when any has 1.
VCZ_HD inline AfdistSite diploid_site(int an, int ac1, int d1, int d2, int d1_haploid,
                                      bool any_length2, bool any_length1) {
  AfdistSite s;
  s.an = an;
  s.ac1 = ac1;
  if (any_length2) {
    s.ploidy = 2;
    s.n_dosage1 = d1;
    s.n_dosage2 = d2;
  } else if (any_length1) {
    s.ploidy = 1;
    s.n_dosage1 = d1_haploid;
  }
  return s;
}

/// Combine partial counts of one site from two disjoint sets of samples.
VCZ_HD inline void merge_site(AfdistSite& a, const AfdistSite& b) {
  a.an += b.an;
  a.ac1 += b.ac1;
  if (b.ploidy > a.ploidy) {
    a.ploidy = b.ploidy;
    a.n_dosage1 = b.n_dosage1;
    a.n_dosage2 = b.n_dosage2;
  } else if (b.ploidy == a.ploidy) {
    a.n_dosage1 += b.n_dosage1;
    a.n_dosage2 += b.n_dosage2;
  }
  a.ref_count += b.ref_count;
  a.het += b.het;
  a.hom_alt += b.hom_alt;
}

/// bcftools' bin lookup: the bin k with edges[k] <= v < edges[k+1]; v equal to the last edge
/// falls in the last bin; v above it returns nbins (dropped).
/// The largest k in [0, nbins-1] with edges[k] <= v (0 when v < edges[0]).
template <class F>
VCZ_HD inline int last_edge_at_most(F v, const F* edges, int nbins) {
  int lo = 0, hi = nbins - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (edges[mid] <= v)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

VCZ_HD inline int bcftools_bin(float v, const float* edges, int nbins) {
  if (edges[nbins] < v) return nbins;
  return last_edge_at_most(v, edges, nbins);
}

/// np.digitize(v, edges) - 1: k with edges[k] <= v < edges[k+1]; -1 or nbins when outside.
VCZ_HD inline int digitize_bin(double v, const double* edges, int nbins) {
  if (!(v >= edges[0])) return -1;  // also NaN
  if (v >= edges[nbins]) return nbins;
  return last_edge_at_most(v, edges, nbins);
}

/// Bins and weights a finished site contributes (bin < 0 or >= nbins: nothing).
struct SiteContribution {
  int bin_ra = -1, bin_aa = -1;
  std::int64_t n_ra = 0, n_aa = 0;
};

VCZ_HD inline SiteContribution bcftools_site(const AfdistSite& s, const float* edges, int nbins) {
  SiteContribution c;
  if (s.an == 0) return c;  // no AF: bcftools skips the site (and no sample could count)
  const float af = static_cast<float>(s.ac1) / static_cast<float>(s.an);
  const float p_ra = 2.0f * af * (1.0f - af);
  const float p_aa = af * af;
  c.bin_ra = bcftools_bin(p_ra, edges, nbins);
  c.bin_aa = bcftools_bin(p_aa, edges, nbins);
  c.n_ra = s.n_dosage1;
  c.n_aa = s.n_dosage2;
  return c;
}

VCZ_HD inline SiteContribution zarr_site(const AfdistSite& s, std::int64_t num_samples,
                                         const double* edges, int nbins) {
  SiteContribution c;
  const double two_n = 2.0 * static_cast<double>(num_samples);
  const double af = (two_n - static_cast<double>(s.ref_count)) / two_n;
  const double p_ra = 2.0 * af * (1.0 - af);
  const double p_aa = af * af;
  c.bin_ra = digitize_bin(p_ra, edges, nbins);
  c.bin_aa = digitize_bin(p_aa, edges, nbins);
  c.n_ra = s.het;
  c.n_aa = s.hom_alt;
  return c;
}

}  // namespace vczstats::stats::afdist
