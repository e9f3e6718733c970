// Every population statistic gives the same output with --device gpu as with --device cpu (the
// allele-counts heavy pass runs on the GPU; the reductions are the same host code), on the
// stores of gpu_test_stores.tsv and the Ag1000G store, with populations split across sample
// chunks, regions and small work units. One ctest test per store (and per slice of the command
// list on Ag1000G), so that they run side by side. Skips visibly without a GPU.

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>

#include "backend/gpu_test_support.hpp"
#include "test_util.hpp"

namespace {

using gputest::StoreCase;

/// Ag1000G (10^6 sites): the commands that cut it into units of a few variants read 100 kb of
/// it (145,000 units of 7 variants take minutes per run); the small stores cover those cuts whole.
std::string tiny_units(const std::string& store) {
  return store.find("ag1000g") != std::string::npos ? "-r X:8000000-8100000 " : "";
}

class CudaStatsCliStores : public ::testing::TestWithParam<StoreCase> {};

}  // namespace

TEST_P(CudaStatsCliStores, EveryStatisticIsTheSameOnGpuAndCpu) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const StoreCase& c = GetParam();
  const std::string store = gputest::case_store(dir, c);
  VCZ_REQUIRE_CASE_STORE(store, c);
  const std::string pops = gputest::write_pops(dir, store);
  const std::string s = vcztest::shell_quote(store) + " -P " + vcztest::shell_quote(pops) + " ";
  const std::vector<std::string> commands = {
      "freq " + s,
      "geno-counts " + s + tiny_units(store) + "--max-unit-variants 7",
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
  for (std::size_t k = 0; k < commands.size(); ++k) {
    if (!c.takes(k)) continue;
    const std::string& cmd = commands[k];
    const std::string cpu = vcztest::run_ok(vcztest::binary() + " " + cmd + " --device cpu -t 2");
    const std::string gpu = vcztest::run_ok(vcztest::binary() + " " + cmd + " --device gpu -t 3");
    EXPECT_EQ(cpu, gpu) << cmd;
    EXPECT_GT(cpu.size(), 0u) << cmd;
  }
}

TEST(CudaStatsCli, AutoLeavesTheGpuForTheCpuOnASmallStore) {
  // --device auto weighs the GPU's setup against the CPU's time (device.hpp): 10^4 calls stay
  // on the CPU and -v says why; --device gpu still runs there, and --gpu-decode on keeps auto on
  // the GPU.
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const std::string store = (dir.path() / "small.vcz").string();
  vcztest::run_ok(vcztest::binary() + " simulate --samples 50 --variants 200 --seed 3 " +
                  vcztest::shell_quote(store));
  auto r = vcztest::run(vcztest::binary() + " afdist -v -t 2 " + vcztest::shell_quote(store));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("auto: the CPU (2 threads) is estimated quicker"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("vczstats: device cpu"), std::string::npos) << r.err;
  for (const std::string opt : {"--device gpu", "--gpu-decode on"}) {
    r = vcztest::run(vcztest::binary() + " afdist -v -t 2 " + opt + " " +
                     vcztest::shell_quote(store));
    ASSERT_EQ(r.exit_code, 0) << opt << ": " << r.err;
    EXPECT_EQ(r.err.find("auto: the CPU"), std::string::npos) << opt << ": " << r.err;
    EXPECT_NE(r.err.find("vczstats: device gpu"), std::string::npos) << opt << ": " << r.err;
  }
}

// The site filters, projected spectra and LD summaries of this round, on both devices: the
// filters select sites on the host from the same counts, the projection and the LD bins reduce
// on the host, so the GPU must give the CPU's bytes. A command the CPU refuses for a store (LD
// of a non-diploid store, ld-stats of unphased calls) must fail on the GPU with the same error.
TEST_P(CudaStatsCliStores, FiltersProjectionsAndLdSummariesAreTheSameOnGpuAndCpu) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const StoreCase& sc = GetParam();
  const std::string store = gputest::case_store(dir, sc);
  VCZ_REQUIRE_CASE_STORE(store, sc);
  int taken = 0, compared = 0, refused = 0;
  const std::string pops = gputest::write_pops(dir, store);
  // Ag1000G (10^6 sites): 100 kb of it, or the pairs and matrices take minutes per run.
  const std::string q = vcztest::shell_quote(store) + " " + tiny_units(store);
  const std::string s = q + "-P " + vcztest::shell_quote(pops) + " ";
  const std::string f = "--maf 0.02 --geno 0.2 --hwe 1e-8 --snps-only ";
  const std::vector<std::string> commands = {
      "freq " + s + f,
      "stats " + s + f + "--window-size 2000 --stats pi,theta_w,tajima_d,dxy,fst_hudson",
      "sfs " + s + "--max-alleles 2 --mac 1 --folded",
      "sfs " + s + "--project 6 --folded",
      "sfs " + s + "--project p0=4,p1=6 --joint p0,p1 --format fs",
      "sfs " + s + "--project 4 --window-size 3000",
      "sfs " + s + "--project 8 --project-preview",
      "ld " + q + f + "--r2 --ld-window-r2 0 --ld-window-kb 2",
      "ld " + q + "--decay 0:4000:500",
      "ld " + s + "--decay 0:4000:500",
      "ld " + q + "--decay 0:4000:500 --hap",
      "ld " + q + "--ld-scores --ld-wind-kb 3",
      "ld-stats " + q + "--bp-bins 0,500,1kb,4kb",
      "prune " + q + f + "--indep-pairwise 50 5 0.2 --out " +
          vcztest::shell_quote((dir / "pr").string()) + " && cat " +
          vcztest::shell_quote((dir / "pr.prune.in").string()),

      "king " + q + "--geno 0.2 --table",
      "afdist " + q + f,
      "freq " + s + "-i 'MAF>0.05 && F_MISSING<0.2 && N_ALT=1'",
      "stats " + s + "-e 'AC<3 || TYPE!=\"snp\"' --window-size 2000 --stats pi,fst_hudson",
  };
  for (std::size_t k = 0; k < commands.size(); ++k) {
    if (!sc.takes(k)) continue;
    ++taken;
    const std::string& c = commands[k];
    // (prune's `&& cat`: the device options go before the &&)
    const std::string gpu_cmd = c.find(" && ") == std::string::npos
                                    ? c + " --device gpu -t 3"
                                    : std::string(c).insert(c.find(" && "), " --device gpu -t 3");
    const std::string cpu_cmd = c.find(" && ") == std::string::npos
                                    ? c + " --device cpu -t 2"
                                    : std::string(c).insert(c.find(" && "), " --device cpu -t 2");
    const auto a = vcztest::run(vcztest::binary() + " " + cpu_cmd);
    const auto b = vcztest::run(vcztest::binary() + " " + gpu_cmd);
    if (a.exit_code != 0) {
      EXPECT_NE(b.exit_code, 0) << c << "\nCPU: " << a.err;
      ++refused;
      continue;
    }
    EXPECT_EQ(b.exit_code, 0) << c << "\n" << b.err;
    EXPECT_TRUE(a.out == b.out) << c;  // (not EXPECT_EQ: the outputs run to megabytes)
    // prune of a non-diploid store keeps nothing, on both devices
    if (!c.starts_with("prune")) {
      EXPECT_GT(a.out.size(), 0u) << c;
    }
    ++compared;
  }
  // (grm is left out: the GPU's GEMM sums in another order; CudaMatrixCli compares it within
  // rounding.) The CPU refuses 4 commands of one store (the haploid store: 15 haplotypes, too
  // few for the projections); every other one must compare.
  std::cout << "compared " << compared << " outputs, " << refused << " refused on both\n";
  EXPECT_GE(compared, taken - 4);
}

