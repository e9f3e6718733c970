// afdist per-site math: properties (sample-block merges equal one sequential pass, in any
// order), bin lookups against a linear scan, and the zarr_afdist definition against a direct
// transcription. End-to-end agreement with bcftools is in tests/cli/afdist_reference_test.cpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "stats/afdist_math.hpp"
#include "vczstats/afdist.hpp"
#include "vczstats/error.hpp"

using namespace vczstats;
using namespace vczstats::stats;

namespace {

std::vector<std::int8_t> random_calls(std::mt19937_64& rng, int samples, int ploidy) {
  std::vector<std::int8_t> g(static_cast<std::size_t>(samples * ploidy));
  std::uniform_int_distribution<int> allele(-1, 3), len(0, ploidy);
  for (int s = 0; s < samples; ++s) {
    // Some samples shorter than the record ploidy (-2 fill), some with missing alleles.
    const int l = rng() % 4 == 0 ? len(rng) : ploidy;
    for (int j = 0; j < ploidy; ++j)
      g[static_cast<std::size_t>(s * ploidy + j)] =
          j < l ? static_cast<std::int8_t>(allele(rng)) : std::int8_t{-2};
  }
  return g;
}

bool same(const AfdistSite& a, const AfdistSite& b) {
  return a.an == b.an && a.ac1 == b.ac1 && a.n_dosage1 == b.n_dosage1 &&
         a.n_dosage2 == b.n_dosage2 && a.ploidy == b.ploidy && a.ref_count == b.ref_count &&
         a.het == b.het && a.hom_alt == b.hom_alt;
}

}  // namespace

TEST(StatsAfdist, SampleBlockMergeEqualsOnePass) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 2000; ++trial) {
    const int ploidy = 1 + static_cast<int>(rng() % 4);
    const int samples = 1 + static_cast<int>(rng() % 40);
    auto g = random_calls(rng, samples, ploidy);
    AfdistSite whole;
    for (int s = 0; s < samples; ++s) {
      afdist::bcftools_add_sample(whole, &g[static_cast<std::size_t>(s * ploidy)], ploidy);
      if (ploidy == 2) afdist::zarr_add_sample(whole, &g[static_cast<std::size_t>(s * 2)]);
    }
    // Split the samples into random blocks, count each, merge in a random order.
    std::vector<int> cuts{0, samples};
    for (int k = 0; k < 3; ++k) cuts.push_back(static_cast<int>(rng() % (samples + 1)));
    std::sort(cuts.begin(), cuts.end());
    std::vector<AfdistSite> parts;
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
      AfdistSite p;
      for (int s = cuts[k]; s < cuts[k + 1]; ++s) {
        afdist::bcftools_add_sample(p, &g[static_cast<std::size_t>(s * ploidy)], ploidy);
        if (ploidy == 2) afdist::zarr_add_sample(p, &g[static_cast<std::size_t>(s * 2)]);
      }
      parts.push_back(p);
    }
    std::shuffle(parts.begin(), parts.end(), rng);
    AfdistSite merged;
    for (const auto& p : parts) afdist::merge_site(merged, p);
    ASSERT_TRUE(same(whole, merged)) << "trial " << trial;
  }
}

TEST(StatsAfdist, BcftoolsCountingRulesOnHandPickedCalls) {
  // Expected values follow bcftools +fill-tags (AN/AC) and +af-dist (dosage) as documented in
  // afdist_math.hpp; each line is one sample.
  struct Case {
    std::vector<std::int8_t> g;
    int an, ac1, d1, d2;
  };
  const std::vector<Case> cases = {
      {{0, 1}, 2, 1, 1, 0},   {{1, 1}, 2, 2, 0, 1},  {{1, 2}, 2, 1, 1, 0},
      {{2, 2}, 2, 0, 0, 0},   {{0, -1}, 1, 0, 0, 0}, {{1, -1}, 1, 1, 0, 0},
      {{-1, -1}, 0, 0, 0, 0}, {{1, -2}, 1, 1, 0, 0},  // haploid in a diploid record: skipped
  };
  for (const auto& c : cases) {
    AfdistSite s;
    s.ploidy = 2;  // the record's ploidy
    afdist::bcftools_add_sample(s, c.g.data(), 2);
    EXPECT_EQ(s.an, c.an);
    EXPECT_EQ(s.ac1, c.ac1);
    EXPECT_EQ(s.n_dosage1, c.d1);
    EXPECT_EQ(s.n_dosage2, c.d2);
  }
  // Triploid: a het sample adds one per distinct allele (bcftools' polyploid rule).
  AfdistSite t;
  const std::int8_t tri[3] = {0, 1, 1};
  afdist::bcftools_add_sample(t, tri, 3);
  EXPECT_EQ(t.an, 2);
  EXPECT_EQ(t.ac1, 1);
  EXPECT_EQ(t.n_dosage2, 1);
}

