#pragma once
/// @file matrix.hpp
/// @brief The matrix family's sample-by-sample statistics as library objects (statistic.hpp):
/// the genomic relationship matrix (plink2 --make-rel), KING-robust kinship (plink2 --make-king,
/// --make-king-table), IBS and allele-count distances (plink 1.9 --distance) and PCA (plink2
/// --pca, --pca approx), all from one read of the packed genotypes. Definitions, missing-data
/// and multi-allelic rules: tests/tools/POPGEN.md ("Sample-by-sample matrices").
///
/// Rows and columns are the selected samples in selection order (store order without
/// populations). Each matrix statistic can compute a stripe of rows (MatrixOptions::rows) so a
/// matrix larger than memory is made in several passes.

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vczstats/query.hpp"
#include "vczstats/statistic.hpp"

namespace vczstats {

/// @brief Options every matrix statistic has.
struct MatrixOptions {
  double maf = 0;  ///< keep variants whose minor (REF vs the rest) allele frequency is >= maf
  /// Rows [row_begin, row_end) of the matrix (-1: to the last); columns [0, row_end).
  std::int64_t row_begin = 0, row_end = -1;
};

/// @brief A block of rows of a symmetric sample-by-sample matrix: rows [row_begin, row_end) by
/// columns [0, row_end), row-major, every cell filled (cells above the diagonal by symmetry).
struct SampleMatrix {
  std::vector<std::string> samples;  ///< ids of all selected samples, in matrix order
  std::int64_t row_begin = 0, row_end = 0;
  std::int64_t variants = 0;   ///< variants used
  std::vector<double> values;  ///< (row_end - row_begin) x row_end
  std::int64_t cols() const { return row_end; }
  double at(std::int64_t i, std::int64_t j) const {
    return values[static_cast<std::size_t>((i - row_begin) * row_end + j)];
  }
};

/// @brief A statistic whose result is a sample-by-sample matrix. finish()'s Table: a `sample`
/// label column and one float column per sample of [0, row_end) (the matrix rows).
class MatrixStatistic : public Statistic {
 public:
  /// @brief finish() without its Table: the matrix alone (the CLI writes it as plink does).
  virtual const SampleMatrix& finish_matrix() = 0;
  /// @brief The matrix (after finish() or finish_matrix()).
  virtual const SampleMatrix& matrix() const = 0;
};

/// @brief The host (and, on a GPU, device) bytes one cell of @p request's sums takes during a
/// pass: its pair counts, its product and the final matrix value.
double matrix_cell_bytes(const SampleMatrixRequest& request);

/// @brief Stripes of rows [first, second) that cover @p samples rows, each a pass whose sums
/// (matrix_cell_bytes per cell, a stripe of rows r0..r1 has (r1 - r0) x r1 cells) fit
/// @p memory_bytes, and at most @p max_rows rows each (0: no limit). With @p whole the matrix is
/// made in one pass (square outputs). @throws UsageError when @p whole and the matrix does not
/// fit.
std::vector<std::pair<std::int64_t, std::int64_t>> plan_matrix_stripes(
    const SampleMatrixRequest& request, std::int64_t samples, double memory_bytes,
    std::int64_t max_rows, bool whole);

/// @brief GRM options.
struct GrmOptions {
  MatrixOptions matrix;
  bool cov = false;  ///< plink2 'cov': centred dosages without variance standardisation
};
/// @brief Genomic relationship matrix (plink2 --make-rel): sum over variants of x_i x_j with x =
/// (g - 2f) / sqrt(2f(1 - f)) (0 when missing), divided by the variants both samples have called.
std::unique_ptr<MatrixStatistic> make_grm(const Query& q, const GrmOptions& o);

/// @brief The counts behind a KING-robust kinship of samples i > j (over the variants both called).
struct KingPair {
  std::int64_t nsnp = 0, hethet = 0, ibs0 = 0;
  std::int64_t het_i_hom_j = 0, hom_i_het_j = 0;
  double kinship = 0;
};
/// @brief KING-robust kinship (plink2 --make-king); the diagonal is 0.5.
class KingStatistic : public MatrixStatistic {
 public:
  /// @brief The counts and kinship of i > j (after finish(); both in the stripe's columns).
  virtual KingPair pair(std::int64_t i, std::int64_t j) const = 0;
};
/// @brief @p with_nsnp also counts the variants both called (the table's NSNP, plink2
/// --make-king-table) and keeps every count for pair(); without it a GPU run keeps only the
/// kinships (computed on the device), and pair() then throws Error.
std::unique_ptr<KingStatistic> make_king(const Query& q, const MatrixOptions& o,
                                         bool with_nsnp = false);

/// @brief Options of the KING table.
struct KingTableOptions {
  MatrixOptions matrix;
  /// plink2 --king-table-filter: leave out pairs with kinship below this (NaN ones stay)
  double min_kinship = -std::numeric_limits<double>::infinity();
};
/// @brief plink2 --make-king-table: one row per pair i > j (i the later sample). Table: sample1,
/// sample2, nsnp, hethet, ibs0 (proportions of nsnp, as plink2), kinship.
std::unique_ptr<Statistic> make_king_table(const Query& q, const KingTableOptions& o);

/// @brief The distance plink 1.9 --distance reports.
enum class DistanceMetric {
  AlleleCount,  ///< allele-ct: sum of |g_i - g_j| (plink 1.9's default)
  Ibs,          ///< ibs: 1 - allele-ct / (2 variants)
  OneMinusIbs,  ///< 1-ibs: allele-ct / (2 variants)
};
/// @brief Distance options.
struct DistanceOptions {
  MatrixOptions matrix;
  DistanceMetric metric = DistanceMetric::AlleleCount;
  /// plink 1.9 'flat-missing': scale by variants / variants both called; else (plink 1.9's
  /// default) by the variants' expected distances f(1-f)(f^2-f+1) over those both called.
  bool flat_missing = false;
};
/// @brief plink 1.9 --distance between samples (over the variants both called, scaled up for
/// the missing ones).
std::unique_ptr<MatrixStatistic> make_distance(const Query& q, const DistanceOptions& o);

/// @brief How PCA is computed.
enum class PcaMethod {
  Auto,    ///< exact up to 50,000 samples, randomized above
  Exact,   ///< top eigenvectors of the GRM (plink2 --pca)
  Approx,  ///< randomized (Galinsky et al. 2016; plink2 --pca approx)
};
/// @brief PCA options.
struct PcaOptions {
  double maf = 0;
  int components = 10;
  PcaMethod method = PcaMethod::Auto;
  bool loadings = false;   ///< also the variant loadings (keeps the packed genotypes in memory)
  std::uint64_t seed = 1;  ///< randomized method: seed of the random start
};
/// @brief Principal components of the samples. finish()'s Table: sample, pc1..pck (unit
/// eigenvectors of the GRM, plink2's .eigenvec).
class PcaStatistic : public Statistic {
 public:
  /// @brief Eigenvalues, descending (after finish()).
  virtual const std::vector<double>& eigenvalues() const = 0;
  /// @brief Eigenvalue table: pc, eigenvalue.
  virtual Table eigenvalue_table() const = 0;
  /// @brief Variant loadings (PcaOptions::loadings): chrom, pos, id, ref, alt, alt_freq,
  /// pc1..pck, the weights of the ALT allele dosage (plink2's var-wts, eigenvalue-scaled); its
  /// note lists the eigenvalues (projection reads them from eigenvalue_table() written beside
  /// it as PATH.eigenval).
  virtual Table loadings_table() const = 0;
  /// @brief The method used (Exact or Approx).
  virtual PcaMethod method() const = 0;
};
std::unique_ptr<PcaStatistic> make_pca(const Query& q, const PcaOptions& o);

/// @brief Loadings of a previous PCA, to project other samples onto.
struct PcaLoadings {
  std::vector<std::string> chrom, id, ref, alt;
  std::vector<std::int64_t> pos;
  std::vector<double> alt_freq;
  std::vector<double> weights;  ///< variants x components
  std::vector<double> eigenvalues;
  int components = 0;
  /// @brief Read a loadings table written by vczstats pca --loadings, and its eigenvalues from
  /// @p path + ".eigenval" (or, in files of earlier versions, a '# eigenvalues' line).
  /// @throws IoError, FormatError.
  static PcaLoadings read(const std::string& path);
};
/// @brief Project the selected samples onto @p loadings: variants matched by contig, position,
/// REF and ALT; x standardised with the loadings' alt_freq. Table: sample, n_variants (matched
/// variants the sample has called), pc1..pck = sum_k x_k w_k / (n_variants sqrt(eigenvalue)),
/// on the scale of the eigenvectors.
std::unique_ptr<Statistic> make_pca_projection(const Query& q, const PcaLoadings& loadings);

/// @brief Keep only the plan's variants whose variant_id is listed in @p path (one ID per line,
/// first word; plink's --extract, e.g. a prune.in list). With count filters pending, the list is
/// applied right after them, by the run's counting pass (Query::pending_extract): a statistic
/// made from the query sees both. @throws IoError (now, for an unreadable list), FormatError (a
/// store without variant_id), UsageError (no variant listed is in the plan).
void extract_variants(Query& q, const std::string& path);

}  // namespace vczstats
