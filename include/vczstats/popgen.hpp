#pragma once
/// @file popgen.hpp
/// @brief Diversity and divergence as reductions over the allele counts of the heavy pass, with
/// the definitions of tests/tools/POPGEN.md (sums over sites; ratios and tests per window).

#include <cstdint>
#include <vector>

#include "vczstats/counts.hpp"

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
  double pi_sum = 0, theta_w = 0, theta_pi_u = 0, theta_h = 0, theta_l = 0;
  /// @brief Add one site: @p c holds the population's counts (layout width); @p ancestral is
  /// the index of the ancestral allele (0: REF), negative when unknown (the site is then left
  /// out of the unfolded statistics).
  void add(const std::int32_t* c, int alleles, Harmonic& harmonic, int ancestral = 0);
  /// @brief Add the sums of the same window from another partition of its sites.
  void merge(const DiversitySums& o);
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
  double dxy_sum = 0, pi1_sum = 0, pi2_sum = 0, hudson_num = 0, hudson_den = 0;
  double wc_a = 0, wc_abc = 0, wc_fst_sum = 0, nei_num = 0, nei_ht = 0;
  /// @brief Add one site: @p c1, @p c2 the two populations' counts; @p t1, @p t2 their tallies
  /// (null: Weir & Cockerham's terms are left out).
  void add(const std::int32_t* c1, const std::int32_t* c2, int alleles,
           const std::int32_t* t1 = nullptr, const std::int32_t* t2 = nullptr);
  /// @brief Add the sums of the same window from another partition of its sites.
  void merge(const DivergenceSums& o);
};

/// @brief pi of one population's counts at a site, or NaN when fewer than 2 called alleles.
double site_pi(const std::int32_t* c, int alleles);

}  // namespace vczstats::stats
