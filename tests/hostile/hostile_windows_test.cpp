// Hostile window arguments and positions (issue 16, the window items): --window-size and
// --window-step of 2^63 - 1, a contig length near 2^62, a position of 2^63 - 1 and an accessible
// mask or region ending at 2^63 - 1. Each once overflowed, or emitted windows for minutes until
// memory ran out. Each must now give correct output (exit 0) or one clean usage error (exit 2),
// within seconds and bounded memory.
//
// The fix is the library's window arithmetic (include/vczstats/windows.hpp: saturating window
// bounds and kMaxWindowsPerGroup, from the library's redesign); these tests hold it to the CLI.

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <sstream>

#include "hostile/hostile_support.hpp"
#include "hostile/tiny_store.hpp"
#include "test_util.hpp"

using namespace vcztest;
using namespace vcztest::hostile;

namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
const std::string kMax = std::to_string(kInt64Max);

/// The data rows of a window table: (start, end, n_sites) of each row of chr1.
struct Row {
  std::int64_t start = 0, end = 0, n_sites = 0;
};

std::vector<Row> rows(const std::string& tsv) {
  std::vector<Row> out;
  std::istringstream in(tsv);
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols;
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, '\t');) cols.push_back(f);
    if (header.empty()) {
      header = cols;
      continue;
    }
    auto col = [&](const std::string& name) -> std::int64_t {
      for (std::size_t i = 0; i < header.size() && i < cols.size(); ++i)
        if (header[i] == name) return std::stoll(cols[i]);
      ADD_FAILURE() << "no column " << name << " in: " << tsv;
      return -1;
    };
    out.push_back({col("start"), col("end"), col("n_sites")});
  }
  return out;
}

/// Run a windowed `diversity` on @p store with @p args: either one clean usage error naming the
/// window option (exit 2; nullopt) or success with bounded output (its rows). Windows tile the
/// contig from base 1 to its length (--window-span contig) unless @p span says otherwise.
std::optional<std::vector<Row>> diversity(const TinyStore& store, const std::string& args,
                                          const std::string& span = "contig") {
  const std::string command =
      binary() + " diversity " + args + " --window-span " + span + " " + store.str();
  const auto r = run(limited(command, 2048));
  if (r.exit_code == 2) {
    expect_clean_failure(command, 2, {"window"}, 2048);
    return std::nullopt;
  }
  EXPECT_EQ(r.exit_code, 0) << command << "\nstderr: " << r.err;
  EXPECT_LT(r.out.size(), std::size_t{1} << 20) << command;  // no runaway output
  return rows(r.out);
}

TEST(HostileWindows, WindowSizeAndStepOf2To63Minus1) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");  // chr1 of 1000 bp, sites at 10, 20, 30
  // One window, the whole contig.
  for (const std::string& args :
       {"--window-size " + kMax, "--window-size " + kMax + " --window-step " + kMax}) {
    const auto r = diversity(s, args);
    ASSERT_TRUE(r.has_value()) << args;
    ASSERT_EQ(r->size(), 1u) << args;
    EXPECT_EQ((*r)[0].start, 1);
    EXPECT_EQ((*r)[0].end, 1000);
    EXPECT_EQ((*r)[0].n_sites, 3);
  }
  // A step past every position: the first window only.
  const auto r = diversity(s, "--window-size 15 --window-step " + kMax);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].start, 1);
  EXPECT_EQ((*r)[0].end, 15);
  EXPECT_EQ((*r)[0].n_sites, 1);
  // Over the data (the default): one window from the first site to the last.
  for (const std::string& args :
       {"--window-size " + kMax, "--window-size " + kMax + " --window-step " + kMax}) {
    const auto d = diversity(s, args, "data");
    ASSERT_TRUE(d.has_value()) << args;
    ASSERT_EQ(d->size(), 1u) << args;
    EXPECT_EQ((*d)[0].start, 10);
    EXPECT_EQ((*d)[0].end, 30);
    EXPECT_EQ((*d)[0].n_sites, 3);
  }
}

