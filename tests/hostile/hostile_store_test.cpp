// Hostile stores (issue 16): hand-made metadata and chunks that once crashed, hung, exhausted
// memory or gave wrong answers. Each must now fail cleanly: one line on stderr that names the
// store's array or chunk, exit 1 for bad data (2 for bad usage), nothing written at -o, and
// within seconds and bounded memory.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <limits>

#include "hostile/hostile_support.hpp"
#include "hostile/tiny_store.hpp"
#include "test_util.hpp"

using namespace vcztest;
using namespace vcztest::hostile;

namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

TEST(HostileStore, TinyStoreIsValid) {
  // The base every other test breaks: it must work, or the failures below prove nothing.
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  const auto info = run(binary() + " info " + s.str());
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("chr1 (1000 bp)"), std::string::npos) << info.out;
  const auto freq = run(binary() + " freq " + s.str());
  ASSERT_EQ(freq.exit_code, 0) << freq.err;
  EXPECT_EQ(std::count(freq.out.begin(), freq.out.end(), '\n'), 4) << freq.out;
}

TEST(HostileStore, FixedWidthStringWidthThatOverflows) {
  TempDir dir;
  for (const std::string dtype : {"|S4611686018427387904", "<U4611686018427387905", "|S0"}) {
    TinyStore s(dir / "t.vcz");
    s.array("sample_id", {2}, {2}, dtype, "");  // an empty chunk
    expect_clean_failure(binary() + " info " + s.str(), 1, {"sample_id"});
    expect_clean_failure(binary() + " freq " + s.str(), 1, {"sample_id"});
  }
}

TEST(HostileStore, ContigLengthShorterThanContigId) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  s.strings("contig_id", {"chr1", "chr2", "chr3"});
  expect_clean_failure(binary() + " info " + s.str(), 1, {"contig_length", "contig_id"});
}

TEST(HostileStore, ShapeNearInt64Max) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  s.patch("variant_position", {{"shape", {kInt64Max}}, {"chunks", {1000}}});
  s.patch("call_genotype", {{"shape", {kInt64Max, 2, 2}}, {"chunks", {1000, 2, 2}}});
  expect_clean_failure(binary() + " info " + s.str(), 1, {"variant"});
  for (const std::string cmd : {"afdist", "freq", "sample-stats"})
    expect_clean_failure(binary() + " " + cmd + " " + s.str(), 1, {"variant"});
}

TEST(HostileStore, ShapeOf2To62VariantsDoesNotHang) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  const std::int64_t n = std::int64_t{1} << 62;
  s.patch("variant_position", {{"shape", {n}}});
  s.patch("variant_contig", {{"shape", {n}}});
  s.patch("call_genotype", {{"shape", {n, 2, 2}}});
  for (const std::string cmd : {"afdist", "freq", "sample-stats"})
    expect_clean_failure(binary() + " " + cmd + " " + s.str(), 1, {"variant chunks"});
}

TEST(HostileStore, InfoOfAnArrayWhoseSizeOverflows) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  const std::int64_t big = std::int64_t{1} << 40;
  s.array("variant_extra", {big, big}, {1, 1}, "<i8", "", "");
  const auto r = run(limited(binary() + " info --format json " + s.str()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("variant_extra"), std::string::npos);
}

TEST(HostileStore, GenotypeChunkOf2To31VariantsIsRefusedBeforeAllocating) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  s.patch("call_genotype", {{"chunks", {std::int64_t{1} << 31, 2, 2}}});
  expect_clean_failure(binary() + " afdist " + s.str(), 1, {"call_genotype", "chunk"});
}

TEST(HostileStore, AbsurdPloidyIsRefused) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  const std::int64_t ploidy = std::int64_t{1} << 20;
  s.patch("call_genotype", {{"shape", {3, 2, ploidy}}, {"chunks", {3, 2, ploidy}}});
  fs::remove(s.path() / "call_genotype" / "0.0.0");  // reads as the fill value, 0
  for (const std::string cmd : {"afdist", "freq", "sample-stats"})
    expect_clean_failure(binary() + " " + cmd + " " + s.str(), 1, {"call_genotype", "ploidy"});
}

TEST(HostileStore, AbsurdAlleleCountIsRefused) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  s.patch("variant_allele", {{"shape", {3, std::int64_t{1} << 31}}, {"chunks", {3, 2}}});
  expect_clean_failure(binary() + " freq " + s.str(), 1, {"variant_allele"});
}

