// End-to-end afdist against independent references run in the same test:
//  - --method bcftools against `bcftools +fill-tags -- -t AF | bcftools +af-dist` on the VCF the
//    store was made from (whole, a region, a sample subset);
//  - --method zarr-afdist against tests/tools/ref_afdist.py (numpy/numba over python3-zarr);
//  - results independent of thread count, work-unit size and the store's chunking/format.
// Stores come from ../shared/data (real bio2zarr stores) and from random VCFs converted by
// tests/tools/vcf2vcz.py (python3-zarr), never from our own writer.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "test_util.hpp"

using namespace vcztest;
namespace fs = std::filesystem;

namespace {

struct Histogram {
  std::vector<double> start, stop;
  std::vector<std::uint64_t> counts;
};

Histogram parse(const std::string& tsv) {
  Histogram h;
  std::istringstream in(tsv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "start\tstop\tprob_dist") << tsv;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream ls(line);
    std::string a, b, c;
    std::getline(ls, a, '\t');
    std::getline(ls, b, '\t');
    std::getline(ls, c, '\t');
    h.start.push_back(std::stod(a));
    h.stop.push_back(std::stod(b));
    h.counts.push_back(std::stoull(c));
  }
  return h;
}

std::string vczstats(const std::string& args) {
  return run_ok(binary() + " " + args);
}

std::string reference(const std::string& args) {
  return run_ok(python() + " " + tool("ref_afdist.py") + " " + args);
}

void expect_same_bins(const Histogram& ours, const Histogram& theirs, bool float32_edges,
                      const std::string& what) {
  ASSERT_EQ(ours.counts.size(), theirs.counts.size()) << what;
  EXPECT_EQ(ours.counts, theirs.counts) << what;
  for (std::size_t i = 0; i < ours.start.size(); ++i) {
    if (float32_edges) {  // bcftools prints float32 edges with %f
      EXPECT_NEAR(ours.start[i], theirs.start[i], 5e-7) << what;
      EXPECT_NEAR(ours.stop[i], theirs.stop[i], 5e-7) << what;
    } else {
      EXPECT_EQ(ours.start[i], theirs.start[i]) << what;
      EXPECT_EQ(ours.stop[i], theirs.stop[i]) << what;
    }
  }
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string l;
  while (std::getline(in, l))
    if (!l.empty()) out.push_back(l);
  return out;
}

// A region covering the second quarter of the first contig's records, and every other sample.
struct Query {
  std::string region, samples;
};

Query pick_query(const std::string& vcf) {
  Query q;
  auto recs = lines(run_ok("bcftools query -f '%CHROM\\t%POS\\n' " + shell_quote(vcf)));
  if (!recs.empty()) {
    const std::string contig = recs.front().substr(0, recs.front().find('\t'));
    std::vector<std::string> pos;
    for (const auto& r : recs)
      if (r.substr(0, r.find('\t')) == contig) pos.push_back(r.substr(r.find('\t') + 1));
    q.region = contig + ":" + pos[pos.size() / 4] + "-" + pos[pos.size() / 2];
  }
  auto names = lines(run_ok("bcftools query -l " + shell_quote(vcf)));
  for (std::size_t i = 0; i < names.size(); i += 2) q.samples += (i ? "," : "") + names[i];
  return q;
}

void compare_with_bcftools(const std::string& store, const std::string& vcf,
                           const std::string& extra = "") {
  const std::string what = store + " vs bcftools on " + vcf;
  expect_same_bins(parse(vczstats("afdist " + shell_quote(store) + " " + extra)),
                   parse(reference("bcftools " + shell_quote(vcf))), true, what);
  const Query q = pick_query(vcf);
  if (!q.region.empty())
    expect_same_bins(
        parse(vczstats("afdist " + shell_quote(store) + " -r " + shell_quote(q.region))),
        parse(reference("bcftools " + shell_quote(vcf) + " -r " + shell_quote(q.region))), true,
        what + " -r " + q.region);
  if (!q.samples.empty())
    expect_same_bins(
        parse(vczstats("afdist " + shell_quote(store) + " -s " + shell_quote(q.samples))),
        parse(reference("bcftools " + shell_quote(vcf) + " -s " + shell_quote(q.samples))), true,
        what + " -s " + q.samples);
}

std::string random_vcf(const TempDir& dir, const std::string& name, const std::string& args) {
  const auto path = (dir / (name + ".vcf.gz")).string();
  run_ok(python() + " " + tool("random_vcf.py") + " " + args + " -o " + shell_quote(path));
  return path;
}

std::string convert(const std::string& vcf, const std::string& out, const std::string& args) {
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(vcf) + " " + shell_quote(out) +
         " " + args);
  return out;
}

}  // namespace

// ---- real stores from ../shared/data --------------------------------------------------------

class SharedStores : public ::testing::Test {
 protected:
  void SetUp() override {
    if (shared_data().empty()) GTEST_SKIP() << "skipped: ../shared/data is absent";
    VCZ_REQUIRE_PROGRAM("bcftools");
  }
  std::string data(const std::string& rel) { return (shared_data() / rel).string(); }
};

