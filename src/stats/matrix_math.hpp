#pragma once
// Per-variant math of the matrix family, shared by the CPU and CUDA backends and the light
// level: the genotype counts of a packed row, the MAF filter, and the values a variant gives each
// genotype code in a sum of products (sample_matrix.hpp). Written once so both devices keep and
// weight the same variants with the same doubles.

#include <cmath>
#include <cstdint>

#include "stats/hd.hpp"
#include "vczstats/packed.hpp"
#include "vczstats/sample_matrix.hpp"

namespace vczstats::stats::matrix {

inline constexpr std::uint64_t kEvenBits = 0x5555555555555555ull;
/// plink2's guard against rounding in frequency thresholds and degenerate variances (2^-44).
inline constexpr double kSmallEpsilon = 1.0 / 17592186044416.0;

VCZ_HD inline int popcount64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __popcll(x);
#else
  return __builtin_popcountll(x);
#endif
}

/// Genotype counts of one variant over the selected samples (hom REF = n - the others).
struct RowCounts {
  std::int64_t het = 0, hom_alt = 0, missing = 0;
};

/// Add one packed word; @p valid has bit 2k set for each sample k of the word that exists.
VCZ_HD inline void add_word(RowCounts& c, std::uint64_t word, std::uint64_t valid) {
  const std::uint64_t lo = word & valid, hi = (word >> 1) & valid;
  c.het += popcount64(lo & ~hi);
  c.hom_alt += popcount64(hi & ~lo);
  c.missing += popcount64(lo & hi);
}

/// The valid mask of word @p w of a row of @p samples samples.
VCZ_HD inline std::uint64_t valid_mask(std::int64_t w, std::int64_t samples) {
  const std::int64_t left = samples - 32 * w;
  return left >= 32 ? kEvenBits : kEvenBits & ((std::uint64_t{1} << (2 * left)) - 1);
}

/// The counts of a whole row of @p words words.
VCZ_HD inline RowCounts row_counts(const std::uint64_t* row, std::int64_t words,
                                   std::int64_t samples) {
  RowCounts c;
  for (std::int64_t w = 0; w < words; ++w) add_word(c, row[w], valid_mask(w, samples));
  return c;
}

/// How a variant enters the sums: whether it is kept, and its value per genotype code.
struct VariantValues {
  bool keep = false;
  bool product = false;  ///< a nonzero value for some code
  double value[4] = {0, 0, 0, 0};
  double weight = 0;  ///< MissingWeight: u
};

/// The non-REF allele frequency of the called genotypes (NaN without any).
VCZ_HD inline double alt_frequency(const RowCounts& c, std::int64_t samples) {
  const std::int64_t called = samples - c.missing;
  return called > 0 ? static_cast<double>(c.het + 2 * c.hom_alt) / static_cast<double>(2 * called)
                    : NAN;
}

/// Whether a variant passes the MAF filter (plink2: min(f, 1 - f) >= maf (1 - 2^-44)).
VCZ_HD inline bool passes_maf(double f, double maf) {
  if (!(maf > 0)) return true;
  if (f != f) return false;
  const double minor = f < 0.5 ? f : 1 - f;
  return minor >= maf * (1 - kSmallEpsilon);
}

/// Everything about one variant of @p samples samples with counts @p c.
VCZ_HD inline VariantValues variant_values(const RowCounts& c, std::int64_t samples, double maf,
                                           PairProduct product) {
  VariantValues v;
  const double f = alt_frequency(c, samples);
  v.keep = passes_maf(f, maf);
  if (!v.keep || f != f) return v;
  switch (product) {
    case PairProduct::None:
      break;
    case PairProduct::Standardized: {
      // plink2: slope 1/sd, intercept -2f/sd; a variance below 2^-44 gives zeros.
      const double variance = 2 * f * (1 - f);
      if (!(variance > kSmallEpsilon)) break;
      const double slope = 1.0 / sqrt(variance), intercept = -2 * f * slope;
      for (int g = 0; g < 3; ++g) v.value[g] = g * slope + intercept;
      v.product = true;
      break;
    }
    case PairProduct::Centered:
      for (int g = 0; g < 3; ++g) v.value[g] = g - 2 * f;
      v.product = f > 0 && f < 1;
      break;
    case PairProduct::MissingWeight:
      // plink 1.9 weighs a monomorphic variant 1 (its major allele's frequency is 1, which its
      // formula leaves as is), far above any polymorphic one (at most 3/16).
      v.weight = f != 0 && f != 1 ? f * (1 - f) * (f * f - f + 1) : 1.0;
      v.value[kPackedMissing] = sqrt(v.weight);
      v.product = c.missing > 0 && v.weight > 0;
      break;
  }
  return v;
}

