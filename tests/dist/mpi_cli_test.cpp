// Every statistic command under `mpirun -n K vczstats ...` (K = 1..4, CPU ranks, oversubscribed)
// writes the same bytes as the plain process: random stores cut into small work units (so rank
// shares are uneven and cut windows, per-contig windows, variant windows, BED windows and
// jackknife blocks), regions, masks, populations interleaved across sample chunks; the Ag1000G
// store for the windowed scan and f-statistics. An error on one rank stops every rank, rank 0
// prints it once and no output is left; commands that are not statistics run on rank 0 alone.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "backend/gpu_test_support.hpp"
#include "dist/spread_cases.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using vcztest::shell_quote;
using namespace spreadtest;

namespace {

/// Skip unless the binary was built with MPI and mpirun is installed.
#define VCZ_REQUIRE_MPI()                                                                     \
  do {                                                                                        \
    if (!mpi_built()) GTEST_SKIP() << "skipped: vczstats was built without MPI";              \
    if (!vcztest::have_program("mpirun"))                                                     \
      GTEST_SKIP() << "skipped: mpirun is not installed (openmpi-bin; run scripts/setup.sh)"; \
  } while (0)

bool mpi_built() {
#ifdef VCZSTATS_HAVE_MPI
  return true;
#else
  return false;
#endif
}

/// `mpirun -n k vczstats` (as root in CI: --allow-run-as-root; more ranks than cores here). Each
/// test process gives Open MPI a session folder of its own: two mpirun started at once by tests
/// running in parallel race to create the shared /tmp/ompi.HOST.UID ("File exists").
std::string mpirun(int k) {
  static const vcztest::TempDir session;
  return "OMPI_MCA_orte_tmpdir_base=" + shell_quote(session.path().string()) +
         " timeout 300 mpirun --allow-run-as-root --oversubscribe -n " + std::to_string(k) + " " +
         vcztest::binary() + " ";
}

}  // namespace

TEST(MpiCli, EveryStatisticCommandIsByteIdenticalForOneToFourRanks) {
  VCZ_REQUIRE_MPI();
  vcztest::TempDir dir;
  int stores = 0;
  for (const auto& spec : gputest::store_specs()) {
    // All K on one store; K = 3 on a zip store of mixed ploidy whose sample chunks split
    // populations; the others add time, not cases.
    std::vector<int> ks;
    if (spec.name == "missing_multi")
      ks = {1, 2, 3, 4};
    else if (spec.name == "mixed_ploidy")
      ks = {3};
    else
      continue;
    const std::string path = gputest::obtain_store(dir, spec);
    if (path.empty()) continue;
    ++stores;
    SCOPED_TRACE(spec.name);
    for (const auto& c : commands(dir, spec.name, path)) {
      const std::string want = vcztest::run_ok(plain() + c + " -t 2");
      EXPECT_GT(want.size(), 0u) << c;
      for (int k : ks) {
        const auto got = vcztest::run(mpirun(k) + c);
        ASSERT_EQ(got.exit_code, 0) << "mpirun -n " << k << " " << c << "\n" << got.err;
        EXPECT_EQ(want, got.out) << "mpirun -n " << k << " " << c;
      }
    }
    // The shares were uneven and all busy: -v reports every rank's variants.
    const auto v = vcztest::run(mpirun(ks.back()) + commands(dir, spec.name, path)[13] + " -v");
    ASSERT_EQ(v.exit_code, 0) << v.err;
    const auto shares = rank_variants(v.err);
    EXPECT_EQ(shares.size(), static_cast<std::size_t>(ks.back())) << v.err;
    for (const auto& [rank, variants] : shares) EXPECT_GT(variants, 0) << "rank " << rank;
    EXPECT_NE(v.err.find("vczstats: merge "), std::string::npos) << v.err;
  }
  if (stores == 0) GTEST_SKIP() << "skipped: no test store (needs python3-zarr and bcftools)";
}

