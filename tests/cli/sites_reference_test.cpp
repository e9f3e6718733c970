// Per-site tables (freq, geno-counts, hardy, missing) against independent tools run in the test:
// plink2 (--geno-counts, --hardy, --missing; half-calls imported as missing, as our classes
// treat them) and bcftools +fill-tags (AN, AC: called alleles). Per population: -P results
// equal the tools run on each population's samples (--keep / -s). Stores are written by
// tests/tools/vcf2vcz.py (python3-zarr), with sample chunks that split populations.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "test_util.hpp"

using namespace vcztest;

namespace {

using Table = std::vector<std::vector<std::string>>;

Table parse_tsv(const std::string& text, bool skip_header = true) {
  Table t;
  std::istringstream in(text);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      first = false;
      continue;
    }
    if (first && skip_header) {
      first = false;
      continue;
    }
    first = false;
    std::vector<std::string> cells;
    std::istringstream ls(line);
    std::string c;
    while (std::getline(ls, c, '\t')) cells.push_back(c);
    t.push_back(cells);
  }
  return t;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Rows of one population from a -P table (population is column 5).
Table of_population(const Table& t, const std::string& pop) {
  Table out;
  for (const auto& r : t)
    if (r.at(5) == pop) out.push_back(r);
  return out;
}

double num(const std::string& s) {
  return s == "NA" ? std::nan("") : std::stod(s);
}

// plink2 prints 6 significant digits.
void expect_close6(const std::string& ours, const std::string& theirs, const std::string& what) {
  const double a = num(ours), b = num(theirs);
  if (std::isnan(b)) {
    EXPECT_TRUE(std::isnan(a)) << what << ": " << ours << " vs " << theirs;
    return;
  }
  EXPECT_NEAR(a, b, 5e-6 * std::max(std::fabs(b), 1e-300) + 1e-300) << what;
}

struct Fixture {
  std::string vcf, store, pops_file;
  std::map<std::string, std::vector<std::string>> pops;  // name → samples
};

