#pragma once
// Packing genotype calls into haplotype bit planes (backend/site_pass.hpp PackedHaplotypeView),
// shared by the CPU loop and the CUDA kernel: slot k of sample i is haplotype i * ploidy + k;
// an allele index >= 0 is called, > 0 non-REF; missing (-1) and fill (-2) slots are not called.

#include <cstdint>

#include "stats/hd.hpp"

namespace vczstats::stats::packed {

/// Words of the two planes of haplotypes [64 w - shift, 64 w - shift + 64) of a block row (@p n
/// samples × @p ploidy slots starting at slot 0 of the block, placed @p shift slots into the
/// destination's first word).
template <class T>
VCZ_HD inline void haplotype_words(const T* row, std::int64_t n, int ploidy, std::int64_t w,
                                   int shift, std::uint64_t& alt, std::uint64_t& called) {
  alt = 0;
  called = 0;
  const std::int64_t first = 64 * w - shift, slots = n * ploidy;
  for (int k = 0; k < 64; ++k) {
    const std::int64_t s = first + k;
    if (s < 0 || s >= slots) continue;
    const T a = row[s];
    if (a < 0) continue;
    called |= std::uint64_t{1} << k;
    if (a != 0) alt |= std::uint64_t{1} << k;
  }
}

}  // namespace vczstats::stats::packed
