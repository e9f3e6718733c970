#pragma once
// ld-stats --genotypes (vczstats/ld.hpp): Ragsdale & Gravel's (2020) unbiased estimators of one
// population's two-locus statistics from unphased diploid genotypes. With g_xy the frequency of
// the samples with x non-REF alleles at the first site and y at the second (x, y in 0..2), X and
// Y a sample's counts, every statistic is a homogeneous polynomial in the nine g's:
//   D = Cov(X, Y) / 2 = (E[XY] Σg - E[X] E[Y]) / 2,   1 - 2p = Σ (x - 1) g_xy,
//   p = Σ (2 - x) g_xy / 2,  1 - p = Σ x g_xy / 2 (and q, 1 - q with y),
// and each monomial Π g_c^k_c of degree K has the unbiased estimator Π (n_c)_k_c / (n)_K from
// the table's counts n_c (sampling K samples without replacement). Genotype counts are a
// complete statistic, so these are the only unbiased estimators that are functions of the
// table: those moments.LD evaluates as closed forms (stats_from_genotype_counts.py).
// Numerators are exact integers (64-bit while they fit, else 128), divided once.

#include <array>
#include <cstdint>
#include <vector>

#include "stats/ld_math.hpp"

namespace vczstats::stats::moments {

/// One population's unbiased factors of a pair of sites (the products moments.LD's
/// multi-population basis multiplies across populations, ld_moments.cpp).
struct PopFactors {
  double d = 0;    // D
  double dzp = 0;  // D (1 - 2p)
  double dzq = 0;  // D (1 - 2q)
  double zp = 0;   // 1 - 2p
  double zq = 0;   // 1 - 2q
  double zz = 0;   // (1 - 2p)(1 - 2q)
  double dd = 0;   // D²
  double dz = 0;   // D (1 - 2p)(1 - 2q)
  double pi2 = 0;  // p (1 - p) q (1 - q)
  /// g[S]: the product of the frequencies of set S (bit 0: A, the REF allele at the first site;
  /// 1: a; 2: B, REF at the second; 3: b), each draw from a different haplotype (phased) or
  /// the product's unbiased estimator (genotypes); g[0] = 1.
  std::array<double, 16> g{};
};

/// The nine cells n_xy (index 3 x + y) of a pair's genotype table over the samples called at
/// both, and their number n.
struct GenotypeTable {
  std::array<std::int64_t, 9> cell{};
  std::int64_t n = 0;
};

/// The table of the band's counts (ld_math.hpp: margins and the four non-REF cells).
GenotypeTable genotype_table(const ld::GenotypeCounts& c);

/// The unbiased estimators of a population's factors from its genotype table (file comment).
class GenotypeEstimators {
 public:
  /// @p cross: the factors other populations' statistics multiply (d, dzp, ..., zz); @p need:
  /// the sets S of PopFactors::g wanted (bit S; pi2 is g[15], so PopFactors::pi2 is not filled).
  GenotypeEstimators(bool cross, std::uint32_t need);
  /// Fill @p f from @p t (t.n >= 4).
  void factors(const GenotypeTable& t, PopFactors& f) const;
  /// The fewest samples called at both sites for which the estimators are defined.
  static constexpr std::int64_t kMinSamples = 4;

  /// A homogeneous polynomial's estimator: terms of an integer coefficient and the index of a
  /// monomial's numerator (Monomials), over den (n)_degree.
  struct Compiled {
    std::vector<std::pair<std::int64_t, std::uint32_t>> terms;
    std::int64_t den = 1;
    int degree = 0;
  };

  /// How each monomial's numerator Π (n_c)_k_c is computed from an earlier one's (index 0:
  /// the constant 1): monomial k + 1 is monomial parent times one more draw of cell, its
  /// power-th: numerator[k + 1] = numerator[parent] (n_cell - power + 1).
  struct Step {
    std::uint32_t parent = 0;
    std::uint8_t cell = 0, power = 0;
  };
  /// Monomials of degree at most 4 in nine variables.
  static constexpr std::size_t kMaxMonomials = 715;

 private:
  template <class I>
  void factors_in(const GenotypeTable& t, PopFactors& f) const;

  bool cross_;
  std::uint32_t need_;
  std::int64_t narrow_ = 0;  // tables of at most this many samples: 64-bit numerators
  std::vector<Step> steps_;  // the monomials the estimators use, each after its parent
  Compiled d_, dzp_, dzq_, zp_, zq_, zz_, dd_, dz_;
  std::array<Compiled, 16> g_;
};

}  // namespace vczstats::stats::moments