// The variant-pair (ld and its summaries, ld-stats, prune) and sample-matrix (grm, king, distance,
// pca) commands run across the ranks too, rank 0 alone writing -o and the files beside it: the
// variant-pair family each rank its share of the units, merged on rank 0; the matrix family each
// rank a stripe of the matrix's rows over every variant, whose cells are the doubles of one
// process whatever the stripe (the CPU pass's tile grid), and the projection's sums exact per
// unit (StagedSum). Every output is byte-identical.
TEST(MpiCli, PairAndMatrixCommandsSplitAcrossRanksAndRankZeroWritesAlone) {
  VCZ_REQUIRE_MPI();
  VCZ_MISSING_MULTI_OR_SKIP(dir, path);
  const std::string s = shell_quote(path) + " --max-unit-variants 11 ";
  const std::string pops = " -P " + shell_quote(write_pops(dir, "mm", path));
  const std::vector<std::string> cases = {
      "ld " + s + "--ld-window-r2 0",
      "ld " + s + "--dprime --ld-window 7",
      "ld " + s + "--ld-window-kb 0.3 --ld-window-r2 0.1 --format json",
      "ld " + s + "--decay 0:400:25 --window-size 1000",  // bins merge by addition
      "ld " + s + "--hap --decay 0,5,50,500 --ld-window 40",
      // three populations: a band per population, each curve merged as one population's
      "ld " + s + "--decay 0:400:25 --window-size 1000" + pops,
      "ld " + s + "--hap --decay 0,5,50,500 --ld-window 40" + pops,
      "ld " + s + "--ld-scores --ld-wind-kb 0.2",
      "ld-stats " + s + "--bp-bins 0,20,200,600",
      // three populations: a band per population joined per unit, merged band by band
      "ld-stats " + s + "--bp-bins 0,20,200,600" + pops,
      // unphased genotype tables (every pair of the band), one and three populations
      "ld-stats " + s + "--bp-bins 0,20,200,600 --genotypes",
      "ld-stats " + s + "--bp-bins 0,20,200,600 --genotypes" + pops,
      "prune " + s + "--indep-pairwise 20 3 0.3 --out OUT/pr",
      "prune " + s + "--indep-pairwise 2 kb 1 0.1",
      "king " + s,
      "king " + s + "--table --rows-per-pass 9",
      "distance " + s + "--flat-missing --metric ibs --rows-per-pass 5",
      "pca " + s + "--approx -k 3 --loadings OUT/load.tsv --eigenvalues OUT/eig.tsv",
      "grm " + s + "--rows-per-pass 8",
      "grm " + s + "--cov --shape square --bin",
      "distance " + s,
      "distance " + s + "--rows-per-pass 3",
      "pca " + s + "-k 4",
      "pca " + s + "-k 3 --loadings OUT/load.tsv --eigenvalues OUT/eig.tsv",
  };
  for (const auto& c : cases) {
    const fs::path one = dir / "one", many = dir / "many";
    for (const auto& d : {one, many}) {
      fs::remove_all(d);
      fs::create_directories(d);
    }
    auto in = [&](const fs::path& d) {
      return std::regex_replace(c, std::regex("OUT/"), d.string() + "/") + " -o " +
             shell_quote((d / "out").string());
    };
    vcztest::run_ok(plain() + in(one) + " -t 2");
    for (int k : {2, 3, 4}) {
      fs::remove_all(many);
      fs::create_directories(many);
      const auto got = vcztest::run(mpirun(k) + in(many));
      ASSERT_EQ(got.exit_code, 0) << "mpirun -n " << k << " " << c << "\n" << got.err;
      EXPECT_EQ(got.out, "") << c;
      const auto want = folder(one), have = folder(many);
      ASSERT_EQ(want.size(), have.size()) << c;  // nothing else written, by any rank
      for (const auto& [name, text] : want) {
        ASSERT_TRUE(have.contains(name)) << c << ": " << name;
        EXPECT_GT(text.size(), 0u) << c << ": " << name;
        EXPECT_EQ(text, have.at(name)) << "mpirun -n " << k << " " << c << ": " << name;
      }
    }
  }
  // pca --project of the loadings, and a second rank's share shows in -v.
  const std::string load = (dir / "load.tsv").string();
  vcztest::run_ok(plain() + "pca " + s + "-k 3 --approx --loadings " + shell_quote(load));
  const std::string project = "pca " + s + "--project " + shell_quote(load);
  const std::string projected = vcztest::run_ok(plain() + project);
  for (int k : {2, 3, 4}) EXPECT_EQ(projected, vcztest::run_ok(mpirun(k) + project)) << k;
  const auto v = vcztest::run(mpirun(2) + "ld " + s + "-v");
  ASSERT_EQ(v.exit_code, 0) << v.err;
  EXPECT_EQ(rank_variants(v.err).size(), 2u) << v.err;
  // The matrix family: -v tells which rank computed which stripe of rows (every variant each).
  const auto g = vcztest::run(mpirun(3) + "grm " + s + "-v");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  for (int r = 0; r < 3; ++r)
    EXPECT_TRUE(std::regex_search(g.err, std::regex("rank " + std::to_string(r) +
                                                    " \\(.*\\): matrix rows [0-9]+\\.\\.[0-9]+ ")))
        << g.err;  // As many stripes of --rows-per-pass as ranks, or more: rounds of a stripe per
                   // rank.
  const auto rounds = vcztest::run(mpirun(2) + "grm " + s + "--rows-per-pass 4 -v");
  ASSERT_EQ(rounds.exit_code, 0) << rounds.err;
  EXPECT_TRUE(std::regex_search(rounds.err, std::regex("rank 0 \\(.*\\): matrix rows 0\\.\\.4 ")))
      << rounds.err;
  EXPECT_TRUE(std::regex_search(rounds.err, std::regex("rank 1 \\(.*\\): matrix rows 4\\.\\.8 ")))
      << rounds.err;
}