void check_population(const Fixture& f, const TempDir& dir, const std::string& pop,
                      const Table& geno, const Table& hardy, const Table& missing,
                      const Table& freq, const Table& sample_stats) {
  const auto& samples = f.pops.at(pop);
  const std::string keep = (dir / ("keep_" + pop)).string();
  {
    std::ofstream k(keep);
    for (const auto& s : samples) k << s << "\n";
  }
  const std::string prefix = (dir / ("plink_" + pop)).string();
  run_ok("plink2 --vcf " + shell_quote(f.vcf) +
         " --vcf-half-call missing --allow-extra-chr --set-all-var-ids '@:#:$r:$a' "
         "--new-id-max-allele-len 1000 --keep " +
         shell_quote(keep) + " --geno-counts --hardy --missing --het --bad-freqs --out " +
         shell_quote(prefix) + " >/dev/null");
  const Table pg = parse_tsv(read_file(prefix + ".gcount"), false);
  const Table pv = parse_tsv(read_file(prefix + ".vmiss"), false);
  // plink2 writes one --hardy row per allele of a multi-allelic site; the first is REF's.
  Table ph;
  for (const auto& r : parse_tsv(read_file(prefix + ".hardy"), false))
    if (ph.empty() || ph.back()[1] != r[1]) ph.push_back(r);
  ASSERT_EQ(geno.size(), pg.size()) << pop;
  ASSERT_EQ(hardy.size(), ph.size()) << pop;
  ASSERT_EQ(missing.size(), pv.size()) << pop;
  for (std::size_t i = 0; i < geno.size(); ++i) {
    const std::string what = pop + " " + geno[i][0] + ":" + geno[i][1];
    EXPECT_EQ(geno[i][3], pg[i][2]) << what;  // REF
    EXPECT_EQ(geno[i][6], pg[i][4]) << what;  // HOM_REF_CT
    // HET_REF_ALT_CTS and TWO_ALT_GENO_CTS are lists for multi-allelic sites: we give sums.
    std::int64_t het = 0, two = 0;
    {
      std::istringstream a(pg[i][5]), b(pg[i][6]);
      std::string c;
      while (std::getline(a, c, ',')) het += std::stoll(c);
      while (std::getline(b, c, ',')) two += std::stoll(c);
    }
    EXPECT_EQ(std::stoll(geno[i][7]), het) << what;
    EXPECT_EQ(std::stoll(geno[i][8]), two) << what;
    EXPECT_EQ(geno[i][11], pg[i][9]) << what;  // MISSING_CT
    // hardy: counts exact, heterozygosities and p to plink2's printed precision.
    EXPECT_EQ(hardy[i][6], ph[i][4]) << what;
    EXPECT_EQ(hardy[i][7], ph[i][5]) << what;
    EXPECT_EQ(hardy[i][8], ph[i][6]) << what;
    if (ph[i][4] != "0" || ph[i][5] != "0" || ph[i][6] != "0") {
      expect_close6(hardy[i][9], ph[i][7], what + " o_het");
      expect_close6(hardy[i][10], ph[i][8], what + " e_het");
      expect_close6(hardy[i][11], ph[i][9], what + " p_hwe");
      if (std::stod(ph[i][8]) > 0) {  // f = 1 - O(HET) / E(HET), from plink2's printed values
        EXPECT_NEAR(std::stod(hardy[i][12]), 1.0 - std::stod(ph[i][7]) / std::stod(ph[i][8]),
                    1e-4 * (1.0 + std::fabs(std::stod(ph[i][7]) / std::stod(ph[i][8]))))
            << what << " f";
      }
    }
    EXPECT_EQ(missing[i][6], pv[i][2]) << what;
    EXPECT_EQ(missing[i][7], pv[i][3]) << what;
  }
  // sample-stats: plink2 --missing (.smiss) and --het, sample by sample.
  {
    std::map<std::string, std::vector<std::string>> ours;
    for (const auto& r : sample_stats)
      if (r[1] == pop) ours[r[0]] = r;
    const Table sm = parse_tsv(read_file(prefix + ".smiss"), false);
    const Table het = parse_tsv(read_file(prefix + ".het"), false);
    ASSERT_EQ(sm.size(), samples.size());
    ASSERT_EQ(het.size(), samples.size());
    for (std::size_t k = 0; k < sm.size(); ++k) {
      const auto& r = ours.at(sm[k][0]);
      EXPECT_EQ(r[2], sm[k][1]) << pop << " " << sm[k][0] << " missing_ct";
      EXPECT_EQ(r[3], sm[k][2]) << pop << " " << sm[k][0] << " obs_ct";
      const auto& h = ours.at(het[k][0]);
      EXPECT_EQ(h[5], het[k][1]) << pop << " " << het[k][0] << " o_hom";
      expect_close6(h[6], het[k][2], pop + " " + het[k][0] + " e_hom");
      EXPECT_EQ(h[7], het[k][3]) << pop << " " << het[k][0] << " het_obs_ct";
      expect_close6(h[8], het[k][4], pop + " " + het[k][0] + " f");
    }
  }
  // freq: AN and AC of bcftools +fill-tags on the population's samples.
  std::string list;
  for (const auto& s : samples) list += (list.empty() ? "" : ",") + s;
  const Table bt = parse_tsv(
      run_ok(
          "bcftools view -s " + shell_quote(list) + " " + shell_quote(f.vcf) +
          " | bcftools +fill-tags -- -t AN,AC | bcftools query -f '%CHROM\\t%POS\\t%AN\\t%AC\\n'"),
      false);
  ASSERT_EQ(freq.size(), bt.size()) << pop;
  for (std::size_t i = 0; i < freq.size(); ++i) {
    const std::string what = pop + " freq " + freq[i][0] + ":" + freq[i][1];
    EXPECT_EQ(freq[i][1], bt[i][1]) << what;
    EXPECT_EQ(freq[i][7], bt[i][2]) << what;
    if (freq[i][4] != ".") {
      EXPECT_EQ(freq[i][6], bt[i][3]) << what;
    }
  }
}

