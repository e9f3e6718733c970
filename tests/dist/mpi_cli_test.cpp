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
#include "test_util.hpp"

namespace fs = std::filesystem;
using vcztest::shell_quote;

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

/// `mpirun -n k vczstats` (as root in CI: --allow-run-as-root; more ranks than cores here).
std::string mpirun(int k) {
  return "timeout 300 mpirun --allow-run-as-root --oversubscribe -n " + std::to_string(k) + " " +
         vcztest::binary() + " ";
}

std::string plain() {
  return "timeout 300 " + vcztest::binary() + " ";
}

/// Populations A, B, C interleaved over the store's samples.
std::string write_pops(const vcztest::TempDir& dir, const std::string& name,
                       const std::string& store_path) {
  const auto store = vczstats::vcz::VczStore::open(store_path);
  const std::string path = (dir / (name + ".pops")).string();
  std::ofstream f(path);
  int i = 0;
  for (const auto& id : store.sample_ids())
    if (!id.empty())
      f << id << "\t"
        << "ABC"[i++ % 3] << "\n";
  return path;
}

/// The statistic commands run on a store (every one, with the options that cut things).
std::vector<std::string> commands(const vcztest::TempDir& dir, const std::string& name,
                                  const std::string& path,
                                  const std::string& units = "--max-unit-variants 11") {
  const auto store = vczstats::vcz::VczStore::open(path);
  const auto& contigs = store.contig_ids();
  const fs::path bed = dir / (name + ".windows.bed");
  const fs::path mask = dir / (name + ".mask.bed");
  {
    std::ofstream b(bed), m(mask);
    b << contigs[0] << "\t0\t3000\n"
      << contigs[0] << "\t1000\t2000\n"
      << contigs[0] << "\t2500\t9000\n";
    m << contigs[0] << "\t100\t2200\n" << contigs[0] << "\t2500\t1000000\n";
    for (std::size_t c = 1; c < contigs.size(); ++c) m << contigs[c] << "\t0\t500000\n";
  }
  const std::string regions = contigs[0] + ":500-2600" +
                              (contigs.size() > 1 ? "," + contigs[1] + ":1-1500" : "") + "," +
                              contigs[0] + ":2000-4000";
  const std::string s = shell_quote(path) + " " + units + " ";
  const std::string p = s + "-P " + shell_quote(write_pops(dir, name, path)) + " ";
  std::vector<std::string> c = {
      "afdist " + s,
      "afdist " + s + "--format json --bins 13",
      "freq " + p,
      "geno-counts " + p,
      "hardy " + p,
      "missing " + p + "--format json",
      "sample-stats " + p,
      "sfs " + p,
      "sfs " + p + "--joint A,C --folded",
      "sfs " + p + "--scaled",
      "fstats " + p + "--f2 A,B --blocks 7",
      "fstats " + p + "--f3 C,A,B --blocks 5",
      "fstats " + p + "--d A,B,C,A --blocks 13",
      "diversity " + p,
      "diversity " + p + "--window-size 700 --window-step 300",
      "diversity " + p + "--window-size 700 --window-step 300 --window-span contig",
      "diversity " + p + "-r " + regions,
      "divergence " + p + "--window-variants 9",
      "divergence " + p + "--windows-file " + shell_quote(bed.string()) + " --pairs 'A,B;C,B'",
      "stats " + p + "-r " + regions + " --accessible " + shell_quote(mask.string()) +
          " --window-size 500 --stats pi,tajima_d,zeng_e,dxy,fst_wc,pbs --pbs A,B,C",
      "stats " + p + "-r " + regions +
          " --regions-overlap pos --window-variants 4 --stats theta_w,fst_hudson --format json",
  };
  if (store.ploidy() == 2) c.push_back("afdist " + s + "--method zarr-afdist --bins 7");
  return c;
}

/// The generated store missing_multi (empty when it cannot be made).
std::string missing_multi(const vcztest::TempDir& dir) {
  for (const auto& spec : gputest::store_specs())
    if (spec.name == "missing_multi") return gputest::obtain_store(dir, spec);
  return "";
}