// The haplotype family and the selection scans (phased calls, a halo of flanking sites across
// the ranks' cuts; the scans standardise over every site, so rank 0 finishes them).
TEST(MpiCli, HaplotypeScansAreByteIdenticalForOneToFourRanks) {
  VCZ_REQUIRE_MPI();
  vcztest::TempDir dir;
  const std::string s = phased_store(dir);
  const std::string store = (dir / "phased.vcz").string();
  // A focal site of EHH: a common one past the first 100 kb.
  std::istringstream lines(
      vcztest::run_ok(plain() + "freq " + shell_quote(store) + " -r 1:100000-"));
  std::string line, chrom, pos;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    std::string id, ref, alt, pop, ac, an;
    double freq = 0;
    f >> chrom >> pos >> id >> ref >> alt >> pop >> ac >> an >> freq;
    if (freq > 0.3 && freq < 0.7) break;
  }
  for (const std::string& c : {"haplotypes " + s + "--window-size 20000", "ihs " + s + "--maf 0.05",
                               "nsl " + s + "--maf 0.05", "xpehh " + s, "xpnsl " + s,
                               "ehh " + s + "--focal " + chrom + ":" + pos,
                               "ld-stats " + s + "--bp-bins 0,1kb,10kb,30kb"}) {
    const std::string want = vcztest::run_ok(plain() + c + " -t 2");
    EXPECT_GT(want.size(), 0u) << c;
    for (int k : {2, 4}) {
      const auto got = vcztest::run(mpirun(k) + c);
      ASSERT_EQ(got.exit_code, 0) << "mpirun -n " << k << " " << c << "\n" << got.err;
      EXPECT_EQ(want, got.out) << "mpirun -n " << k << " " << c;
    }
  }
}

TEST(MpiCli, FilteredSiteAndWindowStatisticsAreByteIdentical) {
  VCZ_REQUIRE_MPI();
  VCZ_MISSING_MULTI_OR_SKIP(dir, path);
  // Site filters of the metadata and of the counts, on units cut small (uneven rank shares).
  const std::string s = shell_quote(path) +
                        " --max-unit-variants 11 --max-alleles 3 --maf 0.05 --geno 0.2 "
                        "--hwe 1e-3 -P " +
                        shell_quote(write_pops(dir, "f", path)) + " ";
  for (const std::string& c :
       {"freq " + s, "hardy " + s, "sfs " + s, "diversity " + s + "--window-size 700",
        "divergence " + s + "--window-variants 9",
        "stats " + s + "--window-size 500 --stats pi,tajima_d,dxy,fst_hudson"}) {
    const std::string want = vcztest::run_ok(plain() + c + " -t 2");
    const std::string unfiltered = vcztest::run_ok(
        plain() +
        std::regex_replace(c, std::regex("--max-alleles 3 --maf 0.05 --geno 0.2 --hwe 1e-3 "), "") +
        " -t 2");
    EXPECT_NE(want, unfiltered) << "the filters changed nothing: " << c;
    for (int k : {2, 3}) {
      const auto got = vcztest::run(mpirun(k) + c);
      ASSERT_EQ(got.exit_code, 0) << "mpirun -n " << k << " " << c << "\n" << got.err;
      EXPECT_EQ(want, got.out) << "mpirun -n " << k << " " << c;
    }
  }
}

