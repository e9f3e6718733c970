// CPU loop of the allele-counts heavy pass. Each block row is split into population segments
// (runs of adjacent columns of one population, few per block because selections are grouped by
// population); each segment is counted into registers with the per-call math of
// stats/counts_math.hpp. int8 diploid, the common case, has a branch-free loop the compiler
// vectorises, checked against the generic loop in tests/stats/counts_test.cpp.

#include "stats/counts_math.hpp"
#include "stats/element_type.hpp"
#include "vczstats/counts.hpp"
#include "vczstats/error.hpp"

namespace vczstats::stats {
namespace {

using Segment = AlleleCountsPass::Segment;

template <class T>
void count_generic(const GenotypeChunkView& b, const CountsLayout& layout,
                   const std::vector<Segment>& segments, std::span<std::int32_t> sites) {
  const int ploidy = static_cast<int>(b.ploidy);
  const int k = layout.alleles, w = layout.width();
  for (std::int64_t v = 0; v < b.variants; ++v) {
    const T* g = b.row<T>(v);
    std::int32_t* site = sites.data() + v * layout.site_width();
    for (const auto& s : segments) {
      std::int32_t* c = site + std::int64_t{s.pop} * w;
      for (std::int64_t i = s.begin; i < s.end; ++i) counts::add_call(c, g + i * ploidy, ploidy, k);
    }
  }
}

// int8 diploid: per call a, b (a == -2: no slot; b == -2: haploid). Sums of 0/1 terms, so the
// loop vectorises; allele counts for alleles 0..kAlleles-1 by comparison, larger indices
// (multi-allelic sites beyond kAlleles) in a scalar tail only when present.
template <int kAlleles>
void count_int8_diploid(const GenotypeChunkView& b, const CountsLayout& layout,
                        const std::vector<Segment>& segments, std::span<std::int32_t> sites) {
  const int k = layout.alleles, w = layout.width();
  for (std::int64_t v = 0; v < b.variants; ++v) {
    const std::int8_t* g = b.row<std::int8_t>(v);
    std::int32_t* site = sites.data() + v * layout.site_width();
    for (const auto& s : segments) {
      int ac[kAlleles] = {};
      int called = 0, hom_ref = 0, het_ref = 0, hom_alt = 0, het_alt = 0, missing = 0, beyond = 0;
      for (std::int64_t i = s.begin; i < s.end; ++i) {
        const int a = g[2 * i], c = g[2 * i + 1];
        const int has_a = a != -2, len2 = has_a & (c != -2), len1 = has_a & (c == -2);
        const int ca = a >= 0, cc = (c >= 0) & has_a;  // c counts only after a slot
        const int miss = (has_a & (a < 0)) | (len2 & (c < 0));
        const int complete2 = len2 & ca & cc;
        const int za = a == 0, zc = c == 0;
        called += ca + cc;
        for (int j = 0; j < kAlleles; ++j) ac[j] += (a == j) + ((c == j) & has_a);
        beyond += (a >= kAlleles) + ((c >= kAlleles) & has_a);
        hom_ref += (complete2 & za & zc) | (len1 & za);
        het_ref += complete2 & (za ^ zc);
        hom_alt += (complete2 & (a == c) & !za) | (len1 & (a > 0));
        het_alt += complete2 & (a != c) & !za & !zc;
        missing += miss;
      }
      std::int32_t* out = site + std::int64_t{s.pop} * w;
      for (int j = 0; j < kAlleles && j < k; ++j) out[j] += ac[j];
      if (beyond > 0 && k > kAlleles) {  // alleles kAlleles..k-1 of this segment
        for (std::int64_t i = s.begin; i < s.end; ++i) {
          const int a = g[2 * i], c = g[2 * i + 1];
          if (a >= kAlleles && a < k) ++out[a];
          if (a != -2 && c >= kAlleles && c < k) ++out[c];
        }
      }
      out[k + kCalled] += called;
      out[k + kHomRef] += hom_ref;
      out[k + kHetRef] += het_ref;
      out[k + kHomAlt] += hom_alt;
      out[k + kHetAlt] += het_alt;
      out[k + kMissing] += missing;
    }
  }
}

}  // namespace

void AlleleCountsPass::init(const CountsLayout& layout, std::vector<std::int32_t> population_of) {
  if (layout.alleles < 1 || layout.pops < 1)
    throw UsageError("allele counts: need at least one allele and one population");
  layout_ = layout;
  population_of_ = std::move(population_of);
  for (auto p : population_of_)
    if (p < 0 || p >= layout.pops) throw UsageError("allele counts: population index out of range");
}

std::vector<AlleleCountsPass::Segment> AlleleCountsPass::segments(
    const GenotypeChunkView& block) const {
  std::vector<Segment> out;
  if (population_of_.empty()) {
    if (block.samples > 0) out.push_back({0, block.samples, 0});
    return out;
  }
  if (block.sample_offset + block.samples > static_cast<std::int64_t>(population_of_.size()))
    throw Error("allele counts: block columns beyond the sample selection");
  for (std::int64_t i = 0; i < block.samples; ++i) {
    const std::int32_t p = population_of_[static_cast<std::size_t>(block.sample_offset + i)];
    if (out.empty() || out.back().pop != p)
      out.push_back({i, i + 1, p});
    else
      out.back().end = i + 1;
  }
  return out;
}

void AlleleCountsPass::count_sites(const GenotypeChunkView& block, std::span<Site> sites) const {
  if (static_cast<std::int64_t>(sites.size()) != block.variants * site_width())
    throw Error("allele counts: site buffer does not match the block");
  const auto segs = segments(block);
  if (block.elem_bytes == 1 && block.ploidy == 2 && !generic_only_) {
    if (layout_.alleles <= 2) return count_int8_diploid<2>(block, layout_, segs, sites);
    return count_int8_diploid<4>(block, layout_, segs, sites);
  }
  if (!with_element_type(block.elem_bytes,
                         [&](auto t) { count_generic<decltype(t)>(block, layout_, segs, sites); }))
    throw Error("allele counts: unsupported genotype width");
}

}  // namespace vczstats::stats
