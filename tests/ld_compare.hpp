#pragma once
// r2 of pairs against a reference tool's (tests/cli/ld_reference_test.cpp,
// tests/backend/cuda_ld_cli_test.cpp): the same pairs, and values within the tool's printed
// digits.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace vcztest {

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
