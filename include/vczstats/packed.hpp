#pragma once
/// @file packed.hpp
/// @brief Packed genotypes for the matrix family (GRM, KING, IBS, LD, PCA): one 2-bit dosage
/// code per sample, 32 samples per 64-bit word, produced by the heavy pass on either device.

#include <cstdint>

namespace vczstats {

/// @brief The 2-bit code of one diploid call.
enum PackedCode : std::uint8_t {
  kPackedHomRef = 0,   ///< two REF alleles
  kPackedHet = 1,      ///< one REF, one other allele
  kPackedHomAlt = 2,   ///< two non-REF alleles (the same or different ALT alleles)
  kPackedMissing = 3,  ///< a missing allele, or not a diploid call (haploid, fill)
};

/// @brief Words per variant row of @p samples packed samples.
constexpr std::int64_t packed_words(std::int64_t samples) {
  return (samples + 31) / 32;
}

/// @brief Packed codes of a block of variants: row v, sample i is bits 2(i mod 32) .. +1 of
/// word v * words_per_row + i / 32 (sample i = selection index - sample_offset). Unused bits of
/// a row's last word are 0 (hom ref): kernels must mask them. Non-owning; on the GPU backend the
/// words are device memory.
struct PackedGenotypeView {
  const std::uint64_t* words = nullptr;
  std::int64_t variants = 0;
  std::int64_t samples = 0;
  std::int64_t words_per_row = 0;
  std::int64_t variant_offset = 0;  ///< global index of row 0
  std::int64_t sample_offset = 0;   ///< selection index of sample 0

  /// @brief The code of row @p v, sample @p i (host memory only).
  int code(std::int64_t v, std::int64_t i) const {
    return static_cast<int>((words[v * words_per_row + i / 32] >> (2 * (i % 32))) & 3u);
  }
};

}  // namespace vczstats
