#pragma once
// Packing genotype calls into haplotype bit planes (vczstats/packed_haplotypes.hpp), shared by
// the CPU loop, the CUDA kernel and the haplotype statistics' own reads of their halos.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "stats/hd.hpp"
#include "vczstats/genotypes.hpp"
#include "vczstats/packed_haplotypes.hpp"

namespace vczstats::stats::haplo {

/// The plane bits of one haplotype slot holding allele @p a: plane 0 when it is not a called
/// allele below @p planes (missing, fill or out of range), else plane a (none for allele 0).
/// Returns the plane index, or -1 for allele 0.
template <class T>
VCZ_HD inline int plane_of(T a, int planes) {
  if (a < 0 || a >= T(planes)) return 0;
  return a == 0 ? -1 : static_cast<int>(a);
}

/// Word @p w of every plane for one block row: the block's haplotypes (@p haps slots of the
/// row, sample-major) are placed @p shift bits into the destination's first word, so word w
/// covers block haplotypes [64 w - shift, 64 w - shift + 64). @p out receives @p planes words
/// (ORed: the caller zeroes them).
template <class T>
VCZ_HD inline void pack_planes(const T* row, std::int64_t haps, int planes, std::int64_t w,
                               int shift, std::uint64_t* out) {
  const std::int64_t first = 64 * w - shift;
  for (int k = 0; k < 64; ++k) {
    const std::int64_t h = first + k;
    if (h < 0 || h >= haps) continue;
    const int p = plane_of(row[h], planes);
    if (p >= 0) out[p] |= std::uint64_t{1} << k;
  }
}

/// OR a block's rows of words (as many words per row as it has) into a unit's rows of
/// @p row_words words, at word @p w0 of each row.
inline void or_rows(std::vector<std::uint64_t>& unit, std::int64_t row_words,
                    const std::vector<std::uint64_t>& block, std::int64_t rows, std::int64_t w0) {
  const std::int64_t nw = static_cast<std::int64_t>(block.size()) / std::max<std::int64_t>(rows, 1);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t w = 0; w < nw; ++w)
      unit[static_cast<std::size_t>(r * row_words + w0 + w)] |=
          block[static_cast<std::size_t>(r * nw + w)];
}

/// Pack a decoded block's haplotypes into bit planes whose first haplotype sits @p shift bits
/// into the first word: rows × planes × haplotype_words(shift + haplotypes) words, to be ORed
/// into a unit's rows at word sample_offset * ploidy / 64 (host).
template <class T>
void pack_block_planes(const GenotypeChunkView& b, int planes, int shift,
                       std::vector<std::uint64_t>& out) {
  const std::int64_t haps = b.samples * b.ploidy;
  const std::int64_t nw = haplotype_words(shift + haps);
  out.assign(static_cast<std::size_t>(b.variants * planes * nw), 0);
  std::vector<std::uint64_t> word(static_cast<std::size_t>(planes));
  for (std::int64_t v = 0; v < b.variants; ++v)
    for (std::int64_t w = 0; w < nw; ++w) {
      std::fill(word.begin(), word.end(), 0);
      pack_planes(b.row<T>(v), haps, planes, w, shift, word.data());
      for (int p = 0; p < planes; ++p)
        out[static_cast<std::size_t>((v * planes + p) * nw + w)] =
            word[static_cast<std::size_t>(p)];
    }
}

}  // namespace vczstats::stats::haplo
