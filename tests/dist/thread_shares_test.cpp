// One process sharing its run among threads (vczstats::Runner with several GPUs, `--device
// gpu:0,1`): the thread ranks of src/dist/thread_ranks.hpp run the distributed driver without MPI.
// On the CPU the CLI's hidden --thread-shares K shares a run among K threads on its one device,
// so these tests run anywhere: every statistic command writes the bytes of the plain run, an
// error on one share stops them all with the plain run's message and no output. On the GPU
// machine the same with the shares on one GPU, and on a host of several GPUs on gpu:0,1.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "dist/spread_cases.hpp"
#include "dist/thread_ranks.hpp"
#include "test_util.hpp"
#include "vczstats/device.hpp"
#include "vczstats/error.hpp"

namespace fs = std::filesystem;
using vcztest::shell_quote;
using namespace spreadtest;

namespace {

std::string shared(int k) {
  return " --thread-shares " + std::to_string(k);
}

}  // namespace

// The thread ranks themselves: collectives, messages in order, and the failure rules.
TEST(ThreadRanks, CollectivesAndMessagesBetweenThreads) {
  std::vector<std::int64_t> seen(4, -1);
  vczstats::dist::run_thread_ranks(4, [&](vczstats::dist::Ranks& ranks) {
    EXPECT_TRUE(ranks.in_process());
    EXPECT_EQ(ranks.size(), 4);
    ranks.check();
    std::vector<std::int64_t> v{ranks.rank() == 0 ? 42 : 0, 7};
    ranks.broadcast(v);
    EXPECT_EQ(v[0], 42);
    const std::byte mine{static_cast<unsigned char>(ranks.rank())};
    const auto all = ranks.allgather(std::span(&mine, 1));
    ASSERT_EQ(all.size(), 4u);
    for (int r = 0; r < 4; ++r) EXPECT_EQ(all[r].at(0), std::byte(r));
    const auto at0 = ranks.gather(std::span(&mine, 1));
    EXPECT_EQ(at0.size(), ranks.rank() == 0 ? 4u : 0u);
    // Ten messages from each rank to rank 0 (more than the queue holds), taken in rank order.
    if (ranks.rank() == 0) {
      for (int r = 1; r < 4; ++r)
        for (int i = 0; i < 10; ++i) {
          const auto m = ranks.receive(r);
          ASSERT_EQ(m.size(), 2u);
          EXPECT_EQ(m[0], std::byte(r));
          EXPECT_EQ(m[1], std::byte(i));
        }
    } else {
      for (int i = 0; i < 10; ++i) {
        const std::byte m[2] = {mine, std::byte(i)};
        ranks.send(0, m);
      }
    }
    ranks.check();
    seen[ranks.rank()] = ranks.rank();
  });
  EXPECT_EQ(seen, (std::vector<std::int64_t>{0, 1, 2, 3}));

  // Rank 2 fails between two checks: the others stop at the next check, the error is rank 2's.
  std::atomic<int> stopped{0};
  try {
    vczstats::dist::run_thread_ranks(3, [&](vczstats::dist::Ranks& ranks) {
      ranks.check();
      if (ranks.rank() == 2) throw vczstats::IoError("the chunk of rank 2");
      try {
        ranks.check();
      } catch (const vczstats::dist::Stopped&) {
        ++stopped;
        throw;
      }
      ADD_FAILURE() << "rank " << ranks.rank() << " went past a failed check";
    });
    ADD_FAILURE() << "no error";
  } catch (const vczstats::IoError& e) {
    EXPECT_STREQ(e.what(), "the chunk of rank 2");
  }
  EXPECT_EQ(stopped, 2);

  // A receive from a rank that ended without sending throws Stopped rather than hang; poll()
  // sees a failure at once.
  EXPECT_THROW(vczstats::dist::run_thread_ranks(2,
                                                [&](vczstats::dist::Ranks& ranks) {
                                                  if (ranks.rank() == 1) return;
                                                  (void)ranks.receive(1);
                                                }),
               vczstats::dist::Stopped);
  EXPECT_THROW(vczstats::dist::run_thread_ranks(2,
                                                [&](vczstats::dist::Ranks& ranks) {
                                                  if (ranks.rank() == 1)
                                                    throw vczstats::UsageError("bad option");
                                                  for (;;) ranks.poll();
                                                }),
               vczstats::UsageError);
}

