// The matrix family gives the same results with --device gpu as with --device cpu, on the stores
// of gpu_test_stores.tsv and the Ag1000G store: KING (integer pair counts, so the text and the
// binary doubles are identical), and the GRM, distances and PCA to 1e-9 relative (their sums of
// products are floating point, added in another order). One ctest test per store (Ag1000G and the
// wide stores in slices of the command list). Skips visibly without a GPU.

#include <gtest/gtest.h>

#include <cstdlib>

#include <cmath>
#include <sstream>

#include "backend/gpu_test_support.hpp"
#include "test_util.hpp"

namespace {

std::vector<double> numbers_of(const std::string& text) {
  std::vector<double> v;
  std::istringstream in(text);
  std::string line, cell;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    while (ls >> cell) {
      try {
        std::size_t used = 0;
        const double d = std::stod(cell, &used);
        if (used == cell.size()) v.push_back(d);
      } catch (const std::exception&) {  // sample names, headers, nan
      }
    }
  }
  return v;
}

void expect_same_on_both_devices(const std::string& store, const gputest::StoreCase& sc) {
  const std::string s = vcztest::shell_quote(store) + " ";
  // Row passes and units of a few variants cut the sums everywhere; on Ag1000G's million
  // variants, units of 7 (145,000 units, each with its own copies and events) times 20 row passes
  // take minutes on the GPU, so the large store is cut into 3 passes of units of 5,000.
  const bool large = store.find("ag1000g") != std::string::npos;
  const std::vector<std::string> exact = {
      "king " + s,
      "king " + s + "--table --maf 0.05",
      // The doubles themselves (the GPU computes them where its sums lie), NaN bits included.
      "king " + s + "--bin",
      "king " + s + "--bin --rows-per-pass 7",
      "king " + s +
          (large ? "--rows-per-pass 40 --max-unit-variants 5000"
                 : "--rows-per-pass 5 --max-unit-variants 7"),
  };
  const std::vector<std::string> close = {
      "grm " + s,
      "grm " + s + "--cov --shape square --rows-per-pass 9",
      "distance " + s,
      "distance " + s + "--metric ibs --flat-missing --maf 0.1",
      "pca " + s + "-k 3 --exact",
  };
  // Stores whose calls are all missing for the matrices (haploid, triploid) make some commands
  // fail (PCA of an empty GRM): then both devices must fail.
  auto both = [](const std::string& c, std::string& cpu, std::string& gpu) {
    const auto a = vcztest::run(vcztest::binary() + " " + c + " --device cpu -t 2");
    const auto b = vcztest::run(vcztest::binary() + " " + c + " --device gpu -t 3");
    EXPECT_EQ(a.exit_code, b.exit_code) << c << "\n" << a.err << "\n" << b.err;
    if (a.exit_code != 0 || b.exit_code != 0) return false;
    cpu = a.out;
    gpu = b.out;
    EXPECT_GT(cpu.size(), 0u) << c;
    return true;
  };
  std::string cpu_text, gpu_text;
  std::size_t index = 0;  // the command's index in exact, then close
  for (const auto& c : exact) {
    if (!sc.takes(index++)) continue;
    if (both(c, cpu_text, gpu_text)) {
      EXPECT_EQ(cpu_text, gpu_text) << c;
    }
  }
  for (const auto& c : close) {
    if (!sc.takes(index++)) continue;
    if (!both(c, cpu_text, gpu_text)) continue;
    const auto cpu = numbers_of(cpu_text), gpu = numbers_of(gpu_text);
    ASSERT_EQ(cpu.size(), gpu.size()) << c;
    const bool pca = c.rfind("pca", 0) == 0;  // eigenvectors: up to sign
    for (std::size_t k = 0; k < cpu.size(); ++k) {
      const double a = pca ? std::fabs(cpu[k]) : cpu[k], b = pca ? std::fabs(gpu[k]) : gpu[k];
      if (std::isnan(a) || std::isnan(b)) {
        EXPECT_TRUE(std::isnan(a) && std::isnan(b)) << c << " value " << k;
        continue;
      }
      ASSERT_NEAR(a, b, 1e-9 * std::fabs(a) + 1e-12) << c << " value " << k;
    }
  }
}

class CudaMatrixCliStores : public ::testing::TestWithParam<gputest::StoreCase> {};

}  // namespace

TEST_P(CudaMatrixCliStores, MatricesAreTheSameOnGpuAndCpu) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const gputest::StoreCase& c = GetParam();
  const std::string store = gputest::case_store(dir, c);
  VCZ_REQUIRE_CASE_STORE(store, c);
  expect_same_on_both_devices(store, c);
}

INSTANTIATE_TEST_SUITE_P(Stores, CudaMatrixCliStores,
                         ::testing::ValuesIn(gputest::store_cases(
                             {{"ag1000g", 2}, {"wide_int8", 3}, {"wide_int32", 2}})),
                         gputest::case_name);
