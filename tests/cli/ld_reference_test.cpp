// ld and prune against plink 1.9 on real data: Ag1000G X:8,000,000-8,030,000 (100 samples,
// 7,989 sites, multi-allelic sites read as REF against the rest by tests/tools/biallelic_vcf.py,
// as vczstats does). ld --r2 must give plink's pairs and r2 (to plink's printed digits), and
// prune --indep-pairwise the same .prune.in and .prune.out, with work units cut small so that
// windows cross them.
//
// ld --dprime, --hap and the default r2 against plink 1.9 (--r2 dprime) and vcftools (--hap-r2,
// --geno-r2) on Ag1000G, on 1000 Genomes (Debian's shapeit4-example, phased) and on random data
// with missing calls (half-calls too) and multi-allelic sites. The store keeps the multi-allelic
// sites (biallelic_vcf.py --ids-only renames IDs only); the tools read the REF-against-the-rest
// rewrite (vcftools leaves out sites with more than two alleles). Values are compared to the
// tools' printed digits (six significant). prune --indep-pairwise is compared with plink 1.9's
// on the 1000 Genomes and random data too (missing calls change plink's r2 test).
// Definitions agree (tests/tools/POPGEN.md, "Linkage"): vcftools --geno-r2 is plink's r2 of
// allele counts over the samples called at both; vcftools --hap-r2's D and D' are signed, of the
// REF alleles. Two differences of reporting, not of definition: vcftools --ld-window N allows N
// variants between a pair's (ours and plink's N - 1), and vcftools prints pairs whose r2 is NaN
// (a variant monomorphic among the calls), which ld never reports (as plink).

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ld_compare.hpp"
#include "test_util.hpp"

using namespace vcztest;

namespace {

using Pairs = std::map<std::pair<std::string, std::string>, double>;

/// SNP_A, SNP_B -> R2 from plink's whitespace-aligned .ld, or our TSV (columns by header name).
Pairs read_pairs(const std::string& path, bool ours) {
  Pairs p;
  for_each_pair(path, ours, [&](const PairLine& x) { p[{x.snp_a, x.snp_b}] = x.r2; });
  return p;
}

std::set<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::set<std::string> s;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) s.insert(line);
  return s;
}

/// Rows of a table keyed by the columns @p keys, values from the columns @p values; header lines
/// (first field @p header_first) and comments skipped; rows with a NaN value left out (vcftools
/// prints pairs with an undefined r2).
using Rows = std::map<std::vector<std::string>, std::vector<double>>;
Rows read_rows(const std::string& path, const std::vector<int>& keys,
               const std::vector<int>& values, const std::string& header_first) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  Rows rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream f(line);
    std::vector<std::string> fields;
    for (std::string x; f >> x;) fields.push_back(x);
    if (fields.empty() || fields[0] == header_first) continue;
    std::vector<std::string> key;
    for (const int k : keys) key.push_back(fields.at(k));
    std::vector<double> v;
    bool nan = false;
    for (const int k : values) {
      v.push_back(std::strtod(fields.at(k).c_str(), nullptr));
      nan = nan || std::isnan(v.back());
    }
    if (!nan) rows[key] = v;
  }
  return rows;
}

/// Compare a tool's rows with ours: the same keys, and every value within the tool's six printed
/// significant digits.
void expect_same_rows(const Rows& want, const Rows& got, const std::string& what,
                      std::size_t at_least) {
  SCOPED_TRACE(what);
  EXPECT_GE(want.size(), at_least);
  EXPECT_EQ(want.size(), got.size());
  int bad = 0;
  for (const auto& [k, w] : want) {
    const auto it = got.find(k);
    std::string name;
    for (const auto& x : k) name += x + " ";
    if (it == got.end()) {
      if (++bad <= 5) ADD_FAILURE() << "pair missing from ours: " << name;
      continue;
    }
    for (std::size_t c = 0; c < w.size(); ++c)
      if (!(std::fabs(it->second[c] - w[c]) <= 6e-6 * std::fabs(w[c]) + 1e-9) && ++bad <= 5)
        ADD_FAILURE() << name << "column " << c << ": tool " << w[c] << ", ours " << it->second[c];
  }
  for (const auto& [k, g] : got)
    if (!want.count(k) && ++bad <= 5) ADD_FAILURE() << "pair only in ours: " << k.at(0);
  EXPECT_EQ(bad, 0);
}

