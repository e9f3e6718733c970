// Threads follow the work (issue 35): a run starts no more worker threads than it has work
// items, whatever -t or the cores. On a store of one chunk (one work unit, one sample block),
// -t 64 runs one producer, and the worker threads the process starts (-v) stay a handful: the
// matrix family's crew one per 16 variants of the batch at most. (On a 64-core host, every
// statistic on a small store used to wake or start a thread per core; Garud's H on Ag1000G
// took 3.6 s there against 0.40 s on 16 cores.)

#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "test_util.hpp"

using namespace vcztest;

TEST(CliThreads, ASmallStoreStartsThreadsForItsWorkNotForMinusT) {
  TempDir dir;
  const std::string store = (dir / "one_chunk.vcz").string();
  run_ok(binary() + " simulate --samples 50 --variants 200 --seed 3 --no-progress " +
         shell_quote(store));
  struct Case {
    const char* command;
    unsigned most;  ///< worker threads the process may start
  };
  for (const Case c :
       {Case{"afdist", 2}, Case{"freq", 2}, Case{"haplotypes --window-variants 50", 3},
        Case{"king", 14}, Case{"grm", 14}}) {
    SCOPED_TRACE(c.command);
    const auto r = run(binary() + " " + c.command + " " + shell_quote(store) +
                       " --device cpu -t 64 -v -o " + shell_quote((dir / "out").string()));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("vczstats: device cpu, 1 threads; 200 variants in 1 work units"),
              std::string::npos)
        << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(vczstats:   threads +(\d+) )"))) << r.err;
    EXPECT_LE(std::stoul(m[1]), c.most) << r.err;
  }
}
