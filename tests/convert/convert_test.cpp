// vczstats convert against independent references, run in the same test:
//  - tests/tools/check_vcz_vs_vcf.py opens every array with Debian's python3-zarr and compares it
//    with `bcftools query` output of the source VCF (sites, alleles, IDs, QUAL, FILTER, every
//    INFO/FORMAT field, GT with phasing and mask, region_index);
//  - `vczstats afdist` on the converted store equals `bcftools +fill-tags | +af-dist` on the VCF;
//  - bio2zarr's store of the same VCF (../shared/data) holds the same genotypes;
//  - v3 and v2 outputs, any thread count and any chunking hold the same values.
// Inputs: ../shared/data VCFs, Debian's shapeit4-example VCFs, random and hand-written VCFs.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "test_util.hpp"
#include "vczstats/zarr.hpp"

using namespace vcztest;
namespace fs = std::filesystem;
namespace vz = vczstats::zarr;

namespace {

#define VCZ_REQUIRE_REFERENCES()     \
  do {                               \
    VCZ_REQUIRE_CONVERT();           \
    VCZ_REQUIRE_PROGRAM("bcftools"); \
    VCZ_REQUIRE_PYTHON_ZARR();       \
  } while (0)

std::string cli(const std::string& args) {
  return run_ok(binary() + " " + args);
}

std::string convert(const std::string& vcf, const std::string& out, const std::string& args = "") {
  cli("convert " + shell_quote(vcf) + " " + shell_quote(out) + " " + args);
  return out;
}

/// The Python check of every array against bcftools query; fails the test with its report.
void check_against_vcf(const std::string& vcf, const std::string& store) {
  const auto r = run(python() + " " + tool("check_vcz_vs_vcf.py") + " " + shell_quote(vcf) + " " +
                     shell_quote(store));
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
}

/// afdist of the store equals bcftools +fill-tags | +af-dist on the VCF (as text).
void check_afdist(const std::string& vcf, const std::string& store) {
  const std::string ours = cli("afdist " + shell_quote(store));
  const std::string theirs =
      run_ok(python() + " " + tool("ref_afdist.py") + " bcftools " + shell_quote(vcf));
  auto counts = [](const std::string& tsv) {
    std::vector<std::string> c;
    std::istringstream in(tsv);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line))
      if (!line.empty()) c.push_back(line.substr(line.rfind('\t') + 1));
    return c;
  };
  EXPECT_EQ(counts(ours), counts(theirs)) << store << " vs bcftools on " << vcf;
}

/// Every array of @p a equals the array of the same name in @p b (read with our reader).
void expect_same_arrays(const std::string& a, const std::string& b,
                        const std::vector<std::string>& only = {}) {
  const auto sa = vz::open_store(a), sb = vz::open_store(b);
  auto names = only.empty() ? vz::list_arrays(*sa) : only;
  if (only.empty()) {
    EXPECT_EQ(names, vz::list_arrays(*sb)) << a << " vs " << b;
  }
  for (const auto& name : names) {
    SCOPED_TRACE(name + ": " + a + " vs " + b);
    const auto x = vz::Array::open(sa, name), y = vz::Array::open(sb, name);
    ASSERT_EQ(x.shape(), y.shape());
    const std::vector<std::int64_t> start(x.shape().size(), 0);
    if (x.dtype().kind == vz::DataKind::String) {
      EXPECT_EQ(x.read_region_strings(start, x.shape()), y.read_region_strings(start, y.shape()));
    } else if (x.dtype().kind == vz::DataKind::Float) {
      std::int64_t n = 1;
      for (auto s : x.shape()) n *= s;
      std::vector<std::byte> bx(n * x.dtype().size), by(n * y.dtype().size);
      ASSERT_EQ(x.dtype(), y.dtype());
      x.read_region(start, x.shape(), bx);
      y.read_region(start, y.shape(), by);
      EXPECT_TRUE(bx == by);
    } else {
      EXPECT_EQ(x.read_region_as<std::int64_t>(start, x.shape()),
                y.read_region_as<std::int64_t>(start, y.shape()));
    }
  }
}

std::string random_vcf(const TempDir& dir, const std::string& name, const std::string& args) {
  const auto path = (dir / (name + ".vcf.gz")).string();
  run_ok(python() + " " + tool("random_vcf.py") + " " + args + " -o " + shell_quote(path));
  return path;
}