/// A data set for the comparisons: the tools' VCF (multi-allelic sites as REF against the rest,
/// IDs v0, v1, ...), unphased for plink and phased for vcftools --hap-r2, and our store of the
/// original records (IDs renamed only) in chunks of @p chunk variants.
struct LdData {
  std::string unphased, phased, store;
};
LdData prepare(const TempDir& dir, const std::string& vcf, int chunk) {
  LdData d{(dir / "bi.vcf").string(), (dir / "phased.vcf").string(), (dir / "store.vcz").string()};
  const std::string ids = (dir / "ids.vcf").string();
  const std::string rewrite = python() + " " + tool("biallelic_vcf.py") + " " + shell_quote(vcf);
  run_ok(rewrite + " " + shell_quote(d.unphased) + " --unphase");
  run_ok(rewrite + " " + shell_quote(d.phased));
  run_ok(rewrite + " " + shell_quote(ids) + " --ids-only");
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(ids) + " " + shell_quote(d.store) +
         " --variants-chunk-size " + std::to_string(chunk));
  return d;
}

/// ld --dprime against plink 1.9 --r2 dprime with window options @p window (plink's spelling,
/// which ld shares): pairs, r2 and D'.
void expect_dprime_matches_plink(const TempDir& dir, const LdData& d, const std::string& window,
                                 std::size_t at_least) {
  const std::string out = (dir / "pl").string();
  run_ok("plink1.9 --vcf " + shell_quote(d.unphased) +
         " --allow-extra-chr --double-id --vcf-half-call missing --threads 1 --out " +
         shell_quote(out) + " --r2 dprime " + window + " > /dev/null");
  run_ok(binary() + " ld " + shell_quote(d.store) + " --dprime " + window +
         " --max-unit-variants 37 -o " + shell_quote((dir / "ours.ld").string()));
  expect_same_rows(read_rows(out + ".ld", {2, 5}, {6, 7}, "CHR_A"),
                   read_rows((dir / "ours.ld").string(), {2, 5}, {7, 8}, "chr_a"),
                   "--r2 dprime " + window, at_least);
}

/// prune --indep-pairwise @p args against plink 1.9's: the same .prune.in and .prune.out.
void expect_prune_matches_plink(const TempDir& dir, const LdData& d, const std::string& args) {
  SCOPED_TRACE("--indep-pairwise " + args);
  const std::string out = (dir / "pl").string(), ours = (dir / "ours").string();
  run_ok("plink1.9 --vcf " + shell_quote(d.unphased) +
         " --allow-extra-chr --double-id --vcf-half-call missing --threads 1 --out " +
         shell_quote(out) + " --indep-pairwise " + args + " > /dev/null");
  run_ok(binary() + " prune " + shell_quote(d.store) + " --indep-pairwise " + args +
         " --max-unit-variants 37 --out " + shell_quote(ours));
  const auto in = read_lines(out + ".prune.in");
  EXPECT_GT(in.size(), 100u);
  EXPECT_EQ(read_lines(ours + ".prune.in"), in);
  EXPECT_EQ(read_lines(ours + ".prune.out"), read_lines(out + ".prune.out"));
}

