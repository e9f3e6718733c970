#pragma once
/// @file popgen.hpp
/// @brief Diversity and divergence as reductions over the allele counts of the heavy pass, with
/// the definitions of tests/tools/POPGEN.md (sums over sites; ratios and tests per window).

#include <cstdint>
#include <vector>

#include "vczstats/counts.hpp"
#include "vczstats/exact_sum.hpp"

namespace vczstats::stats {

/// @brief a_n = sum_{i=1}^{n-1} 1/i^power, tabulated.
class Harmonic {
 public:
  double operator()(std::int64_t n, int power = 1);

 private:
  std::vector<double> h1_{0.0, 0.0}, h2_{0.0, 0.0};
};

/// @brief Per-population diversity sums over the sites of a window (POPGEN.md §4).
struct DiversitySums {
  std::int64_t n_sites = 0, n_seg = 0, singletons = 0, n_unfolded = 0, s_unfolded = 0;
  std::int64_t n_max = 0, n_max_u = 0;
  /// Sums over sites (flush() at the end of each work unit: see StagedSum).
  StagedSum pi_sum, theta_w, theta_pi_u, theta_h, theta_l;
  /// @brief Add one site: @p c holds the population's counts (layout width); @p ancestral is
  /// the index of the ancestral allele (0: REF), negative when unknown (the site is then left
  /// out of the unfolded statistics).
  void add(const std::int32_t* c, int alleles, Harmonic& harmonic, int ancestral = 0);
  /// @brief Add the sums of the same window from another partition of its sites.
  void merge(const DiversitySums& o);
  /// @brief End a work unit (StagedSum::flush).
  void flush();
};

/// @brief The window statistics of DiversitySums.
struct DiversityResult {
  double tajima_d, fay_wu_h, fay_wu_h_norm, zeng_e;
};
DiversityResult finish_diversity(const DiversitySums& s, Harmonic& harmonic);

/// @brief Per-pair divergence sums over the sites of a window (POPGEN.md §5). Weir &
/// Cockerham's components come from the two populations' tallies of complete diploid calls
/// (each allele's copies and heterozygous carriers: UnitData::tallies), summed over alleles.
struct DivergenceSums {
  std::int64_t n_sites = 0, n_hudson = 0, n_wc = 0;
  /// Sums over sites (flush() at the end of each work unit: see StagedSum).
  StagedSum dxy_sum, pi1_sum, pi2_sum, hudson_num, hudson_den;
  StagedSum wc_a, wc_abc, wc_fst_sum, nei_num, nei_ht;
  /// @brief Add one site: @p c1, @p c2 the two populations' counts; @p t1, @p t2 their tallies
  /// (null: Weir & Cockerham's terms are left out).
  void add(const std::int32_t* c1, const std::int32_t* c2, int alleles,
           const std::int32_t* t1 = nullptr, const std::int32_t* t2 = nullptr);
  /// @brief Add the sums of the same window from another partition of its sites.
  void merge(const DivergenceSums& o);
  /// @brief End a work unit (StagedSum::flush).
  void flush();
};

/// @brief pi of one population's counts at a site, or NaN when fewer than 2 called alleles.
double site_pi(const std::int32_t* c, int alleles);

}  // namespace vczstats::stats
