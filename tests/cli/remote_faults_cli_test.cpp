// Remote stores against servers that misbehave (tests/tools/fault_server.py): bodies dripped a
// byte at a time, servers that never answer, endless bodies, Content-Lengths that lie, metadata
// nested 200,000 levels deep, listings that loop, Retry-After. Each run must end within the
// bound its options give (--max-retries, --stall-timeout), with exit 1 and one error line naming
// the URL, in bounded memory (an address-space limit, and peak RSS against a normal run's).

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "test_util.hpp"
#include "vczstats/vcz.hpp"
#include "zarr/remote_test_support.hpp"

#ifdef VCZSTATS_HAVE_REMOTE

namespace {

namespace fs = std::filesystem;
using vcztest::binary;
using vcztest::python;
using vcztest::run;
using vcztest::run_ok;
using vcztest::shell_quote;
using vcztest::TempDir;
using vcztest::tool;
using vcztest::remote::FaultServer;

/// Quick failures: one retry, a one-second stall; a retry after a fault fails again.
const std::string kQuick = " --no-progress -t 2 --max-retries 1 --stall-timeout 1";
/// The same for info, which takes no thread or progress options.
const std::string kQuickInfo = " --max-retries 1 --stall-timeout 1";
/// The bound of the issue's settings: 4 attempts of 3 s, with backoff.
const std::string kIssue = " --no-progress -t 2 --max-retries 3 --stall-timeout 3";

struct Timed {
  vcztest::CommandResult result;
  double seconds = 0;
  std::int64_t peak_kib = 0;
};

/// Run @p command (arguments of vczstats) under an address-space limit of @p limit_mib (0: none),
/// timing it and recording its peak RSS.
Timed timed(const TempDir& dir, const std::string& args, std::int64_t limit_mib = 0) {
#ifdef VCZ_SANITIZE
  limit_mib = 0;  // ASan reserves terabytes of address space for its shadow memory
#endif
  const fs::path rss = dir / "rss";
  const auto t0 = std::chrono::steady_clock::now();
  Timed t;
  t.result = run(python() + " " + tool("peak_rss.py") + " " + shell_quote(rss.string()) + " " +
                 std::to_string(limit_mib * 1024) + " -- " + binary() + " " + args);
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ifstream(rss) >> t.peak_kib;
  return t;
}

/// Exit 1, one line on stderr naming @p url, within @p seconds.
void expect_clean_failure(const Timed& t, const std::string& url, double seconds,
                          const std::string& expected = "") {
  EXPECT_EQ(t.result.exit_code, 1) << t.result.err;
  EXPECT_EQ(std::count(t.result.err.begin(), t.result.err.end(), '\n'), 1) << t.result.err;
  EXPECT_NE(t.result.err.find(url), std::string::npos) << t.result.err;
  if (!expected.empty()) {
    EXPECT_NE(t.result.err.find(expected), std::string::npos) << t.result.err;
  }
  EXPECT_LT(t.seconds, seconds) << t.result.err;
}

/// A simulated store (with consolidated metadata when the writer makes it) and its zip.
struct Stores {
  TempDir dir;
  fs::path www = dir / "www";
  Stores() {
    fs::create_directories(www);
    run_ok(binary() + " simulate " + shell_quote((www / "sim.vcz").string()) +
           " --samples 40 --variants 3000 --variants-chunk-size 500 --seed 3 --no-progress");
    run_ok("cd " + shell_quote((www / "sim.vcz").string()) + " && " + python() +
           " -c 'import os, zipfile\nwith zipfile.ZipFile(\"../sim.vcz.zip\", \"w\") as z:\n"
           "    [z.write(os.path.join(d, f), os.path.relpath(os.path.join(d, f), \".\")) "
           "for d, _, fs in os.walk(\".\") for f in fs]'");
  }
};

Stores& stores() {
  static Stores s;
  return s;
}

TEST(RemoteFaultsCli, ABodyDrippedAByteASecondIsCutAtTheMinimumSpeed) {
  FaultServer server(stores().www, {"--drip", "2", "--fault-path", "call_genotype/"});
  ASSERT_TRUE(server.ok()) << server.log();
  TempDir dir;
  const std::string url = server.url() + "/sim.vcz";
  // Before: LOW_SPEED_LIMIT of 1 byte a second accepted the drip forever.
  const auto t = timed(dir, "afdist " + url + kIssue);
  expect_clean_failure(t, url + "/call_genotype/", 20, "gave up after 4 attempts");
}

TEST(RemoteFaultsCli, AServerThatNeverAnswersFailsWithinTheRetryBound) {
  FaultServer server(stores().www, {"--stall"});
  ASSERT_TRUE(server.ok()) << server.log();
  TempDir dir;
  for (const std::string name : {"sim.vcz", "sim.vcz.zip"}) {
    const std::string url = server.url() + "/" + name;
    // 4 attempts of 3 s with backoff: about 13 s (was 43-141 s).
    const auto t = timed(dir, "freq " + url + kIssue);
    expect_clean_failure(t, url, 18, "gave up after 4 attempts");
  }
}

TEST(RemoteFaultsCli, EndlessBodiesAreCappedInBoundedMemory) {
  TempDir dir;
  // A normal run's peak, for the memory bound.
  std::int64_t normal_kib = 0;
  {
    FaultServer server(stores().www, {});
    ASSERT_TRUE(server.ok()) << server.log();
    const auto t = timed(dir, "afdist " + server.url() + "/sim.vcz" + kQuick);
    ASSERT_EQ(t.result.exit_code, 0) << t.result.err;
    normal_kib = t.peak_kib;
  }
  struct Case {
    std::string store, path, expected;
  };
  // A chunk, a zip's ranges, metadata documents.
  const std::vector<Case> cases = {
      {"sim.vcz", "call_genotype/", "the limit of"},
      {"sim.vcz.zip", "", "more than the"},
      {"sim.vcz", ".zmetadata", "the limit of"},
      {"sim.vcz", ".zgroup", ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.store + " " + c.path);
    FaultServer server(stores().www, {"--endless", "--fault-path", c.path.empty() ? "/" : c.path});
    ASSERT_TRUE(server.ok()) << server.log();
    const std::string url = server.url() + "/" + c.store;
    // Under a 2 GiB address-space limit this aborted (std::bad_alloc) before.
    const auto t = timed(dir, "afdist " + url + kQuick + " --max-object-size 67108864", 2048);
    if (c.path == ".zgroup" && t.result.exit_code == 0) continue;  // consolidated: not read
    expect_clean_failure(t, url, 30, c.expected);
#ifndef VCZ_SANITIZE  // ASan's quarantine and redzones are not the run's memory
    EXPECT_LT(t.peak_kib, normal_kib + 256 * 1024) << "normal run: " << normal_kib << " KiB";
#endif
  }
}

TEST(RemoteFaultsCli, AContentLengthOf16GiBAllocatesNothingOfItsSize) {
  TempDir dir;
  for (const std::string path : {"call_genotype/", ".zgroup"}) {
    SCOPED_TRACE(path);
    FaultServer server(stores().www, {"--huge-length", "--fault-path", path});
    ASSERT_TRUE(server.ok()) << server.log();
    const std::string url = server.url() + "/sim.vcz";
    const auto t = timed(dir, "afdist " + url + kQuick, 8192);
    expect_clean_failure(t, url, 20, "the limit of");
  }
  // A zip's range whose 206 announces 16 GiB: the body is cut short, retried, reported.
  FaultServer server(stores().www, {"--huge-length", "--fault-path", ".zip"});
  ASSERT_TRUE(server.ok()) << server.log();
  const std::string url = server.url() + "/sim.vcz.zip";
  expect_clean_failure(timed(dir, "afdist " + url + kQuick, 8192), url, 20);
}

TEST(RemoteFaultsCli, MetadataNested200000LevelsDeepIsAnErrorNotACrash) {
  FaultServer server(stores().www, {"--deep-json", "200000"});
  ASSERT_TRUE(server.ok()) << server.log();
  TempDir dir;
  const std::string url = server.url() + "/sim.vcz";
  // Before: SIGSEGV (stack overflow in nlohmann's dump).
  expect_clean_failure(timed(dir, "afdist " + url + kQuick), url + ": .zmetadata", 10,
                       "nested deeper than");
  // The same document on disk.
  const fs::path local = dir / "deep.vcz";
  fs::copy(stores().www / "sim.vcz", local, fs::copy_options::recursive);
  std::ofstream(local / ".zgroup") << "{\"zarr_format\": 2, \"x\": " << std::string(200000, '[')
                                   << std::string(200000, ']') << "}";
  std::ofstream(local / ".zmetadata", std::ios::trunc)
      << "{\"metadata\": {\".zgroup\": " << std::string(200000, '[') << std::string(200000, ']')
      << "}}";
  const auto t = timed(dir, "afdist " + shell_quote(local.string()) + kQuick);
  EXPECT_EQ(t.result.exit_code, 1) << t.result.err;
  EXPECT_EQ(std::count(t.result.err.begin(), t.result.err.end(), '\n'), 1) << t.result.err;
}

TEST(RemoteFaultsCli, ListingsThatLoopEndWithAnError) {
  TempDir dir;
  {
    // Every folder lists a/: before, info ran for minutes (1,983 levels in 90 s).
    FaultServer server(stores().www, {"--loop-listing"});
    ASSERT_TRUE(server.ok()) << server.log();
    const std::string url = server.url() + "/sim.vcz";
    expect_clean_failure(timed(dir, "info " + url + kQuickInfo), url, 15, "deeper than");
  }
  {
    // ListObjectsV2 always truncated with the same token: before, 18,900 requests in 45 s.
    FaultServer bucket(stores().dir.path(), {"--loop-token"});  // bucket "www"
    ASSERT_TRUE(bucket.ok()) << bucket.log();
    const auto t = timed(
        dir, "info s3://www/sim.vcz --s3-endpoint " + bucket.url() + " --anonymous" + kQuickInfo);
    expect_clean_failure(t, bucket.url() + "/www", 15, "repeats continuation token");
  }
}

TEST(RemoteFaultsCli, RetryAfterIsHonouredWithinItsBound) {
  TempDir dir;
  FaultServer plain(stores().www, {});
  ASSERT_TRUE(plain.ok()) << plain.log();
  const std::string want = run_ok(binary() + " afdist " + plain.url() + "/sim.vcz.zip" + kQuick);
  // The zip's first request is answered 503 with Retry-After: 2; the backoff alone is 0.1 s.
  FaultServer server(stores().www, {"--retry-after", "2"});
  ASSERT_TRUE(server.ok()) << server.log();
  const auto t = timed(dir, "afdist " + server.url() + "/sim.vcz.zip" + kQuick);
  ASSERT_EQ(t.result.exit_code, 0) << t.result.err;
  EXPECT_EQ(t.result.out, want);
  EXPECT_GE(t.seconds, 2.0);
  EXPECT_LT(t.seconds, 10.0);
  // A Retry-After of a day waits 30 s at most: with --max-retries 0 it is not waited for at all.
  FaultServer day(stores().www, {"--retry-after", "86400"});
  ASSERT_TRUE(day.ok()) << day.log();
  const std::string url = day.url() + "/sim.vcz.zip";
  expect_clean_failure(
      timed(dir, "afdist " + url + " --no-progress --max-retries 0 --stall-timeout 1"), url, 5,
      "HTTP 503");
}

TEST(RemoteFaultsCli, ARetryWithNothingElseInFlightIsNotDelayedBySeconds) {
  // The zip's first request is answered 503 (Retry-After: 0) while nothing else is in flight:
  // before, the I/O loop slept its idle second before sending it again (13 retries, 13 s).
  TempDir dir;
  FaultServer plain(stores().www, {});
  ASSERT_TRUE(plain.ok()) << plain.log();
  FaultServer server(stores().www, {"--retry-after", "0"});
  ASSERT_TRUE(server.ok()) << server.log();
  double best_plain = 1e9, best_retry = 1e9;
  for (int i = 0; i < 3; ++i) {
    const auto p = timed(dir, "afdist " + plain.url() + "/sim.vcz.zip" + kQuick);
    ASSERT_EQ(p.result.exit_code, 0) << p.result.err;
    best_plain = std::min(best_plain, p.seconds);
    FaultServer again(stores().www, {"--retry-after", "0"});  // a fresh first request
    ASSERT_TRUE(again.ok()) << again.log();
    const auto r = timed(dir, "afdist " + again.url() + "/sim.vcz.zip" + kQuick + " -v");
    ASSERT_EQ(r.result.exit_code, 0) << r.result.err;
    EXPECT_NE(r.result.err.find("(1 retries)"), std::string::npos) << r.result.err;
    best_retry = std::min(best_retry, r.seconds);
  }
  // The retry's backoff is 0.05-0.1 s.
  EXPECT_LT(best_retry - best_plain, 0.6) << best_plain << " s without the retry";
}

TEST(RemoteLatencyCli, EveryStatisticKeepsRequestsInFlightAtObjectStoreLatency) {
  // 40 variant chunks; each answer 50 ms late. Reading one chunk at a time (genotypes were read
  // ahead, variant fields were not) costs requests x 50 ms; read-ahead must overlap them.
  TempDir dir;
  const fs::path www = dir / "www";
  fs::create_directories(www);
  run_ok(binary() + " simulate " + shell_quote((www / "lat.vcz").string()) +
         " --samples 20 --variants 20000 --variants-chunk-size 500 --pops 2 --seed 5 "
         "--no-progress");
  FaultServer server(www, {"--latency", "0.05"});
  ASSERT_TRUE(server.ok()) << server.log();
  const std::string url = server.url() + "/lat.vcz";
  for (const std::string cmd : {"freq", "missing", "hardy"}) {
    SCOPED_TRACE(cmd);
    const auto want = run_ok(binary() + " " + cmd + " " + shell_quote((www / "lat.vcz").string()) +
                             " --no-progress -t 2");
    const auto t = timed(dir, cmd + " " + url + " --no-progress -t 2 -v");
    ASSERT_EQ(t.result.exit_code, 0) << t.result.err;
    EXPECT_EQ(t.result.out, want);
    const auto at = t.result.err.find(" requests (");
    ASSERT_NE(at, std::string::npos) << t.result.err;
    const auto from = t.result.err.rfind(' ', at - 1);
    const int requests = std::stoi(t.result.err.substr(from + 1, at - from - 1));
    EXPECT_GE(requests, 100) << t.result.err;
    // One at a time costs requests x 0.05 s (about 12 s before variant fields were read
    // ahead); opening the store (metadata, no consolidated copy) is still one at a time, so
    // ask for half of that at most (4.5 s here).
    EXPECT_LT(t.seconds, requests * 0.05 / 2) << requests << " requests";
  }
}

TEST(RemoteLatencyCli, ARemoteZipAsksForEachDocumentOnce) {
  // A zip without consolidated metadata: its metadata documents are fetched together at open
  // and kept. Before, a remote zip kept no answer once read, so each array opened again (the
  // query, then each statistic) cost its documents one round trip each, in series (at 100 ms,
  // a second of a 5 s run); and the small arrays read whole at open (sample_id, contig_id,
  // contig_length) were asked for one at a time after it.
  TempDir dir;
  const fs::path www = dir / "www";
  fs::create_directories(www);
  // Large enough that the zip's directory and entries are not all in its first read (its tail).
  run_ok(binary() + " simulate " + shell_quote((www / "z.vcz").string()) +
         " --samples 200 --variants 20000 --variants-chunk-size 1000 --pops 2 --seed 7 "
         "--pops-file " +
         shell_quote((dir / "pops").string()) + " --no-progress");
  run_ok("cd " + shell_quote((www / "z.vcz").string()) + " && " + python() +
         " -c 'import os, zipfile\nwith zipfile.ZipFile(\"../z.vcz.zip\", \"w\") as z:\n"
         "    [z.write(os.path.join(d, f), os.path.relpath(os.path.join(d, f), \".\")) "
         "for d, _, fs in os.walk(\".\") for f in fs]'");
  FaultServer server(www, {"--latency", "0.02"});
  ASSERT_TRUE(server.ok()) << server.log();
  const std::string zip = (www / "z.vcz.zip").string();
  const std::string args =
      " -P " + shell_quote((dir / "pops").string()) +
      " --stats pi,tajima_d,fst_hudson --window-size 100000 --no-progress -t 2";
  const auto want = run_ok(binary() + " stats " + shell_quote(zip) + args);
  const auto got = run(binary() + " stats " + server.url() + "/z.vcz.zip" + args);
  ASSERT_EQ(got.exit_code, 0) << got.err;
  EXPECT_EQ(got.out, want);
  // Where each metadata document lies in the zip (its local header), and the zip's size.
  std::vector<std::int64_t> docs;
  std::istringstream offsets(
      run_ok(python() +
             " -c 'import sys, zipfile\nfor i in zipfile.ZipFile(sys.argv[1]).infolist():\n"
             "    if i.filename.rsplit(\"/\", 1)[-1] in (\".zarray\", \".zattrs\", "
             "\".zgroup\", \"zarr.json\"): print(i.header_offset)' " +
             shell_quote(zip)));
  for (std::int64_t o; offsets >> o;) docs.push_back(o);
  ASSERT_GT(docs.size(), 10u);
  const auto size = static_cast<std::int64_t>(fs::file_size(zip));
  std::map<std::int64_t, int> asked;  // document -> requests for it alone
  std::istringstream log(server.requests());
  for (std::string line; std::getline(log, line);) {
    std::istringstream f(line);
    std::string method, path, range;
    f >> method >> path >> range;
    std::int64_t lo = 0, hi = size - 1;
    if (range.starts_with("bytes=-")) {
      lo = size - std::stoll(range.substr(7));
    } else if (range.starts_with("bytes=")) {
      const auto dash = range.find('-');
      lo = std::stoll(range.substr(6, dash - 6));
      if (dash + 1 < range.size()) hi = std::stoll(range.substr(dash + 1));
    }
    // A request for a document alone (a few hundred bytes): a read of it, not a range of
    // neighbouring chunks that happens to span it.
    for (const auto d : docs)
      if (d >= lo && d <= hi && hi - lo < 4096) ++asked[d];
  }
  for (const auto d : docs)
    EXPECT_LE(asked[d], 1) << "the document at " << d << " was fetched " << asked[d] << " times\n"
                           << server.requests();
}

TEST(RemoteLatencyCli, ADirectoryStoreStartsInFewRoundTrips) {
  // A directory store without consolidated metadata, each answer 0.3 s late. Requests that wait
  // on an earlier answer form rounds: opening the store (the root documents, then every array's
  // documents and first chunks at once) and the pass (genotypes and variant fields hinted
  // together): 3 rounds (26 with --max-requests 4). Before, the root documents took a round
  // each (5), the windows' data spans read the positions one chunk per round until their
  // read-ahead window grew, and the pass's first read of each variant field was a round of its
  // own.
  TempDir dir;
  const fs::path www = dir / "www";
  fs::create_directories(www);
  run_ok(binary() + " simulate " + shell_quote((www / "d.vcz").string()) +
         " --samples 20 --variants 20000 --variants-chunk-size 1000 --pops 2 --seed 11 "
         "--pops-file " +
         shell_quote((dir / "pops").string()) + " --no-progress");
  fs::remove(www / "d.vcz" / ".zmetadata");
  const double latency = 0.3;
  FaultServer server(www, {"--latency", "0.3"});
  ASSERT_TRUE(server.ok()) << server.log();
  const std::string args = " -P " + shell_quote((dir / "pops").string()) +
                           " --stats pi,tajima_d,fst_hudson --no-progress -t 2";
  const auto want = run_ok(binary() + " stats " + shell_quote((www / "d.vcz").string()) + args);
  const auto got = run(binary() + " stats " + server.url() + "/d.vcz" + args);
  ASSERT_EQ(got.exit_code, 0) << got.err;
  EXPECT_EQ(got.out, want);
  // Answer times: a round starts with the first answer more than half a latency after the
  // previous round's first.
  std::vector<double> times;
  std::map<std::string, int> asked;
  std::istringstream log(server.requests());
  for (std::string line; std::getline(log, line);) {
    std::istringstream f(line);
    std::string method, path, range, status;
    double t = 0;
    f >> method >> path >> range >> status >> t;
    times.push_back(t);
    ++asked[path];
  }
  std::sort(times.begin(), times.end());
  int rounds = 0;
  for (std::size_t i = 0, start = 0; i < times.size(); ++i)
    if (i == 0 || times[i] > times[start] + latency / 2) {
      ++rounds;
      start = i;
    }
  EXPECT_LE(rounds, 5) << server.requests();
  // The windows' data spans come from region_index: each position chunk is fetched once.
  for (const auto& [path, n] : asked) {
    if (path.find("/variant_position/") != std::string::npos &&
        path.find("/.z") == std::string::npos) {
      EXPECT_EQ(n, 1) << path;
    }
  }
}

}  // namespace

#endif  // VCZSTATS_HAVE_REMOTE