std::string write_text(const TempDir& dir, const std::string& name, const std::string& text) {
  const auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

const char* kHeader =
    "##fileformat=VCFv4.3\n"
    "##contig=<ID=chr1,length=100000>\n"
    "##contig=<ID=chr2>\n"
    "##FILTER=<ID=PASS,Description=\"All filters passed\">\n"
    "##FILTER=<ID=lowq,Description=\"Low quality\">\n"
    "##INFO=<ID=DP,Number=1,Type=Integer,Description=\"Depth\">\n"
    "##INFO=<ID=AF,Number=A,Type=Float,Description=\"Allele frequency\">\n"
    "##INFO=<ID=VL,Number=.,Type=Integer,Description=\"Variable list\">\n"
    "##INFO=<ID=TAG,Number=2,Type=String,Description=\"Two strings\">\n"
    "##INFO=<ID=FLAG,Number=0,Type=Flag,Description=\"A flag\">\n"
    "##INFO=<ID=SVTYPE,Number=1,Type=String,Description=\"SV type\">\n"
    "##INFO=<ID=END,Number=1,Type=Integer,Description=\"End\">\n"
    "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n"
    "##FORMAT=<ID=AD,Number=R,Type=Integer,Description=\"Allele depths\">\n"
    "##FORMAT=<ID=GL,Number=G,Type=Float,Description=\"Likelihoods\">\n"
    "##FORMAT=<ID=FT,Number=1,Type=String,Description=\"Sample filter\">\n";

/// Records that make every trailing dimension grow after the first chunks (chunk size 2): more
/// alleles, longer INFO/FORMAT vectors, higher ploidy, an undeclared FILTER, a GT allele index
/// beyond int8, symbolic alleles with END, missing and partial calls.
std::string growing_vcf() {
  std::string v = kHeader;
  v += "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\tS2\tS3\n";
  v += "chr1\t10\trs1\tA\tC\t30\tPASS\tDP=5;AF=0.5\tGT:AD\t0/1:3,4\t0|0:7,0\t./.:.\n";
  v += "chr1\t20\t.\tG\tT\t.\t.\tDP=.\tGT\t1/1\t0/1\t0\n";
  v += "chr1\t30\t.\tC\tA,G\t12.5\tlowq\tAF=0.1,.;VL=1,2,3;FLAG\tGT:AD:GL\t1/"
       "2:1,2,3:-1,-2,-3,-4,-5,-6\t"
       "0|2:.\t.\n";
  v += "chr1\t40\t.\tN\t<DEL>\t.\tPASS\tSVTYPE=DEL;END=140;TAG=a,b\tGT:FT\t0/1:PASS\t0/0:lowq\t1/"
       "1:.\n";
  v += "chr1\t50\trs5;rs6\tT\tTA,TAA,TAAA\t99\tnewfilt\tVL=7;DP=12\tGT:AD\t0/1/3:1,2,3,4\t2/3\t0\n";
  // 140 ALT alleles: GT index 135 needs int16 genotypes.
  std::string alts;
  for (int i = 0; i < 140; ++i) {
    if (i > 0) alts += ',';
    alts += fmt::format("<X{}>", i);
  }
  v += "chr2\t5\t.\tA\t" + alts + "\t.\tlowq;newfilt\t.\tGT\t0/135\t./1\t0/0\n";
  v += "chr2\t9\t.\tA\tC\t.\tPASS\tVL=1,2,3,4,5,6\tGT\t0|1\t1|0\t.|.\n";
  return v;
}

}  // namespace

// ---- ../shared/data ----------------------------------------------------------------------------

TEST(Convert, VcztoolsVcfsAgreeWithBcftoolsAndBio2zarr) {
  VCZ_REQUIRE_REFERENCES();
  VCZ_REQUIRE_SHARED_DATA();
  TempDir dir;
  for (const std::string name : {"sample", "sample-split-alleles", "chr22", "1kg_2020_chrM",
                                 "msprime_diploid", "field_type_combos"}) {
    SCOPED_TRACE(name);
    const auto vcf = (shared_data() / "vcztools" / (name + ".vcf.gz")).string();
    const bool zip = name.size() % 2 == 0;  // some zip stores, some directories
    const auto store = convert(vcf, (dir / (name + (zip ? ".vcz.zip" : ".vcz"))).string(),
                               "--variants-chunk-size 7 --samples-chunk-size 2");
    check_against_vcf(vcf, store);
    if (name == "field_type_combos") continue;  // no genotypes
    check_afdist(vcf, store);
    // bio2zarr's store of the same VCF holds the same genotypes, phasing and alleles.
    expect_same_arrays(store, (shared_data() / "vcztools" / (name + ".vcz.zip")).string(),
                       {"call_genotype", "call_genotype_phased", "call_genotype_mask",
                        "variant_position", "variant_allele", "sample_id"});
  }
}