/// ld --hap (and, with @p hap false, the default r2) against vcftools --hap-r2 (--geno-r2), with
/// vcftools' window options @p vt_window and ours @p window: pairs, N, r2 (and D, D').
void expect_matches_vcftools(const TempDir& dir, const LdData& d, bool hap,
                             const std::string& vt_window, const std::string& window,
                             std::size_t at_least) {
  const std::string out = (dir / "vt").string();
  run_ok("vcftools --vcf " + shell_quote(hap ? d.phased : d.unphased) +
         (hap ? " --hap-r2 " : " --geno-r2 ") + vt_window + " --out " + shell_quote(out) +
         " 2> /dev/null");
  run_ok(binary() + " ld " + shell_quote(d.store) + (hap ? " --hap " : " ") + window +
         " --max-unit-variants 37 -o " + shell_quote((dir / "ours.ld").string()));
  const Rows want = hap ? read_rows(out + ".hap.ld", {0, 1, 2}, {3, 4, 5, 6}, "CHR")
                        : read_rows(out + ".geno.ld", {0, 1, 2}, {3, 4}, "CHR");
  const Rows got = hap ? read_rows((dir / "ours.ld").string(), {0, 1, 4}, {6, 7, 8, 9}, "chr_a")
                       : read_rows((dir / "ours.ld").string(), {0, 1, 4}, {6, 7}, "chr_a");
  expect_same_rows(want, got, (hap ? "--hap-r2 " : "--geno-r2 ") + vt_window, at_least);
}

}  // namespace

TEST(LdReference, R2AndPruneMatchPlink19OnAg1000g) {
  VCZ_REQUIRE_SHARED_DATA();
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PROGRAM("plink1.9");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const auto vcf = shared_data() / "ag1000g/gamb.X.8-12Mb.n100.derived.vcf.gz";
  const std::string sub = (dir / "sub.vcf").string(), bi = (dir / "bi.vcf").string();
  const std::string store = (dir / "sub.vcz").string();
  run_ok("bcftools view -t X:8000000-8030000 -Ov -o " + shell_quote(sub) + " " +
         shell_quote(vcf.string()));
  run_ok(python() + " " + tool("biallelic_vcf.py") + " " + shell_quote(sub) + " " +
         shell_quote(bi) + " --unphase");
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(bi) + " " + shell_quote(store) +
         " --variants-chunk-size 500");
  const std::string plink = "plink1.9 --vcf " + shell_quote(bi) +
                            " --allow-extra-chr --double-id --threads 1 --out " +
                            shell_quote((dir / "pl").string());

  // r2 within 10 variants and 1 Mb, every pair reported.
  run_ok(plink + " --r2 --ld-window 10 --ld-window-kb 1000 --ld-window-r2 0 > /dev/null");
  run_ok(binary() + " ld " + shell_quote(store) +
         " --r2 --ld-window 10 --ld-window-kb 1000 --ld-window-r2 0 --max-unit-variants 37 -o " +
         shell_quote((dir / "ours.ld").string()));
  expect_same_r2(read_pairs((dir / "pl.ld").string(), false),
                 read_pairs((dir / "ours.ld").string(), true), 5000);

  // plink's greedy pruning: 50 variants, step 5, r2 0.2.
  run_ok(plink + " --indep-pairwise 50 5 0.2 > /dev/null");
  run_ok(binary() + " prune " + shell_quote(store) +
         " --indep-pairwise 50 5 0.2 --max-unit-variants 37 --out " +
         shell_quote((dir / "ours").string()));
  EXPECT_EQ(read_lines((dir / "ours.prune.in").string()),
            read_lines((dir / "pl.prune.in").string()));
  EXPECT_EQ(read_lines((dir / "ours.prune.out").string()),
            read_lines((dir / "pl.prune.out").string()));
}

