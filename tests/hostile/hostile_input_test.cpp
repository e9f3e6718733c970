// Hostile text input (issue 16): VCFs for convert, region files, and paths that must not be
// overwritten. Each must fail cleanly: one line naming the file and line, exit 1 for bad data and
// 2 for bad usage, nothing written at the output path.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "hostile/hostile_support.hpp"
#include "hostile/tiny_store.hpp"
#include "test_util.hpp"

using namespace vcztest;
using namespace vcztest::hostile;

namespace {

const char* kHeader =
    "##fileformat=VCFv4.3\n"
    "##contig=<ID=chr1,length=100000>\n"
    "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n"
    "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\n";

std::string write_file(const TempDir& dir, const std::string& name, const std::string& text) {
  const auto path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(HostileConvert, InputThatIsNotAVcf) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"empty.vcf", ""},
           {"text.vcf", "hello\n"},
           {"binary.vcf", std::string("\x1f\x8b\x08", 3)}}) {
    const auto in = write_file(dir, name, text);
    const auto out = (dir / "out.vcz").string();
    expect_clean_failure(binary() + " convert " + in + " " + out, 1, {name}, 0, out);
    std::filesystem::remove_all(out);
  }
}

TEST(HostileConvert, RecordsWithTooFewColumns) {
  // bcftools: "Broken VCF record, the number of columns ... does not match the number of samples".
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  for (const std::string record :
       {"chr1\t10\t.\tA\n", "chr1\t10\t.\tA\tC\n", "chr1\t10\t.\tA\tC\t.\t.\t.\tGT\t0/1\n",
        "chr1\t10\t.\tA\tC\t.\t.\t.\n", "chr1\t10\t.\tA\tC\t.\t.\t.\tGT\n"}) {
    const auto in = write_file(dir, "few.vcf", std::string(kHeader) + record);
    const auto out = (dir / "out.vcz").string();
    expect_clean_failure(binary() + " convert " + in + " " + out, 1, {"few.vcf: line 5", "columns"},
                         0, out);
    std::filesystem::remove_all(out);
  }
  // The same record with every column converts.
  const auto good = write_file(dir, "good.vcf",
                               std::string(kHeader) + "chr1\t10\t.\tA\tC\t.\t.\t.\tGT\t0/1\t1/1\n");
  const auto r = run(limited(binary() + " convert " + good + " " + (dir / "good.vcz").string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(HostileConvert, HugePositionIsReportedWithoutOverflow) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  const auto in = write_file(
      dir, "pos.vcf",
      std::string(kHeader) + "chr1\t99999999999999999999\t.\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n");
  const auto out = (dir / "out.vcz").string();
  expect_clean_failure(binary() + " convert " + in + " " + out, 1, {"pos.vcf: line 5"}, 0, out);
}

TEST(HostileConvert, AbsurdPloidyIsRefused) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  std::string gt = "0";
  for (int i = 1; i < 100000; ++i) gt += "/0";
  const auto in = write_file(
      dir, "poly.vcf", std::string(kHeader) + "chr1\t10\t.\tA\tC\t.\t.\t.\tGT\t" + gt + "\t0/1\n");
  const auto out = (dir / "out.vcz").string();
  expect_clean_failure(binary() + " convert " + in + " " + out, 1, {"poly.vcf: line 5", "ploidy"},
                       0, out);
}

TEST(HostileConvert, HeaderThatIsNotUtf8) {
  // Found by fuzz_convert_vcf: a header byte that is not UTF-8 (Latin-1 here) made writing the
  // store's JSON attributes throw nlohmann's type_error.316. JSON must be UTF-8: the byte is
  // stored as U+FFFD, and the record converts.
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  std::string header = kHeader;
  header.insert(header.find("#CHROM"), "##source=caf\xe9 \xff\xfe\n");
  const auto in =
      write_file(dir, "latin1.vcf", header + "chr1\t10\t.\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n");
  const auto out = (dir / "out.vcz").string();
  const auto r = run(limited(binary() + " convert " + in + " " + out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto attrs = slurp(out + "/.zattrs");
  EXPECT_NE(attrs.find("caf\xef\xbf\xbd"), std::string::npos) << attrs;  // U+FFFD
  EXPECT_TRUE(nlohmann::json::accept(attrs));
  const auto freq = run(limited(binary() + " freq " + out));
  EXPECT_EQ(freq.exit_code, 0) << freq.err;
  EXPECT_NE(freq.out.find("chr1\t10\t"), std::string::npos) << freq.out;
}

TEST(HostileConvert, CorruptBgzfBlock) {
  // Found by fuzz_convert_vcf: a BGZF block that does not inflate made every further read fail,
  // and --skip-bad took each failure for a bad record: forever (or, when htslib then reported
  // the end, a store missing the rest of the file). Now a data error either way.
  VCZ_REQUIRE_CONVERT();
  VCZ_REQUIRE_PROGRAM("bgzip");
  TempDir dir;
  const auto head = write_file(dir, "head.vcf",
                               std::string(kHeader) + "chr1\t10\t.\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n");
  std::string body;
  for (int i = 0; i < 200; ++i)
    body += "chr1\t" + std::to_string(20 + i) + "\t.\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n";
  const auto tail = write_file(dir, "tail.vcf", body);
  ASSERT_EQ(run("bgzip -f " + head + " && bgzip -f " + tail).exit_code, 0);
  std::string second = slurp(tail + ".gz");
  for (std::size_t i = 30; i < 60 && i < second.size(); ++i) second[i] ^= 0x5a;  // the deflate data
  const auto in = write_file(dir, "corrupt.vcf.gz", slurp(head + ".gz") + second);
  const auto out = (dir / "out.vcz").string();
  for (const std::string flags : {"", " --skip-bad"})
    expect_clean_failure(binary() + " convert" + flags + " " + in + " " + out, 1,
                         {"corrupt.vcf.gz", "corrupt or truncated"}, 0, out);
}

TEST(HostileConvert, NumberThatDoesNotParseIsNotAFixedMillionValues) {
  // Found by fuzz_convert_vcf (the slow --skip-bad input of issue 16): a FORMAT line whose second
  // Number does not parse. htslib then declares the field fixed with 2^20-1 values, and the
  // store got chunks of [variants, samples, 1048575] floats. Converted as Number=., the extent
  // is the most values a sample has (3 here, counted from the records).
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  const auto in = write_file(dir, "num.vcf",
                             "##fileformat=VCFv4.3\n##contig=<ID=chr1,length=100000>\n"
                             "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n"
                             "##FORMAT=<ID=FD,Type=Float,Number=.,Descr=o\"x,Number=.\">\n"
                             "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\n"
                             "chr1\t10\t.\tA\tC\t.\t.\t.\tGT:FD\t0/1:1.5,2\t1/1:3,4,5\n"
                             "chr1\t20\t.\tA\tC\t.\t.\t.\tGT:FD\t0/0:.\t0/1:7\n");
  const auto out = dir / "num.vcz";
  const auto r = run(limited(binary() + " convert --skip-bad " + in + " " + out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream meta(out / "call_FD" / ".zarray");
  const auto zarray = nlohmann::json::parse(meta);
  EXPECT_EQ(zarray["shape"], nlohmann::json::parse("[2, 2, 3]")) << zarray.dump();
}

TEST(HostileConvert, OutputThatIsTheInputIsRefused) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  const std::string text = std::string(kHeader) + "chr1\t10\t.\tA\tC\t.\t.\t.\tGT\t0/1\t0/0\n";
  const auto in = write_file(dir, "same.vcf", text);
  for (const std::string& out : {in, (dir / "." / "same.vcf").string()}) {
    const auto r = run(limited(binary() + " convert " + in + " " + out + " -f"));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("same.vcf"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(slurp(in), text) << "the input was replaced";
  }
  // ms input too.
  const auto ms =
      write_file(dir, "sim.ms", "ms 2 1 -s 1\n1\n\n//\nsegsites: 1\npositions: 0.5\n1\n0\n");
  const auto r = run(limited(binary() + " convert --from ms " + ms + " " + ms + " -f"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(std::filesystem::is_regular_file(ms));
}

TEST(HostileConvert, MsHeaderDeclaringMillionsOfSamplesWithoutSitesIsRefused) {
  // Found by fuzz_convert_ms (issue 16): a 51-byte scrm header declaring 6.8 million haplotypes,
  // and one replicate with no site. With 2-sample chunks the store got 1.7 million sample_id
  // chunk files (24 s under ASan) for a file holding no genotype. Bounded by work: the
  // conversion either fails cleanly or writes a few files, never one per declared sample.
  TempDir dir;
  const auto in =
      write_file(dir, "empty.ms", "scrm 6814236 1 -t 5 -seed 1\n1\n\n//\nsegsites: 0\n");
  const auto out = (dir / "out.vcz").string();
  const auto r =
      run(limited(binary() + " convert --from ms --samples-chunk-size 2 " + in + " " + out));
  std::int64_t files = 0;  // in the folder: the store is written next to OUT, then renamed
  for (auto it = std::filesystem::recursive_directory_iterator(dir.path());
       it != std::filesystem::recursive_directory_iterator() && files <= 1000; ++it)
    ++files;
  EXPECT_LE(files, 1000) << "files written for a header with no genotype";
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("empty.ms"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--samples-chunk-size"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  // Fewer declared samples, or chunks that make fewer files, still convert.
  const auto small = write_file(dir, "small.ms", "ms 16000 1\n1\n\n//\nsegsites: 0\n");
  const auto r1 = run(limited(binary() + " convert --from ms " + small + " " + out));
  EXPECT_EQ(r1.exit_code, 0) << r1.err;
  const auto r2 = run(
      limited(binary() + " convert --from ms --samples-chunk-size 2 " + small + " " + out + " -f"));
  EXPECT_EQ(r2.exit_code, 0) << r2.err;
}

TEST(HostileRegions, RegionFilePositionsMustBeWholeIntegers) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  for (const std::string line : {"chr1 1e5 2e6", "chr1 14370abc 17330xyz", "chr1 10 20x",
                                 "chr1 +10 20", "chr1 0x10 20", "chr1 99999999999999999999 1"}) {
    const auto regions = write_file(dir, "r.txt", line + "\n");
    expect_clean_failure(binary() + " freq -R " + regions + " " + s.str(), 2, {"r.txt:1"});
  }
  // A BED start at the largest int64 cannot become 1-based.
  const auto bed = write_file(dir, "r.bed", "chr1\t9223372036854775807\t9223372036854775807\n");
  expect_clean_failure(binary() + " freq -R " + bed + " " + s.str(), 2, {"r.bed:1"});
  // Well-formed files still work: BED 9-20 is 1-based 10-20 (two records).
  const auto good = write_file(dir, "g.bed", "chr1\t9\t20\n");
  const auto r = run(limited(binary() + " freq -R " + good + " " + s.str()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 3) << r.out;
}

TEST(HostileRegions, CommandLineRegionsNearInt64Max) {
  TempDir dir;
  TinyStore s(dir / "t.vcz");
  const auto r = run(limited(binary() + " freq -r chr1:9223372036854775807 " + s.str()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_clean_failure(binary() + " freq -r chr1:9223372036854775808 " + s.str(), 2, {"region"});
}

}  // namespace
