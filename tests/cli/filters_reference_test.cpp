// Site filters (--snps-only, --min/max-alleles, --apply-filters, --min-qual, --maf, --max-maf,
// --mac, --max-mac, --geno, --hwe) against the tools whose names they take: the sites a filter
// keeps equal those of `bcftools view` with the equivalent -m/-M/-f/-i and of plink2 with the
// same option and --write-snplist; and statistics of several families computed with filters on
// the unfiltered store equal the statistics of the store that bcftools filtered and `vczstats
// convert` wrote. Test VCFs: tests/tools/random_vcf.py (multi-allelic sites, indels, missing
// calls) given QUAL and FILTER by tests/tools/qc_vcf.py.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "cli/site_lists.hpp"
#include "test_util.hpp"

using namespace vcztest;

namespace {

std::set<std::string> plink2(const TempDir& dir, const std::string& vcf, const std::string& args) {
  const std::string out = (dir / "pl").string();
  run_ok("plink2 --vcf " + shell_quote(vcf) + " --set-all-var-ids '@:#' --output-chr chrM " + args +
         " --write-snplist --out " + shell_quote(out) + " >/dev/null");
  return line_set(run_ok("cat " + shell_quote(out + ".snplist")));
}

struct Fixture {
  std::string vcf, store;
};

/// A random VCF with QUAL and FILTER, and its store. @p full_missing: half calls become ./.
/// (plink2 imports them so).
Fixture make_fixture(const TempDir& dir, const std::string& name, const std::string& vcf_args,
                     bool full_missing) {
  Fixture f;
  const std::string raw = (dir / (name + ".raw.vcf")).string();
  run_ok(python() + " " + tool("random_vcf.py") + " " + vcf_args + " -o " + shell_quote(raw));
  f.vcf = (dir / (name + ".vcf")).string();
  run_ok(python() + " " + tool("qc_vcf.py") + " " + shell_quote(raw) +
         (full_missing ? " --full-missing" : "") + " -o " + shell_quote(f.vcf));
  f.store = (dir / (name + ".vcz")).string();
  run_ok(binary() + " convert " + shell_quote(f.vcf) + " " + shell_quote(f.store) +
         " --variants-chunk-size 37 --samples-chunk-size 6 -t 2");
  return f;
}

#define FILTER_TEST_REQUIREMENTS() \
  VCZ_REQUIRE_CONVERT();           \
  VCZ_REQUIRE_PROGRAM("bcftools"); \
  VCZ_REQUIRE_PROGRAM("plink2");   \
  VCZ_REQUIRE_PYTHON_ZARR()

const char* kRandom =
    "--seed 11 --samples 41 --variants 500 --contigs 2 --missing 0.08 --multiallelic 0.2 "
    "--indels 0.1";

}  // namespace