/// KING-robust kinship (plink2 --make-king): 1/2 - (4 IBS0 + het1hom2 + het2hom1) / (4 (HETHET +
/// min(het1hom2, het2hom1))), with het1hom2 the sites where i is het and j hom.
VCZ_HD inline double king_kinship(std::int64_t hethet, std::int64_t ibs0, std::int64_t het_i_hom_j,
                                  std::int64_t hom_i_het_j) {
  const std::int64_t smaller = hethet + (het_i_hom_j < hom_i_het_j ? het_i_hom_j : hom_i_het_j);
  return 0.5 - static_cast<double>(4 * ibs0 + het_i_hom_j + hom_i_het_j) /
                   static_cast<double>(4 * smaller);
}

/// The sums of one cell (i, j), j <= i, that cell_value reads (those not requested: 0).
struct CellSums {
  std::int64_t count[kPairCounts] = {};   ///< per PairCount
  double product = 0;                     ///< the product's sum of the cell
  double diagonal_i = 0, diagonal_j = 0;  ///< the product's diagonal at i and j
  bool diagonal = false;                  ///< i == j
};

/// The NaN every formula returns for an undefined cell: the host's 0/0 is -NaN, the device's
/// another NaN, so one constant keeps binary outputs the same on both.
VCZ_HD inline double canonical_nan(double v) {
  return v != v ? NAN : v;
}

/// The value @p formula makes of cell @p c of sums over @p variants variants, @p weight_total the
/// MissingWeight total (@p weighted: the request has that product; else the distances scale by
/// NonMissing). Used by the statistics on the host and by the GPU's values kernel; both TUs are
/// compiled without FMA contraction (CMakeLists.txt: -fmad=false, -ffp-contract=off), and
/// division is correctly rounded on both: the same doubles. Only matrix_statistics.cpp and
/// sample_matrix_values.cu may call it.
VCZ_HD inline double cell_value(CellValue formula, const CellSums& c, std::int64_t variants,
                                double weight_total, bool weighted) {
  const auto count = [&c](PairCount k) { return c.count[static_cast<int>(k)]; };
  double v = 0;
  switch (formula) {
    case CellValue::None:
      break;
    case CellValue::GrmRatio:
      v = c.product / static_cast<double>(count(PairCount::NonMissing));
      break;
    case CellValue::KingKinship:
      v = c.diagonal ? 0.5
                     : king_kinship(count(PairCount::HetHet), count(PairCount::Ibs0),
                                    count(PairCount::HetHom), count(PairCount::HomHet));
      break;
    case CellValue::DistanceCount:
    case CellValue::DistanceIbs:
    case CellValue::DistanceOneMinusIbs: {
      const double n = static_cast<double>(variants);
      double dist = 0;
      if (!c.diagonal) {
        const double d = static_cast<double>(count(PairCount::HomHet) + count(PairCount::HetHom)) +
                         2.0 * static_cast<double>(count(PairCount::Ibs0));
        if (!weighted)
          dist = d * n / static_cast<double>(count(PairCount::NonMissing));
        else  // the weights of the variants either sample misses, out of all
          dist = d * weight_total / (weight_total - c.diagonal_i - c.diagonal_j + c.product);
      }
      v = formula == CellValue::DistanceCount ? dist
          : formula == CellValue::DistanceIbs ? 1 - dist / (2 * n)
                                              : dist / (2 * n);
      break;
    }
  }
  return canonical_nan(v);
}

}  // namespace vczstats::stats::matrix