TEST(MpiCli, SiteExpressionsAreByteIdentical) {
  VCZ_REQUIRE_MPI();
  VCZ_MISSING_MULTI_OR_SKIP(dir, path);
  // -i of the counts (decided in the counting pass) and -e of the variant fields alone.
  const std::string s = shell_quote(path) + " --max-unit-variants 11 -P " +
                        shell_quote(write_pops(dir, "x", path)) + " ";
  for (const std::string& c :
       {"freq " + s + "-i " + shell_quote("MAF>0.05 && (N_ALT>1 || F_MISSING<0.2)"),
        "diversity " + s + "--window-size 700 -e " + shell_quote("TYPE!=\"snp\" || POS<300"),
        "sfs " + s + "-i " + shell_quote("AC>=2 && AN>10")}) {
    const std::string want = vcztest::run_ok(plain() + c + " -t 2");
    const std::string unfiltered =
        vcztest::run_ok(plain() + std::regex_replace(c, std::regex(" -[ie] '.*'"), "") + " -t 2");
    EXPECT_NE(want, unfiltered) << "the expression changed nothing: " << c;
    const auto got = vcztest::run(mpirun(2) + c);
    ASSERT_EQ(got.exit_code, 0) << "mpirun -n 2 " << c << "\n" << got.err;
    EXPECT_EQ(want, got.out) << "mpirun -n 2 " << c;
  }
}

TEST(MpiCli, Ag1000gScanAndFstatsAreByteIdentical) {
  VCZ_REQUIRE_MPI();
  VCZ_REQUIRE_SHARED_DATA();
  vcztest::TempDir dir;
  const std::string store =
      (vcztest::shared_data() / "ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip").string();
  const std::string pops = write_pops(dir, "ag", store);
  const std::string p = shell_quote(store) + " -P " + shell_quote(pops) + " ";
  for (const std::string& c :
       {"stats " + p + "--window-size 100000 --stats pi,theta_w,tajima_d,dxy,fst_hudson",
        "fstats " + p + "--d A,B,C,A --blocks 1000", "sample-stats " + p}) {
    const std::string want = vcztest::run_ok(plain() + c + " -t 2");
    for (int k : {2, 4}) {
      const auto got = vcztest::run(mpirun(k) + c);
      ASSERT_EQ(got.exit_code, 0) << got.err;
      EXPECT_EQ(want, got.out) << "mpirun -n " << k << " " << c;
    }
  }
}

TEST(MpiCli, AnErrorOnOneRankStopsAllAndRankZeroReportsIt) {
  VCZ_REQUIRE_MPI();
  VCZ_MISSING_MULTI_OR_SKIP(dir, path);
  // A copy whose last variant chunk's first sample chunk is corrupt: the last rank's share reads
  // it.
  const fs::path bad = corrupt_last_chunk(dir, path);
  const std::string out = (dir / "out.tsv").string();
  const std::string c = "freq " + shell_quote(bad.string()) + " -o " + shell_quote(out);
  const auto single = vcztest::run(plain() + c);
  ASSERT_EQ(single.exit_code, 1) << single.err;
  const auto many = vcztest::run(mpirun(3) + c);
  EXPECT_EQ(many.exit_code, 1) << many.err;
  // One message, from rank 0, naming the failing rank; the same text as the plain run's.
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(many.err, m, std::regex(R"(vczstats: rank (\d+): (error: [^\n]*))")))
      << many.err;
  EXPECT_EQ(m[1], "2");
  EXPECT_EQ("vczstats: " + m[2].str() + "\n", single.err);
  EXPECT_EQ(vczstats_lines(many.err), 1) << many.err;
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find("out.tsv"), std::string::npos) << e.path();

  // A usage error (every rank): exit 2, one message. An unwritable output (rank 0 alone,
  // before the others start): exit 1.
  const auto usage = vcztest::run(mpirun(3) + "divergence " + shell_quote(path) + " --pairs A,Z");
  EXPECT_EQ(usage.exit_code, 2) << usage.err;
  EXPECT_EQ(vczstats_lines(usage.err), 1) << usage.err;
  const auto unwritable =
      vcztest::run(mpirun(3) + "diversity " + shell_quote(path) + " -o /nonexistent/dir/x.tsv");
  EXPECT_EQ(unwritable.exit_code, 1) << unwritable.err;
  EXPECT_NE(unwritable.err.find("rank 0: error:"), std::string::npos) << unwritable.err;
}

