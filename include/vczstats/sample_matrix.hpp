#pragma once
/// @file sample_matrix.hpp
/// @brief Sums over pairs of samples (the matrix family's heavy pass): what a statistic asks the
/// backend to accumulate from the packed genotypes of every variant, and the sums it gets back.
/// They add up over variants, so partitions (MPI ranks) merge by addition.
//
// Genotypes are the packed 2-bit codes of packed.hpp: hom REF, het (REF and another allele), two
// non-REF alleles, missing (any missing allele, or not a diploid call). Multi-allelic sites count
// REF against the other alleles, as plink2 does for KING.

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "vczstats/archive.hpp"

namespace vczstats {

/// @brief A count over the variants where both samples i and j have a genotype.
enum class PairCount : int {
  HetHet = 0,      ///< both heterozygous
  Ibs0 = 1,        ///< opposite homozygotes (no allele identical by state)
  HomHet = 2,      ///< i homozygous, j heterozygous
  HetHom = 3,      ///< i heterozygous, j homozygous
  NonMissing = 4,  ///< both have a genotype
};
/// @brief Number of PairCount kinds.
inline constexpr int kPairCounts = 5;
/// @brief The bit of @p c in SampleMatrixRequest::counts.
constexpr std::uint32_t pair_bit(PairCount c) {
  return 1u << static_cast<int>(c);
}

/// @brief A sum over variants of x_i * x_j, x a per-variant value of each sample's genotype.
enum class PairProduct : int {
  None = 0,
  /// (g - 2f) / sqrt(2f(1 - f)), 0 when missing or f(1 - f) = 0 (plink2 --make-rel): g the count
  /// of non-REF alleles, f their frequency among the selected samples' genotypes.
  Standardized = 1,
  /// g - 2f, 0 when missing (plink2 --make-rel cov).
  Centered = 2,
  /// sqrt(u) when missing, else 0, with u = f(1 - f)(f^2 - f + 1), plink 1.9's expected
  /// distance of a variant (--distance's missing-data weights), and u = 1 for a monomorphic
  /// variant as plink 1.9 computes it. Also sums u over the variants.
  MissingWeight = 3,
};

/// @brief The value a matrix statistic makes of each cell's sums (stats/matrix_math.hpp's
/// cell_value), which a backend may compute where the sums lie: the GPU then copies one matrix of
/// doubles to the host instead of every sum.
enum class CellValue : int {
  None = 0,
  GrmRatio = 1,     ///< product / NonMissing (grm)
  KingKinship = 2,  ///< KING-robust kinship of HetHet, Ibs0, HomHet, HetHom; 1/2 on the diagonal
  /// plink 1.9's allele-count distance, 0 on the diagonal: (HomHet + HetHom + 2 Ibs0) scaled by
  /// variants / NonMissing without a product, else by the MissingWeight sums (all variants'
  /// weight over that of the variants both samples have).
  DistanceCount = 3,
  DistanceIbs = 4,          ///< 1 - DistanceCount / (2 variants)
  DistanceOneMinusIbs = 5,  ///< DistanceCount / (2 variants)
};

/// @brief What a statistic accumulates: pair counts and at most one product, over the variants
/// selected by the plan and kept by the MAF filter, for the rows of a stripe of the matrix.
struct SampleMatrixRequest {
  std::uint32_t counts = 0;  ///< PairCount bits (pair_bit)
  PairProduct product = PairProduct::None;
  /// Keep a variant when min(f, 1 - f) >= maf (f as above; variants without genotypes are left
  /// out when maf > 0), plink's --maf on REF against the other alleles.
  double maf = 0;
  /// Rows [row_begin, row_end) of the matrix (samples in selection order; -1: all); columns are
  /// [0, row_end): the lower triangle and diagonal of those rows. Stripes let a matrix larger
  /// than memory be computed in passes.
  std::int64_t row_begin = 0, row_end = -1;
  /// The statistic's formula. A backend may then return SampleMatrixSums::values alone (the GPU
  /// does; the CPU returns the sums). compute() hands the backends None when
  /// RunOptions::keep_matrix_sums (MPI ranks, whose sums are merged and saved).
  CellValue value = CellValue::None;
};

/// @brief The side of the tiles of the CPU pass's grid over the whole matrix (rows and columns
/// at its multiples). Every cell's sums are the same doubles whatever the stripe (the CPU pass
/// computes each BLAS product on the whole grid tile); stripes that begin and end on the grid
/// share no tile and so compute no product twice.
inline constexpr std::int64_t kSampleMatrixTile = 256;

/// @brief Rows [@p begin, @p end) of a lower triangle (row i has i + 1 cells) cut into @p parts
/// contiguous stripes of about equal cells, in order: each cut at a multiple of
/// kSampleMatrixTile when that moves at most 2% of a stripe's cells, else at the balanced row.
/// Some stripes may be empty.
std::vector<std::pair<std::int64_t, std::int64_t>> split_matrix_rows(std::int64_t begin,
                                                                     std::int64_t end, int parts);

/// @brief The accumulated sums of one request, rows [row_begin, row_end) by columns
/// [0, row_end), row-major; entries with column > row are 0.
struct SampleMatrixSums {
  std::int64_t row_begin = 0, row_end = 0;
  std::int64_t variants = 0;  ///< variants summed (selected and kept by the filter)
  /// Per PairCount (empty when not requested); int32: at most 2^31 - 1 variants.
  std::array<std::vector<std::int32_t>, kPairCounts> counts;
  std::vector<double> product;  ///< the product's sums (empty without one)
  /// The product's diagonal, sum of x_j x_j, for every column j (stripes lack most of it).
  std::vector<double> diagonal;
  double weight_total = 0;  ///< MissingWeight: the sum of u over the variants
  /// The request's CellValue of every cell of the stripe, mirrors above the diagonal included
  /// (row-major, rows x cols), when the backend computed them: then counts, product and diagonal
  /// are empty. Final values, not sums: merge() and save() throw Error on them (an internal
  /// error: compute() asks for values only where nothing merges or saves).
  std::vector<double> values;

  std::int64_t rows() const { return row_end - row_begin; }
  std::int64_t cols() const { return row_end; }
  /// @brief Zero sums of the shape of @p request over @p samples samples.
  static SampleMatrixSums zeros(const SampleMatrixRequest& request, std::int64_t samples);
  /// @brief Add @p o (same request). @throws Error on another shape or on values, or past
  /// 2^31 - 1 variants.
  void merge(const SampleMatrixSums& o);
  /// @throws Error on values (final values are not sums).
  void save(ByteWriter& w) const;
  /// @throws FormatError when the bytes are not such sums.
  void load(ByteReader& r);
};

}  // namespace vczstats