TEST(HostileWindows, ContigLengthNear2To62WithSmallWindows) {
  TempDir dir;
  for (const std::int64_t length : {std::int64_t{1} << 62, (std::int64_t{1} << 62) + 12345}) {
    TinyStore s(dir / "t.vcz");
    s.array("contig_length", {1}, {1}, "<i8", le_bytes(std::vector<std::int64_t>{length}));
    // Windows to the contig end: more than any run could emit, so a clean usage error (or,
    // were windows ever emitted lazily, bounded output).
    (void)diversity(s, "--window-size 1000");
    // Within a region: ten windows, the first with the three sites.
    const auto r = diversity(s, "--window-size 1000 -r chr1:1-10000");
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->size(), 10u);
    EXPECT_EQ((*r)[0].n_sites, 3);
    EXPECT_EQ(r->back().start, 9001);
    EXPECT_EQ(r->back().end, 10000);
  }
}

TEST(HostileWindows, PositionOf2To63Minus1) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  s.array("contig_length", {1}, {1}, "<i8", le_bytes(std::vector<std::int64_t>{kInt64Max}));
  s.array("variant_position", {3}, {3}, "<i8",
          le_bytes(std::vector<std::int64_t>{10, 20, kInt64Max}));
  // Small windows up to that position: a clean usage error, or bounded output.
  (void)diversity(s, "--window-size 1000");
  // Two windows of 2^62 bp: the second ends at 2^63 - 1 and holds the last site.
  const std::int64_t half = std::int64_t{1} << 62;
  const auto r = diversity(s, "--window-size " + std::to_string(half));
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].start, 1);
  EXPECT_EQ((*r)[0].end, half);
  EXPECT_EQ((*r)[0].n_sites, 2);
  EXPECT_EQ((*r)[1].start, half + 1);
  EXPECT_EQ((*r)[1].end, kInt64Max);
  EXPECT_EQ((*r)[1].n_sites, 1);
  // Over the data: from 10, the second window (10 + 2^62 + 2^62 >= 2^63 - 1) the last.
  const auto d = diversity(s, "--window-size " + std::to_string(half), "data");
  ASSERT_TRUE(d.has_value());
  ASSERT_EQ(d->size(), 2u);
  EXPECT_EQ((*d)[0].start, 10);
  EXPECT_EQ((*d)[0].end, 10 + half - 1);
  EXPECT_EQ((*d)[0].n_sites, 2);
  EXPECT_EQ((*d)[1].start, 10 + half);
  EXPECT_EQ((*d)[1].end, kInt64Max);
  EXPECT_EQ((*d)[1].n_sites, 1);
  // Small windows over the data up to that position: a clean usage error, or bounded output.
  (void)diversity(s, "--window-size 1000", "data");
}

TEST(HostileWindows, AccessibleMaskAndRegionEndingAt2To63Minus1) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  const auto bed = dir / "accessible.bed";
  write_text(bed, "chr1\t0\t" + kMax + "\n");
  // The mask covers the whole contig: ten windows of 100 bp, the first with the three sites.
  for (const std::string& args :
       {"--window-size 100 --accessible " + bed.string(), "--window-size 100 -r chr1:1-" + kMax,
        "--window-size 100 -r chr1:1-" + kMax + " --accessible " + bed.string()}) {
    const auto r = diversity(s, args);
    if (!r) continue;  // a clean usage error
    ASSERT_EQ(r->size(), 10u) << args;
    EXPECT_EQ((*r)[0].n_sites, 3) << args;
    EXPECT_EQ(r->back().end, 1000) << args;
  }
}

TEST(HostileWindows, RecordEndingExactlyAt2To63Minus1InARegion) {
  // POS = 2^63 - 2 with a 2-bp REF ends at 2^63 - 1: the record's end must be computed as
  // POS + (len - 1); (POS + len) - 1 overflows first (UBSan reports it in the sanitizer build).
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  s.array("contig_length", {1}, {1}, "<i8", le_bytes(std::vector<std::int64_t>{kInt64Max}));
  s.array("variant_position", {3}, {3}, "<i8",
          le_bytes(std::vector<std::int64_t>{10, 20, kInt64Max - 1}));
  s.array("variant_allele", {3, 2}, {3, 2}, "|O", vlen({"A", "T", "A", "T", "AT", "A"}), "0.0",
          json::array({{{"id", "vlen-utf8"}}}));
  for (const std::string& region : {"chr1:15-" + kMax, "chr1:" + kMax + "-" + kMax}) {
    const std::string command = binary() + " afdist -r " + region + " " + s.str();
    const auto r = run(limited(command, 2048));
    EXPECT_EQ(r.exit_code, 0) << command << "\nstderr: " << r.err;
    EXPECT_EQ(r.err.find("runtime error"), std::string::npos) << r.err;
  }
}

}  // namespace
