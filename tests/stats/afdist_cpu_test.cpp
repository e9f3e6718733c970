// The CPU heavy pass: specialised fast paths equal the generic per-call loop, for any block.

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "vczstats/afdist.hpp"

using namespace vczstats;
using namespace vczstats::stats;

TEST(StatsAfdistCpu, FastPathsEqualGenericLoop) {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 300; ++trial) {
    const std::int64_t variants = 1 + static_cast<std::int64_t>(rng() % 50);
    const std::int64_t samples = 1 + static_cast<std::int64_t>(rng() % 300);
    const int mode = static_cast<int>(rng() % 4);  // how many fills / missing values
    std::vector<std::int8_t> g(static_cast<std::size_t>(variants * samples * 2));
    for (std::int64_t v = 0; v < variants; ++v) {
      const bool haploid_row = mode == 3 && v % 3 == 0;  // rows where every sample is haploid
      for (std::int64_t s = 0; s < samples; ++s) {
        auto* c = &g[static_cast<std::size_t>((v * samples + s) * 2)];
        c[0] = static_cast<std::int8_t>(static_cast<int>(rng() % 5) - 1);
        c[1] = static_cast<std::int8_t>(static_cast<int>(rng() % 5) - 1);
        if (mode >= 1 && rng() % 5 == 0) c[1] = -2;
        if (mode >= 2 && rng() % 50 == 0) c[0] = -2;
        if (haploid_row) c[1] = -2;
      }
    }
    GenotypeChunkView view;
    view.data = reinterpret_cast<const std::byte*>(g.data());
    view.variants = variants;
    view.samples = samples;
    view.ploidy = 2;
    for (auto method : {AfdistMethod::Bcftools, AfdistMethod::ZarrAfdist}) {
      AfdistAccumulator fast, generic;
      fast.init({method, 10}, samples, 2);
      generic.init({method, 10}, samples, 2);
      generic.set_generic_only(true);
      // Counting into non-empty sites checks the merge with earlier sample blocks too.
      std::vector<AfdistSite> a(static_cast<std::size_t>(variants)), b(a.size());
      for (int rep = 0; rep < 2; ++rep) {
        fast.count_sites(view, a);
        generic.count_sites(view, b);
      }
      for (std::size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a[i].an, b[i].an) << trial;
        ASSERT_EQ(a[i].ac1, b[i].ac1) << trial;
        ASSERT_EQ(a[i].n_dosage1, b[i].n_dosage1) << trial;
        ASSERT_EQ(a[i].n_dosage2, b[i].n_dosage2) << trial;
        ASSERT_EQ(a[i].ploidy, b[i].ploidy) << trial;
        ASSERT_EQ(a[i].ref_count, b[i].ref_count) << trial;
        ASSERT_EQ(a[i].het, b[i].het) << trial;
        ASSERT_EQ(a[i].hom_alt, b[i].hom_alt) << trial;
      }
    }
  }
}
