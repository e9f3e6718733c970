#pragma once
// A random packed genotype matrix and X G, X^T H from their definitions, one genotype at a
// time: the reference of the randomized PCA's products (stats/packed_product.hpp) on the CPU
// (tests/stats/packed_product_test.cpp) and the GPU (tests/backend/cuda_pca_test.cpp).

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "stats/packed_product.hpp"

namespace vcztest {

/// X: @p m variants x @p n samples, random codes and random values per code.
struct RandomPacked {
  std::int64_t m, n, words;
  std::vector<std::uint64_t> rows;
  std::vector<double> values;

  RandomPacked(std::int64_t variants, std::int64_t samples, std::uint64_t seed)
      : m(variants), n(samples), words((samples + 31) / 32) {
    std::mt19937_64 rng(seed);
    rows.assign(static_cast<std::size_t>(m * words), 0);
    for (std::int64_t v = 0; v < m; ++v)
      for (std::int64_t i = 0; i < n; ++i)
        rows[static_cast<std::size_t>(v * words + i / 32)] |= (rng() & 3) << (2 * (i % 32));
    std::normal_distribution<double> normal;
    values.resize(static_cast<std::size_t>(4 * m));
    for (auto& x : values) x = normal(rng);
  }
  vczstats::stats::PackedMatrixView view() const {
    return {rows.data(), words, values.data(), m, n};
  }
  double at(std::int64_t v, std::int64_t i) const {
    const auto code = (rows[static_cast<std::size_t>(v * words + i / 32)] >> (2 * (i % 32))) & 3;
    return values[static_cast<std::size_t>(4 * v + code)];
  }
};

inline std::vector<double> random_matrix(std::int64_t rows, std::int64_t cols, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> a(static_cast<std::size_t>(rows * cols));
  for (auto& x : a) x = normal(rng);
  return a;
}

/// Check @p p's X G and X^T H against the definitions: each entry within 1e-12 of the sum of
/// the absolute values of its terms (the error bound of a sum in any order), columns written at
/// an offset of a wider matrix and the columns around them untouched.
inline void expect_products_match_definition(vczstats::stats::PackedProduct& p,
                                             const RandomPacked& x, std::int64_t l) {
  const std::int64_t m = x.m, n = x.n, ld = l + 3, col = 2;
  const auto g = random_matrix(n, l, 7);
  std::vector<double> h(static_cast<std::size_t>(m * ld), -5.0);
  p.x_times(g.data(), l, h.data(), ld, col);
  for (std::int64_t v = 0; v < m; ++v)
    for (std::int64_t j = 0; j < ld; ++j) {
      const double got = h[static_cast<std::size_t>(v * ld + j)];
      if (j < col || j >= col + l) {
        ASSERT_EQ(got, -5.0) << "X G wrote outside its columns at " << v << "," << j;
        continue;
      }
      double sum = 0, bound = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        const double t = x.at(v, i) * g[static_cast<std::size_t>(i * l + j - col)];
        sum += t;
        bound += std::fabs(t);
      }
      ASSERT_NEAR(got, sum, 1e-12 * bound + 1e-300) << "X G at " << v << "," << j - col;
    }
  const auto hh = random_matrix(m, ld, 8);
  std::vector<double> out(static_cast<std::size_t>(n * l), -5.0);
  p.xt_times(hh.data(), ld, col, l, out.data());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < l; ++j) {
      double sum = 0, bound = 0;
      for (std::int64_t v = 0; v < m; ++v) {
        const double t = x.at(v, i) * hh[static_cast<std::size_t>(v * ld + col + j)];
        sum += t;
        bound += std::fabs(t);
      }
      ASSERT_NEAR(out[static_cast<std::size_t>(i * l + j)], sum, 1e-12 * bound + 1e-300)
          << "X^T H at " << i << "," << j;
    }
}

}  // namespace vcztest
