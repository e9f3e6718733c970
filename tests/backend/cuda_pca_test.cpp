// The randomized PCA on the GPU (backend/cuda/pca_product_gpu.cpp): its products against their
// definitions, and `pca --approx --device gpu` against --device cpu (eigenvalues to 1e-9
// relative, eigenvectors up to sign to 1e-6 absolute: the sums run in another order) and, where
// the Krylov block spans every sample and no call is missing, against the exact PCA on the CPU
// (the eigenvectors of the GRM, itself tested against plink2 and brute force in
// tests/cli/matrix_reference_test.cpp). Skips visibly without a GPU.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "backend/gpu_test_support.hpp"
#include "backend/site_pass.hpp"
#include "stats/packed_product_reference.hpp"
#include "test_util.hpp"

namespace {

/// The numbers of a TSV file from column @p first on (header and '#' lines skipped), by row.
std::vector<std::vector<double>> table_numbers(const std::string& path, std::size_t first) {
  std::ifstream in(path);
  std::vector<std::vector<double>> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (std::exchange(header, false)) continue;
    std::istringstream cells(line);
    std::vector<double> row;
    std::string cell;
    for (std::size_t c = 0; std::getline(cells, cell, '\t'); ++c)
      if (c >= first) row.push_back(std::stod(cell));
    rows.push_back(row);
  }
  return rows;
}

struct PcaRun {
  std::vector<double> values;
  std::vector<std::vector<double>> vectors;  // samples x k
};

PcaRun run_pca(const vcztest::TempDir& dir, const std::string& store, const std::string& options,
               const std::string& tag) {
  const std::string vec = (dir / (tag + ".tsv")).string(), ev = (dir / (tag + ".ev")).string();
  vcztest::run_ok(vcztest::binary() + " pca " + vcztest::shell_quote(store) + " " + options +
                  " -o " + vcztest::shell_quote(vec) + " --eigenvalues " +
                  vcztest::shell_quote(ev));
  PcaRun r;
  for (const auto& row : table_numbers(ev, 1)) r.values.push_back(row.at(0));
  r.vectors = table_numbers(vec, 1);
  return r;
}

void expect_same_pca(const PcaRun& want, const PcaRun& got, const std::string& what) {
  ASSERT_EQ(want.values.size(), got.values.size()) << what;
  for (std::size_t c = 0; c < want.values.size(); ++c)
    EXPECT_NEAR(got.values[c], want.values[c], 1e-9 * std::fabs(want.values[c]))
        << what << " eigenvalue " << c + 1;
  ASSERT_EQ(want.vectors.size(), got.vectors.size()) << what;
  for (std::size_t c = 0; c < want.values.size(); ++c) {
    // Up to sign: the sign of the largest entry of the reference.
    std::size_t at = 0;
    for (std::size_t i = 0; i < want.vectors.size(); ++i)
      if (std::fabs(want.vectors[i][c]) > std::fabs(want.vectors[at][c])) at = i;
    const double sign = (want.vectors[at][c] < 0) == (got.vectors[at][c] < 0) ? 1.0 : -1.0;
    for (std::size_t i = 0; i < want.vectors.size(); ++i)
      ASSERT_NEAR(sign * got.vectors[i][c], want.vectors[i][c], 1e-6)
          << what << " pc" << c + 1 << " sample " << i;
  }
}

std::string simulate(const vcztest::TempDir& dir, const std::string& name,
                     const std::string& options) {
  const std::string store = (dir / name).string();
  vcztest::run_ok(vcztest::binary() + " simulate " + options + " -t 2 " +
                  vcztest::shell_quote(store));
  return store;
}

}  // namespace

TEST(CudaPcaApprox, ProductsMatchDefinition) {
  VCZ_REQUIRE_GPU();
  // 2,500 variants of 300 samples: three tiles of rows (1,024 a tile), the last one partial.
  for (auto [m, n, l] : {std::tuple{2500, 300, 20}, {700, 613, 220}, {100, 1, 3}}) {
    const vcztest::RandomPacked x(m, n, static_cast<std::uint64_t>(m * 1000 + n));
    const auto p = vczstats::backend::make_gpu_packed_product(x.view(), 0);
    SCOPED_TRACE(std::to_string(m) + " x " + std::to_string(n) + ", l " + std::to_string(l));
    vcztest::expect_products_match_definition(*p, x, l);
  }
}

TEST(CudaPcaApprox, SameOnGpuAndCpu) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  // Missing calls; 3,000 variants: three tiles of rows on the device.
  const std::string store =
      simulate(dir, "sim", "--samples 300 --variants 3000 --missing 0.02 --seed 5");
  for (const std::string k : {"3", "10"}) {
    const std::string opts = "-k " + k + " --approx --seed 3";
    expect_same_pca(run_pca(dir, store, opts + " --device cpu -t 2", "cpu" + k),
                    run_pca(dir, store, opts + " --device gpu -t 3", "gpu" + k),
                    "pca -k " + k + " --approx");
  }
}

TEST(CudaPcaApprox, ExactWhenTheKrylovBlockSpansTheSamples) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  // No missing calls, 2k(k + 1) = 40 >= 40 samples: the randomized method is exact.
  const std::string store = simulate(dir, "small", "--samples 40 --variants 1500 --seed 9");
  expect_same_pca(run_pca(dir, store, "-k 4 --exact --device cpu", "exact"),
                  run_pca(dir, store, "-k 4 --approx --device gpu", "approx"),
                  "pca -k 4 --approx --device gpu against --exact");
}
