// The haplotype commands (haplotypes, ehh, ihs, nsl, xpehh, xpnsl) against
// tests/tools/ref_haplo.py, a brute-force reference written from the definitions (EHH from
// pairwise shared lengths; selscan 2's integration loop; POPGEN.md §11), run in the test on:
//  - scrm simulations converted with `vczstats convert --from ms` (one population; three
//    populations of an island model);
//  - random phased VCFs with missing calls, multi-allelic sites and two contigs (the usable-site
//    rules), converted by tests/tools/vcf2vcz.py;
//  - a planted sweep whose answer is known by construction (test_haplo_ref.py: iHH, iHS, the
//    EHH curve and Garud's H are checked against hand-computed values here too);
//  - Ag1000G X (../shared/data), 200 phased haplotypes.
// Small kernel segments and contexts (--segment, --context) make most walks run out of rows
// and start again with more, read from the store. Tolerance: 1e-9 relative (the same
// arithmetic in the same order: measured 0 for iHS/nSL/XP, ~1e-15 for Garud's H).

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "test_util.hpp"

using namespace vcztest;

namespace {

const std::string kRel = "1e-9";

/// Run vczstats with @p ours and the reference with @p theirs, and compare on @p keys.
void compare(const TempDir& dir, const std::string& name, const std::string& ours,
             const std::string& theirs, const std::string& keys, const std::string& extra = "") {
  const std::string a = (dir / (name + ".ours.tsv")).string();
  const std::string b = (dir / (name + ".ref.tsv")).string();
  run_ok(binary() + " " + ours + " -o " + a);
  run_ok(python() + " " + tool("ref_haplo.py") + " " + theirs + " -o " + b);
  const auto r = run(python() + " " + tool("compare_tsv.py") + " " + a + " " + b + " --keys " +
                     keys + " --rel " + kRel + " " + extra);
  EXPECT_EQ(r.exit_code, 0) << name << ": " << r.out << r.err;
  // Something was compared.
  EXPECT_EQ(r.out.find(" 0 rows"), std::string::npos) << name << ": " << r.out;
}

/// The rows of a TSV (comments and the header left out).
std::vector<std::vector<std::string>> table(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> cells;
    std::istringstream ls(line);
    for (std::string c; std::getline(ls, c, '\t');) cells.push_back(c);
    rows.push_back(cells);
  }
  return rows;
}

std::string scrm_store(const TempDir& dir, const std::string& name, const std::string& args,
                       std::int64_t length) {
  const std::string ms = (dir / (name + ".ms")).string();
  const std::string store = (dir / (name + ".vcz")).string();
  run_ok("scrm " + args + " > " + ms);
  run_ok(binary() + " convert --from ms " + ms + " " + store + " --length " +
         std::to_string(length) + " --variants-chunk-size 97 -f");
  return store;
}

/// Populations of consecutive blocks of @p per samples (s0, s1, ... of convert --from ms).
std::string pops_blocks(const TempDir& dir, const std::string& name, int samples, int per,
                        const std::string& prefix = "tsk_") {
  const std::string path = (dir / name).string();
  std::ofstream f(path);
  for (int i = 0; i < samples; ++i)
    f << prefix << i << "\t"
      << "ABCDEFGH"[i / per] << "\n";
  return path;
}

}  // namespace

TEST(HaploReference, ScrmOnePopulation) {
  VCZ_REQUIRE_PROGRAM("scrm");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const std::string s = scrm_store(dir, "one", "60 1 -t 100 -r 400 200000 -seed 5 6 7", 200000);
  const std::string small = " --device cpu --segment 7 --context 3";
  compare(dir, "ihs", "ihs " + s + " --device cpu", "ihs " + s, "chrom,pos,population");
  compare(dir, "ihs-small", "ihs " + s + small, "ihs " + s, "chrom,pos,population");
  compare(dir, "nsl-small", "nsl " + s + small, "nsl " + s, "chrom,pos,population");
  compare(dir, "nsl-extend", "nsl " + s + small + " --max-extend-nsl 0 --trunc-ok",
          "nsl " + s + " --max-extend-nsl 0 --trunc-ok", "chrom,pos,population");
  // A genetic map, --trunc-ok, no max-extend, coarse bins, and the window summary.
  const std::string map = (dir / "g.map").string();
  {
    std::ofstream m(map);
    double g = 0;
    for (std::int64_t p = 1; p <= 200000; p += 997) {
      g += static_cast<double>((p * 7919) % 1000) * 2e-6;
      m << "1\tm" << p << "\t" << g << "\t" << p << "\n";
    }
  }
  const std::string opts = " --map " + map +
                           " --trunc-ok --max-extend 0 --cutoff 0.1 --maf 0.1 --bins 10 "
                           "--min-bin-sites 3 --window-size 30000 --window-step 10000";
  const std::string wa = (dir / "w.ours.tsv").string(), wb = (dir / "w.ref.tsv").string();
  compare(dir, "ihs-map", "ihs " + s + small + opts + " --windows-output " + wa,
          "ihs " + s + opts + " --windows-out " + wb, "chrom,pos,population");
  const auto r = run(python() + " " + tool("compare_tsv.py") + " " + wa + " " + wb +
                     " --keys chrom,start,end,population --rel " + kRel);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  compare(dir, "haplotypes-bp",
          "haplotypes " + s + " --device cpu --window-size 20000 --window-step 5000",
          "garud " + s + " --window-size 20000 --window-step 5000", "chrom,start,end,population");
  compare(dir, "haplotypes-variants", "haplotypes " + s + " --device cpu --window-variants 17",
          "garud " + s + " --window-variants 17", "chrom,start,end,population");
  compare(dir, "haplotypes-whole", "haplotypes " + s + " --device cpu -r 1:50000-90000",
          "garud " + s + " -r 1:50000-90000", "chrom,start,end,population");
  // EHH decay around three scored sites (near both ends and in the middle).
  const auto sites = table((dir / "ihs.ours.tsv").string());
  ASSERT_GT(sites.size(), 10u);
  for (std::size_t k : {std::size_t{1}, sites.size() / 2, sites.size() - 1}) {
    const std::string focal = "1:" + sites[k][1];
    compare(
        dir, "ehh" + std::to_string(k), "ehh " + s + " --focal " + focal + " --ehh-window 30000",
        "ehh " + s + " --focal " + focal + " --ehh-window 30000", "chrom,focal_pos,population,pos");
  }
}