TEST(CliFilters, RetainedSitesEqualPlink2AndBcftools) {
  FILTER_TEST_REQUIREMENTS();
  TempDir dir;
  const Fixture f = make_fixture(dir, "qc", kRandom, /*full_missing=*/true);
  const auto all = freq_sites(f.store, "");
  ASSERT_EQ(all.size(), 500u);
  struct Case {
    std::string ours, tool, args;
  };
  const std::vector<Case> cases = {
      {"--max-alleles 2", "bcftools", "-M2"},
      {"--min-alleles 3", "bcftools", "-m3"},
      {"--min-alleles 2 --max-alleles 3", "bcftools", "-m2 -M3"},
      {"--apply-filters PASS", "bcftools", "-f PASS"},
      {"--apply-filters .,PASS", "bcftools", "-f .,PASS"},
      {"--apply-filters LowDP", "bcftools", "-f LowDP"},
      {"--min-qual 50", "bcftools", "-i 'QUAL>=50'"},
      {"--min-qual 50 --apply-filters PASS", "bcftools", "-f PASS -i 'QUAL>=50'"},
      {"--maf 0.05 --max-alleles 2", "bcftools", "-M2 -i 'MAF>=0.05'"},
      {"--snps-only", "plink2", "--snps-only"},
      {"--maf 0.05", "plink2", "--maf 0.05"},
      {"--maf 0.2", "plink2", "--maf 0.2"},
      {"--max-maf 0.02", "plink2", "--max-maf 0.02"},
      {"--mac 3", "plink2", "--mac 3"},
      {"--max-mac 3", "plink2", "--max-mac 3"},
      {"--geno 0.05", "plink2", "--geno 0.05"},
      {"--geno 0.1", "plink2", "--geno 0.1"},
      {"--hwe 0.01", "plink2", "--hwe 0.01"},
      {"--hwe 0.05 --max-alleles 2", "plink2", "--hwe 0.05 --max-alleles 2"},
      {"--hwe 0.05 --hwe-midp --max-alleles 2", "plink2", "--hwe 0.05 midp --max-alleles 2"},
      {"--maf 0.01 --geno 0.1 --hwe 1e-6 --snps-only --max-alleles 2", "plink2",
       "--maf 0.01 --geno 0.1 --hwe 1e-6 --snps-only --max-alleles 2"},
      {"-s ^S0001,S0002,S0003 --maf 0.1 --geno 0.05", "plink2",
       "--remove " + shell_quote((dir / "removed.txt").string()) + " --maf 0.1 --geno 0.05"},
  };
  run_ok("printf 'S0001\\nS0002\\nS0003\\n' > " + shell_quote((dir / "removed.txt").string()));
  for (const auto& c : cases) {
    SCOPED_TRACE(c.ours);
    const auto got = freq_sites(f.store, c.ours);
    const auto want =
        c.tool == "bcftools" ? bcftools_sites(f.vcf, c.args) : plink2(dir, f.vcf, c.args);
    // Each filter removes some sites and keeps some (a filter that did nothing tests nothing).
    EXPECT_LT(want.size(), all.size());
    EXPECT_GT(want.size(), 0u);
    EXPECT_EQ(got, want) << "ours " << got.size() << " sites, " << c.tool << " " << want.size();
  }
}

TEST(CliFilters, MafOverCalledAllelesEqualsBcftoolsWithHalfCalls) {
  FILTER_TEST_REQUIREMENTS();
  TempDir dir;
  // Half calls kept: a called allele of 0/. counts, as in bcftools' AN and AC.
  const Fixture f = make_fixture(dir, "half", kRandom, /*full_missing=*/false);
  for (const std::string t : {"0.02", "0.1", "0.3"}) {
    const auto got = freq_sites(f.store, "--max-alleles 2 --maf " + t);
    const auto want = bcftools_sites(f.vcf, "-M2 -i 'MAF>=" + t + "'");
    EXPECT_EQ(got, want) << "--maf " << t;
    EXPECT_EQ(freq_sites(f.store, "--max-alleles 2 --max-maf " + t),
              bcftools_sites(f.vcf, "-M2 -i 'MAF<=" + t + "'"))
        << "--max-maf " << t;
  }
}

namespace {

/// Numbers equal to 12 significant digits, text equal (summation order can differ with the
/// store's chunking in the last digits).
void expect_tables_close(const std::string& a, const std::string& b, const std::string& what) {
  std::istringstream ia(a), ib(b);
  std::string ca, cb;
  int cells = 0;
  while (true) {
    const bool more_a = static_cast<bool>(ia >> ca), more_b = static_cast<bool>(ib >> cb);
    ASSERT_EQ(more_a, more_b) << what << ": tables of different lengths";
    if (!more_a) break;
    ++cells;
    char* end_a = nullptr;
    char* end_b = nullptr;
    const double x = std::strtod(ca.c_str(), &end_a), y = std::strtod(cb.c_str(), &end_b);
    if (*end_a == 0 && *end_b == 0 && !ca.empty() && !cb.empty() && x != y)
      EXPECT_NEAR(x, y, 1e-12 * std::max(1.0, std::fabs(y))) << what << ": " << ca << " vs " << cb;
    else
      EXPECT_EQ(ca, cb) << what;
  }
  EXPECT_GT(cells, 0) << what;
}

/// `vczstats STAT STORE OPTIONS FILTERS` on the CPU: @p stat is the command and its options
/// (STORE goes after the command: options such as --indep-pairwise take several values).
std::string run_stat(const std::string& stat, const std::string& store,
                     const std::string& filters) {
  const auto space = stat.find(' ');
  const std::string rest = space == std::string::npos ? "" : stat.substr(space);
  return run_ok(binary() + " " + stat.substr(0, space) + " " + shell_quote(store) + rest + " " +
                filters + " --device cpu -t 2");
}

}  // namespace

