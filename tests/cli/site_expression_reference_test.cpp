// Site filter expressions (-i/-e) against bcftools 1.16 `view -i/-e`: the sites an expression
// keeps (CHROM:POS of `vczstats freq`) equal those bcftools keeps from the VCF the store was
// made from. Stores: a random VCF with multi-allelic sites, indels, missing and half calls, QUAL,
// FILTER and INFO fields (tests/tools/random_vcf.py, qc_vcf.py --info); ../shared/data's
// vcztools sample and Ag1000G stores with their VCFs. Where vczstats differs from bcftools on
// purpose (docs/filters.md), the bcftools side is written in the equivalent form: any-element
// computed AC/AF/MAF/MAC as bcftools' [*], `!` as -e, bare flags as FLAG=1.

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "cli/site_lists.hpp"
#include "test_util.hpp"

using namespace vcztest;

namespace {

struct Case {
  std::string ours;      ///< vczstats options
  std::string bcftools;  ///< bcftools view options
};

void expect_same_sites(const std::string& store, const std::string& vcf,
                       const std::vector<Case>& cases, std::size_t all) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.ours);
    const auto got = freq_sites(store, c.ours);
    const auto want = bcftools_sites(vcf, c.bcftools);
    // Each expression keeps some sites and removes some (one that did nothing tests nothing).
    EXPECT_GT(want.size(), 0u) << "bcftools " << c.bcftools;
    EXPECT_LT(want.size(), all) << "bcftools " << c.bcftools;
    EXPECT_EQ(got, want) << "ours " << got.size() << " sites, bcftools " << want.size() << " ("
                         << c.bcftools << ")";
  }
}

std::string i(const std::string& e) {
  return "-i " + shell_quote(e);
}
std::string e(const std::string& x) {
  return "-e " + shell_quote(x);
}

struct Fixture {
  std::string vcf, store;
};

/// A random VCF with QUAL, FILTER and INFO fields, and its store; half calls kept.
Fixture make_fixture(const TempDir& dir) {
  Fixture f;
  const std::string raw = (dir / "raw.vcf").string();
  run_ok(python() + " " + tool("random_vcf.py") +
         " --seed 17 --samples 37 --variants 600 --contigs 2 --missing 0.06 --multiallelic 0.25 "
         "--indels 0.15 -o " +
         shell_quote(raw));
  f.vcf = (dir / "expr.vcf").string();
  run_ok(python() + " " + tool("qc_vcf.py") + " " + shell_quote(raw) + " --info -o " +
         shell_quote(f.vcf));
  f.store = (dir / "expr.vcz").string();
  run_ok(binary() + " convert " + shell_quote(f.vcf) + " " + shell_quote(f.store) +
         " --variants-chunk-size 41 --samples-chunk-size 7 -t 2");
  return f;
}

}  // namespace

