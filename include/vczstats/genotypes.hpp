#pragma once
/// @file genotypes.hpp
/// @brief Non-owning view of a block of decoded genotype calls.

#include <cstddef>
#include <cstdint>

namespace vczstats {

/// @brief A dense block of call_genotype: variants × samples × ploidy signed integers in C order
/// (allele index, -1 missing, -2 fill for a shorter ploidy). Non-owning.
struct GenotypeChunkView {
  const std::byte* data = nullptr;
  int elem_bytes = 1;  ///< 1, 2, 4 or 8 (the store's integer width)
  std::int64_t variants = 0;
  std::int64_t samples = 0;
  std::int64_t ploidy = 0;
  std::int64_t variant_offset = 0;  ///< global index of the first variant (row 0)
  std::int64_t sample_offset = 0;   ///< selection index of the first sample (column 0)

  /// @brief Element pointer of row @p v (a variant), typed.
  template <class T>
  const T* row(std::int64_t v) const {
    return reinterpret_cast<const T*>(data) + v * samples * ploidy;
  }
  /// @brief Number of calls (genotype entries) in the block.
  std::int64_t calls() const { return variants * samples * ploidy; }
  std::int64_t bytes() const { return calls() * elem_bytes; }
};

}  // namespace vczstats