/// The rank lines of -v: rank -> number of variants of its share.
std::map<int, long> rank_variants(const std::string& err) {
  std::map<int, long> out;
  const std::regex line(R"(vczstats: rank (\d+) \(.*\(([0-9]+) variants)");
  std::istringstream in(err);
  std::string l;
  std::smatch m;
  while (std::getline(in, l))
    if (std::regex_search(l, m, line)) out[std::stoi(m[1])] = std::stol(m[2]);
  return out;
}

/// Lines of @p err that vczstats printed (mpirun adds its own when a rank exits non-zero).
int vczstats_lines(const std::string& err) {
  std::istringstream in(err);
  int n = 0;
  for (std::string l; std::getline(in, l);) n += l.rfind("vczstats:", 0) == 0 ? 1 : 0;
  return n;
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

TEST(MpiCli, FilteredSiteAndWindowStatisticsAreByteIdentical) {
  VCZ_REQUIRE_MPI();
  vcztest::TempDir dir;
  const std::string path = missing_multi(dir);
  if (path.empty()) GTEST_SKIP() << "skipped: no test store (needs python3-zarr and bcftools)";
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
  vcztest::TempDir dir;
  const std::string path = missing_multi(dir);
  if (path.empty()) GTEST_SKIP() << "skipped: no test store (needs python3-zarr and bcftools)";
  // A copy whose last variant chunk's first sample chunk is corrupt: the last rank's share reads
  // it. (One chunk only: with several corrupt ones, which is reported first depends on timing.)
  const fs::path bad = dir / "bad.vcz";
  fs::copy(path, bad, fs::copy_options::recursive);
  const auto store = vczstats::vcz::VczStore::open(bad);
  const std::int64_t last = store.genotypes().num_chunks(0) - 1;
  for (const auto& e : fs::directory_iterator(bad / "call_genotype"))
    if (e.path().filename().string().rfind(std::to_string(last) + ".0.", 0) == 0)
      std::ofstream(e.path(), std::ios::binary | std::ios::trunc) << "not a blosc chunk";
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
  vcztest::TempDir dir;
  const std::string path = missing_multi(dir);
  if (path.empty()) GTEST_SKIP() << "skipped: no test store (needs python3-zarr and bcftools)";
  const std::string want = vcztest::run_ok(plain() + "info " + shell_quote(path));
  const auto got = vcztest::run(mpirun(3) + "info " + shell_quote(path));
  ASSERT_EQ(got.exit_code, 0) << got.err;
  EXPECT_EQ(want, got.out);
  const auto help = vcztest::run(mpirun(2) + "--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out, vcztest::run(plain() + "--help").out);
}

// On the GPU machine (scripts/gpu-check.sh --phase mpi): two ranks sharing one GPU (each takes
// device local_rank mod 1 = 0) write what one CPU process writes.
TEST(MpiCli, TwoRanksSharingOneGpuGiveTheSameOutput) {
  VCZ_REQUIRE_MPI();
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  std::vector<std::pair<std::string, std::string>> stores;
  // Two generated stores (one of mixed ploidy, a zip) and Ag1000G: the other stores add time
  // (a GPU context per process), not cases; the CPU ranks' test covers the cuts.
  for (const auto& spec : gputest::store_specs()) {
    if (spec.name != "missing_multi" && spec.name != "mixed_ploidy") continue;
    const std::string path = gputest::obtain_store(dir, spec);
    if (!path.empty()) stores.emplace_back(spec.name, path);
  }
  if (!vcztest::shared_data().empty())
    stores.emplace_back(
        "ag1000g",
        (vcztest::shared_data() / "ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip").string());
  if (stores.empty()) GTEST_SKIP() << "skipped: no test store";
  for (const auto& [name, path] : stores) {
    SCOPED_TRACE(name);
    // (Ag1000G in whole chunks: 93,000 units of 11 variants are slow on a GPU.)
    bool first = true;
    for (const auto& c :
         commands(dir, name, path, name == "ag1000g" ? "" : "--max-unit-variants 11")) {
      const std::string want = vcztest::run_ok(plain() + c + " --device cpu -t 2");
      // `gpu`: each rank takes local_rank mod GPUs (0 for both with one GPU visible); `gpu:0`
      // (explicit) once per store.
      std::vector<const char*> devices{"gpu"};
      if (first) devices.push_back("gpu:0");
      first = false;
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
  }
}