TEST(Convert, Ag1000gMatchesBio2zarrStoreAndAfdist) {
  VCZ_REQUIRE_CONVERT();
  VCZ_REQUIRE_SHARED_DATA();
  TempDir dir;
  const auto vcf = (shared_data() / "ag1000g" / "gamb.X.8-12Mb.n100.derived.vcf.gz").string();
  const auto bio2zarr = (shared_data() / "ag1000g" / "gamb.X.8-12Mb.n100.derived.vcz.zip").string();
  const auto store = convert(vcf, (dir / "ag.vcz.zip").string());
  expect_same_arrays(store, bio2zarr,
                     {"call_genotype", "variant_position", "variant_allele", "sample_id"});
  EXPECT_EQ(cli("afdist " + store), cli("afdist " + bio2zarr));
}

// ---- Debian's shapeit4-example ------------------------------------------------------------------

TEST(Convert, Shapeit4ExampleVcfs) {
  VCZ_REQUIRE_REFERENCES();
  VCZ_REQUIRE_SHAPEIT4_EXAMPLE();
  const fs::path dir = "/usr/share/doc/shapeit4/examples/test";
  TempDir tmp;
  const auto scaffold = (dir / "scaffold.vcf.gz").string();
  check_against_vcf(scaffold, convert(scaffold, (tmp / "scaffold.vcz").string(), "-t 2"));
  const auto unphased = (dir / "unphased.vcf.gz").string();
  check_afdist(unphased, convert(unphased, (tmp / "unphased.vcz.zip").string()));
}

// ---- random and hand-written VCFs ---------------------------------------------------------------

TEST(Convert, RandomVcfsWithEveryAwkwardFeature) {
  VCZ_REQUIRE_REFERENCES();
  TempDir dir;
  struct Case {
    std::string name, args, convert;
  };
  const std::vector<Case> cases = {
      {"missing_multi",
       "--seed 1 --samples 37 --variants 400 --contigs 3 --missing 0.1 --multiallelic 0.2 "
       "--alt-dot 0.05 --phased 0.5",
       "--variants-chunk-size 33 --samples-chunk-size 10"},
      {"mixed_ploidy", "--seed 2 --samples 23 --variants 300 --mixed-ploidy 0.3 --missing 0.05",
       "--variants-chunk-size 50 --samples-chunk-size 7"},
      {"haploid", "--seed 3 --samples 15 --variants 200 --ploidy 1 --missing 0.1", ""},
      {"triploid", "--seed 4 --samples 15 --variants 200 --ploidy 3 --missing 0.1",
       "--variants-chunk-size 21 --samples-chunk-size 4 -t 1"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto vcf = random_vcf(dir, c.name, c.args);
    const auto store = convert(vcf, (dir / (c.name + ".vcz")).string(), c.convert);
    check_against_vcf(vcf, store);
    check_afdist(vcf, store);
    // Zarr v3 (read by our reader) and other chunkings and thread counts hold the same values.
    const auto v3 = convert(vcf, (dir / (c.name + ".v3.vcz.zip")).string(),
                            "--zarr-format 3 --variants-chunk-size 64 -t 3");
    expect_same_arrays(store, v3,
                       {"call_genotype", "call_genotype_phased", "call_genotype_mask",
                        "variant_allele", "variant_position", "variant_quality", "variant_id",
                        "variant_filter", "sample_id", "contig_id"});
    EXPECT_EQ(cli("afdist " + store), cli("afdist " + v3));
  }
}

TEST(Convert, GrowingDimensionsAreRewritten) {
  VCZ_REQUIRE_REFERENCES();
  TempDir dir;
  const auto vcf = write_text(dir, "grow.vcf", growing_vcf());
  const std::vector<std::string> runs = {"--variants-chunk-size 2 --samples-chunk-size 2",
                                         "--variants-chunk-size 1000", "--zarr-format 3"};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string& args = runs[i];
    SCOPED_TRACE(args);
    const bool v3 = args.find("zarr-format 3") != std::string::npos;
    const auto store = convert(vcf, (dir / (std::to_string(i) + ".vcz")).string(), args);
    if (!v3) check_against_vcf(vcf, store);
    const auto s = vz::open_store(store);
    const auto gt = vz::Array::open(s, "call_genotype");
    EXPECT_EQ(gt.dtype().name(), "int16");
    EXPECT_EQ(gt.shape(), (std::vector<std::int64_t>{7, 3, 3}));
    EXPECT_EQ(gt.chunks()[2], 3);
    EXPECT_EQ(vz::Array::open(s, "variant_allele").shape()[1], 141);
    EXPECT_EQ(vz::Array::open(s, "variant_VL").shape()[1], 6);
    EXPECT_EQ(vz::Array::open(s, "call_GL").shape()[2], 6);
    EXPECT_EQ(vz::Array::open(s, "variant_filter").shape()[1], 3);
    EXPECT_EQ(vz::Array::open(s, "filter_id")
                  .read_region_strings(std::vector<std::int64_t>{0}, std::vector<std::int64_t>{3}),
              (std::vector<std::string>{"PASS", "lowq", "newfilt"}));
    EXPECT_EQ(vz::Array::open(s, "variant_length").read_all_as<std::int32_t>()[3], 101);
    if (v3)
      expect_same_arrays(store, (dir / "0.vcz").string(),
                         {"call_genotype", "call_AD", "call_GL", "variant_allele", "variant_VL"});
  }
}

