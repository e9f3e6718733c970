// ld-stats --genotypes' per-population estimators (stats/ld_genotype_terms.hpp) against
// tests/tools/ref_ld_summary.py genotype-factors (the same statistics as polynomials in the nine
// genotype frequencies, each monomial's falling-factorial estimator in exact fractions), on small
// tables and on tables past the 64-bit numerators (the 128-bit path), up to 2^27 samples; and the
// packing of a genotype table into a pair's values (stats/ld_math.hpp).

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <map>
#include <sstream>
#include <string>

#include "stats/ld_genotype_terms.hpp"
#include "stats/ld_math.hpp"
#include "test_util.hpp"

namespace {

using vczstats::stats::moments::GenotypeEstimators;
using vczstats::stats::moments::GenotypeTable;
using vczstats::stats::moments::PopFactors;
namespace ld = vczstats::stats::ld;

/// The GenotypeCounts the pair band counts for the cells @p t (n_xy at 3 x + y).
ld::GenotypeCounts band_counts(const std::array<std::int64_t, 9>& t) {
  ld::GenotypeCounts c;
  for (std::int64_t v : t) c.n += v;
  c.r1 = t[3] + t[4] + t[5];
  c.r2 = t[6] + t[7] + t[8];
  c.c1 = t[1] + t[4] + t[7];
  c.c2 = t[2] + t[5] + t[8];
  c.t11 = t[4];
  c.t12 = t[5];
  c.t21 = t[7];
  c.t22 = t[8];
  return c;
}

TEST(LdGenotypeTerms, FactorsEqualTheExactReference) {
  const GenotypeEstimators estimators(true, 0xffff);
  const std::int64_t big = std::int64_t{1} << 27;
  const std::vector<std::array<std::int64_t, 9>> tables = {
      {5, 3, 1, 2, 7, 4, 0, 3, 6},
      {1, 0, 0, 0, 1, 0, 0, 0, 2},  // four samples, the fewest
      {0, 0, 3, 0, 0, 2, 1, 0, 0},
      {0, 0, 0, 0, 9, 0, 0, 0, 0},  // every sample het at both
      {4100, 3900, 1200, 2500, 7000, 4300, 900, 3100, 6000},
      {610000, 12, 48000, 3, 999999, 0, 71000, 2, 410000},
      {big / 9, big / 7, big / 11, big / 13, big / 5, big / 17, big / 19, big / 23, big / 29},
  };
  for (const auto& cells : tables) {
    const GenotypeTable t = vczstats::stats::moments::genotype_table(band_counts(cells));
    EXPECT_EQ(t.cell, cells);
    PopFactors f;
    estimators.factors(t, f);
    std::map<std::string, double> ours = {{"d", f.d},   {"dzp", f.dzp}, {"dzq", f.dzq},
                                          {"zp", f.zp}, {"zq", f.zq},   {"zz", f.zz},
                                          {"dd", f.dd}, {"dz", f.dz}};
    for (std::size_t s = 1; s < 16; ++s) {
      std::string key = "g";
      key += std::to_string(s);
      ours[key] = f.g[s];
    }
    std::string arg;
    for (std::int64_t v : cells) {
      if (!arg.empty()) arg += ',';
      arg += std::to_string(v);
    }
    SCOPED_TRACE(arg);
    std::istringstream ref(vcztest::run_ok(
        vcztest::python() + " " + vcztest::tool("ref_ld_summary.py") + " genotype-factors " + arg));
    std::string name;
    double want = 0;
    int seen = 0;
    while (ref >> name >> want) {
      ASSERT_TRUE(ours.contains(name)) << name;
      EXPECT_LE(std::fabs(ours[name] - want), 1e-12 * std::fabs(want) + 1e-300)
          << name << ": ours " << ours[name] << ", reference " << want;
      ++seen;
    }
    EXPECT_EQ(seen, 23);
  }
}

TEST(LdGenotypeTerms, TablesPackIntoAPairsValuesExactly) {
  const std::int64_t top = ld::kTableLimit - 1;
  for (const ld::GenotypeCounts& c :
       {ld::GenotypeCounts{top, top, 0, 1, top - 1, 5, top / 3, 0, top},
        ld::GenotypeCounts{0, 0, 0, 0, 0, 0, 0, 0, 0},
        ld::GenotypeCounts{40, 12, 7, 11, 9, 3, 2, 1, 4}}) {
    vczstats::PairValue v;
    v.a = 3;
    v.b = 9;
    ld::pack_genotype_table(c, v);
    const ld::GenotypeCounts back = ld::unpack_genotype_table(v);
    EXPECT_EQ(back.n, c.n);
    EXPECT_EQ(back.r1, c.r1);
    EXPECT_EQ(back.r2, c.r2);
    EXPECT_EQ(back.c1, c.c1);
    EXPECT_EQ(back.c2, c.c2);
    EXPECT_EQ(back.t11, c.t11);
    EXPECT_EQ(back.t12, c.t12);
    EXPECT_EQ(back.t21, c.t21);
    EXPECT_EQ(back.t22, c.t22);
    EXPECT_EQ(v.a, 3);
    EXPECT_EQ(v.b, 9);
  }
}

}  // namespace
