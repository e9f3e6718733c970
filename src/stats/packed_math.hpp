#pragma once
// Packing genotype calls into 2-bit dosage codes (vczstats/packed.hpp), shared by the CPU loop
// and the CUDA kernel.

#include <cstdint>

#include "stats/hd.hpp"
#include "vczstats/packed.hpp"

namespace vczstats::stats::packed {

/// The code of one call of @p ploidy slots at @p g: diploid calls with two called alleles give
/// their count of non-REF alleles; everything else (a missing allele, a haploid or shorter call,
/// other ploidies) is missing.
template <class T>
VCZ_HD inline std::uint64_t call_code(const T* g, int ploidy) {
  if (ploidy < 2) return kPackedMissing;
  const T a = g[0], b = g[1];
  if (a < 0 || b < 0) return kPackedMissing;  // missing (-1) or fill (-2): not a diploid call
  for (int j = 2; j < ploidy; ++j)
    if (g[j] != T(-2)) return kPackedMissing;  // more than two slots: not diploid
  return static_cast<std::uint64_t>((a != 0) + (b != 0));
}

/// The word of samples [32 w - shift, 32 w - shift + 32) of a block row (@p n samples starting
/// at column 0 of the block, placed @p shift samples into the destination's first word).
template <class T>
VCZ_HD inline std::uint64_t pack_word(const T* row, std::int64_t n, int ploidy, std::int64_t w,
                                      int shift) {
  std::uint64_t word = 0;
  const std::int64_t first = 32 * w - shift;  // block column of the word's bit 0
  for (int k = 0; k < 32; ++k) {
    const std::int64_t i = first + k;
    if (i < 0 || i >= n) continue;
    word |= call_code(row + i * ploidy, ploidy) << (2 * k);
  }
  return word;
}

}  // namespace vczstats::stats::packed