TEST(Convert, SitesOnlyNoGenotypesAndEmptyFiles) {
  VCZ_REQUIRE_REFERENCES();
  TempDir dir;
  const auto sites = write_text(dir, "sites.vcf",
                                std::string(kHeader) +
                                    "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n"
                                    "chr1\t5\t.\tA\tG\t.\tPASS\tDP=3;TAG=x,y\n"
                                    "chr1\t8\t.\tA\tG,T\t4\tlowq\tFLAG;AF=0.5,0.25\n");
  auto store = convert(sites, (dir / "sites.vcz").string());
  check_against_vcf(sites, store);
  EXPECT_FALSE(fs::exists(dir / "sites.vcz" / "call_genotype"));
  EXPECT_EQ(vz::Array::open(vz::open_store(store), "sample_id").shape()[0], 0);

  std::string no_gt = kHeader;
  no_gt += "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tA\tB\n";
  no_gt += "chr1\t5\t.\tA\tG\t.\tPASS\t.\tAD:FT\t1,2:PASS\t.:.\n";
  const auto nogt_vcf = write_text(dir, "nogt.vcf", no_gt);
  store = convert(nogt_vcf, (dir / "nogt.vcz").string());
  check_against_vcf(nogt_vcf, store);
  EXPECT_TRUE(fs::exists(dir / "nogt.vcz" / "call_AD"));

  std::string empty = kHeader;
  empty += "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tA\tB\n";
  const auto empty_vcf = write_text(dir, "empty.vcf", empty);
  store = convert(empty_vcf, (dir / "empty.vcz.zip").string());
  check_against_vcf(empty_vcf, store);
  const auto gt = vz::Array::open(vz::open_store(store), "call_genotype");
  EXPECT_EQ(gt.shape(), (std::vector<std::int64_t>{0, 2, 2}));
  // Our commands read it too.
  EXPECT_NE(cli("info " + store).find("variants"), std::string::npos);
}

// ---- errors, interruption, output safety
// ---------------------------------------------------------