TEST(MpiCli, OtherCommandsRunOnRankZeroAlone) {
  VCZ_REQUIRE_MPI();
  VCZ_MISSING_MULTI_OR_SKIP(dir, path);
  const std::string want = vcztest::run_ok(plain() + "info " + shell_quote(path));
  const auto got = vcztest::run(mpirun(3) + "info " + shell_quote(path));
  ASSERT_EQ(got.exit_code, 0) << got.err;
  EXPECT_EQ(want, got.out);
  const auto help = vcztest::run(mpirun(2) + "--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out, vcztest::run(plain() + "--help").out);
}

// On the GPU machine (scripts/gpu-check.sh --phase mpi): two ranks sharing one GPU (each takes
// device local_rank mod 1 = 0) write what one CPU process writes. One ctest test per slice of the
// command list: two generated stores (one of mixed ploidy, a zip) in two, Ag1000G in three
// (the other stores add time, a GPU context per process, not cases; the CPU ranks' test covers
// the cuts).
class MpiCliGpu : public ::testing::TestWithParam<gputest::StoreCase> {};

TEST_P(MpiCliGpu, TwoRanksSharingOneGpuGiveTheSameOutput) {
  VCZ_REQUIRE_MPI();
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const gputest::StoreCase& sc = GetParam();
  const std::string name = sc.store, path = gputest::case_store(dir, sc);
  VCZ_REQUIRE_CASE_STORE(path, sc);
  // (Ag1000G in whole chunks: 93,000 units of 11 variants are slow on a GPU.)
  const auto all = commands(dir, name, path, name == "ag1000g" ? "" : "--max-unit-variants 11");
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (!sc.takes(k)) continue;
    const std::string& c = all[k];
    const std::string want = vcztest::run_ok(plain() + c + " --device cpu -t 2");
    // `gpu`: each rank takes local_rank mod GPUs (0 for both with one GPU visible); `gpu:0`
    // (explicit) once per store.
    std::vector<const char*> devices{"gpu"};
    if (k == 0) devices.push_back("gpu:0");
    for (const char* device : devices) {
      const auto got = vcztest::run(mpirun(2) + c + " --device " + device + " -t 2 -v");
      ASSERT_EQ(got.exit_code, 0) << c << "\n" << got.err;
      EXPECT_EQ(want, got.out) << "mpirun -n 2 " << c << " --device " << device;
      EXPECT_NE(got.err.find("rank 1 ("), std::string::npos) << got.err;
      if (got.err.find("nothing to read") == std::string::npos) {  // empty: no device line
        EXPECT_NE(got.err.find("gpu 0"), std::string::npos) << got.err;
      }
    }
  }
  if (name == "ag1000g") return;
  // The variant-pair and matrix families on the GPU ranks: ld and king byte-identical to one
  // CPU process, the GRM to rounding (cuBLAS's products of a cell may depend on the shapes of the
  // rank's stripe and the GPU's, unlike the CPU pass's: sample_matrix.hpp).
  const std::string s = shell_quote(path) + " --max-unit-variants 11 ";
  std::size_t k = all.size();  // sliced as the commands above
  for (const std::string& c : {"ld " + s + "--ld-window-r2 0", "king " + s, "grm " + s}) {
    if (!sc.takes(k++)) continue;
    const std::string want = vcztest::run_ok(plain() + c + " --device cpu -t 2");
    const auto got = vcztest::run(mpirun(2) + c + " --device gpu -t 2");
    ASSERT_EQ(got.exit_code, 0) << c << "\n" << got.err;
    if (c.rfind("grm", 0) == 0)
      EXPECT_TRUE(same_within(want, got.out, 1e-9)) << "mpirun -n 2 " << c;
    else
      EXPECT_EQ(want, got.out) << "mpirun -n 2 " << c << " --device gpu";
  }
}

INSTANTIATE_TEST_SUITE_P(Stores, MpiCliGpu,
                         ::testing::ValuesIn(gputest::store_cases(
                             {{"ag1000g", 3}}, {"missing_multi", "mixed_ploidy", "ag1000g"})),
                         gputest::case_name);
