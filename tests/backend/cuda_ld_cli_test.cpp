// ld and prune give byte-identical output with --device gpu and --device cpu (the GPU band,
// src/backend/cuda/pair_band_gpu.cpp, against the CPU band): r2, --dprime (EM on the host from
// the device's counts), --hap, prune --indep-pairwise, windows in variants and in bp, thresholds,
// on the stores of gpu_test_stores.tsv (missing calls, multi-allelic sites, other ploidies), the
// Ag1000G store and simulated stores with and without missing calls (the four-popcount path of
// rows called everywhere), with work units smaller than the window so the halo crosses units.
// One case is checked against plink 1.9 directly. Skips visibly without a GPU.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "backend/gpu_test_support.hpp"
#include "ld_compare.hpp"
#include "test_util.hpp"
#include "vczstats/vcz.hpp"

namespace {

using vcztest::binary;
using vcztest::run;
using vcztest::shell_quote;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Run `vczstats @p command` on both devices: the same exit status and stdout (and, on failure,
/// stderr); returns whether it succeeded.
bool expect_same(const std::string& command) {
  const auto cpu = run(binary() + " " + command + " --device cpu -t 2");
  const auto gpu = run(binary() + " " + command + " --device gpu -t 3");
  EXPECT_EQ(cpu.exit_code, gpu.exit_code)
      << command << "\ncpu: " << cpu.err << "\ngpu: " << gpu.err;
  EXPECT_EQ(cpu.out, gpu.out) << command;
  if (cpu.exit_code != 0) {
    EXPECT_EQ(cpu.err, gpu.err) << command;
  }
  return cpu.exit_code == 0;
}

/// The ld and prune runs of one store (those of @p c's slice); returns how many succeeded (at
/// least the r2 ones must).
int expect_ld_same_on_both_devices(const vcztest::TempDir& dir, const std::string& store,
                                   const gputest::StoreCase& c = {}) {
  // Ag1000G: 100 kb of it (about 25,000 variants) keeps the small units quick.
  const std::string s = shell_quote(store) + " " +
                        (store.find("ag1000g") != std::string::npos ? "-r X:8000000-8100000 " : "");
  const std::string pops = (dir / "ldstats.pops").string();    // A, B, C interleaved
  const std::string pops4 = (dir / "ldstats4.pops").string();  // A, B, C, D interleaved
  {
    std::ofstream f(pops), f4(pops4);
    int i = 0;
    const auto opened = vczstats::vcz::VczStore::open(store);  // sample_ids() are views into it
    for (const auto& id : opened.sample_ids())
      if (!id.empty()) {
        f << id << "\t"
          << "ABC"[i % 3] << "\n";
        f4 << id << "\t"
           << "ABCD"[i % 4] << "\n";
        ++i;
      }
  }
  const std::vector<std::string> commands = {
      "ld " + s + "--ld-window 10 --ld-window-r2 0 --max-unit-variants 7",
      "ld " + s + "--ld-window 25 --ld-window-r2 0.1 --max-unit-variants 3",
      "ld " + s + "--ld-window 100000 --ld-window-bp 300 --ld-window-r2 0",
      "ld " + s,
      "ld " + s + "--dprime --ld-window 10 --ld-window-r2 0 --max-unit-variants 5",
      "ld " + s + "--dprime --ld-window 40 --ld-window-r2 0.05",
      "ld " + s + "--hap --ld-window 10 --ld-window-r2 0 --max-unit-variants 7",
      "ld " + s + "--hap --ld-window 100000 --ld-window-bp 500 --ld-window-r2 0.2",
      "ld " + s + "--format json --ld-window 6 --ld-window-r2 0 --max-unit-variants 4",
      // the summaries: pairs reduced on the host in exact sums, so the same bits
      "ld " + s + "--decay 0:600:50 --max-unit-variants 7",
      "ld " + s + "--decay 0,10,100,1kb --window-size 2000",
      "ld " + s + "--hap --decay 0:400:100 --ld-window 30",
      // a band per population, masked (the row kernels' masks; the CPU band compacts instead)
      "ld " + s + "--decay 0,10,100,1kb --window-size 2000 --max-unit-variants 7 -P " +
          shell_quote(pops),
      "ld " + s + "--hap --decay 0:400:100 --ld-window 30 -P " + shell_quote(pops),
      "ld " + s + "--ld-scores --ld-wind-kb 0.5 --max-unit-variants 5",
      "ld " + s + "--ld-scores --ld-wind-snps 20",
      "ld-stats " + s + "--bp-bins 0,10,100,1000 --max-unit-variants 6",
      // three populations: one masked band per population (the row kernel's haplotype mask)
      "ld-stats " + s + "--bp-bins 0,10,100,1000 --max-unit-variants 6 -P " + shell_quote(pops),
      // four: the GPU bands' pairs come in the order found, sorted on the host before the walk
      "ld-stats " + s + "--bp-bins 0,10,100,1000 --max-unit-variants 9 -P " + shell_quote(pops4),
      // --genotypes: each pair's genotype table copied back (as --dprime's counts), one band
      // over every sample and one masked band per population but the last (a shorter reach:
      // each pair's factors cost a few µs on the host)
      "ld-stats " + s + "--bp-bins 0,10,300 --max-unit-variants 6 --genotypes",
      "ld-stats " + s + "--bp-bins 0,10,100 --max-unit-variants 9 --genotypes -P " +
          shell_quote(pops4),
  };
  int ok = 0;
  for (std::size_t k = 0; k < commands.size(); ++k) {
    if (!c.takes(k)) continue;
    const bool good = expect_same(commands[k]);
    if (k < 4) {
      EXPECT_TRUE(good) << commands[k];
    }
    ok += good;
  }
  // prune: the table and both files.
  std::size_t k = commands.size();
  for (const std::string args : {"--indep-pairwise 50 5 0.2 --max-unit-variants 7",
                                 "--indep-pairwise 20 3 0.5", "--indep-pairwise 5kb 1 0.1"}) {
    if (!c.takes(k++)) continue;
    const std::string cpu = (dir / "cpu").string(), gpu = (dir / "gpu").string();
    const auto a =
        run(binary() + " prune " + s + args + " --out " + shell_quote(cpu) + " --device cpu -t 2");
    const auto b =
        run(binary() + " prune " + s + args + " --out " + shell_quote(gpu) + " --device gpu -t 3");
    EXPECT_EQ(a.exit_code, 0) << args << ": " << a.err;
    EXPECT_EQ(b.exit_code, 0) << args << ": " << b.err;
    EXPECT_EQ(a.out, b.out) << args;
    EXPECT_EQ(slurp(cpu + ".prune.in"), slurp(gpu + ".prune.in")) << args;
    EXPECT_EQ(slurp(cpu + ".prune.out"), slurp(gpu + ".prune.out")) << args;
    EXPECT_FALSE((slurp(cpu + ".prune.in") + slurp(cpu + ".prune.out")).empty()) << args;
    ok += a.exit_code == 0;
  }
  return ok;
}

/// (bp_a, bp_b) -> r2 of plink's .ld (@p ours false) or of ld's TSV; pairs of positions seen
/// twice (two records at one position) are dropped from both.
using Pairs = std::map<std::pair<long, long>, double>;
Pairs read_pairs(const std::string& path, bool ours, std::set<std::pair<long, long>>& twice) {
  Pairs p;
  vcztest::for_each_pair(path, ours, [&](const vcztest::PairLine& x) {
    const std::pair<long, long> key(x.bp_a, x.bp_b);
    if (!p.emplace(key, x.r2).second) twice.insert(key);
  });
  return p;
}

class CudaLdCliStores : public ::testing::TestWithParam<gputest::StoreCase> {};

}  // namespace

TEST_P(CudaLdCliStores, LdAndPruneAreTheSameOnGpuAndCpu) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const gputest::StoreCase& c = GetParam();
  const std::string store = gputest::case_store(dir, c);
  VCZ_REQUIRE_CASE_STORE(store, c);
  EXPECT_GE(expect_ld_same_on_both_devices(dir, store, c), 7 / c.parts);
}

