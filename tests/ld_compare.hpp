#pragma once
// r2 of pairs against a reference tool's (tests/cli/ld_reference_test.cpp,
// tests/backend/cuda_ld_cli_test.cpp): the same pairs, and values within the tool's printed
// digits.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace vcztest {

/// One row of a pair table.
struct PairLine {
  std::string chr_a, snp_a, chr_b, snp_b;
  std::int64_t bp_a = 0, bp_b = 0;
  double r2 = 0;
};

/// Call @p f(const PairLine&) with each row of plink's whitespace-aligned .ld (CHR_A BP_A SNP_A
/// CHR_B BP_B SNP_B R2) or, with @p ours, ld's TSV (the same with n before r2); the header and
/// comments skipped.
template <class F>
void for_each_pair(const std::string& path, bool ours, F&& f) {
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  bool header = true;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::istringstream s(line);
    PairLine p;
    std::string n, r2;
    s >> p.chr_a >> p.bp_a >> p.snp_a >> p.chr_b >> p.bp_b >> p.snp_b;
    if (ours) s >> n;
    s >> r2;
    p.r2 = std::strtod(r2.c_str(), nullptr);
    f(p);
  }
}

/// Expect @p got to hold the pairs of @p want (more than @p at_least) with r2 within 1e-5
/// (relative above 1); the first mismatches are reported.
template <class Key>
void expect_same_r2(const std::map<Key, double>& want, const std::map<Key, double>& got,
                    std::size_t at_least) {
  ASSERT_GT(want.size(), at_least);
  ASSERT_EQ(want.size(), got.size());
  int bad = 0;
  for (const auto& [k, r2] : want) {
    const auto it = got.find(k);
    ASSERT_NE(it, got.end()) << k.first << " " << k.second;
    if (!(std::fabs(it->second - r2) <= 1e-5 * std::max(1.0, std::fabs(r2))) && ++bad <= 5)
      ADD_FAILURE() << k.first << " " << k.second << ": reference " << r2 << ", ours "
                    << it->second;
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace vcztest