TEST(HaploReference, ScrmThreePopulations) {
  VCZ_REQUIRE_PROGRAM("scrm");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const std::string s = scrm_store(
      dir, "three", "90 1 -t 120 -r 300 150000 -I 3 30 30 30 0.5 -seed 11 12 13", 150000);
  const std::string pops = pops_blocks(dir, "pops.tsv", 45, 15);  // convert names them tsk_<i>
  const std::string small = " --device cpu --segment 5 --context 2";
  compare(dir, "xpehh", "xpehh " + s + " -P " + pops + " --pairs A,B" + small,
          "xpehh " + s + " -P " + pops + " --pair A,B", "chrom,pos,pop1,pop2");
  compare(dir, "xpehh-ca", "xpehh " + s + " -P " + pops + " --pairs C,A --device cpu",
          "xpehh " + s + " -P " + pops + " --pair C,A", "chrom,pos,pop1,pop2");
  compare(dir, "xpnsl", "xpnsl " + s + " -P " + pops + " --pairs B,C" + small,
          "xpnsl " + s + " -P " + pops + " --pair B,C", "chrom,pos,pop1,pop2");
  compare(dir, "ihs-pops", "ihs " + s + " -P " + pops + small + " --min-bin-sites 5 --bins 20",
          "ihs " + s + " -P " + pops + " --min-bin-sites 5 --bins 20", "chrom,pos,population");
  compare(dir, "haplotypes-pops", "haplotypes " + s + " -P " + pops + " --window-size 10000",
          "garud " + s + " -P " + pops + " --window-size 10000", "chrom,start,end,population");
}

TEST(HaploReference, RandomPhasedMissingMultiallelic) {
  VCZ_REQUIRE_PYTHON_ZARR();
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  const std::string vcf = (dir / "r.vcf.gz").string();
  const std::string s = (dir / "r.vcz").string();
  run_ok(python() + " " + tool("random_vcf.py") +
         " --seed 21 --samples 30 --variants 1500 --contigs 2 --missing 0.002 --multiallelic 0.1 "
         "--phased 1 --mean-spacing 40 --bgzip -o " +
         vcf);
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + vcf + " " + s +
         " --variants-chunk-size 53 --samples-chunk-size 7");
  const std::string pops = (dir / "pops.tsv").string();
  {
    std::ofstream f(pops);
    for (int i = 0; i < 30; ++i)  // random_vcf.py names them S0000, S0001, ...
      f << "S" << std::setw(4) << std::setfill('0') << i << "\t" << (i % 3 ? "X" : "Y") << "\n";
  }
  const std::string small = " --device cpu --segment 4 --context 2";
  compare(dir, "ihs", "ihs " + s + small + " --trunc-ok --max-gap 100000000",
          "ihs " + s + " --trunc-ok --max-gap 100000000", "chrom,pos,population");
  compare(dir, "xpnsl", "xpnsl " + s + " -P " + pops + " --pairs X,Y --trunc-ok" + small,
          "xpnsl " + s + " -P " + pops + " --pair X,Y --trunc-ok", "chrom,pos,pop1,pop2");
  compare(dir, "haplotypes", "haplotypes " + s + " -P " + pops + " --window-variants 25",
          "garud " + s + " -P " + pops + " --window-variants 25", "chrom,start,end,population");
  const std::string regions = " -r chr1:2000-30000,chr2:100-20000";
  compare(dir, "nsl-regions", "nsl " + s + regions + small + " --trunc-ok",
          "nsl " + s + regions + " --trunc-ok", "chrom,pos,population");
}

