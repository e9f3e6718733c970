#pragma once
/// @file variant_pairs.hpp
/// @brief The variant-pair family's heavy pass (ld, prune): which pairs of nearby variants the
/// backend evaluates from the packed genotypes or haplotypes of each unit, keeping a halo of the
/// rows before the unit, and what it hands back, unit by unit, to the statistic.
//
// Rows are the selected variants in plan order; a row's ordinal counts the selected variants
// before it in the run (or partition). A pair (a, b), a before b, is in the band when both are
// on the same contig, ord(b) - ord(a) <= max_variants and pos(b) - pos(a) <= max_bp. With a
// focal list, only pairs with a focal end are evaluated, and (f, f) for every focal row f.
//
// Planes: the statistic receives the bit planes of the rows that may pair with rows outside
// its partition (the first rows of a run and, in the final batch, the last ones), so partitions
// computed apart (MPI ranks) can add the pairs that cross their boundary when they merge.
//   genotypes:  per row three planes of words_per_plane 64-bit words, 64 samples per word:
//               het (REF and another allele), two non-REF alleles, called (diploid, complete)
//   haplotypes: per row two planes over samples × ploidy slots (slot k of sample i is bit
//               i * ploidy + k): non-REF allele, called allele

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace vczstats {
namespace stats::pairs {
class PairSum;  // stats/banded_pairs.hpp (internal)
}

/// @brief What is computed for a pair of variants (tests/tools/POPGEN.md, "Linkage").
enum class PairMeasure : std::int32_t {
  /// r² of non-REF allele counts over the samples with both genotypes (plink 1.9 --r2,
  /// vcftools --geno-r2); values: r2 (signed by r).
  GenotypeR2 = 0,
  /// r² and D' of the haplotype frequencies plink 1.9 estimates from the two-locus genotype
  /// table (plink 1.9 --r2 dprime); values: r2 (signed by D), dprime.
  GenotypeEm = 1,
  /// r², D and D' of phased haplotypes with both alleles called (vcftools --hap-r2); values:
  /// r2, d, dprime.
  Haplotype = 2,
  /// plink 1.9 --indep-pairwise's test: r² of allele counts above the threshold, computed as
  /// plink does; pairs are kept without values (edges).
  PruneEdge = 3,
  /// The two-locus genotype table over the samples with both genotypes (ld-stats
  /// --genotypes): every pair of the band (no test); values: the table, packed into n, r2, d
  /// and dprime (stats/ld_math.hpp, pack_genotype_table(); counts below 2^28).
  GenotypeTable = 4,
};

/// @brief Which pairs a variant-pair statistic asks the heavy pass for.
struct PairRequest {
  PairMeasure measure = PairMeasure::GenotypeR2;
  std::int64_t max_variants = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_bp = std::numeric_limits<std::int64_t>::max();
  /// Keep pairs with |r2| >= min_r2 (NaN never); PruneEdge: r2 > min_r2 (plink's test);
  /// GenotypeTable: every pair.
  double min_r2 = 0;
  /// Global variant indices of the focal rows, sorted (empty: every pair of the band).
  std::vector<std::int64_t> focal;
  bool focal_only = false;  ///< evaluate only pairs with a focal end (and the focal rows' own)

  /// @brief Whether the pass works on haplotypes (else on genotypes).
  bool haplotypes() const { return measure == PairMeasure::Haplotype; }
};

/// @brief One selected row as the pass saw it.
struct PairRow {
  std::int64_t variant = 0;  ///< global index
  std::int64_t pos = 0;
  std::int32_t contig = 0;
  std::int32_t pad = 0;
  std::int64_t n = 0;    ///< samples with a genotype (haplotypes with an allele)
  std::int64_t sum = 0;  ///< non-REF alleles among them
  std::int64_t ssq = 0;  ///< sum of squared non-REF allele counts (genotypes)
};

/// @brief One pair that passed the request's test; a <= b (global indices).
struct PairValue {
  std::int64_t a = 0, b = 0;
  std::int64_t n = 0;  ///< samples (haplotypes) with both genotypes (alleles)
  double r2 = 0, d = 0, dprime = 0;
};

/// @brief Bit planes of some rows (see the file comment).
struct PairPlanes {
  std::int64_t words_per_row = 0;
  std::vector<std::int64_t> variants;  ///< global index of each row
  std::vector<std::uint64_t> words;    ///< rows × words_per_row
};

/// @brief What the pass hands over for one unit (or, final, at the end of the run).
struct PairBatch {
  std::int64_t unit = -1;        ///< plan unit (-1: the final batch)
  std::vector<PairRow> rows;     ///< the unit's selected rows, in order
  std::vector<PairValue> pairs;  ///< pairs whose later row b is among them, in any order
  PairPlanes planes;             ///< rows that may pair across a partition boundary
  /// A band with a reducer (the library's stats/banded_pairs.hpp): the sums of those pairs
  /// instead of the pairs (null otherwise).
  std::shared_ptr<const stats::pairs::PairSum> reduced;
};

}  // namespace vczstats