TEST(CliSiteExpressions, RetainedSitesEqualBcftoolsOnAMultiAllelicStoreWithMissingCalls) {
  VCZ_REQUIRE_CONVERT();
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  const Fixture f = make_fixture(dir);
  const auto all = freq_sites(f.store, "");
  ASSERT_EQ(all.size(), 600u);
  ASSERT_EQ(bcftools_sites(f.vcf, ""), all);
  const std::vector<Case> cases = {
      {i("QUAL>=30 && FILTER=\"PASS\""), i("QUAL>=30 && FILTER=\"PASS\"")},
      {i("FILTER!=\"PASS\""), i("FILTER!=\"PASS\"")},
      {i("FILTER~\"LowQual\""), i("FILTER~\"LowQual\"")},
      {i("FILTER=\"LowQual;LowDP\" || FILTER=\".\""),
       i("FILTER=\"LowQual;LowDP\" || FILTER=\".\"")},
      {e("FILTER!~\"LowDP\""), e("FILTER!~\"LowDP\"")},
      {i("TYPE=\"snp\""), i("TYPE=\"snp\"")},
      {i("TYPE!=\"snp\" && N_ALT>1"), i("TYPE!=\"snp\" && N_ALT>1")},
      {i("TYPE~\"indel\" || TYPE=\"mnp\""), i("TYPE~\"indel\" || TYPE=\"mnp\"")},
      {i("QUAL!=37"), i("QUAL!=37")},  // a missing QUAL passes !=
      {i("QUAL<20 || N_ALT=2"), i("QUAL<20 || N_ALT=2")},
      // Computed per-ALT values: any ALT (bcftools compares the first unless [*]).
      {i("AF>0.2"), i("AF[*]>0.2")},
      {i("AC>=3 && AC<=10"), i("AC[*]>=3 && AC[*]<=10")},
      {i("MAF>=0.05 && N_ALT=1"), i("MAF>=0.05 && N_ALT=1")},
      {i("MAF<0.1"), i("MAF[*]<0.1")},
      {e("MAC<2"), e("MAC[*]<2")},
      {i("AC[1]>=2"), i("AC[1]>=2")},
      {i("AF[0]>0.5"), i("AF[0]>0.5")},
      {i("AN>=68 && F_MISSING<0.05"), i("AN>=68 && F_MISSING<0.05")},
      {i("F_MISSING>0.1 || QUAL<10"), i("F_MISSING>0.1 || QUAL<10")},
      {i("N_MISSING>=4"), i("N_MISSING>=4")},
      {i("!(QUAL>50 || TYPE=\"indel\")"), e("QUAL>50 || TYPE=\"indel\"")},
      {i("!(AN<70) && (TYPE=\"snp\" || FILTER=\"PASS\")"),
       e("AN<70 || (TYPE!=\"snp\" && FILTER!=\"PASS\")")},
      // INFO fields: numbers, per-ALT floats (any element), flags, text; missing values.
      {i("INFO/DP>20 && INFO/DB"), i("INFO/DP>20 && INFO/DB=1")},
      {i("DP<10 || XF>0.5"), i("INFO/DP<10 || INFO/XF>0.5")},
      {i("XF[1]<=0.3 && N_ALT>1"), i("INFO/XF[1]<=0.3 && N_ALT>1")},
      {i("DB=0 && XS=\"foo\""), i("INFO/DB=0 && INFO/XS=\"foo\"")},
      {i("XS!=\"foo\""), i("INFO/XS!=\"foo\"")},  // a missing XS is not "foo"
      {i("INFO/DP!=13"), i("INFO/DP!=13")},       // a missing DP is not 13
      {i("CHROM=\"chr2\" && POS<1500"), i("CHROM=\"chr2\" && POS<1500")},
      {i("REF=\"A\" && ALT!=\"C\""), i("REF=\"A\" && ALT!=\"C\"")},
      {i("ID!=\".\" || 40<QUAL"), i("ID!=\".\" || 40<QUAL")},
  };
  expect_same_sites(f.store, f.vcf, cases, all.size());
}

TEST(CliSiteExpressions, CountsAreOverTheSelectedSamples) {
  VCZ_REQUIRE_CONVERT();
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  const Fixture f = make_fixture(dir);
  const std::string drop = "S0001,S0002,S0003,S0010,S0011,S0012,S0013,S0020";
  for (const auto& [expr, theirs] : std::vector<std::pair<std::string, std::string>>{
           {"AC>=4", "AC[*]>=4"},
           {"F_MISSING>0.05", "F_MISSING>0.05"},
           {"AN<56 || MAF<0.1", "AN<56 || MAF[*]<0.1"}}) {
    SCOPED_TRACE(expr);
    const auto got = freq_sites(f.store, "-s ^" + drop + " " + i(expr));
    // bcftools view -s declares INFO/AC and AN, and its -i then reads them (not yet filled):
    // the subset is written first (-I: without them) and filtered by a second view.
    const auto want =
        line_set(run_ok("bcftools view -I -s ^" + drop + " " + shell_quote(f.vcf) +
                        " | bcftools view -H " + i(theirs) + " | awk -F'\\t' '{print $1\":\"$2}'"));
    EXPECT_GT(want.size(), 0u);
    EXPECT_EQ(got, want);
    EXPECT_NE(got, freq_sites(f.store, i(expr))) << "the samples changed nothing";
  }
  // With the count filters and the metadata filters together (AND).
  EXPECT_EQ(freq_sites(f.store, "--max-alleles 2 --apply-filters PASS " + i("MAF>0.05 && QUAL>20")),
            bcftools_sites(f.vcf, "-M2 -f PASS " + i("MAF>0.05 && QUAL>20")));
}