TEST(HaploReference, PlantedSweepKnownAnswer) {
  VCZ_REQUIRE_PYTHON_ZARR();
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  const std::string store =
      run_ok(python() + " " + tool("test_haplo_ref.py") + " --planted " + dir.path().string());
  const std::string s = store.substr(0, store.find('\n'));
  compare(dir, "ihs", "ihs " + s + " --device cpu --segment 3 --context 2", "ihs " + s,
          "chrom,pos,population");
  compare(dir, "ehh", "ehh " + s + " --focal 1:31000 --ehh-window 100000",
          "ehh " + s + " --focal 1:31000 --ehh-window 100000", "chrom,focal_pos,population,pos");
  compare(dir, "garud", "haplotypes " + s + " -r 1:26000-36000", "garud " + s + " -r 1:26000-36000",
          "chrom,start,end,population");
  // The hand-computed answer (test_haplo_ref.py, POPGEN.md §11.6): derived EHH 1 over 10 sites
  // of 1 kb on each side, then 56/120, 24/120, 8/120, 0; ancestral 148/276, 84/276, 36/276,
  // 12/276 (below the cutoff).
  double ihh_d = 0, ihh_a = 0;
  {
    std::vector<double> d(11, 1.0);
    for (double v : {56.0 / 120, 24.0 / 120, 8.0 / 120, 0.0}) d.push_back(v);
    const std::vector<double> a{1.0, 148.0 / 276, 84.0 / 276, 36.0 / 276, 12.0 / 276};
    for (std::size_t k = 1; k < d.size(); ++k) ihh_d += 2 * 1000 * (d[k - 1] + d[k]) / 2;
    for (std::size_t k = 1; k < a.size(); ++k) ihh_a += 2 * 1000 * (a[k - 1] + a[k]) / 2;
  }
  bool found = false;
  for (const auto& row : table((dir / "ihs.ours.tsv").string())) {
    if (row[1] != "31000") continue;
    found = true;
    EXPECT_NEAR(std::stod(row[5]), ihh_d, 1e-9 * ihh_d);
    EXPECT_NEAR(std::stod(row[6]), ihh_a, 1e-9 * ihh_a);
    EXPECT_NEAR(std::stod(row[7]), std::log10(ihh_d / ihh_a), 1e-12);
  }
  EXPECT_TRUE(found) << "the planted focal site has no iHS";
  const auto g = table((dir / "garud.ours.tsv").string());
  ASSERT_EQ(g.size(), 1u);
  const double n = 40, h1 = (16 / n) * (16 / n) + 24 / (n * n);
  EXPECT_EQ(g[0][7], "25");  // n_distinct: the sweep haplotype and 24 singletons
  EXPECT_NEAR(std::stod(g[0][9]), h1, 1e-12);
  EXPECT_NEAR(std::stod(g[0][10]), h1 + 2 * (16 / n) * (1 / n), 1e-12);
}

TEST(HaploReference, Ag1000G) {
  VCZ_REQUIRE_SHARED_DATA();
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const std::string s = (shared_data() / "ag1000g" / "gamb.X.8-12Mb.n100.derived.vcz.zip").string();
  const std::string r = " -r X:8000000-8040000";
  compare(dir, "ihs", "ihs " + s + r + " --device cpu --trunc-ok", "ihs " + s + r + " --trunc-ok",
          "chrom,pos,population");
  compare(dir, "nsl", "nsl " + s + r + " --device cpu --segment 100 --context 8", "nsl " + s + r,
          "chrom,pos,population");
  compare(dir, "haplotypes", "haplotypes " + s + r + " --window-size 5000",
          "garud " + s + r + " --window-size 5000", "chrom,start,end,population");
}

TEST(HaploPhasing, UnphasedCallsAreAnError) {
  VCZ_REQUIRE_PYTHON_ZARR();
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  const std::string vcf = (dir / "u.vcf.gz").string();
  const std::string s = (dir / "u.vcz").string();
  run_ok(python() + " " + tool("random_vcf.py") +
         " --seed 3 --samples 12 --variants 200 --phased 0.999 --bgzip -o " + vcf);
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + vcf + " " + s + " --variants-chunk-size 50");
  for (const char* cmd : {"ihs", "haplotypes"}) {
    const auto r = run(binary() + " " + cmd + " " + s + " --device cpu");
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_NE(r.err.find("call_genotype_phased"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("is not phased"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("sample"), std::string::npos) << r.err;
  }
  // Without the array at all.
  std::filesystem::remove_all(std::filesystem::path(s) / "call_genotype_phased");
  const auto r = run(binary() + " nsl " + s + " --device cpu");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("has no call_genotype_phased"), std::string::npos) << r.err;
}
