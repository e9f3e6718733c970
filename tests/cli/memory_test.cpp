// Memory does not grow with the number of variants: peak resident memory of afdist over a store
// with 40x more variants (same chunking) stays within allocator slack of the small one. Keeping
// any per-variant state for the whole run (32 bytes of site counts per variant = 25 MB here, or
// the decoded calls, 320 MB) would fail it.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "test_util.hpp"

using namespace vcztest;

namespace {
// Under AddressSanitizer (scripts/test.sh --sanitize) freed memory waits in a quarantine of up to
// 256 MiB, which a longer run fills further: peak RSS would grow with the variants for that
// reason alone. Without the quarantine, memory is reused as it is freed and peak RSS again
// follows live memory (plus redzones and shadow, alike in both runs), so the test keeps its
// meaning; leak checking is left to the other tests.
#ifdef VCZ_SANITIZE
const char* kEnvironment =
    "ASAN_OPTIONS=quarantine_size_mb=0:thread_local_quarantine_size_kb=0:detect_leaks=0 ";
#else
const char* kEnvironment = "";
#endif

// Peak resident set (KiB) of a command, measured by its parent.
long peak_rss_kib(const std::string& args) {
  const auto out = run_ok(std::string(kEnvironment) + python() +
                          " -c \"import resource, subprocess, sys; "
                          "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
                          "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\" " +
                          binary() + " " + args);
  return std::stol(out);
}
}  // namespace

TEST(CliMemory, PeakMemoryDoesNotGrowWithVariants) {
  TempDir dir;
  const std::string gen = python() + " " + std::string(VCZ_SOURCE_DIR) +
                          "/bench/make_synthetic_store.py --samples 200 "
                          "--variants-chunk-size 2000 --samples-chunk-size 200 --threads 2 ";
  const auto small = (dir / "small.vcz").string(), large = (dir / "large.vcz").string();
  auto r = run(gen + "--variants 20000 " + small + " && " + gen + "--variants 800000 " + large);
  if (r.exit_code != 0) GTEST_SKIP() << "skipped: cannot generate stores: " << r.err;
  const long base = peak_rss_kib("afdist --device cpu -t 2 " + small);
  const long big = peak_rss_kib("afdist --device cpu -t 2 " + large);
  EXPECT_LT(big - base, 16 * 1024)
      << "peak RSS " << base << " KiB for 20,000 variants, " << big << " KiB for 800,000";
}

TEST(CliSignals, InterruptedRunLeavesNoOutputBehind) {
  TempDir dir;
  const auto store = (dir / "s.vcz").string();
  auto r = run(python() + " " + std::string(VCZ_SOURCE_DIR) +
               "/bench/make_synthetic_store.py --samples 200 --variants 400000 "
               "--variants-chunk-size 2000 --samples-chunk-size 200 --threads 2 " +
               store);
  if (r.exit_code != 0) GTEST_SKIP() << "skipped: cannot generate a store: " << r.err;
  // Kill it at several moments (SIGTERM: a background job of a script ignores SIGINT); whenever
  // the run dies of the signal, neither the output nor its temporary sibling may remain; when it
  // finished first, the output must be complete.
  int interrupted = 0;
  for (const char* delay : {"0.02", "0.05", "0.1", "0.15", "0.25"}) {
    const auto out = (dir / "out.tsv").string();
    std::string cmd = "(";
    cmd += binary();
    cmd += " afdist -t 1 --prefetch 1 --no-progress " + store + " -o " + out;
    cmd += " & pid=$!; sleep ";
    cmd += delay;
    cmd += "; kill -TERM $pid; wait $pid; echo $?)";
    const auto status = run(cmd);
    const int rc = std::stoi(status.out);
    std::vector<std::string> left;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      if (e.path().filename().string().rfind("out.tsv", 0) == 0)
        left.push_back(e.path().filename().string());
    if (rc == 128 + 15) {  // died of SIGTERM
      ++interrupted;
      EXPECT_TRUE(left.empty()) << "after SIGTERM at " << delay << " s: " << left.front();
    } else {
      EXPECT_EQ(rc, 0);
      EXPECT_EQ(left, std::vector<std::string>{"out.tsv"});
      std::filesystem::remove(out);
    }
  }
  if (interrupted == 0) GTEST_SKIP() << "skipped: every run finished before the signal";
}

// A many-core host under an address-space limit (HPC job limits): OpenBLAS, loaded with the
// program, started one thread (and its buffers) per core and aborted the process on a 64-core
// host, also in runs that use no linear algebra. The library is now opened only by the matrix
// family, starting with one thread and growing to the run's -t. OpenBLAS caps its threads at the
// cores it sees, so a 2-core machine cannot fail the way a 64-core one did; what the test checks
// is the cause: the dynamic loader's own log (LD_DEBUG=libs) shows OpenBLAS initialised only in
// the runs that need it, and every run succeeds under `ulimit -v`.
TEST(CliMemory, OpenBlasIsLoadedOnlyByTheMatrixFamily) {
#ifdef VCZ_SANITIZE
  GTEST_SKIP() << "skipped: ASan reserves terabytes of address space";
#endif
  TempDir dir;
  const auto store = (dir / "s.vcz").string();
  run_ok(binary() + " simulate " + store + " --samples 20 --variants 500 --seed 2 --no-progress");
  const std::string limit = "ulimit -v 2097152; export OPENBLAS_NUM_THREADS=64 LD_DEBUG=libs; ";
  for (const std::string cmd : {"afdist", "diversity", "freq", "grm -t 2", "pca -k 2 -t 2"}) {
    const auto r = run("bash -c " + shell_quote(limit + binary() + " " + cmd + " " + store +
                                                " --device cpu -o /dev/null"));
    EXPECT_EQ(r.exit_code, 0) << cmd << ": "
                              << r.err.substr(r.err.size() > 2000 ? r.err.size() - 2000 : 0);
    const bool blas = r.err.find("calling init: ") != std::string::npos &&
                      r.err.find("openblas") != std::string::npos;
    EXPECT_EQ(blas, cmd.starts_with("grm") || cmd.starts_with("pca")) << cmd;
  }
}
