// CPU loop of the afdist heavy pass: one pass over a genotype block, per-call math from
// stats/afdist_math.hpp. The diploid case gets its own instantiation so the compiler can unroll
// the ploidy loop.

#include "stats/afdist_math.hpp"
#include "stats/element_type.hpp"
#include "vczstats/afdist.hpp"
#include "vczstats/error.hpp"

namespace vczstats::stats {
namespace {

template <class T, int kPloidy>
void count_block(const GenotypeChunkView& b, std::span<AfdistSite> sites, AfdistMethod method) {
  const int ploidy = kPloidy > 0 ? kPloidy : static_cast<int>(b.ploidy);
  for (std::int64_t v = 0; v < b.variants; ++v) {
    const T* g = b.row<T>(v);
    AfdistSite s = sites[static_cast<std::size_t>(v)];
    if (method == AfdistMethod::Bcftools) {
      for (std::int64_t i = 0; i < b.samples; ++i)
        afdist::bcftools_add_sample(s, g + i * ploidy, ploidy);
    } else {
      for (std::int64_t i = 0; i < b.samples; ++i) afdist::zarr_add_sample(s, g + i * 2);
    }
    sites[static_cast<std::size_t>(v)] = s;
  }
}

// int8 diploid, the common case: both methods reduce to branch-free sums over the two alleles
// a, b of each call, which the compiler vectorises. Equal to the generic per-call functions
// (tests/stats/afdist_cpu_test.cpp checks it):
// - bcftools, a sample of length 2 (neither slot -2): AN += called slots, AC1 += copies of 1,
//   and when both are called dosage = copies of 1; a haploid sample (b == -2) has length 1 and
//   counts only when no sample of the row has length 2.
// - zarr-afdist: ref += (a==0)+(b==0), het += a!=b, hom_alt += a==b && a!=0.
void count_int8_diploid(const GenotypeChunkView& blk, std::span<AfdistSite> sites,
                        AfdistMethod method) {
  const std::int64_t n = blk.samples;
  for (std::int64_t v = 0; v < blk.variants; ++v) {
    const std::int8_t* g = blk.row<std::int8_t>(v);
    AfdistSite part;
    if (method == AfdistMethod::Bcftools) {
      int an = 0, ac1 = 0, d1_2 = 0, d2_2 = 0, d1_1 = 0, len2 = 0, len1 = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const int a = g[2 * i], b = g[2 * i + 1];
        const int l2 = (a != -2) & (b != -2);
        const int l1 = (a != -2) & (b == -2);
        const int ca = a >= 0, cb = b >= 0;
        const int ones = (a == 1) + (b == 1);
        an += l2 * (ca + cb) + l1 * ca;
        ac1 += (l2 | l1) * ones;  // b == -2 is never 1
        const int complete2 = l2 & ca & cb;
        d1_2 += complete2 & (ones == 1);
        d2_2 += complete2 & (ones == 2);
        d1_1 += l1 & (a == 1);
        len2 += l2;
        len1 += l1;
      }
      part = afdist::diploid_site(an, ac1, d1_2, d2_2, d1_1, len2 > 0, len1 > 0);
    } else {
      int ref = 0, het = 0, hom_alt = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const int a = g[2 * i], b = g[2 * i + 1];
        ref += (a == 0) + (b == 0);
        het += a != b;
        hom_alt += (a == b) & (a != 0);
      }
      part.ref_count = ref;
      part.het = het;
      part.hom_alt = hom_alt;
    }
    afdist::merge_site(sites[static_cast<std::size_t>(v)], part);
  }
}

template <class T>
void count_typed(const GenotypeChunkView& b, std::span<AfdistSite> sites, AfdistMethod method) {
  if (b.ploidy == 2)
    count_block<T, 2>(b, sites, method);
  else
    count_block<T, 0>(b, sites, method);
}

}  // namespace

void AfdistAccumulator::count_sites(const GenotypeChunkView& block, std::span<Site> sites) const {
  if (static_cast<std::int64_t>(sites.size()) != block.variants)
    throw Error("afdist: site buffer does not match the block");
  if (block.elem_bytes == 1 && block.ploidy == 2 && !generic_only_)
    return count_int8_diploid(block, sites, options_.method);
  if (!with_element_type(block.elem_bytes,
                         [&](auto t) { count_typed<decltype(t)>(block, sites, options_.method); }))
    throw Error("afdist: unsupported genotype width");
}

}  // namespace vczstats::stats