TEST(HostileStore, PositionNearInt64MaxWithRegions) {
  // POS + rlen - 1 once wrapped around: the record fell out of every region.
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  s.array("variant_position", {3}, {3}, "<i8",
          le_bytes(std::vector<std::int64_t>{10, 20, kInt64Max - 1}));
  s.array("variant_length", {3}, {3}, "<i4", le_bytes(std::vector<std::int32_t>{1, 1, 5}));
  const auto r = run(limited(binary() + " freq -r chr1:100- " + s.str()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;  // header + the record
}

TEST(HostileStore, RegionIndexOfAbsurdLengthIsNotRead) {
  // region_index only saves reads: one declaring 2^40 rows is ignored, and the query still right.
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  s.array("region_index", {std::int64_t{1} << 40, 6}, {1000, 6}, "<i8", "", "");
  const auto r = run(limited(binary() + " freq -r chr1:15-25 " + s.str()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
  EXPECT_NE(r.out.find("chr1\t20\t"), std::string::npos) << r.out;
}

TEST(HostileStore, DeltaFilterWithFloatDifferencesOutOfRange) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  s.array("variant_position", {3}, {3}, "<i4",
          le_bytes(std::vector<std::uint64_t>{0x7E37E43C8800759CULL /* 1e300 */,
                                              0x7FF8000000000000ULL /* NaN */,
                                              0x3FF0000000000000ULL /* 1 */}),
          "0", json::array({{{"id", "delta"}, {"dtype", "<i4"}, {"astype", "<f8"}}}));
  expect_clean_failure(binary() + " freq " + s.str(), 1, {"variant_position/0", "delta"});
}

TEST(HostileStore, BloscParametersOutOfRange) {
  TempDir dir;
  for (const json& bad :
       {json{{"clevel", 1e308}}, json{{"shuffle", 18446744073709551616.0}},
        json{{"clevel", "five"}}, json{{"shuffle", -1e300}}, json{{"cname", 7}}}) {
    TinyStore s(dir / "t.vcz");
    json compressor = {{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}};
    compressor.merge_patch(bad);
    s.patch("variant_position", {{"compressor", compressor}});
    expect_clean_failure(binary() + " info " + s.str(), 1, {"variant_position"});
  }
  for (const std::string id : {"zstd", "lz4", "zlib", "gzip", "bz2"}) {
    TinyStore s(dir / "t.vcz");
    const char* key = id == "lz4" ? "acceleration" : "level";
    s.patch("variant_position", {{"compressor", {{"id", id}, {key, 1e300}}}});
    expect_clean_failure(binary() + " info " + s.str(), 1, {"variant_position"});
  }
}

TEST(HostileStore, ChunkThatIsAFifoIsNotOpened) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  const auto chunk = s.path() / "call_genotype" / "0.0.0";
  fs::remove(chunk);
  ASSERT_EQ(::mkfifo(chunk.c_str(), 0600), 0);
  expect_clean_failure(binary() + " afdist " + s.str(), 1, {"call_genotype/0.0.0", "regular"});
  // Metadata that is a FIFO too.
  TinyStore m(dir / "m.vcz");
  fs::remove(m.path() / "variant_position" / ".zarray");
  ASSERT_EQ(::mkfifo((m.path() / "variant_position" / ".zarray").c_str(), 0600), 0);
  expect_clean_failure(binary() + " info " + m.str(), 1, {"variant_position/.zarray"});
}

TEST(HostileStore, BloscHeaderClaimingGigabytesInATinyChunk) {
  // A 16-byte blosc header whose nbytes says 2 GiB and cbytes 16: valid to blosc_cbuffer_validate.
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  std::string header = {'\x02', '\x01', '\x01', '\x01'};  // version, versionlz, flags, typesize
  header += le_bytes(std::vector<std::uint32_t>{0x7FFFFFEFu, 0x10000u, 16u});
  s.patch("sample_id",
          {{"compressor", {{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}}}});
  s.chunk("sample_id", "0", header);
  expect_clean_failure(binary() + " info " + s.str(), 1, {"sample_id/0", "blosc"},
                       /*memory_mib=*/1024);
}

TEST(HostileStore, NonStringContigsAttribute) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  fs::remove_all(s.path() / "contig_id");
  fs::remove_all(s.path() / "contig_length");
  s.patch_attributes({{"contigs", {1, 2}}});
  expect_clean_failure(binary() + " info " + s.str(), 1, {"contigs"});
}

TEST(HostileStore, InvalidUtf8SampleIdWithJsonOutput) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  s.strings("sample_id", {"s0", "s\xff\xfe"});
  const auto out = (dir / "out.json").string();
  expect_clean_failure(binary() + " sample-stats --format json -o " + out + " " + s.str(), 1,
                       {"sample_id"}, 0, out);
  expect_clean_failure(binary() + " info --format json " + s.str(), 1, {"sample_id"});
}

TEST(HostileStore, PositionsThatAreStringsAreADataError) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  s.strings("variant_position", {"10", "20", "30"});
  expect_clean_failure(binary() + " freq " + s.str(), 1, {"variant_position"});
  TinyStore c(dir / "c.vcz");
  c.strings("variant_contig", {"chr1", "chr1", "chr1"});
  expect_clean_failure(binary() + " freq " + c.str(), 1, {"variant_contig"});
}

TEST(HostileStore, OutputNamingADirectoryLeavesNothingBehind) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  fs::create_directory(dir / "outdir");
  const auto r = run(limited(binary() + " freq -o " + (dir / "outdir").string() + " " + s.str()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("outdir"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("filesystem error"), std::string::npos) << r.err;
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  EXPECT_TRUE(fs::is_empty(dir / "outdir"));
}

}  // namespace