TEST(Convert, MalformedAndUnsortedInputFailNamingTheRecord) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  const std::string head =
      std::string(kHeader) + "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tA\n";
  struct Case {
    std::string name, body, message;
    bool skippable;
  };
  const std::vector<Case> cases = {
      {"bad_gt", "chr1\t5\t.\tA\tG\t.\t.\t.\tGT\t0/1\nchr1\t6\t.\tA\tG\t.\t.\t.\tGT\t0/3\n",
       "line 19 (chr1:6): malformed record: GT allele 3 but the record has 2 alleles", true},
      {"bad_pos", "chr1\t5\t.\tA\tG\t.\t.\t.\tGT\t0/1\nchr1\tx\t.\tA\tG\t.\t.\t.\tGT\t0/1\n",
       "line 19 (chr1:0): malformed record: invalid POS", true},
      {"two_values", "chr1\t5\t.\tA\tG\t.\t.\tDP=1,2\tGT\t0/1\n",
       "line 18 (chr1:5): malformed record: INFO/DP has 2 values but Number=1", true},
      {"unsorted_contigs",
       "chr1\t5\t.\tA\tG\t.\t.\t.\tGT\t0/1\nchr2\t5\t.\tA\tG\t.\t.\t.\tGT\t0/1\n"
       "chr1\t9\t.\tA\tG\t.\t.\t.\tGT\t0/1\n",
       "line 20 (chr1:9): the input is not sorted: contig chr1 appears again after chr2", false},
      {"unsorted_positions",
       "chr1\t5\t.\tA\tG\t.\t.\t.\tGT\t0/1\nchr1\t3\t.\tA\tG\t.\t.\t.\tGT\t0/1\n",
       "line 19 (chr1:3): the input is not sorted: position 3 comes after 5", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto vcf = write_text(dir, c.name + ".vcf", head + c.body);
    const auto out = (dir / (c.name + ".vcz")).string();
    auto r = run(binary() + " convert " + vcf + " " + out);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find(vcf + ": " + c.message), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out)) << "a failed conversion left " << out;
    r = run(binary() + " convert --skip-bad " + vcf + " " + out);
    EXPECT_EQ(r.exit_code, c.skippable ? 0 : 1) << r.err;
    EXPECT_EQ(fs::exists(out), c.skippable);
    if (c.skippable) {
      EXPECT_NE(r.err.find("skipped 1 malformed record"), std::string::npos) << r.err;
    }
  }
  // Nothing but the outputs of the skipping runs is left in the folder (no temporaries).
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_FALSE(e.path().filename().string().starts_with(".")) << e.path();
  // An existing output is kept unless --force.
  const auto vcf = write_text(dir, "ok.vcf", head + "chr1\t5\t.\tA\tG\t.\t.\t.\tGT\t0/1\n");
  const auto out = (dir / "bad_gt.vcz").string();
  EXPECT_EQ(run(binary() + " convert " + vcf + " " + out).exit_code, 2);
  EXPECT_EQ(run(binary() + " convert --force " + vcf + " " + out).exit_code, 0);
  EXPECT_EQ(run(binary() + " convert " + vcf + " " + (dir / "nodir" / "x.vcz").string()).exit_code,
            1);
}

TEST(Convert, InterruptedConversionLeavesNothing) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  std::string first, second;
  for (int i = 1; i <= 50; ++i) {
    first += "chr1\t" + std::to_string(i) + "\t.\tA\tG\t.\t.\t.\tGT\t0/1\n";
    second += "chr1\t" + std::to_string(100 + i) + "\t.\tA\tG\t.\t.\t.\tGT\t0/1\n";
  }
  const auto part1 = write_text(
      dir, "part1.vcf",
      std::string(kHeader) + "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tA\n" + first);
  const auto part2 = write_text(dir, "part2.vcf", second);
  for (const std::string out_name : {"out.vcz", "out.vcz.zip"}) {
    const auto out = (dir / out_name).string();
    // The input arrives through a pipe that stalls; SIGTERM comes while it waits (a background
    // job of a script ignores SIGINT, as it should).
    const auto r = run("(cat " + part1 + "; sleep 1.5; cat " + part2 + ") | " + binary() +
                       " convert --variants-chunk-size 10 - " + out +
                       " & pid=$!; sleep 0.7; kill -TERM $pid; wait $pid");
    EXPECT_EQ(r.exit_code, 143) << r.err;
    EXPECT_FALSE(fs::exists(out));
    for (const auto& e : fs::directory_iterator(dir.path()))
      EXPECT_FALSE(e.path().filename().string().starts_with(".out.vcz")) << e.path();
  }
  // Without the signal the same pipe converts.
  const auto out = (dir / "whole.vcz").string();
  run_ok("(cat " + part1 + "; cat " + part2 + ") | " + binary() + " convert - " + out);
  EXPECT_EQ(vz::Array::open(vz::open_store(out), "variant_position").shape()[0], 100);
}