// Ag1000G (100 kb of it) in two slices of the command list.
INSTANTIATE_TEST_SUITE_P(Stores, CudaLdCliStores,
                         ::testing::ValuesIn(gputest::store_cases({{"ag1000g", 2}})),
                         gputest::case_name);

// Without missing calls every row takes the four-popcount path (rows called everywhere); 70
// samples fill two words per plane, 3000 fill 47 (more words than a warp's lanes); phased
// calls for --hap; small variant chunks so units are smaller than the windows. One test per store.
namespace {

struct Sim {
  int samples;
  double missing;
  int chunk;
};

void PrintTo(const Sim& s, std::ostream* os) {
  *os << s.samples << " samples, " << s.missing << " missing, chunks of " << s.chunk;
}

class CudaLdCliSimulated : public ::testing::TestWithParam<Sim> {};

}  // namespace

TEST_P(CudaLdCliSimulated, SameOnGpuAndCpu) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const Sim sim = GetParam();
  const std::string store =
      (dir / ("sim" + std::to_string(sim.samples) + "_" + std::to_string(sim.chunk) + ".vcz"))
          .string();
  vcztest::run_ok(binary() + " simulate --samples " + std::to_string(sim.samples) +
                  " --variants 1500 --seed 11 --missing " + std::to_string(sim.missing) +
                  " --variants-chunk-size " + std::to_string(sim.chunk) + " -f " +
                  shell_quote(store));
  EXPECT_GE(expect_ld_same_on_both_devices(dir, store), 9);
}

