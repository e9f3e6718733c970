// The allele-counts heavy pass against a brute-force reference written from the definition in
// counts.hpp (sets of alleles per sample), for every width, ploidy, population layout and the
// int8 diploid fast path.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "vczstats/counts.hpp"

using namespace vczstats;
using namespace vczstats::stats;

namespace {

// Expected counts of one sample, from the definition: the slots before the first -2; missing if
// any is negative; else by the set of alleles.
void reference_add(std::vector<std::int32_t>& c, std::size_t base, const std::vector<long>& call,
                   int alleles) {
  std::vector<long> slots;
  for (long a : call) {
    if (a == -2) break;
    slots.push_back(a);
  }
  if (slots.empty()) return;
  bool missing = false;
  std::set<long> distinct;
  for (long a : slots) {
    if (a < 0) {
      missing = true;
      continue;
    }
    c[base + static_cast<std::size_t>(alleles + kCalled)]++;
    if (a < alleles) c[base + static_cast<std::size_t>(a)]++;
    distinct.insert(a);
  }
  int cls;
  if (missing)
    cls = kMissing;
  else if (distinct == std::set<long>{0})
    cls = kHomRef;
  else if (distinct.contains(0))
    cls = kHetRef;
  else if (distinct.size() == 1)
    cls = kHomAlt;
  else
    cls = kHetAlt;
  c[base + static_cast<std::size_t>(alleles + cls)]++;
}

template <class T>
void check(std::mt19937_64& rng, int ploidy, int trial) {
  const std::int64_t variants = 1 + static_cast<std::int64_t>(rng() % 20);
  const std::int64_t samples = 1 + static_cast<std::int64_t>(rng() % 120);
  const int alleles = 1 + static_cast<int>(rng() % 6);
  const int pops = 1 + static_cast<int>(rng() % 4);
  const std::int64_t offset = static_cast<std::int64_t>(rng() % 7);  // block's first sample
  // Populations: sometimes in runs, sometimes interleaved.
  std::vector<std::int32_t> pop_of(static_cast<std::size_t>(offset + samples));
  const bool runs = rng() % 2 == 0;
  for (std::size_t i = 0; i < pop_of.size(); ++i)
    pop_of[i] = runs ? static_cast<std::int32_t>(i * pops / pop_of.size())
                     : static_cast<std::int32_t>(rng() % pops);
  std::vector<T> g(static_cast<std::size_t>(variants * samples * ploidy));
  for (auto& a : g) {
    const auto r = rng() % 20;
    a = r < 2 ? T(-1) : r < 4 ? T(-2) : T(static_cast<long>(rng() % (alleles + 2)));
  }
  if (pops == 1 && rng() % 2) pop_of.clear();  // the "no populations" form
  GenotypeChunkView view;
  view.data = reinterpret_cast<const std::byte*>(g.data());
  view.elem_bytes = sizeof(T);
  view.variants = variants;
  view.samples = samples;
  view.ploidy = ploidy;
  view.sample_offset = pop_of.empty() ? 0 : offset;

  const CountsLayout layout{alleles, pops};
  const auto w = static_cast<std::size_t>(layout.width());
  std::vector<std::int32_t> expected(static_cast<std::size_t>(variants * layout.site_width()));
  for (std::int64_t v = 0; v < variants; ++v)
    for (std::int64_t s = 0; s < samples; ++s) {
      std::vector<long> call;
      for (int j = 0; j < ploidy; ++j)
        call.push_back(
            static_cast<long>(g[static_cast<std::size_t>((v * samples + s) * ploidy + j)]));
      const std::int32_t p =
          pop_of.empty() ? 0 : pop_of[static_cast<std::size_t>(view.sample_offset + s)];
      reference_add(expected, static_cast<std::size_t>(v * layout.site_width()) + p * w, call,
                    alleles);
    }
  for (bool generic : {false, true}) {
    AlleleCountsPass pass;
    pass.init(layout, pop_of);
    pass.set_generic_only(generic);
    std::vector<std::int32_t> got(expected.size(), 0);
    pass.count_sites(view, got);
    pass.count_sites(view, got);  // adds: twice the counts
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], 2 * expected[i])
          << "trial " << trial << " elem " << sizeof(T) << " ploidy " << ploidy << " alleles "
          << alleles << " pops " << pops << " generic " << generic << " index " << i;
  }
}

}  // namespace

TEST(StatsAlleleCounts, EqualsBruteForceForEveryLayout) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 150; ++trial) {
    check<std::int8_t>(rng, 2, trial);
    check<std::int8_t>(rng, 1 + static_cast<int>(rng() % 4), trial);
    check<std::int16_t>(rng, 1 + static_cast<int>(rng() % 4), trial);
    check<std::int32_t>(rng, 2, trial);
    check<std::int64_t>(rng, 3, trial);
  }
}

TEST(StatsAlleleCounts, RejectsBadPopulationMaps) {
  AlleleCountsPass pass;
  EXPECT_ANY_THROW(pass.init({2, 2}, {0, 2}));
  EXPECT_ANY_THROW(pass.init({0, 1}, {}));
}