// Ag1000G in two slices of each command list: the longest of these tests.
INSTANTIATE_TEST_SUITE_P(Stores, CudaStatsCliStores,
                         ::testing::ValuesIn(gputest::store_cases({{"ag1000g", 2}})),
                         gputest::case_name);

// --min-gq/--min-dp and the FMT/GQ, FMT/DP terms of -i/-e on the GPU: the host decodes and masks
// the genotypes (the device decoders do not read call_GQ), and every family gives the CPU's
// output byte for byte (grm and distance are left out: the GEMM sums in another order). One
// test per mask.
class CudaStatsCliMasks : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaStatsCliMasks, GenotypeMasksAreTheSameOnGpuAndCpu) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const std::string store = gputest::gq_store(dir);
  if (store.empty())
    GTEST_SKIP() << "skipped: no GQ store (needs python3-zarr and bcftools, or "
                    "VCZSTATS_TEST_STORES from scripts/fetch-gpu-deps.sh)";
  const std::string pops = gputest::write_pops(dir, store);
  const std::string q = vcztest::shell_quote(store) + " ";
  const std::string s = q + "-P " + vcztest::shell_quote(pops) + " ";
  const std::string& masks = GetParam();
  for (const std::string& c : std::vector<std::string>{
           "freq " + s, "missing " + q, "hardy " + q,
           "stats " + s + "--window-size 2000 --stats pi,theta_w,tajima_d,dxy,fst_hudson",
           "sfs " + s + "--project 6", "fstats " + s + "--f2 p0,p1", "afdist " + q,
           "sample-stats " + q, "ld " + q + "--r2 --ld-window-r2 0 --ld-window-kb 2",
           "ld-stats " + q + "--bp-bins 0,500,2kb", "king " + q + "--table"}) {
    const std::string cmd = c + " " + masks;
    SCOPED_TRACE(cmd);
    const auto a = vcztest::run(vcztest::binary() + " " + cmd + " --device cpu -t 2");
    const auto b = vcztest::run(vcztest::binary() + " " + cmd + " --device gpu -t 3");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_TRUE(a.out == b.out);
    EXPECT_GT(a.out.size(), 0u);
  }
  // The masks change the result (else the comparison above would prove nothing).
  const auto plain = vcztest::run(vcztest::binary() + " missing " + q + "--device gpu");
  const auto masked = vcztest::run(vcztest::binary() + " missing " + q + masks + " --device gpu");
  EXPECT_NE(plain.out, masked.out) << masks;
  if (masks != "--min-gq 20") return;
  // --gpu-decode on cannot mask: a usage error, not a silently unmasked result.
  const auto on =
      vcztest::run(vcztest::binary() + " freq " + q + "--min-gq 20 --device gpu --gpu-decode on");
  EXPECT_EQ(on.exit_code, 2) << on.err;
  EXPECT_NE(on.err.find("--gpu-decode on"), std::string::npos) << on.err;
}

namespace {
std::string mask_name(const ::testing::TestParamInfo<std::string>& info) {
  const char* names[] = {"min_gq", "min_dp", "include", "exclude"};
  return names[info.index];
}
}  // namespace

INSTANTIATE_TEST_SUITE_P(Masks, CudaStatsCliMasks,
                         ::testing::Values("--min-gq 20", "--min-dp 8 --maf 0.05",
                                           "-i 'FMT/GQ>=20 && FMT/DP>=8'",
                                           "-e 'FMT/GQ<30 || N_ALT>1'"),
                         mask_name);
