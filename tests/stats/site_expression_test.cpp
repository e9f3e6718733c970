// Site expressions (vczstats/site_expression.hpp) without a store: TYPE of random REF/ALT pairs
// against bcftools' %TYPE, the values of the computed counts on hand-made sites (from their
// definitions in bcftools' documentation), missing values, and parser errors.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "test_util.hpp"
#include "vczstats/error.hpp"
#include "vczstats/site_expression.hpp"

using namespace vczstats;

namespace {

SiteExpression bound(const std::string& text, const SiteSchema& schema = {}, bool exclude = false) {
  SiteExpression e = SiteExpression::parse(text, exclude);
  SiteSchema s = schema;
  s.info.resize(e.needs().info.size(), SiteSchema::Kind::Integer);
  e.bind(s);
  return e;
}

std::string parse_error(const std::string& text) {
  try {
    SiteExpression::parse(text);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(SiteExpression, TypeOfRandomAllelePairsEqualsBcftools) {
  VCZ_REQUIRE_PROGRAM("bcftools");
  vcztest::TempDir dir;
  std::mt19937_64 rng(7);
  auto word = [&](int max_len) {
    std::string s;
    const int n = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_len));
    for (int k = 0; k < n; ++k) s += "ACGT"[rng() % 2 + (rng() % 3 == 0 ? 2 : 0)];
    return s;
  };
  std::vector<std::pair<std::string, std::string>> pairs;
  for (int k = 0; k < 3000; ++k) {
    std::string ref = word(5), alt = word(5);
    // Symbolic, overlap, breakends (joined before and after, single), no ALT.
    const std::vector<std::string> special = {"*",      "<DEL>",       "<*>", "A[1:5[",  ".",
                                              "]1:3]A", "[2:9[" + ref, ".A",  "AT[1:5[", ref + "."};
    if (k % 20 == 0) alt = special[static_cast<std::size_t>(k / 20) % special.size()];
    if (k % 40 == 0 && alt.find('[') != std::string::npos) ref = ref.substr(0, 1);
    pairs.emplace_back(ref, alt);
  }
  const std::string vcf = (dir / "types.vcf").string();
  {
    std::ofstream f(vcf);
    f << "##fileformat=VCFv4.2\n##contig=<ID=1,length=100000>\n"
         "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\n";
    for (std::size_t k = 0; k < pairs.size(); ++k)
      f << "1\t" << k + 1 << "\t.\t" << pairs[k].first << "\t" << pairs[k].second << "\t.\t.\t.\n";
  }
  std::istringstream types(vcztest::run_ok("bcftools query -f '%TYPE\\n' " + vcf));
  const char* names[] = {"ref", "snp", "mnp", "indel", "other", "bnd", "overlap"};
  std::vector<SiteExpression> exprs;
  for (const char* n : names) exprs.push_back(bound(std::string("TYPE=\"") + n + "\""));
  std::size_t k = 0;
  for (std::string want; std::getline(types, want); ++k) {
    ASSERT_LT(k, pairs.size());
    for (auto& c : want) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::vector<std::string> alleles = {pairs[k].first};
    if (pairs[k].second != ".") alleles.push_back(pairs[k].second);
    SiteFields s;
    s.alleles = alleles;
    std::string got;
    for (std::size_t t = 0; t < exprs.size(); ++t)
      if (exprs[t].keep(s)) got += (got.empty() ? "" : ",") + std::string(names[t]);
    EXPECT_EQ(got, want) << pairs[k].first << " -> " << pairs[k].second;
  }
  EXPECT_EQ(k, pairs.size());
}

TEST(SiteExpression, CountsFollowTheirDefinitions) {
  // REF 2 copies, ALT1 4, ALT2 2 among 8 called alleles; 5 genotypes, 1 missing.
  const std::vector<std::string> alleles = {"A", "C", "G"};
  const std::vector<std::int32_t> counts = {2, 4, 2};
  SiteFields s;
  s.alleles = alleles;
  s.allele_counts = counts;
  s.genotypes = 5;
  s.missing = 1;
  auto holds = [&](const std::string& e) { return bound(e).keep(s); };
  EXPECT_TRUE(holds("AN=8"));
  EXPECT_TRUE(holds("AC=4 && AC=2 && !(AC=3)"));  // any ALT
  EXPECT_TRUE(holds("AC[0]=4 && AC[1]=2 && !(AC[2]>=0)"));
  EXPECT_TRUE(holds("AF=0.5 && AF=0.25"));
  EXPECT_TRUE(holds("MAF[0]=0.5 && MAF[1]=0.25"));
  EXPECT_TRUE(holds("MAC[0]=4 && MAC[1]=2"));
  EXPECT_TRUE(holds("F_MISSING=0.2 && N_MISSING=1 && N_ALT=2"));
  // Single precision, as bcftools: AF 1/3 equals 0.33333334 (float), not 0.3333333 (less).
  const std::vector<std::int32_t> third = {4, 2};
  const std::vector<std::string> two = {"A", "C"};
  s.alleles = two;
  s.allele_counts = third;
  EXPECT_TRUE(holds("AF=0.33333334 && AF>=0.3333333333"));
  EXPECT_FALSE(holds("AF<0.33333334"));
  // No called allele: AC, AF, MAF, MAC are missing; only != holds.
  const std::vector<std::int32_t> none = {0, 0};
  s.allele_counts = none;
  EXPECT_TRUE(holds("AN=0 && AC!=0 && AF!=0"));
  EXPECT_FALSE(holds("AC=0 || AC<1 || AF>=0 || MAF<=1 || MAC=0"));
  // No ALT: AC, AF, MAF and MAC are 0, ALT is ".", TYPE "ref".
  const std::vector<std::string> ref_only = {"A"};
  const std::vector<std::int32_t> ref_counts = {6};
  s.alleles = ref_only;
  s.allele_counts = ref_counts;
  EXPECT_TRUE(holds("AC=0 && AF=0 && MAF=0 && MAC=0 && N_ALT=0 && ALT=\".\" && TYPE=\"ref\""));
}

TEST(SiteExpression, MissingValuesFailEveryComparisonButNotEqual) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SiteSchema schema;
  schema.info = {SiteSchema::Kind::Integer, SiteSchema::Kind::String, SiteSchema::Kind::Flag};
  auto e = [&](const std::string& t) { return bound(t, schema); };
  const std::vector<double> missing = {nan};
  const std::vector<std::string> dot = {"."};
  const std::vector<double> unset = {0};
  const std::vector<InfoValues> info = {{missing, {}}, {{}, dot}, {unset, {}}};
  SiteFields s;
  s.info = info;
  // Every expression names DP, XS, DB in that order (their INFO indices).
  for (const std::string t : {"DP>1 && XS=\"a\" || DB", "DP<1 && XS=\"a\" || DB",
                              "DP=1 && XS=\"a\" || DB", "DP>=0 && XS=\"a\" || DB"})
    EXPECT_FALSE(e(t).keep(s)) << t;
  EXPECT_TRUE(e("DP!=1 && XS!=\"a\" || DB").keep(s));
  EXPECT_TRUE(e("DP!=1 && XS=\".\" || DB").keep(s));  // a missing text is "."
  EXPECT_TRUE(e("!(DP>1) && XS!=\"a\" || DB").keep(s));
  EXPECT_FALSE(e("DP!=1 && XS=\".\" && DB").keep(s));  // a flag that is not set
  // QUAL too.
  SiteFields q;
  EXPECT_TRUE(bound("QUAL!=10").keep(q));
  EXPECT_FALSE(bound("QUAL<10 || QUAL>=10 || QUAL=10").keep(q));
  EXPECT_TRUE(bound("QUAL>10", {}, /*exclude=*/true).keep(q));
  q.qual = static_cast<float>(9.6);
  EXPECT_TRUE(bound("QUAL=9.6").keep(q));  // compared in single precision
}

