// Every population statistic gives the same output with --device gpu as with --device cpu (the
// allele-counts heavy pass runs on the GPU; the reductions are the same host code), on the
// stores of gpu_test_stores.tsv and the Ag1000G store, with populations split across sample
// chunks, regions and small work units. Skips visibly without a GPU.

#include <gtest/gtest.h>

#include <fstream>

#include "backend/gpu_test_support.hpp"
#include "test_util.hpp"

namespace {

void expect_same_on_both_devices(const vcztest::TempDir& dir, const std::string& store) {
  const std::string pops = gputest::write_pops(dir, store);
  const std::string s = vcztest::shell_quote(store) + " -P " + vcztest::shell_quote(pops) + " ";
  const std::vector<std::string> commands = {
      "freq " + s,
      "geno-counts " + s + "--max-unit-variants 7",
      "hardy " + s,
      "missing " + s,
      "diversity " + s + "--window-size 700 --window-step 300",
      "divergence " + s + "--window-variants 13",
      "stats " + s +
          "--window-size 2000 --stats pi,theta_w,tajima_d,dxy,fst_hudson,fst_wc,pbs "
          "--pbs p0,p1,p2",
      "sfs " + s + "--folded",
      "fstats " + s + "--f3 p0,p1,p2 --blocks 20",
      "afdist " + vcztest::shell_quote(store),
  };
  for (const auto& c : commands) {
    const std::string cpu = vcztest::run_ok(vcztest::binary() + " " + c + " --device cpu -t 2");
    const std::string gpu = vcztest::run_ok(vcztest::binary() + " " + c + " --device gpu -t 3");
    EXPECT_EQ(cpu, gpu) << c;
    EXPECT_GT(cpu.size(), 0u) << c;
  }
}

}  // namespace

TEST(CudaStatsCli, EveryStatisticIsTheSameOnGpuAndCpu) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const int stores = gputest::for_each_test_store(
      dir, [&](const std::string& p) { expect_same_on_both_devices(dir, p); });
  if (stores == 0)
    GTEST_SKIP() << "skipped: no test store (needs python3-zarr and bcftools, or "
                    "VCZSTATS_TEST_STORES from scripts/fetch-gpu-deps.sh)";
}