TEST(ThreadShares, EveryStatisticCommandIsByteIdenticalForTwoToFourShares) {
  VCZ_MISSING_MULTI_OR_SKIP(dir, path);
  for (const auto& c : commands(dir, "missing_multi", path)) {
    const std::string want = vcztest::run_ok(plain() + c + " -t 2");
    EXPECT_GT(want.size(), 0u) << c;
    for (int k : {2, 3}) {
      const auto got = vcztest::run(plain() + c + shared(k) + " -t 4");
      ASSERT_EQ(got.exit_code, 0) << k << " shares: " << c << "\n" << got.err;
      EXPECT_EQ(want, got.out) << k << " shares: " << c;
    }
  }
  // -v: one line per share, each with variants of its own.
  const auto v =
      vcztest::run(plain() + commands(dir, "missing_multi", path)[13] + shared(4) + " -v");
  ASSERT_EQ(v.exit_code, 0) << v.err;
  EXPECT_NE(v.err.find("4 shares on threads of one process"), std::string::npos) << v.err;
  const auto shares = rank_variants(v.err);
  EXPECT_EQ(shares.size(), 4u) << v.err;
  for (const auto& [rank, variants] : shares) EXPECT_GT(variants, 0) << "share " << rank;
}

TEST(ThreadShares, PairMatrixAndHaplotypeCommandsAreByteIdentical) {
  VCZ_MISSING_MULTI_OR_SKIP(dir, path);
  const std::string s = shell_quote(path) + " --max-unit-variants 11 ";
  const std::string pops = " -P " + shell_quote(write_pops(dir, "mm", path));
  const std::string f = " --maf 0.05 --geno 0.2 ";  // count filters: applied before the shares
  const std::vector<std::string> cases = {
      "ld " + s + "--ld-window-r2 0",
      "ld " + s + "--decay 0:400:25 --window-size 1000" + pops,
      "ld-stats " + s + "--bp-bins 0,20,200,600" + pops,
      "prune " + s + "--indep-pairwise 20 3 0.3 --out OUT/pr",
      "king " + s + "--table --rows-per-pass 9",
      "grm " + s + "--rows-per-pass 8",
      "distance " + s,
      "pca " + s + "-k 3 --loadings OUT/load.tsv --eigenvalues OUT/eig.tsv",
      "freq " + s + f + pops,
      "stats " + s + f + pops + " --window-size 500 --stats pi,tajima_d,dxy,fst_hudson",
  };
  for (const auto& c : cases) {
    const fs::path one = dir / "one", many = dir / "many";
    auto in = [&](const fs::path& d) {
      fs::remove_all(d);
      fs::create_directories(d);
      return std::regex_replace(c, std::regex("OUT/"), d.string() + "/") + " -o " +
             shell_quote((d / "out").string());
    };
    vcztest::run_ok(plain() + in(one) + " -t 2");
    for (int k : {2, 3}) {
      const auto got = vcztest::run(plain() + in(many) + shared(k));
      ASSERT_EQ(got.exit_code, 0) << k << " shares: " << c << "\n" << got.err;
      const auto want = folder(one), have = folder(many);
      ASSERT_EQ(want.size(), have.size()) << c;
      for (const auto& [name, text] : want) {
        ASSERT_TRUE(have.contains(name)) << c << ": " << name;
        EXPECT_GT(text.size(), 0u) << c << ": " << name;
        EXPECT_EQ(text, have.at(name)) << k << " shares: " << c << ": " << name;
      }
    }
  }

  // Phased calls: the haplotype family and the scans, whose shares settle their own edges.
  const std::string h = phased_store(dir);
  for (const std::string& c : {"haplotypes " + h + "--window-size 20000", "ihs " + h + "--maf 0.05",
                               "nsl " + h + "--maf 0.05", "xpehh " + h, "xpnsl " + h}) {
    const std::string want = vcztest::run_ok(plain() + c + " -t 2");
    EXPECT_GT(want.size(), 0u) << c;
    for (int k : {2, 4}) {
      const auto got = vcztest::run(plain() + c + shared(k));
      ASSERT_EQ(got.exit_code, 0) << k << " shares: " << c << "\n" << got.err;
      EXPECT_EQ(want, got.out) << k << " shares: " << c;
    }
  }
}