TEST(CliFilters, StatisticsWithFiltersEqualStatisticsOfTheBcftoolsFilteredStore) {
  FILTER_TEST_REQUIREMENTS();
  TempDir dir;
  const Fixture f = make_fixture(dir, "ph", std::string(kRandom) + " --phased 1", true);
  struct Case {
    std::string ours, bcftools;
  };
  const std::vector<Case> filters = {
      {"--max-alleles 2 --maf 0.05 --apply-filters PASS", "-M2 -f PASS -i 'MAF>=0.05'"},
      {"--snps-only --min-qual 30 --max-alleles 2", "-M2 -i 'QUAL>=30' -V indels,mnps,other"},
      {"--max-alleles 2 --geno 0.05 --hwe 1e-4", ""},  // plink2's list, through --regions-file
  };
  int k = 0;
  for (const auto& c : filters) {
    SCOPED_TRACE(c.ours);
    const std::string filtered_vcf = (dir / ("f" + std::to_string(k) + ".vcf.gz")).string();
    const std::string filtered = (dir / ("f" + std::to_string(k++) + ".vcz")).string();
    if (!c.bcftools.empty()) {
      run_ok("bcftools view " + c.bcftools + " " + shell_quote(f.vcf) + " -Oz -o " +
             shell_quote(filtered_vcf));
    } else {  // the sites plink2 keeps, selected by bcftools -T
      const auto keep = plink2(dir, f.vcf, c.ours);
      const std::string targets = (dir / "targets.tsv").string();
      std::string text;
      for (const auto& s : keep)
        text += s.substr(0, s.find(':')) + "\t" + s.substr(s.find(':') + 1) + "\n";
      run_ok("printf '%s' " + shell_quote(text) + " > " + shell_quote(targets));
      run_ok("bcftools view -T " + shell_quote(targets) + " " + shell_quote(f.vcf) + " -Oz -o " +
             shell_quote(filtered_vcf));
    }
    run_ok(binary() + " convert " + shell_quote(filtered_vcf) + " " + shell_quote(filtered) +
           " --variants-chunk-size 37 --samples-chunk-size 6 -t 2");
    ASSERT_EQ(freq_sites(f.store, c.ours), freq_sites(filtered, ""))
        << "the filtered store's sites";
    for (const std::string& stat : std::vector<std::string>{
             "freq", "hardy", "sample-stats", "sfs", "afdist", "diversity --window-size 500",
             "divergence --window-variants 7 -P " + shell_quote((dir / "pops.txt").string()),
             "ld --ld-window-kb 1", "prune --indep-pairwise 20 5 0.3", "grm", "king",
             "haplotypes --window-size 1000"}) {
      if (stat.find("pops.txt") != std::string::npos)
        run_ok("bcftools query -l " + shell_quote(f.vcf) +
               " | awk '{print $1\"\\t\"(NR%2?\"A\":\"B\")}' > " +
               shell_quote((dir / "pops.txt").string()));
      const std::string a = run_stat(stat, f.store, c.ours);
      const std::string b = run_stat(stat, filtered, "");
      expect_tables_close(a, b, stat);
    }
  }
}

