#pragma once
/// @file packed_haplotypes.hpp
/// @brief Bit-packed phased haplotypes: the heavy-pass output of the haplotype family
/// (haplotypes.hpp), produced on either device.

#include <cstdint>

#include "vczstats/product_key.hpp"

namespace vczstats {

/// @brief 64-bit words holding one bit per haplotype.
constexpr std::int64_t haplotype_words(std::int64_t haplotypes) {
  return (haplotypes + 63) / 64;
}

/// @brief Bit-packed haplotypes of a block of variants, all selected samples: haplotype
/// h = s * ploidy + j is slot j of selected sample s (selection order). Each variant row has
/// `planes` bit planes of words_per_plane words: plane 0 marks haplotypes without a called
/// allele (missing, fill, or an allele index >= planes); plane k >= 1 marks the carriers of
/// allele k; allele 0 sets no bit. Bit h is bit h % 64 of word h / 64 of a plane; unused bits
/// are 0. Non-owning, host memory.
struct PhasedHaplotypeView {
  const std::uint64_t* words = nullptr;
  std::int64_t variants = 0;
  std::int64_t haplotypes = 0;  ///< selected samples × ploidy
  int ploidy = 0;
  int planes = 0;  ///< 1 (missing) + one per ALT allele column of the store
  std::int64_t words_per_plane = 0;
  std::int64_t variant_offset = 0;  ///< global index of row 0

  /// @brief Plane @p p of row @p v.
  const std::uint64_t* plane(std::int64_t v, int p) const {
    return words + (v * planes + p) * words_per_plane;
  }
  /// @brief The allele of haplotype @p h at row @p v (-1: none).
  int allele(std::int64_t v, std::int64_t h) const {
    auto bit = [&](int p) { return (plane(v, p)[h / 64] >> (h % 64)) & 1u; };
    if (bit(0)) return -1;
    for (int p = 1; p < planes; ++p)
      if (bit(p)) return p;
    return 0;
  }
};

/// @brief The site pass's product of every unit's bit-packed phased haplotypes (products.hpp):
/// a PhasedHaplotypeView of the unit's rows, host memory, valid while the unit is handed over.
/// Its producers check call_genotype_phased: a call with two or more called alleles that is not
/// phased stops the pass with an error naming it. No parameter (the planes are 1 + the store's
/// ALT allele columns).
inline constexpr ProductKey kPhasedHaplotypes{"phased haplotypes"};

}  // namespace vczstats