INSTANTIATE_TEST_SUITE_P(Stores, CudaLdCliSimulated,
                         ::testing::Values(Sim{70, 0.0, 40}, Sim{70, 0.03, 17}, Sim{3000, 0.0, 100},
                                           Sim{3000, 0.001, 64}),
                         [](const ::testing::TestParamInfo<Sim>& i) {
                           const Sim& s = i.param;
                           return "sim" + std::to_string(s.samples) + "_chunk" +
                                  std::to_string(s.chunk);
                         });

TEST(CudaLdCli, GpuR2MatchesPlink19OnAg1000g) {
  // The GPU band against plink 1.9 --r2 directly (positions X:8,000,000-8,030,000; multi-allelic
  // sites as REF against the rest for plink, by tests/tools/biallelic_vcf.py, as ld reads them).
  VCZ_REQUIRE_GPU();
  VCZ_REQUIRE_SHARED_DATA();
  VCZ_REQUIRE_PROGRAM("plink1.9");
  vcztest::TempDir dir;
  const auto shared = vcztest::shared_data() / "ag1000g";
  const std::string vcf = (shared / "gamb.X.8-12Mb.n100.derived.vcf.gz").string();
  const std::string store = (shared / "gamb.X.8-12Mb.n100.derived.vcz.zip").string();
  const std::string sub = (dir / "sub.vcf").string(), bi = (dir / "bi.vcf").string();
  vcztest::run_ok("gzip -dc " + shell_quote(vcf) +
                  " | awk '/^#/ || ($2 >= 8000000 && $2 <= 8030000)' > " + shell_quote(sub));
  vcztest::run_ok("python3 " + vcztest::tool("biallelic_vcf.py") + " " + shell_quote(sub) + " " +
                  shell_quote(bi) + " --unphase");
  vcztest::run_ok("plink1.9 --vcf " + shell_quote(bi) +
                  " --allow-extra-chr --double-id --threads 1 --r2 --ld-window 10 "
                  "--ld-window-kb 1000 --ld-window-r2 0 --out " +
                  shell_quote((dir / "pl").string()) + " > /dev/null");
  vcztest::run_ok(binary() + " ld " + shell_quote(store) +
                  " -r X:8000000-8030000 --regions-overlap pos --device gpu --ld-window 10 "
                  "--ld-window-kb 1000 --ld-window-r2 0 --max-unit-variants 37 -o " +
                  shell_quote((dir / "ours.ld").string()));
  std::set<std::pair<long, long>> twice;
  Pairs want = read_pairs((dir / "pl.ld").string(), false, twice);
  Pairs got = read_pairs((dir / "ours.ld").string(), true, twice);
  for (const auto& k : twice) {
    want.erase(k);
    got.erase(k);
  }
  EXPECT_LT(twice.size(), want.size() / 100);
  vcztest::expect_same_r2(want, got, 5000);
}

// ld-stats of phased calls: with two or more populations the GPU band sums the pairs per bin on
// the device (the reducer's DeviceReduction, stats/ld_moments_terms.hpp) and hands over only the
// bins, the population bands only rows; one population and --genotypes keep the pairs path.
// Either way the bytes are the CPU's. The device path is seen in -v's "pairs" line, whose count
// covers at least the pairs the bins hold. Rows of one word (48 haplotypes) and of five (300),
// bins of bp and of recombination distance, units smaller than the reach; and a population too
// large for 64-bit numerators, which keeps the pairs path.
namespace {

/// The sum of the column "pairs" of ld-stats' TSV @p out.
std::int64_t binned_pairs(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  int col = -1;
  std::int64_t sum = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream cells(line);
    for (std::string c; std::getline(cells, c, '\t');) f.push_back(c);
    if (col < 0) {
      for (std::size_t k = 0; k < f.size(); ++k)
        if (f[k] == "pairs") col = static_cast<int>(k);
      continue;
    }
    if (static_cast<int>(f.size()) > col) sum += std::stoll(f[static_cast<std::size_t>(col)]);
  }
  return sum;
}

/// The count of -v's line "pairs N variant pairs summed into bins on the device" (-1: none).
std::int64_t device_pairs(const std::string& err) {
  const std::string key = "variant pairs summed into bins on the device";
  const auto at = err.find(key);
  if (at == std::string::npos) return -1;
  const auto start = err.rfind("pairs", at - 1);
  return std::stoll(err.substr(start + 5, at - start - 5));
}

}  // namespace