TEST(LdReference, DprimeHapAndGenoR2MatchPlink19AndVcftoolsOnAg1000g) {
  VCZ_REQUIRE_SHARED_DATA();
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PROGRAM("plink1.9");
  VCZ_REQUIRE_PROGRAM("vcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const std::string sub = (dir / "sub.vcf").string();
  run_ok("bcftools view -t X:8000000-8030000 -Ov -o " + shell_quote(sub) + " " +
         shell_quote((shared_data() / "ag1000g/gamb.X.8-12Mb.n100.derived.vcf.gz").string()));
  const LdData d = prepare(dir, sub, 500);
  expect_dprime_matches_plink(dir, d, "--ld-window 10 --ld-window-kb 1000 --ld-window-r2 0", 5000);
  expect_matches_vcftools(dir, d, true, "--ld-window 10", "--ld-window 11 --ld-window-r2 0", 5000);
  expect_matches_vcftools(dir, d, false, "--ld-window-bp 300 --min-r2 0.1",
                          "--ld-window 100000 --ld-window-bp 300 --ld-window-r2 0.1", 1000);
}

TEST(LdReference, DprimeHapGenoR2AndPruneMatchPlink19AndVcftoolsOn1000Genomes) {
  VCZ_REQUIRE_SHAPEIT4_EXAMPLE();
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PROGRAM("plink1.9");
  VCZ_REQUIRE_PROGRAM("vcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const LdData d = prepare(dir, make_1kg_subset(dir, "kg.vcf.gz"), 500);
  expect_dprime_matches_plink(dir, d, "--ld-window 10 --ld-window-kb 1000 --ld-window-r2 0", 15000);
  expect_dprime_matches_plink(dir, d, "--ld-window 50 --ld-window-kb 20 --ld-window-r2 0.1", 5000);
  expect_dprime_matches_plink(
      dir, d, "--ld-snp v1000 --ld-window 20 --ld-window-kb 1000 --ld-window-r2 0", 30);
  expect_matches_vcftools(dir, d, true, "--ld-window-bp 2000",
                          "--ld-window 100000 --ld-window-bp 2000 --ld-window-r2 0", 30000);
  expect_matches_vcftools(dir, d, true, "--ld-window-bp 5000 --min-r2 0.2",
                          "--ld-window 100000 --ld-window-bp 5000 --ld-window-r2 0.2", 5000);
  expect_matches_vcftools(dir, d, false, "--ld-window 9", "--ld-window 10 --ld-window-r2 0", 15000);
  expect_prune_matches_plink(dir, d, "20 3 0.1");
  expect_prune_matches_plink(dir, d, "10kb 1 0.5");
}

TEST(LdReference, DprimeHapGenoR2AndPruneMatchPlink19AndVcftoolsOnRandomDataWithMissingCalls) {
  VCZ_REQUIRE_PROGRAM("plink1.9");
  VCZ_REQUIRE_PROGRAM("vcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  // Unphased for plink (r2, D'), phased for vcftools --hap-r2; 5% of alleles missing, 10% of
  // sites with 2-4 ALT alleles, two contigs.
  for (const bool phased : {false, true}) {
    SCOPED_TRACE(phased ? "phased" : "unphased");
    TempDir sub;
    const std::string vcf = (sub / "r.vcf").string();
    run_ok(python() + " " + tool("random_vcf.py") +
           (phased ? " --seed 9 --samples 50 --variants 1200 --phased 1"
                   : " --seed 7 --samples 60 --variants 1500") +
           " --contigs 2 --missing 0.05 --multiallelic 0.1 -o " + shell_quote(vcf));
    const LdData d = prepare(sub, vcf, phased ? 200 : 300);
    if (phased) {
      expect_matches_vcftools(sub, d, true, "--ld-window 5", "--ld-window 6 --ld-window-r2 0",
                              4000);
      continue;
    }
    expect_dprime_matches_plink(sub, d, "--ld-window 10 --ld-window-kb 1000 --ld-window-r2 0",
                                10000);
    expect_dprime_matches_plink(sub, d, "--ld-window 30 --ld-window-kb 0.3 --ld-window-r2 0.05",
                                2000);
    expect_matches_vcftools(sub, d, false, "--ld-window 9", "--ld-window 10 --ld-window-r2 0",
                            10000);
    expect_prune_matches_plink(sub, d, "50 5 0.2");
    expect_prune_matches_plink(sub, d, "10kb 1 0.5");
  }
}