TEST(SiteExpression, FilterSetsAsBcftools) {
  SiteSchema schema;
  schema.filters = {"PASS", "LowQual", "LowDP"};
  auto keeps = [&](const std::string& t, std::vector<std::uint8_t> flags) {
    SiteFields s;
    s.filters = flags;
    return bound(t, schema).keep(s);
  };
  EXPECT_TRUE(keeps("FILTER=\"PASS\"", {1, 0, 0}));
  EXPECT_FALSE(keeps("FILTER=\"LowQual\"", {0, 1, 1}));  // exactly these
  EXPECT_TRUE(keeps("FILTER=\"LowDP;LowQual\"", {0, 1, 1}));
  EXPECT_TRUE(keeps("FILTER~\"LowQual\"", {0, 1, 1}));  // at least these
  EXPECT_FALSE(keeps("FILTER!~\"LowQual\"", {0, 1, 1}));
  EXPECT_TRUE(keeps("FILTER=\".\"", {0, 0, 0}));
  EXPECT_TRUE(keeps("FILTER!=\"PASS\"", {0, 0, 0}));
  EXPECT_THROW(bound("FILTER=\"q10\"", schema), UsageError);
  // A store without PASS in filter_id: nothing is PASS (not an error).
  SiteSchema no_pass;
  no_pass.filters = {"LowQual"};
  SiteFields s;
  const std::vector<std::uint8_t> unset = {0};
  s.filters = unset;
  EXPECT_FALSE(bound("FILTER=\"PASS\"", no_pass).keep(s));
}

