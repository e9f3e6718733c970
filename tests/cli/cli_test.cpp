// The command line: info against bcftools' view of the same VCF, exit codes and one-line error
// messages naming the file, array or chunk, and help text.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "test_util.hpp"

using namespace vcztest;
namespace fs = std::filesystem;

namespace {
std::string count_lines(const std::string& cmd) {
  auto out = run_ok(cmd + " | wc -l");
  return out.substr(0, out.find_first_of(" \n"));
}

}  // namespace

TEST(CliInfo, CountsMatchBcftoolsOnSharedStores) {
  VCZ_REQUIRE_SHARED_DATA();
  VCZ_REQUIRE_PROGRAM("bcftools");
  const auto d = shared_data();
  for (const auto& [store, vcf] : std::vector<std::pair<std::string, std::string>>{
           {"vcztools/sample.vcz.zip", "vcztools/sample.vcf.gz"},
           {"vcztools/sample.vcz3.zip", "vcztools/sample.vcf.gz"},
           {"vcztools/chr22.vcz.zip", "vcztools/chr22.vcf.gz"},
           {"vcztools/1kg_2020_chrM.vcz.zip", "vcztools/1kg_2020_chrM.vcf.gz"},
           {"ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip",
            "ag1000g/gamb.X.8-12Mb.n100.derived.vcf.gz"}}) {
    const auto info = run_ok(binary() + " info " + (d / store).string());
    EXPECT_EQ(info_field(info, "variants"), count_lines("bcftools view -H " + (d / vcf).string()))
        << store;
    EXPECT_EQ(info_field(info, "samples"), count_lines("bcftools query -l " + (d / vcf).string()))
        << store;
    EXPECT_NE(info.find("call_genotype\tint8"), std::string::npos) << info;
  }
  // Phasing as info reports it: the calls whose GT bcftools prints with '/' are unphased.
  for (const auto& [store, vcf] : std::vector<std::pair<std::string, std::string>>{
           {"vcztools/sample.vcz.zip", "vcztools/sample.vcf.gz"},
           {"vcztools/chr22.vcz.zip", "vcztools/chr22.vcf.gz"},
           {"vcztools/msprime_diploid.vcz.zip", "vcztools/msprime_diploid.vcf.gz"}}) {
    const auto counts =
        run_ok("bcftools query -f '[%GT\\n]' " + (d / vcf).string() +
               " 2>/dev/null | awk '{ n++; if (index($0, \"/\")) u++ } END { print u + 0, n }'");
    std::istringstream in(counts);
    std::int64_t unphased = 0, calls = 0;
    in >> unphased >> calls;
    ASSERT_GT(calls, 0) << vcf;
    const std::string want = unphased == 0 ? "phased"
                             : unphased == calls
                                 ? "unphased"
                                 : "partly phased (" + std::to_string(unphased) + " of " +
                                       std::to_string(calls) + " calls unphased)";
    EXPECT_EQ(info_field(run_ok(binary() + " info " + (d / store).string()), "phasing"), want)
        << store;
  }
  // A sites-only store and the annotations store open too.
  for (const std::string store :
       {"vcztools/field_type_combos.vcz.zip", "vcztools/1kg_2020_chr20_annotations.vcz.zip"}) {
    auto r = run(binary() + " info " + (d / store).string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  // JSON output parses as the same numbers.
  const auto json = run_ok(binary() + " info --format json " +
                           (d / "ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip").string());
  EXPECT_NE(json.find("\"variants\": 1019012"), std::string::npos);
}

TEST(CliErrors, MissingStoreIsAOneLineErrorNamingThePath) {
  auto r = run(binary() + " afdist /nonexistent/store.vcz");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/store.vcz"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(CliErrors, SitesOnlyStoreIsAnErrorForGenotypeStatistics) {
  TempDir dir;
  const auto store = (dir / "sites.vcz").string();
  run_ok(binary() + " simulate " + store + " --samples 4 --variants 30 --seed 5 --no-progress");
  for (const auto& e : fs::directory_iterator(store))
    if (e.path().filename().string().starts_with("call_genotype")) fs::remove_all(e.path());
  EXPECT_EQ(info_field(run_ok(binary() + " info " + store), "phasing"), "no genotype calls");
  for (const std::string cmd : {"afdist", "diversity", "freq", "sfs", "hardy"}) {
    const auto r = run(binary() + " " + cmd + " " + store);
    EXPECT_EQ(r.exit_code, 1) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find(store + " has no call_genotype"), std::string::npos) << cmd << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "") << cmd;
  }
}

TEST(CliErrors, EhhFocalSiteThatCannotBeUsedIsAnErrorNamingIt) {
  TempDir dir;
  const auto store = (dir / "h.vcz").string();
  run_ok(binary() + " simulate " + store + " --samples 6 --variants 200 --seed 9 --no-progress");
  // A position without a variant.
  auto r = run(binary() + " ehh " + store + " --focal 1:999999999");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("1:999999999"), std::string::npos) << r.err;
  // A site where the one selected sample is homozygous: not segregating among its haplotypes.
  const auto freq = run_ok(binary() + " freq " + store + " -s s0");
  std::istringstream in(freq);
  std::string line;
  std::vector<std::string> cols;
  std::getline(in, line);
  {
    std::istringstream h(line);
    for (std::string c; std::getline(h, c, '\t');) cols.push_back(c);
  }
  const auto col = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(cols.begin(), cols.end(), name) - cols.begin());
  };
  ASSERT_LT(col("alt_cts"), cols.size()) << freq.substr(0, 200);
  std::string focal;
  while (focal.empty() && std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream ls(line);
    for (std::string c; std::getline(ls, c, '\t');) f.push_back(c);
    if (f[col("obs_ct")] == "2" && (f[col("alt_cts")] == "0" || f[col("alt_cts")] == "2"))
      focal = f[col("chrom")] + ":" + f[col("pos")];
  }
  ASSERT_FALSE(focal.empty()) << "no homozygous site for s0";
  r = run(binary() + " ehh " + store + " -s s0 --focal " + focal);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("ehh: the focal site " + focal + " is not "), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(CliErrors, NotAVczStore) {
  TempDir dir;
  fs::create_directory(dir / "empty");
  auto r = run(binary() + " info " + (dir / "empty").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("empty"), std::string::npos) << r.err;
  std::ofstream(dir / "junk.zip") << "this is not a zip file";
  r = run(binary() + " afdist " + (dir / "junk.zip").string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("junk.zip"), std::string::npos) << r.err;
}

