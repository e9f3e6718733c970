#pragma once
// The variant-pair band's kernels (cuda/pair_band_gpu.cpp): bit planes and totals of a unit's
// selected rows in the device halo, and the pairs of a list counted by AND + popcount, each
// evaluated with stats/ld_math.hpp as the CPU band evaluates it (the same bits:
// pair_band_kernels.cu is compiled with -fmad=false).

#include <cuda_runtime.h>

#include <cstdint>

#include "stats/ld_math.hpp"
#include "stats/ld_moments_terms.hpp"
#include "vczstats/genotypes.hpp"
#include "vczstats/variant_pairs.hpp"

namespace vczstats::cuda {

/// @brief OR the haplotype planes (non-REF, called; backend/site_pass.hpp) of @p block into a
/// unit's rows of two planes of @p words_per_plane words (zeroed by the caller before the unit's
/// first block), at the block's haplotype offset. The GPU site pass's input of the --hap band.
/// @throws UsageError, CudaError.
void launch_pack_haplotype_planes(const GenotypeChunkView& block, std::uint64_t* words,
                                  std::int64_t words_per_plane, cudaStream_t stream);

/// @brief Where new rows go: @p count rows (unit rows @p unit_rows) written at @p planes (rows
/// of @p row_words words: planes of @p words words) and their totals at @p totals (3 per row:
/// called, het, two non-REF; haplotypes: called, 0, non-REF), zeroed by the caller.
struct PairRowsArgs {
  const std::int32_t* unit_rows = nullptr;
  std::int64_t count = 0;
  std::uint64_t* planes = nullptr;
  std::int64_t words = 0;
  std::int64_t row_words = 0;
  unsigned long long* totals = nullptr;
  const std::uint64_t* mask = nullptr;  ///< plane bits to keep: samples or slots (null: all)
  /// Haplotype rows with a device reducer: @p nmasks count masks of @p words words one after
  /// another, and each row's non-REF within each at @p masked (3 a row, zeroed by the caller).
  const std::uint64_t* count_masks = nullptr;
  int nmasks = 0;
  unsigned long long* masked = nullptr;
};

/// @brief Genotype rows from packed 2-bit codes (@p code_words words per row, @p samples).
void launch_genotype_rows(const PairRowsArgs& a, const std::uint64_t* codes,
                          std::int64_t code_words, std::int64_t samples, cudaStream_t stream);
/// @brief Haplotype rows copied from two planes of @p words_per_plane words per row.
void launch_haplotype_rows(const PairRowsArgs& a, const std::uint64_t* planes,
                           std::int64_t words_per_plane, cudaStream_t stream);

/// @brief A list of pairs (i, j) of halo rows (indices into the buffer) to count and evaluate.
struct PairListArgs {
  const std::uint64_t* planes = nullptr;       ///< halo rows, row_words words each
  const unsigned long long* totals = nullptr;  ///< 3 per halo row (PairRowsArgs)
  const std::int32_t* pairs = nullptr;         ///< 2 per pair: i, j (or null: below)
  std::int64_t count = 0;
  /// Without a list, every pair of the rows [row0, row0 + rows) with its earlier partners: row
  /// row0 + k pairs with first[k] .. row0 + k - 1, its pairs numbered from offsets[k]
  /// (offsets[rows]: their number); the launch takes pairs pair0 .. pair0 + count - 1.
  const std::int32_t* first = nullptr;
  const std::int64_t* offsets = nullptr;
  std::int64_t rows = 0, row0 = 0, pair0 = 0;
  std::int64_t words = 0;  ///< per plane
  std::int64_t row_words = 0;
  std::int64_t width = 0;  ///< samples (haplotypes): a row is complete when called at all
  PairMeasure measure = PairMeasure::GenotypeR2;
  double min_r2 = 0, prune_thr = 0;
  int lanes = 32;  ///< threads per pair (a power of two, at most 32)
  /// R2, PruneEdge, Haplotype: passing pairs (a, b = buffer indices i, j) appended at *found.
  PairValue* values = nullptr;
  unsigned long long* found = nullptr;
  /// GenotypeEm, GenotypeTable: the counts of every pair (margins filled in), evaluated (the
  /// EM) or packed (the table) on the host.
  stats::ld::GenotypeCounts* counts = nullptr;
};

/// @brief Count and evaluate the pairs of @p a.
void launch_pair_list(const PairListArgs& a, cudaStream_t stream);

/// @brief A halo row's place for a device reducer: its position and coordinate
/// (PairReducer::coordinate()).
struct RowPlace {
  std::int64_t pos = 0;
  double coord = 0;
};

/// @brief The pairs of a band summed per bin on the device (ld-stats, a reducer's
/// DeviceReduction): every pair of the rows [row0, row0 + rows) with its earlier partners,
/// numbered as PairListArgs' (pairs pair0 .. pair0 + count - 1).
struct PairReduceArgs {
  const std::uint64_t* planes = nullptr;       ///< halo rows, row_words words each
  const unsigned long long* totals = nullptr;  ///< 3 per halo row (PairRowsArgs)
  const unsigned long long* masked = nullptr;  ///< 3 per halo row (PairRowsArgs::masked)
  const RowPlace* places = nullptr;            ///< per halo row
  const std::int32_t* first = nullptr;
  const std::int64_t* offsets = nullptr;
  std::int64_t rows = 0, row0 = 0, pair0 = 0, count = 0;
  std::int64_t words = 0, row_words = 0;
  const std::uint64_t* count_masks = nullptr;  ///< as PairRowsArgs'
  int nmasks = 0;
  int lanes = 32;  ///< threads per pair (a power of two, at most 32)
  /// Per bin, @p r.slots() 128-bit two's-complement sums, two words each (low first), added to.
  unsigned long long* sums = nullptr;
};

/// @brief Sum the pairs of @p a into a.sums with @p r's basis and bins (its edges in device
/// memory), the numerators of stats/ld_moments_terms.hpp: exact 64-bit numerators added into
/// 128-bit sums (per thread block in shared memory, then globally), so any order of the pairs
/// gives the same sums.
void launch_pair_reduce(const PairReduceArgs& a, const stats::moments::DeviceReduction& r,
                        cudaStream_t stream);

}  // namespace vczstats::cuda