TEST(ThreadShares, AnErrorOnOneShareStopsAllWithThePlainRunsMessage) {
  VCZ_MISSING_MULTI_OR_SKIP(dir, path);
  // The last variant chunk's first sample chunk is corrupt: the last share reads it.
  const fs::path bad = corrupt_last_chunk(dir, path);
  const std::string out = (dir / "out.tsv").string();
  const std::string c = "freq " + shell_quote(bad.string()) + " -o " + shell_quote(out);
  const auto single = vcztest::run(plain() + c);
  ASSERT_EQ(single.exit_code, 1) << single.err;
  const auto many = vcztest::run(plain() + c + shared(3));
  EXPECT_EQ(many.exit_code, 1) << many.err;
  EXPECT_EQ(many.err, single.err);
  EXPECT_FALSE(fs::exists(out));
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find("out.tsv"), std::string::npos) << e.path();
}

// Several GPUs named on a machine without them, or twice: clear errors before anything runs.
TEST(ThreadShares, SeveralGpusAreNamedOnce) {
  const auto twice = vcztest::run(plain() + "afdist x.vcz --device gpu:0,0");
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("names GPU 0 twice"), std::string::npos) << twice.err;
  const auto bad = vcztest::run(plain() + "afdist x.vcz --device gpu:0,x");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("gpu:0,1 or gpu:all"), std::string::npos) << bad.err;
}

// On the GPU machine: two shares on one GPU in one process (every host has one), and on a host
// of two GPUs or more the shares on GPUs 0 and 1 (`gpu:0,1`) and on all of them (`gpu:all`).
TEST(ThreadSharesGpu, SharesOnGpusWriteWhatOneCpuProcessWrites) {
  VCZ_REQUIRE_GPU();
  VCZ_MISSING_MULTI_OR_SKIP(dir, path);
  const std::string s = shell_quote(path) + " --max-unit-variants 11 ";
  const std::string p = s + "-P " + shell_quote(write_pops(dir, "g", path)) + " ";
  const int gpus = vczstats::gpu_count();
  std::vector<std::string> devices{"gpu" + shared(2)};
  if (gpus >= 2) devices.insert(devices.end(), {"gpu:0,1", "gpu:all"});
  for (const std::string& c :
       {"afdist " + s, "freq " + p, "stats " + p + "--window-size 500 --stats pi,tajima_d,dxy",
        "sfs " + p + "--project 5", "ld " + s + "--ld-window-r2 0", "king " + s}) {
    const auto want = vcztest::run(plain() + c + " --device cpu -t 2");
    for (const auto& d : devices) {
      const auto got = vcztest::run(plain() + c + " --device " + d + " -v");
      EXPECT_EQ(want.exit_code, got.exit_code) << c << " --device " << d << "\n" << got.err;
      EXPECT_EQ(want.out, got.out) << c << " --device " << d;
      if (got.exit_code == 0 && got.err.find("nothing to read") == std::string::npos) {
        EXPECT_NE(got.err.find("shares on threads of one process"), std::string::npos) << got.err;
      }
    }
  }
  if (gpus >= 2) {
    const auto g = vcztest::run(plain() + "grm " + s + "--device gpu:0,1");
    ASSERT_EQ(g.exit_code, 0) << g.err;
    EXPECT_TRUE(same_within(vcztest::run_ok(plain() + "grm " + s + "--device cpu"), g.out, 1e-9));
  }
}