TEST(StatsAfdist, BinLookupsMatchLinearScan) {
  for (int nbins : {1, 2, 3, 7, 10, 33}) {
    std::vector<float> ef(static_cast<std::size_t>(nbins) + 1);
    std::vector<double> ed(static_cast<std::size_t>(nbins) + 1);
    for (int i = 0; i <= nbins; ++i) {
      ef[static_cast<std::size_t>(i)] = static_cast<float>(static_cast<double>(i) / nbins);
      ed[static_cast<std::size_t>(i)] = i * (1.0 / nbins);
    }
    ed.back() = 1.0125;
    for (int an = 1; an <= 200; ++an) {
      for (int ac = 0; ac <= an; ++ac) {
        const float af = static_cast<float>(ac) / static_cast<float>(an);
        for (float v : {2.0f * af * (1.0f - af), af * af}) {
          int expect = nbins;
          if (v <= ef.back()) {
            expect = 0;
            for (int k = 0; k < nbins; ++k)
              if (ef[static_cast<std::size_t>(k)] <= v) expect = k;
          }
          ASSERT_EQ(afdist::bcftools_bin(v, ef.data(), nbins), expect) << v;
        }
        const double afd = static_cast<double>(ac) / an;
        for (double v : {2.0 * afd * (1.0 - afd), afd * afd}) {
          int expect = -1;  // np.digitize(v, ed) - 1
          for (int k = 0; k <= nbins; ++k)
            if (ed[static_cast<std::size_t>(k)] <= v) expect = k;
          ASSERT_EQ(afdist::digitize_bin(v, ed.data(), nbins), expect) << v;
        }
      }
    }
  }
}

TEST(StatsAfdist, ZarrDefinitionAgainstDirectTranscription) {
  std::mt19937_64 rng(7);
  AfdistAccumulator acc;
  acc.init({AfdistMethod::ZarrAfdist, 10}, 25, 2);
  std::vector<std::uint64_t> expect(10, 0);
  std::vector<double> bins(11);
  for (int i = 0; i <= 10; ++i) bins[static_cast<std::size_t>(i)] = i * 0.1;
  bins[10] = 1.0 + 0.0125;
  auto digitize = [&](double x) {
    int k = 0;
    while (k <= 10 && bins[static_cast<std::size_t>(k)] <= x) ++k;
    return k;  // np.digitize
  };
  for (int v = 0; v < 500; ++v) {
    auto g = random_calls(rng, 25, 2);
    AfdistSite s;
    long het = 0, hom_alt = 0, ref = 0;
    for (int i = 0; i < 25; ++i) {
      const int a = g[static_cast<std::size_t>(2 * i)], b = g[static_cast<std::size_t>(2 * i + 1)];
      if (a == b) {
        if (a != 0) ++hom_alt;
      } else {
        ++het;
      }
      ref += (a == 0) + (b == 0);
      afdist::zarr_add_sample(s, &g[static_cast<std::size_t>(2 * i)]);
    }
    const double af = (50.0 - static_cast<double>(ref)) / 50.0;
    const int ira = digitize(2 * af * (1 - af)), iaa = digitize(af * af);
    if (ira >= 1 && ira <= 10)
      expect[static_cast<std::size_t>(ira - 1)] += static_cast<std::uint64_t>(het);
    if (iaa >= 1 && iaa <= 10)
      expect[static_cast<std::size_t>(iaa - 1)] += static_cast<std::uint64_t>(hom_alt);
    const AfdistSite one[1] = {s};
    acc.accumulate(one, {});
  }
  EXPECT_EQ(acc.finalize().counts, expect);
}

TEST(StatsAfdist, MergeOfAccumulatorsIsAdditive) {
  AfdistAccumulator a, b, whole;
  for (auto* x : {&a, &b, &whole}) x->init({AfdistMethod::Bcftools, 10}, 10, 2);
  std::mt19937_64 rng(3);
  for (int v = 0; v < 300; ++v) {
    AfdistSite s;
    auto g = random_calls(rng, 10, 2);
    for (int i = 0; i < 10; ++i)
      afdist::bcftools_add_sample(s, &g[static_cast<std::size_t>(2 * i)], 2);
    const AfdistSite one[1] = {s};
    (v % 3 ? a : b).accumulate(one, {});
    whole.accumulate(one, {});
  }
  a.merge(b);
  EXPECT_EQ(a.finalize().counts, whole.finalize().counts);
  EXPECT_EQ(a.finalize().sites, 300);
}

TEST(StatsAfdist, RejectsBadOptions) {
  AfdistAccumulator a;
  EXPECT_THROW(a.init({AfdistMethod::ZarrAfdist, 10}, 5, 3), vczstats::Error);
  EXPECT_THROW(a.init({AfdistMethod::Bcftools, 0}, 5, 2), vczstats::Error);
  EXPECT_THROW(parse_afdist_method("plink"), vczstats::Error);
}