TEST(CudaLdCli, LdStatsSumsPairsOnTheDeviceWithTheCpusBytes) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const std::string map = (dir / "uniform.map").string();
  {
    std::ofstream m(map);  // 1 cM per Mb (plink .map: chrom, id, cM, bp)
    m << "1\tm0\t0\t1\n1\tm1\t0.3\t300000\n";
  }
  for (const int samples : {24, 150}) {
    SCOPED_TRACE(std::to_string(samples) + " samples");
    const std::string store = (dir / ("s" + std::to_string(samples) + ".vcz")).string();
    const std::string p3 = store + ".pops3", p2 = store + ".pops2";
    vcztest::run_ok(binary() + " simulate " + shell_quote(store) + " --samples " +
                    std::to_string(samples) +
                    " --pops 3 --variants 1200 --length 300000 --seed 7 --variants-chunk-size 100"
                    " --no-progress -f --pops-file " +
                    shell_quote(p3));
    // two populations: the third joins the second
    vcztest::run_ok("awk 'BEGIN{FS=OFS=\"\\t\"} NR > 1 && $2 == \"pop2\" {$2 = \"pop1\"} 1' " +
                    shell_quote(p3) + " > " + shell_quote(p2));
    for (const std::string& pops :
         {std::string(), "-P " + shell_quote(p2), "-P " + shell_quote(p3)})
      for (const std::string& bins :
           {std::string("--bp-bins 0,100,1000,10000,100000 --max-unit-variants 150"),
            "--r-bins 0,1e-5,1e-4,1e-3 --map " + shell_quote(map) + " --max-unit-variants 200"}) {
        const std::string command = "ld-stats " + shell_quote(store) + " " + bins + " " + pops;
        const auto cpu = run(binary() + " " + command + " --device cpu -t 2 -v");
        const auto gpu = run(binary() + " " + command + " --device gpu -t 3 -v");
        ASSERT_EQ(cpu.exit_code, 0) << command << ": " << cpu.err;
        ASSERT_EQ(gpu.exit_code, 0) << command << ": " << gpu.err;
        EXPECT_EQ(cpu.out, gpu.out) << command;
        const std::int64_t binned = binned_pairs(cpu.out);
        EXPECT_GT(binned, 0) << command;
        EXPECT_EQ(device_pairs(cpu.err), -1) << command;
        if (pops.empty()) {  // one population: the pairs path
          EXPECT_EQ(device_pairs(gpu.err), -1) << command << "\n" << gpu.err;
        } else {
          EXPECT_GE(device_pairs(gpu.err), binned) << command << "\n" << gpu.err;
        }
      }
    // --genotypes: every band's pairs with their tables, summed on the host
    const std::string command = "ld-stats " + shell_quote(store) +
                                " --bp-bins 0,1000,10000 --genotypes --max-unit-variants 150 -P " +
                                shell_quote(p3);
    const auto cpu = run(binary() + " " + command + " --device cpu -t 2 -v");
    const auto gpu = run(binary() + " " + command + " --device gpu -t 3 -v");
    ASSERT_EQ(cpu.exit_code, 0) << command << ": " << cpu.err;
    ASSERT_EQ(gpu.exit_code, 0) << command << ": " << gpu.err;
    EXPECT_EQ(cpu.out, gpu.out) << command;
    EXPECT_EQ(device_pairs(gpu.err), -1) << command;
  }
  // A population of 2^15 haplotypes or more (128-bit numerators): the GPU keeps the pairs path.
  const std::string wide = (dir / "wide.vcz").string(), wide_pops = wide + ".pops";
  vcztest::run_ok(binary() + " simulate " + shell_quote(wide) +
                  " --samples 16500 --variants 150 --length 20000 --seed 3 --no-progress -f");
  {
    std::ofstream f(wide_pops);
    const auto opened = vczstats::vcz::VczStore::open(wide);
    int n = 0;
    for (const auto& id : opened.sample_ids()) f << id << "\t" << (n++ < 16390 ? "A" : "B") << "\n";
  }
  const std::string command =
      "ld-stats " + shell_quote(wide) + " --bp-bins 0,1000,10000 -P " + shell_quote(wide_pops);
  const auto cpu = run(binary() + " " + command + " --device cpu -t 2 -v");
  const auto gpu = run(binary() + " " + command + " --device gpu -t 3 -v");
  ASSERT_EQ(cpu.exit_code, 0) << command << ": " << cpu.err;
  ASSERT_EQ(gpu.exit_code, 0) << command << ": " << gpu.err;
  EXPECT_EQ(cpu.out, gpu.out) << command;
  EXPECT_GT(binned_pairs(cpu.out), 1000) << command;
  EXPECT_EQ(device_pairs(gpu.err), -1) << command;
}
