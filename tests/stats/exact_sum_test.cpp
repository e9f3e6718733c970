// stats::ExactSum against Python's math.fsum (the correctly rounded sum of the same doubles), on
// terms that are multiples of 2^-96 (where the sum is exact): equal bits. Any order and any
// grouping of the terms, merged with +=, gives the same sum; non-finite terms follow IEEE rules.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "test_util.hpp"
#include "vczstats/exact_sum.hpp"

using vczstats::stats::ExactSum;

namespace {

/// Random terms of mixed signs and magnitudes 2^lo .. 2^hi (all multiples of 2^-96 when
/// lo >= -43), with exact cancellations and repeats.
std::vector<double> random_terms(std::mt19937_64& rng, std::size_t n, int lo, int hi) {
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  std::uniform_int_distribution<int> exp(lo, hi);
  std::vector<double> v;
  while (v.size() < n) {
    double x = std::ldexp(mant(rng), exp(rng));
    if (rng() % 2) x = -x;
    v.push_back(x);
    if (rng() % 8 == 0) v.push_back(-x);  // cancels exactly
    if (rng() % 8 == 0) v.push_back(x);
  }
  return v;
}

/// math.fsum of @p terms, computed by Debian's python3 from their hex forms.
double fsum(const vcztest::TempDir& dir, const std::vector<double>& terms) {
  const auto path = dir / "terms.txt";
  {
    std::ofstream f(path);
    for (double x : terms) f << std::hexfloat << x << "\n";
  }
  const std::string out = vcztest::run_ok(
      vcztest::python() + " -c 'import math,sys; print(math.fsum(float.fromhex(l) for l in " +
      "open(sys.argv[1])).hex())' " + vcztest::shell_quote(path.string()));
  return std::strtod(out.c_str(), nullptr);
}

ExactSum sum_of(const std::vector<double>& terms) {
  ExactSum s;
  for (double x : terms) s += x;
  return s;
}

}  // namespace

TEST(ExactSum, EqualsCorrectlyRoundedSum) {
  vcztest::TempDir dir;
  std::mt19937_64 rng(7);
  const std::pair<int, int> ranges[] = {{-43, 60}, {-20, 2}, {-43, -30}, {0, 62}, {-3, 3}};
  for (const auto& [lo, hi] : ranges)
    for (std::size_t n : {1, 2, 10, 1000, 20000}) {
      const auto terms = random_terms(rng, n, lo, hi);
      const double want = fsum(dir, terms);
      const double got = sum_of(terms).value();
      EXPECT_EQ(std::bit_cast<std::uint64_t>(want), std::bit_cast<std::uint64_t>(got))
          << "range 2^" << lo << "..2^" << hi << ", " << terms.size() << " terms: fsum "
          << std::hexfloat << want << ", ExactSum " << got;
    }
}

TEST(ExactSum, AnyOrderAndGroupingGivesTheSameBits) {
  std::mt19937_64 rng(11);
  auto terms = random_terms(rng, 5000, -60, 40);  // terms below 2^-43 are rounded once each
  const ExactSum want = sum_of(terms);
  double naive_min = INFINITY, naive_max = -INFINITY;
  for (int rep = 0; rep < 20; ++rep) {
    std::shuffle(terms.begin(), terms.end(), rng);
    double naive = 0;
    for (double x : terms) naive += x;
    naive_min = std::min(naive_min, naive);
    naive_max = std::max(naive_max, naive);
    // Split into random consecutive groups, summed apart and merged left to right or in a tree.
    std::vector<ExactSum> parts(1);
    for (double x : terms) {
      if (rng() % 50 == 0) parts.emplace_back();
      parts.back() += x;
    }
    ExactSum merged;
    if (rep % 2)
      for (const auto& p : parts) merged += p;
    else {
      while (parts.size() > 1) {
        std::vector<ExactSum> next;
        for (std::size_t i = 0; i < parts.size(); i += 2) {
          ExactSum s = parts[i];
          if (i + 1 < parts.size()) s += parts[i + 1];
          next.push_back(s);
        }
        parts = next;
      }
      merged = parts[0];
    }
    EXPECT_TRUE(merged == want) << "rep " << rep;
    EXPECT_EQ(merged.value(), want.value());
  }
  // The naive double sums of the same orders differ among themselves (why ExactSum exists),
  // and ExactSum's value lies within their spread.
  EXPECT_LT(naive_min, naive_max);
  EXPECT_LE(naive_min, want.value());
  EXPECT_GE(naive_max, want.value());
}

TEST(ExactSum, SmallTermsAreRoundedToTheGrid) {
  ExactSum s;
  s += std::ldexp(1.0, -97);  // half a unit: rounds away from zero to one unit
  EXPECT_EQ(s.value(), std::ldexp(1.0, -96));
  ExactSum t;
  t += std::ldexp(1.0, -99);  // a quarter unit and less: 0
  t += std::numeric_limits<double>::denorm_min();
  EXPECT_EQ(t.value(), 0.0);
  ExactSum u;
  u += 0.1;  // 0.1 has bits below 2^-96: the sum is 0.1 rounded to 96 fraction bits
  EXPECT_EQ(u.value(), 0.1);
  u += -0.1;
  EXPECT_EQ(u.value(), 0.0);
}

TEST(ExactSum, NonFiniteTerms) {
  const double inf = std::numeric_limits<double>::infinity();
  ExactSum a;
  a += 1.0;
  a += inf;
  EXPECT_EQ(a.value(), inf);
  ExactSum b;
  b += -inf;
  EXPECT_EQ(b.value(), -inf);
  ExactSum c = a;
  c += b;
  EXPECT_TRUE(std::isnan(c.value()));
  ExactSum d;
  d += std::numeric_limits<double>::quiet_NaN();
  d += 2.0;
  EXPECT_TRUE(std::isnan(d.value()));
  ExactSum e;
  e += std::ldexp(1.0, 64);  // out of range: an infinity of its sign
  EXPECT_EQ(e.value(), inf);
  ExactSum f;
  f += -std::ldexp(1.0, 63) * 1.5;  // in range
  EXPECT_EQ(f.value(), -std::ldexp(1.0, 63) * 1.5);
}

TEST(StagedSum, PartitionsOfWholeUnitsMergeToOnePass) {
  using vczstats::stats::StagedSum;
  std::mt19937_64 rng(5);
  // 200 units of 0..50 terms each.
  std::vector<std::vector<double>> units(200);
  for (auto& u : units) u = random_terms(rng, rng() % 51, -50, 10);
  StagedSum one;
  for (const auto& u : units) {
    for (double x : u) one += x;
    one.flush();
  }
  for (int rep = 0; rep < 30; ++rep) {
    // Cut the units into consecutive partitions; the last unit of a partition may stay staged
    // (a rank's last unit is flushed or not: merging must not care).
    std::vector<bool> starts(units.size());
    for (std::size_t i = 1; i < units.size(); ++i) starts[i] = rng() % 20 == 0;
    std::vector<StagedSum> parts(1);
    for (std::size_t i = 0; i < units.size(); ++i) {
      if (starts[i]) parts.emplace_back();
      for (double x : units[i]) parts.back() += x;
      const bool last = i + 1 == units.size() || starts[i + 1];
      if (!last || rng() % 2) parts.back().flush();
    }
    StagedSum merged = parts[0];
    for (std::size_t i = 1; i < parts.size(); ++i) merged += parts[i];
    EXPECT_EQ(std::bit_cast<std::uint64_t>(merged.value()),
              std::bit_cast<std::uint64_t>(one.value()))
        << "rep " << rep << ", " << parts.size() << " partitions";
  }
}
