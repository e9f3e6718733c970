// --hwe decides a site as the exact test itself: passes_count_filters rejects sites far out in a
// tail from log-factorial bounds (O(log n)), accepts most others from the probability of the
// observed heterozygote count over a bound of the total (a walk of the order of the count's
// spread), and falls back to hwe_exact_p (the full distribution) when neither settles it. Every genotype triple of up to 60 samples and random large ones, for
// thresholds around and far from the p-values: the decision equals hwe_exact_p(...) >= P.

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "vczstats/filters.hpp"
#include "vczstats/hardy.hpp"

namespace {

using vczstats::VariantFilterOptions;

/// The filter's decision for hom_ref, het, hom_other (no other filter set).
bool passes(double threshold, bool midp, std::int64_t hom_ref, std::int64_t het,
            std::int64_t hom_other) {
  VariantFilterOptions f;
  f.hwe = threshold;
  f.hwe_midp = midp;
  const std::int32_t counts[2] = {static_cast<std::int32_t>(2 * hom_ref + het),
                                  static_cast<std::int32_t>(2 * hom_other + het)};
  return vczstats::stats::passes_count_filters(f, counts, 2, hom_ref + het + hom_other, 0, hom_ref,
                                               het, hom_other);
}

/// The decision of the full distribution (the filter's tolerance of 2^-44 included).
bool exact(double threshold, bool midp, std::int64_t hom_ref, std::int64_t het,
           std::int64_t hom_other) {
  return vczstats::stats::hwe_exact_p(het, hom_ref, hom_other, midp) >=
         threshold * (1 - 1.0 / static_cast<double>(std::int64_t{1} << 44));
}

}  // namespace

TEST(HweFilter, EveryTripleOfUpToSixtySamplesDecidesAsTheExactTest) {
  std::int64_t checked = 0, passed = 0;
  for (const bool midp : {false, true})
    for (const double t : {1e-12, 1e-6, 1e-3, 0.01, 0.05, 0.2, 0.5, 0.9, 1.0})
      for (std::int64_t n = 1; n <= 60; ++n)
        for (std::int64_t het = 0; het <= n; ++het)
          for (std::int64_t hom_ref = 0; hom_ref + het <= n; ++hom_ref) {
            const std::int64_t hom_other = n - het - hom_ref;
            const bool want = exact(t, midp, hom_ref, het, hom_other);
            ASSERT_EQ(passes(t, midp, hom_ref, het, hom_other), want)
                << "--hwe " << t << (midp ? " midp" : "") << ": " << hom_ref << "/" << het << "/"
                << hom_other;
            ++checked;
            passed += want;
          }
  EXPECT_GT(passed, checked / 4);  // both decisions occur
  EXPECT_LT(passed, checked);
}

TEST(HweFilter, LargeCohortsDecideAsTheExactTestAtTheirOwnPValues) {
  std::mt19937_64 rng(29);
  for (int i = 0; i < 4000; ++i) {
    const std::int64_t n = std::uniform_int_distribution<std::int64_t>(100, 20000)(rng);
    const double p = std::uniform_real_distribution<double>(0.001, 0.5)(rng);
    // Inbreeding (a Wahlund deficit of heterozygotes looks the same): up to 0.6, so that many
    // sites lie far out in a tail, where the log-factorial bound decides them.
    const double f = std::uniform_real_distribution<double>(-0.1, i % 4 < 2 ? 0.3 : 0.6)(rng);
    // Genotype frequencies with inbreeding f, then a multinomial draw.
    const double pr = p * p + f * p * (1 - p), ph = std::max(0.0, 2 * p * (1 - p) * (1 - f));
    std::int64_t hom_ref = 0, het = 0;
    std::uniform_real_distribution<double> u(0, 1);
    for (std::int64_t s = 0; s < n; ++s) {
      const double x = u(rng) * (pr + ph + (1 - p) * (1 - p) + f * p * (1 - p));
      hom_ref += x < pr;
      het += x >= pr && x < pr + ph;
    }
    const std::int64_t hom_other = n - hom_ref - het;
    const bool midp = i % 2 == 1;
    const double pv = vczstats::stats::hwe_exact_p(het, hom_ref, hom_other, midp);
    // Thresholds at the site's own p-value (just below, at, just above) and far from it.
    for (const double t : {pv * (1 - 1e-12), pv, pv * (1 + 1e-12), pv * 0.5, pv * 2, 1e-6, 0.05}) {
      if (!(t > 0 && t <= 1)) continue;
      ASSERT_EQ(passes(t, midp, hom_ref, het, hom_other), exact(t, midp, hom_ref, het, hom_other))
          << "--hwe " << t << " p " << pv << ": " << hom_ref << "/" << het << "/" << hom_other;
    }
  }
}
