// The randomized PCA's CPU products (stats/packed_product.hpp) against their definitions, on
// shapes that cut the tiles (128 x 1,024 and 256 x 512) and the packed words anywhere, and on
// a matrix of one sample and of fewer variants than one tile.

#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "stats/packed_product_reference.hpp"

TEST(PackedProduct, CpuMatchesDefinition) {
  for (auto [m, n, l] :
       {std::tuple{700, 613, 20}, {300, 2100, 20}, {100, 1, 3}, {3, 300, 220}, {513, 64, 1}}) {
    const vcztest::RandomPacked x(m, n, static_cast<std::uint64_t>(m * 1000 + n));
    const auto p = vczstats::stats::make_cpu_packed_product(x.view());
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n) + ", l " + std::to_string(l));
    vcztest::expect_products_match_definition(*p, x, l);
  }
}