void check_store(const Fixture& f, const TempDir& dir) {
  const std::string bin = binary() + " ";
  const std::string args = shell_quote(f.store) + " -P " + shell_quote(f.pops_file);
  const Table geno = parse_tsv(run_ok(bin + "geno-counts " + args));
  const Table hardy = parse_tsv(run_ok(bin + "hardy " + args));
  const Table missing = parse_tsv(run_ok(bin + "missing " + args));
  const Table freq = parse_tsv(run_ok(bin + "freq " + args + " -t 3"));
  const Table sample_stats = parse_tsv(run_ok(bin + "sample-stats " + args + " -t 2"));
  for (const auto& [pop, samples] : f.pops)
    check_population(f, dir, pop, of_population(geno, pop), of_population(hardy, pop),
                     of_population(missing, pop), of_population(freq, pop), sample_stats);
  // One population = -s with its samples; thread count and unit size do not matter.
  const auto& [pop0, samples0] = *f.pops.begin();
  std::string list;
  for (const auto& s : samples0) list += (list.empty() ? "" : ",") + s;
  Table single = parse_tsv(run_ok(bin + "freq " + shell_quote(f.store) + " -s " +
                                  shell_quote(list) + " -t 1 --max-unit-variants 7"));
  Table expect = of_population(freq, pop0);
  for (auto& r : single) r[5] = pop0;
  EXPECT_EQ(single, expect);
}

}  // namespace

TEST(CliSiteTables, MatchPlink2AndBcftoolsOnRandomDataWithPopulations) {
  VCZ_REQUIRE_PROGRAM("plink2");
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  Fixture f;
  f.vcf = (dir / "r.vcf.gz").string();
  run_ok(python() + " " + tool("random_vcf.py") +
         " --seed 11 --samples 41 --variants 500 --contigs 2 --missing 0.08 --multiallelic 0.2 "
         "--indels 0.1 -o " +
         shell_quote(f.vcf));
  f.store = (dir / "r.vcz").string();
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(f.vcf) + " " +
         shell_quote(f.store) + " --variants-chunk-size 37 --samples-chunk-size 6");
  // Three populations interleaved across sample chunks; two samples left out.
  f.pops_file = (dir / "pops.txt").string();
  std::ofstream p(f.pops_file);
  p << "sample\tpopulation\n";
  const char* names[] = {"north", "south", "east"};
  for (int i = 0; i < 39; ++i) {
    char s[16];
    std::snprintf(s, sizeof s, "S%04d", i);
    const std::string pop = names[(i * 7) % 3];
    p << s << "\t" << pop << "\n";
    f.pops[pop].push_back(s);
  }
  p.close();
  check_store(f, dir);
}

TEST(CliSiteTables, MatchPlink2On1000GenomesData) {
  VCZ_REQUIRE_PROGRAM("plink2");
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  VCZ_REQUIRE_SHAPEIT4_EXAMPLE();
  TempDir dir;
  Fixture f;
  // 300 samples of 1000 Genomes EUR, chr20:1.0-1.4 Mb; populations by sample-name series
  // (HG0xxxx and NAxxxxx: they come from different 1000 Genomes collections).
  f.vcf = make_1kg_subset(dir, "ref.vcf.gz");
  f.store = (dir / "ref.vcz").string();
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(f.vcf) + " " +
         shell_quote(f.store) + " --variants-chunk-size 1000 --samples-chunk-size 128");
  f.pops_file = (dir / "pops.txt").string();
  std::ofstream p(f.pops_file);
  std::istringstream names(run_ok("bcftools query -l " + shell_quote(f.vcf)));
  std::string s;
  while (std::getline(names, s)) {
    const std::string pop = s.rfind("HG", 0) == 0 ? "HG" : "NA";
    p << s << " " << pop << "\n";
    f.pops[pop].push_back(s);
  }
  p.close();
  check_store(f, dir);
}
