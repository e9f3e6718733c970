#pragma once
// CPU kernels of the variant-pair family: pair counts of two rows' bit planes by AND + popcount
// (stats/ld_math.hpp defines the counts). The best of AVX-512 VPOPCNTDQ, the POPCNT instruction
// and a portable loop is chosen once from the CPU's features; all give the same counts.

#include <cstdint>

#include "stats/ld_math.hpp"

namespace vczstats::backend::ldk {

/// @brief Pair-count functions over rows of @p words words per plane.
struct Kernels {
  const char* name;
  /// Nine counts of two genotype rows (three planes each).
  void (*genotype)(const std::uint64_t* i, const std::uint64_t* j, std::int64_t words,
                   stats::ld::GenotypeCounts& c);
  /// The four cells of two genotype rows called at every sample (margins not filled).
  void (*genotype_complete)(const std::uint64_t* i, const std::uint64_t* j, std::int64_t words,
                            stats::ld::GenotypeCounts& c);
  /// Four counts of two haplotype rows (two planes each).
  void (*haplotype)(const std::uint64_t* i, const std::uint64_t* j, std::int64_t words,
                    stats::ld::HaplotypeCounts& c);
  /// ab of two haplotype rows called at every haplotype.
  void (*haplotype_complete)(const std::uint64_t* i, const std::uint64_t* j, std::int64_t words,
                             stats::ld::HaplotypeCounts& c);
  /// Adds to out[0] the bits set in both non-REF planes of two haplotype rows, and to out[1 + k]
  /// those of them also set in @p masks[k] (k < @p nmasks <= 3; words per plane, as the rows).
  void (*masked_both_non_ref)(const std::uint64_t* i, const std::uint64_t* j, std::int64_t words,
                              const std::uint64_t* const* masks, int nmasks, std::int64_t* out);
  /// masked_both_non_ref of each of @p count rows at @p rows (@p row_words apart) with row
  /// @p j, four counts a row into @p out (set, not added; those of masks past @p nmasks 0).
  void (*masked_both_non_ref_rows)(const std::uint64_t* rows, std::int64_t count,
                                   std::int64_t row_words, const std::uint64_t* j,
                                   std::int64_t words, const std::uint64_t* const* masks,
                                   int nmasks, std::int64_t* out);
};

/// @brief The fastest kernels this CPU runs.
const Kernels& best_kernels();
/// @brief Every kernel set this CPU runs, the portable one first (tests compare them).
int available_kernels(const Kernels** out, int max);

}  // namespace vczstats::backend::ldk