TEST(CliErrors, CorruptGenotypeChunkNamesTheChunk) {
  TempDir dir;
  const auto store = make_random_store(dir, "c", "--seed 3 --samples 10 --variants 100",
                                       "--variants-chunk-size 20");
  // Overwrite one chunk with garbage, and truncate another.
  { std::ofstream(fs::path(store) / "call_genotype" / "2.0.0", std::ios::binary) << "garbage!"; }
  auto r = run(binary() + " afdist " + store);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("call_genotype/2.0.0"), std::string::npos) << r.err;
  const auto chunk3 = fs::path(store) / "call_genotype" / "3.0.0";
  fs::resize_file(chunk3, fs::file_size(chunk3) / 2);
  fs::remove(fs::path(store) / "call_genotype" / "2.0.0");  // absent: reads as 0/0, fine
  r = run(binary() + " afdist " + store);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("call_genotype/3.0.0"), std::string::npos) << r.err;
}

TEST(CliErrors, UsageErrorsExitWith2) {
  TempDir dir;
  const auto store = make_random_store(dir, "u", "--seed 4 --samples 4 --variants 10", "");
  for (const std::string& args : std::vector<std::string>{
           "afdist", "afdist " + store + " --bins 0", "afdist " + store + " --method plink",
           "afdist " + store + " -r chr1:x-y", "afdist " + store + " -s nobody",
           "afdist " + store + " --no-such-option", "frobnicate " + store}) {
    auto r = run(binary() + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << args;
  }
  // --force-samples ignores unknown names.
  auto r = run(binary() + " afdist " + store + " -s nobody,$(bcftools query -l " +
               (dir / "u.vcf.gz").string() + " | head -1) --force-samples");
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliErrors, GpuRequestWithoutGpuIsAClearError) {
  TempDir dir;
  const auto store = make_random_store(dir, "g", "--seed 5 --samples 4 --variants 10", "");
  auto r = run(binary() + " afdist --device gpu " + store);
  if (r.exit_code == 0) GTEST_SKIP() << "skipped: this machine has a usable GPU";
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--device gpu"), std::string::npos) << r.err;
  // auto falls back to the CPU and says so under -v.
  r = run(binary() + " afdist --device auto -v " + store);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("using the CPU"), std::string::npos) << r.err;
}

TEST(CliHelp, EverySubcommandExplainsItself) {
  auto r = run(binary() + " --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const std::string cmd : {"info", "afdist"}) {
    EXPECT_NE(r.out.find(cmd), std::string::npos);
    auto h = run(binary() + " " + cmd + " --help");
    EXPECT_EQ(h.exit_code, 0);
    EXPECT_NE(h.out.find("STORE"), std::string::npos) << h.out;
  }
  auto h = run(binary() + " afdist --help");
  for (const std::string opt : {"--regions", "--samples", "--threads", "--device", "--method",
                                "--bins", "--output", "--format", "--progress", "--verbose"})
    EXPECT_NE(h.out.find(opt), std::string::npos) << opt;
}

TEST(CliPopulations, PanelAndPlinkFilesGiveTheTwoColumnFilesResult) {
  // One grouping written four ways: the two-column file is the reference for the others.
  TempDir dir;
  const auto store = (dir / "p.vcz").string();
  run_ok(binary() + " simulate " + store + " --samples 6 --variants 300 --seed 4 --no-progress");
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const auto two = write("two.tsv", "s0 EUR\ns1 EUR\ns2 AFR\ns3 AFR\ns4 EUR\n");
  const auto plink = write("plink.txt", "f0 s0 EUR\nf1 s1 EUR\nf2 s2 AFR\nf3 s3 AFR\nf4 s4 EUR\n");
  const auto panel =
      write("x.panel",
            "sample\tpop\tsuper_pop\tgender\ns0\tGBR\tEUR\tmale\ns1\tFIN\tEUR\tfemale\n"
            "s2\tYRI\tAFR\tmale\ns3\tLWK\tAFR\tmale\ns4\tTSI\tEUR\tfemale\n");
  const std::string cmd = binary() + " diversity " + store + " -P ";
  const auto want = run_ok(cmd + two);
  EXPECT_EQ(run_ok(cmd + plink), want);
  EXPECT_EQ(run_ok(cmd + panel + " --pop-column super_pop"), want);
  // Without --pop-column a panel groups by its pop column: five populations.
  const auto by_pop = run_ok(cmd + panel);
  for (const char* pop : {"GBR", "FIN", "YRI", "LWK", "TSI"})
    EXPECT_NE(by_pop.find(std::string("\t") + pop + "\t"), std::string::npos) << by_pop;
  const auto r = run(cmd + panel + " --pop-column region");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("x.panel"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("region"), std::string::npos) << r.err;
}