TEST_F(SharedStores, AfdistBcftoolsMethodMatchesBcftoolsOnVcztoolsFixtures) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"vcztools/sample.vcz.zip", "vcztools/sample.vcf.gz"},
      {"vcztools/sample.vcz3.zip", "vcztools/sample.vcf.gz"},
      {"vcztools/sample-lz4.vcz.zip", "vcztools/sample.vcf.gz"},
      {"vcztools/sample-split-alleles.vcz.zip", "vcztools/sample-split-alleles.vcf.gz"},
      {"vcztools/chr22.vcz.zip", "vcztools/chr22.vcf.gz"},
      {"vcztools/msprime_diploid.vcz.zip", "vcztools/msprime_diploid.vcf.gz"},
      {"vcztools/1kg_2020_chrM.vcz.zip", "vcztools/1kg_2020_chrM.vcf.gz"},
  };
  for (const auto& [store, vcf] : pairs) compare_with_bcftools(data(store), data(vcf));
  // A sites-only store: bcftools prints empty bins; we refuse rather than print zeros.
  const std::string sites = data("vcztools/field_type_combos.vcz.zip");
  const auto r = run(binary() + " afdist " + shell_quote(sites));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("has no call_genotype"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("field_type_combos.vcz.zip"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(SharedStores, AfdistBcftoolsMethodMatchesBcftoolsOnAg1000G) {
  compare_with_bcftools(data("ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip"),
                        data("ag1000g/gamb.X.8-12Mb.n100.derived.vcf.gz"));
}

TEST_F(SharedStores, AfdistZarrMethodMatchesPythonReference) {
  for (const std::string& store : std::vector<std::string>{
           "vcztools/sample.vcz.zip", "vcztools/chr22.vcz.zip", "vcztools/msprime_diploid.vcz.zip",
           "vcztools/1kg_2020_chrM.vcz.zip", "ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip"}) {
    expect_same_bins(parse(vczstats("afdist --method zarr-afdist " + shell_quote(data(store)))),
                     parse(reference("zarr " + shell_quote(data(store)))), false, store);
  }
  // The v3 store holds the same data as the v2 one (python3-zarr cannot read v3).
  EXPECT_EQ(vczstats("afdist --method zarr-afdist " + data("vcztools/sample.vcz3.zip")),
            vczstats("afdist --method zarr-afdist " + data("vcztools/sample.vcz.zip")));
}

// ---- random VCFs with every awkward feature -----------------------------------------------------

TEST(CliAfdist, BcftoolsMethodMatchesBcftoolsOnRandomData) {
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  struct Case {
    std::string name, args, convert;
  };
  const std::vector<Case> cases = {
      {"missing_multi",
       "--seed 1 --samples 37 --variants 400 --contigs 3 --missing 0.1 "
       "--multiallelic 0.2 --alt-dot 0.05",
       "--variants-chunk-size 33 --samples-chunk-size 10"},
      {"mixed_ploidy", "--seed 2 --samples 23 --variants 300 --mixed-ploidy 0.3 --missing 0.05",
       "--variants-chunk-size 50 --samples-chunk-size 7 --zip"},
      {"haploid", "--seed 3 --samples 15 --variants 200 --ploidy 1 --missing 0.1",
       "--variants-chunk-size 64"},
      {"triploid",
       "--seed 4 --samples 15 --variants 200 --ploidy 3 --missing 0.1 --multiallelic 0.2",
       "--variants-chunk-size 21 --samples-chunk-size 4 --genotype-dtype int16"},
      {"no_missing", "--seed 5 --samples 60 --variants 500 --contigs 2",
       "--variants-chunk-size 100 --omit-empty-chunks --dimension-separator /"},
  };
  for (const auto& c : cases) {
    const auto vcf = random_vcf(dir, c.name, c.args);
    const auto store = convert(
        vcf,
        (dir / (c.name + (c.convert.find("--zip") != std::string::npos ? ".vcz.zip" : ".vcz")))
            .string(),
        c.convert);
    SCOPED_TRACE(c.name);
    compare_with_bcftools(store, vcf);
    // Custom bin counts follow bcftools' -p edges too.
    expect_same_bins(parse(vczstats("afdist --bins 7 " + shell_quote(store))),
                     parse(reference("bcftools --bins 7 " + shell_quote(vcf))), true,
                     c.name + " bins 7");
  }
}

TEST(CliAfdist, RegionsSelectOverlappingRecordsLikeBcftools) {
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  // Long indels make record overlap differ from POS-in-region.
  const auto vcf = random_vcf(dir, "indels",
                              "--seed 11 --samples 12 --variants 600 --contigs 2 "
                              "--indels 0.4 --max-ref-length 40 --mean-spacing 5");
  const auto store = convert(vcf, (dir / "indels.vcz").string(), "--variants-chunk-size 40");
  auto recs = lines(run_ok("bcftools query -f '%CHROM\\t%POS\\n' " + vcf));
  const std::string c1 = recs.front().substr(0, recs.front().find('\t'));
  const std::string c2 = recs.back().substr(0, recs.back().find('\t'));
  for (const std::string& region :
       std::vector<std::string>{c1 + ":100-400", c1 + ":1000-1100," + c2 + ":50-900", c2,
                                c1 + ":777", c1 + ":1500-", c1 + ":1-1000000000"}) {
    expect_same_bins(parse(vczstats("afdist " + store + " -r " + shell_quote(region))),
                     parse(reference("bcftools " + vcf + " -r " + shell_quote(region))), true,
                     region);
  }
  // -R file (1-based CHROM BEG END) equals the same regions given with -r.
  std::ofstream(dir / "regions.txt") << c1 << "\t100\t400\n" << c2 << "\t50\t900\n";
  EXPECT_EQ(vczstats("afdist " + store + " -R " + (dir / "regions.txt").string()),
            vczstats("afdist " + store + " -r " + c1 + ":100-400," + c2 + ":50-900"));
  // BED is 0-based half-open.
  std::ofstream(dir / "regions.bed") << c1 << "\t99\t400\n";
  EXPECT_EQ(vczstats("afdist " + store + " -R " + (dir / "regions.bed").string()),
            vczstats("afdist " + store + " -r " + c1 + ":100-400"));
}

TEST(CliAfdist, ZarrMethodMatchesPythonReferenceOnRandomData) {
  TempDir dir;
  const auto vcf = random_vcf(dir, "z",
                              "--seed 21 --samples 41 --variants 700 --missing 0.08 "
                              "--multiallelic 0.1 --mixed-ploidy 0.1");
  const auto store =
      convert(vcf, (dir / "z.vcz").string(), "--variants-chunk-size 64 --samples-chunk-size 16");
  expect_same_bins(parse(vczstats("afdist --method zarr-afdist " + store)),
                   parse(reference("zarr " + store)), false, "whole");
  expect_same_bins(parse(vczstats("afdist --method zarr-afdist --bins 13 " + store)),
                   parse(reference("zarr --num-bins 13 " + store)), false, "13 bins");
  auto names = lines(run_ok("bcftools query -l " + vcf));
  const std::string subset = names[3] + "," + names[17] + "," + names[18] + "," + names[40];
  expect_same_bins(parse(vczstats("afdist --method zarr-afdist -s " + subset + " " + store)),
                   parse(reference("zarr -s " + subset + " " + store)), false, "subset");
}

TEST(CliAfdist, ResultDoesNotDependOnThreadsUnitsOrChunking) {
  TempDir dir;
  const auto vcf = random_vcf(dir, "inv",
                              "--seed 31 --samples 50 --variants 900 --contigs 2 "
                              "--missing 0.05 --multiallelic 0.1");
  std::vector<std::string> stores = {
      convert(vcf, (dir / "a.vcz").string(), "--variants-chunk-size 100 --samples-chunk-size 50"),
      convert(vcf, (dir / "b.vcz").string(), "--variants-chunk-size 7 --samples-chunk-size 3"),
      convert(vcf, (dir / "c.vcz.zip").string(),
              "--variants-chunk-size 1000 --compressor lz4 --zip"),
      convert(vcf, (dir / "d.vcz").string(), "--variants-chunk-size 33 --genotype-dtype int32"),
  };
  for (const std::string method : {"bcftools", "zarr-afdist"}) {
    const std::string base = "afdist --method " + method + " ";
    const std::string expect = vczstats(base + "-t 1 " + stores[0]);
    for (const auto& s : stores)
      for (const std::string opts : {"-t 1", "-t 2", "-t 5 --prefetch 1",
                                     "-t 3 --max-unit-variants 5", "-t 2 --max-unit-variants 1"})
        EXPECT_EQ(vczstats(base + opts + " " + s), expect) << s << " " << opts;
  }
}

TEST(CliAfdist, OutputFileIsWrittenWholeOrNotAtAll) {
  TempDir dir;
  const auto vcf = random_vcf(dir, "o", "--seed 41 --samples 5 --variants 50");
  const auto store = convert(vcf, (dir / "o.vcz").string(), "");
  const auto out = dir / "result.tsv";
  run_ok(binary() + " afdist " + store + " -o " + out.string());
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), vczstats("afdist " + store));
  // A failing run leaves no output file and no temporary behind.
  const auto bad = dir / "bad.tsv";
  auto r = run(binary() + " afdist " + store + " -s nobody -o " + bad.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nobody"), std::string::npos) << r.err;
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find("bad.tsv"), std::string::npos) << e.path();
}

TEST(CliAfdist, JsonOutputHasTheSameCounts) {
  TempDir dir;
  const auto vcf = random_vcf(dir, "j", "--seed 51 --samples 8 --variants 80");
  const auto store = convert(vcf, (dir / "j.vcz").string(), "");
  const auto tsv = parse(vczstats("afdist " + store));
  const auto json = vczstats("afdist --format json " + store);
  for (auto c : tsv.counts)
    EXPECT_NE(json.find("\"prob_dist\": " + std::to_string(c)), std::string::npos) << json;
}