TEST(SiteExpression, PrecedenceAndNegation) {
  SiteFields s;
  s.qual = 5;
  s.pos = 100;
  EXPECT_TRUE(bound("QUAL>10 || QUAL<6 && POS=100").keep(s));  // && binds tighter
  EXPECT_FALSE(bound("(QUAL>10 || QUAL<6) && POS=99").keep(s));
  EXPECT_TRUE(bound("!!(QUAL=5) & !(POS!=100) | QUAL>1").keep(s));
  EXPECT_TRUE(bound("6>QUAL && 100<=POS").keep(s));  // literal on the left
  EXPECT_FALSE(bound("QUAL<6", {}, /*exclude=*/true).keep(s));
}

TEST(SiteExpression, ParseErrorsNameTheExpressionThePositionAndTheReason) {
  EXPECT_EQ(parse_error("QUAL>>3"), "-i 'QUAL>>3': position 6: unexpected '>'");
  EXPECT_EQ(parse_error("QUAL>3 )"), "-i 'QUAL>3 )': position 8: unexpected ')'");
  EXPECT_EQ(parse_error("AC[x]>1"),
            "-i 'AC[x]>1': position 4: expected an element index (0, 1, ...) or '*' in the "
            "subscript");
  EXPECT_EQ(parse_error("QUAL[0]>1"),
            "-i 'QUAL[0]>1': position 5: QUAL has one value; it takes "
            "no subscript");
  EXPECT_EQ(parse_error("FILTER<\"PASS\""),
            "-i 'FILTER<\"PASS\"': position 7: FILTER takes = != ~ !~, not <");
  EXPECT_EQ(parse_error("FILTER=\"A;;B\""),
            "-i 'FILTER=\"A;;B\"': position 8: \"A;;B\" is not a list of filter names (A or A;B, "
            "or \".\")");
  EXPECT_EQ(parse_error("INFO/"),
            "-i 'INFO/': position 6: expected the name of an INFO field "
            "after 'INFO/'");
  EXPECT_EQ(parse_error("QUAL>1 && \x01"),
            "-i 'QUAL>1 && \x01': position 11: unexpected byte 0x01");
  EXPECT_NE(parse_error(std::string(300, '(') + "QUAL>1" + std::string(300, ')'))
                .find("nested deeper than 200 levels"),
            std::string::npos);
  EXPECT_NE(parse_error(std::string(1000, '!') + "QUAL>1").find("nested deeper"),
            std::string::npos);
  // Bind: a number compared with text, a bare field that is not a flag.
  SiteSchema text;
  text.info = {SiteSchema::Kind::String};
  SiteExpression e = SiteExpression::parse("AA>1", true);
  try {
    e.bind(text);
    FAIL() << "no error";
  } catch (const UsageError& x) {
    EXPECT_STREQ(x.what(),
                 "-e 'AA>1': position 4: INFO/AA is text; compare it with a quoted string");
  }
  SiteSchema number;
  number.info = {SiteSchema::Kind::Integer};
  SiteExpression d = SiteExpression::parse("DP");
  try {
    d.bind(number);
    FAIL() << "no error";
  } catch (const UsageError& x) {
    EXPECT_STREQ(x.what(),
                 "-i 'DP': position 1: INFO/DP is not a flag; compare it with a value "
                 "(e.g. INFO/DP>0)");
  }
}