TEST(CliFilters, BadFilterValuesAreOneLineErrorsNamingTheOption) {
  FILTER_TEST_REQUIREMENTS();
  TempDir dir;
  const Fixture f = make_fixture(dir, "bad", "--seed 3 --samples 8 --variants 40", true);
  struct Case {
    std::string args, expect;
  };
  for (const auto& c : std::vector<Case>{
           {"--maf 1.5", "--maf"},
           {"--geno -0.1", "--geno"},
           {"--min-alleles 3 --max-alleles 2", "--min-alleles"},
           {"--hwe-midp", "--hwe"},
           {"--apply-filters NoSuchFilter", "NoSuchFilter"},
       }) {
    const auto r = run(binary() + " freq " + shell_quote(f.store) + " " + c.args);
    EXPECT_NE(r.exit_code, 0) << c.args;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

TEST(CliVariantIds, StoresWithoutIdsUseChromPosRefAltForPruneExtractLdSnpAndLoadings) {
  VCZ_REQUIRE_CONVERT();
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PROGRAM("plink1.9");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const std::string raw = (dir / "raw.vcf").string(), noid = (dir / "noid.vcf").string(),
                    keyed = (dir / "keyed.vcf").string();
  run_ok(python() + " " + tool("random_vcf.py") +
         " --seed 5 --samples 40 --variants 400 --contigs 2 --missing 0.02 -o " + shell_quote(raw));
  // No IDs at all; and the same with bcftools' CHROM:POS:REF:ALT IDs.
  run_ok("bcftools annotate -x ID " + shell_quote(raw) + " -Ov -o " + shell_quote(noid));
  run_ok("bcftools annotate --set-id +'%CHROM:%POS:%REF:%ALT' " + shell_quote(noid) + " -Ov -o " +
         shell_quote(keyed));
  const std::string noid_store = (dir / "noid.vcz").string(),
                    keyed_store = (dir / "keyed.vcz").string();
  for (const auto& [vcf, store] : {std::pair{noid, noid_store}, std::pair{keyed, keyed_store}})
    run_ok(binary() + " convert " + shell_quote(vcf) + " " + shell_quote(store) +
           " --variants-chunk-size 53 -t 2");
  // prune writes the IDs plink 1.9 writes for the keyed VCF.
  run_ok("plink1.9 --vcf " + shell_quote(keyed) +
         " --allow-extra-chr --double-id --vcf-half-call missing --threads 1 --out " +
         shell_quote((dir / "pl").string()) + " --indep-pairwise 50 5 0.3 > /dev/null");
  run_ok(binary() + " prune " + shell_quote(noid_store) + " --indep-pairwise 50 5 0.3 --out " +
         shell_quote((dir / "ours").string()));
  const auto in = line_set(run_ok("cat " + shell_quote((dir / "ours.prune.in").string())));
  EXPECT_EQ(in, line_set(run_ok("cat " + shell_quote((dir / "pl.prune.in").string()))));
  EXPECT_GT(in.size(), 10u);
  EXPECT_EQ(in.count("."), 0u);
  // --extract with that list selects the same variants on either store.
  const std::string list = shell_quote((dir / "ours.prune.in").string());
  const std::string a = run_ok(binary() + " grm " + shell_quote(noid_store) + " --extract " + list);
  const std::string b =
      run_ok(binary() + " grm " + shell_quote(keyed_store) + " --extract " + list);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, run_ok(binary() + " grm " + shell_quote(noid_store)));
  // --ld-snp and the loadings' id column.
  const std::string first = *in.begin();
  const auto ld =
      run(binary() + " ld " + shell_quote(noid_store) + " --ld-snp " + first + " --ld-window-r2 0");
  EXPECT_EQ(ld.exit_code, 0) << ld.err;
  EXPECT_NE(ld.out.find(first), std::string::npos) << ld.out;
  run_ok(binary() + " pca " + shell_quote(noid_store) + " -k 2 --loadings " +
         shell_quote((dir / "load.tsv").string()) + " -o /dev/null");
  const auto ids =
      line_set(run_ok("awk -F'\\t' 'NR>1{print $3}' " + shell_quote((dir / "load.tsv").string())));
  const auto keys = line_set(run_ok("bcftools query -f '%ID\\n' " + shell_quote(keyed)));
  EXPECT_GT(ids.size(), 10u);
  for (const auto& id : ids) EXPECT_TRUE(keys.contains(id)) << id;
}

TEST(CliFilters, GenotypeMasksEqualBcftoolsSetGtThenTheStatistic) {
  FILTER_TEST_REQUIREMENTS();
  TempDir dir;
  const std::string raw = (dir / "raw.vcf").string(), vcf = (dir / "gq.vcf").string();
  run_ok(python() + " " + tool("random_vcf.py") + " " + kRandom + " -o " + shell_quote(raw));
  run_ok(python() + " " + tool("qc_vcf.py") + " " + shell_quote(raw) +
         " --full-missing --gq-dp -o " + shell_quote(vcf));
  auto convert = [&](const std::string& in, const std::string& name) {
    const std::string out = (dir / name).string();
    run_ok(binary() + " convert " + shell_quote(in) + " " + shell_quote(out) +
           " --variants-chunk-size 37 --samples-chunk-size 6 -t 2");
    return out;
  };
  const std::string store = convert(vcf, "gq.vcz");
  // ours: our options; setgt: bcftools +setGT's condition; view: then bcftools view's site
  // filter (FMT terms of -i/-e are genotype masks, the rest of the expression chooses sites).
  struct Case {
    std::string ours, setgt, view;
  };
  int cases = 0;
  for (const auto& c : std::vector<Case>{
           {"--min-gq 20", "-i 'FMT/GQ<20'", ""},
           {"--min-dp 8", "-i 'FMT/DP<8'", ""},
           {"--min-gq 20 --min-dp 8", "-i 'FMT/GQ<20 | FMT/DP<8'", ""},
           {"-e 'FMT/GQ<20'", "-i 'FMT/GQ<20'", ""},
           {"-i 'FMT/GQ>=20 && FMT/DP>7.5'", "-i 'FMT/GQ<20 | FMT/DP<8'", ""},
           {"-i 'QUAL>=30 && FMT/DP>=8'", "-i 'FMT/DP<8'", "-i 'QUAL>=30'"},
           {"-e 'FMT/GQ<=19 || QUAL<30'", "-i 'FMT/GQ<20'", "-e 'QUAL<30'"},
       }) {
    SCOPED_TRACE(c.ours);
    const std::string masked_vcf = (dir / "masked.vcf").string();
    run_ok("bcftools +setGT " + shell_quote(vcf) + " -- -t q -n . " + c.setgt +
           (c.view.empty() ? "" : " | bcftools view " + c.view) + " > " + shell_quote(masked_vcf) +
           " 2>/dev/null");
    const std::string masked = convert(masked_vcf, "masked" + std::to_string(++cases));
    for (const std::string& stat : std::vector<std::string>{
             "freq", "missing", "sample-stats", "sfs", "diversity --window-size 500", "grm",
             "ld --ld-window-kb 1", "freq --maf 0.1 --geno 0.1"}) {
      const std::string a = run_stat(stat, store, c.ours);
      const std::string b = run_stat(stat, masked, "");
      expect_tables_close(a, b, stat);
      if (stat == "missing") {  // the masks did something
        EXPECT_NE(a, run_ok(binary() + " missing " + shell_quote(store)));
      }
    }
  }
  // A store without call_GQ: an error naming the array.
  const std::string nogq = convert(raw, "nogq.vcz");
  for (const char* option : {"--min-gq 20", "-i 'FMT/GQ>=20'"}) {
    const auto r = run(binary() + " freq " + shell_quote(nogq) + " " + option);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find("call_GQ"), std::string::npos) << r.err;
  }
  // FMT terms that are not a genotype mask joined at the top: errors naming the position.
  for (const auto& [option, why] : std::vector<std::pair<std::string, std::string>>{
           {"-i 'FMT/GQ<20'", "position 7: FMT/GQ masks genotypes below a bound"},
           {"-i 'QUAL>30 || FMT/GQ>=20'", "position 12: FMT/GQ masks genotypes, so it must"},
           {"-e '!(FMT/DP<3)'", "position 3: FMT/DP masks genotypes, so it must"},
           {"-i 'FMT/AD>3'", "position 5: FMT/AD: of the FORMAT fields only"},
           {"-i 'FMT/GQ'", "position 1: FMT/GQ alone is not a condition"}}) {
    const auto r = run(binary() + " freq " + shell_quote(store) + " " + option);
    EXPECT_EQ(r.exit_code, 2) << option;
    EXPECT_NE(r.err.find(why), std::string::npos) << option << ": " << r.err;
  }
}