TEST(CliSiteExpressions, RetainedSitesEqualBcftoolsOnSharedStores) {
  VCZ_REQUIRE_SHARED_DATA();
  VCZ_REQUIRE_PROGRAM("bcftools");
  const auto data = shared_data();
  {
    // The vcztools sample: INFO/AC, AN and AF are in its header, so bcftools' bare AC, AN, AF
    // read them; ours are computed from the genotypes, so bcftools reads a copy without them.
    const std::string store = (data / "vcztools" / "sample.vcz.zip").string();
    const std::string vcf = (data / "vcztools" / "sample.vcf.gz").string();
    TempDir dir;
    const std::string stripped = (dir / "stripped.vcf").string();
    // (awk, not bcftools annotate: the VCF's header lacks its contigs, which annotate rejects)
    run_ok("zcat " + shell_quote(vcf) +
           " | awk 'BEGIN{FS=OFS=\"\\t\"} /^##INFO=<ID=A[CNF],/{next} /^#/{print;next} "
           "{n=split($8,a,\";\"); o=\"\"; for(i=1;i<=n;i++) if(a[i] !~ /^A[CNF]=/) "
           "o=o (o==\"\"?\"\":\";\") a[i]; $8=(o==\"\"?\".\":o); print}' > " +
           shell_quote(stripped));
    const auto all = freq_sites(store, "");
    ASSERT_EQ(all.size(), 9u);
    expect_same_sites(store, vcf,
                      {{i("INFO/DP>10"), i("INFO/DP>10")},
                       {i("INFO/AF>0.4"), i("INFO/AF>0.4")},
                       {i("INFO/DB && NS=3"), i("INFO/DB=1 && NS=3")},
                       {i("AA=\"T\" || AA=\"G\""), i("AA=\"T\" || AA=\"G\"")},
                       {i("AA!=\"T\""), i("AA!=\"T\"")},
                       {i("FILTER=\"q10\" || FILTER=\".\""), i("FILTER=\"q10\" || FILTER=\".\"")},
                       {i("TYPE=\"snp\""), i("TYPE=\"snp\"")},
                       {i("TYPE~\"other\""), i("TYPE~\"other\"")},
                       {i("N_ALT=0"), i("N_ALT=0")},
                       {i("QUAL=9.6 || QUAL>47"), i("QUAL=9.6 || QUAL>47")}},
                      all.size());
    expect_same_sites(store, stripped,
                      {{i("AN=6"), i("AN=6")},
                       {i("AC>=2"), i("AC[*]>=2")},
                       {i("AF>0.4 && N_ALT>0"), i("AF[*]>0.4 && N_ALT>0")},
                       {i("MAF>0.2"), i("MAF[*]>0.2")},
                       {i("F_MISSING>0"), i("F_MISSING>0")}},
                      all.size());
  }
  {
    // Ag1000G: 100 mosquitoes, phased, INFO/AA only.
    const std::string store = (data / "ag1000g" / "gamb.X.8-12Mb.n100.derived.vcz.zip").string();
    const std::string vcf = (data / "ag1000g" / "gamb.X.8-12Mb.n100.derived.vcf.gz").string();
    const std::string r = "-r X:8000000-8400000 ";
    const auto all = freq_sites(store, r);
    ASSERT_GT(all.size(), 1000u);
    expect_same_sites(
        store, vcf,
        {{r + i("AA=REF && MAF>0.1"), r + i("AA=REF && MAF[*]>0.1")},
         {r + i("TYPE=\"snp\" && AC>=3 && AC<=20"), r + i("TYPE=\"snp\" && AC[*]>=3 && AC[*]<=20")},
         {r + e("AF<0.05 || POS<8100000"), r + e("AF[*]<0.05 || POS<8100000")}},
        all.size());
  }
}

TEST(CliSiteExpressions, ErrorsNameTheExpressionThePositionAndTheReason) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  const std::string store = make_fixture(dir).store;
  struct Bad {
    std::string args, message;
  };
  const std::vector<Bad> bad = {
      {i("QUAL>>3"), "-i 'QUAL>>3': position 6: unexpected '>'"},
      {i("QUAL>3 &&"), "-i 'QUAL>3 &&': position 10: unexpected end of the expression"},
      {i("(QUAL>3"), "-i '(QUAL>3': position 8: missing ')' for the '(' at position 1"},
      {i("TYPE=\"snps\""), "-i 'TYPE=\"snps\"': position 6: unknown TYPE \"snps\""},
      {i("QUAL=\"x\""), "position 6: QUAL is a number; compare it with a number"},
      {i("REF>\"A\""), "position 4: text is compared with = and != only, not >"},
      {i("POS~3"), "'~' is supported for FILTER and TYPE only"},
      {i("QUAL"), "position 1: QUAL alone is not a condition"},
      {i("FMT/HQ>20"), "position 5: FMT/HQ: of the FORMAT fields only FMT/GQ and FMT/DP"},
      {i("1>2"), "compares two values"},
      {i("QUAL>3x"), "position 6: '3x' is not a number"},
      {i("ALT=\"A"), "position 5: a string opened with \" is not closed"},
      {i(""), "-i '': position 1: empty expression"},
      {i("INFO/NOPE>1"), "reads INFO/NOPE, and the store has no variant_NOPE"},
      {i("FILTER=\"Nope\""), "the store has no filter 'Nope'"},
      {i("QUAL>1") + " " + e("QUAL<1"), "give one of them, not both"},
  };
  for (const auto& b : bad) {
    SCOPED_TRACE(b.args);
    const auto r = run(binary() + " freq " + shell_quote(store) + " " + b.args);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(r.out, "") << "nothing half-written";
    EXPECT_NE(r.err.find(b.message), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "one line: " << r.err;
  }
}
