// ld --decay (binned r²) and ld --ld-scores (ldsc --l2) against three independent computations:
//   * the pairs `ld` writes (threshold 0, a window reaching the last bin), binned here: another
//     path of the code (the pair writer, not the bin reducer);
//   * plink 1.9 --r2 --ld-window-r2 0's pairs, binned here (counts exact, sums to plink's six
//     printed digits), on random data with missing calls and multi-allelic sites and on
//     Ag1000G;
//   * tests/tools/ref_ld_summary.py, a brute-force reference from the definitions reading the
//     VCF text (bins and LD scores; 1e-12 relative).
// Stores come from `vczstats convert`; work units are cut small so that pairs and windows cross
// them.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ld_compare.hpp"
#include "test_util.hpp"

using namespace vcztest;

namespace {

/// One bin: pairs and the sum of r².
struct Bin {
  std::int64_t pairs = 0;
  double sum = 0;
};
/// (group, bin_start) -> bin; group is "pop chrom window_start" as present.
using Bins = std::map<std::pair<std::string, std::int64_t>, Bin>;

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> f;
  std::istringstream s(line);
  for (std::string x; std::getline(s, x, '\t');) f.push_back(x);
  return f;
}

/// A decay table (ours, or ref_ld_summary.py's): columns by header name; mean_r2 checked against
/// sum_r2 / pairs.
Bins read_decay(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> head;
  Bins b;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto f = split_tabs(line);
    if (head.empty()) {
      head = f;
      continue;
    }
    auto col = [&](const std::string& name) -> std::string {
      const auto it = std::find(head.begin(), head.end(), name);
      return it == head.end() ? "" : f.at(static_cast<std::size_t>(it - head.begin()));
    };
    const std::string group = col("pop") + " " + col("chrom") + " " + col("window_start");
    Bin x{std::stoll(col("pairs")), std::strtod(col("sum_r2").c_str(), nullptr)};
    const double mean = std::strtod(col("mean_r2").c_str(), nullptr);
    if (x.pairs)
      EXPECT_NEAR(mean, x.sum / static_cast<double>(x.pairs), 1e-15) << line;
    else
      EXPECT_EQ(col("mean_r2"), "NA") << line;
    b[{group, std::stoll(col("bin_start"))}] = x;
  }
  return b;
}

/// Pairs of a pair table (ours: chr_a bp_a snp_a chr_b bp_b snp_b n r2; plink's .ld: CHR_A BP_A
/// SNP_A CHR_B BP_B SNP_B R2, whitespace-aligned) binned by bp_b - bp_a with @p edges, into the
/// groups of @p window (bp windows of bp_a, 0: one group) and @p pop.
void bin_pairs(const std::string& path, bool ours, const std::vector<std::int64_t>& edges,
               std::int64_t window, const std::string& pop, Bins& b) {
  for_each_pair(path, ours, [&](const PairLine& p) {
    const std::int64_t d = p.bp_b - p.bp_a;
    if (d < edges.front() || d >= edges.back()) return;
    const auto k = std::upper_bound(edges.begin(), edges.end(), d) - edges.begin() - 1;
    const std::string group =
        pop + " " +
        (window ? p.chr_a + " " + std::to_string((p.bp_a - 1) / window * window + 1) : " ");
    Bin& x = b[{group, edges[static_cast<std::size_t>(k)]}];
    ++x.pairs;
    x.sum += p.r2;
  });
}

/// Bins with pairs (empty ones are left out of both sides: a binned pair list has none).
Bins nonempty(const Bins& b) {
  Bins out;
  for (const auto& [k, v] : b)
    if (v.pairs) out[k] = v;
  return out;
}

/// The same bins, the same pair counts, sums within @p rel relative plus @p per_pair × pairs.
void expect_same_bins(const Bins& want, const Bins& got, double rel, double per_pair,
                      std::int64_t at_least_pairs) {
  const Bins w = nonempty(want), g = nonempty(got);
  ASSERT_EQ(w.size(), g.size());
  std::int64_t total = 0;
  for (const auto& [k, x] : w) {
    const auto it = g.find(k);
    ASSERT_NE(it, g.end()) << "bin " << k.first << " " << k.second << " missing";
    EXPECT_EQ(it->second.pairs, x.pairs) << k.first << " " << k.second;
    EXPECT_NEAR(it->second.sum, x.sum,
                rel * std::fabs(x.sum) + per_pair * static_cast<double>(x.pairs))
        << k.first << " " << k.second;
    total += x.pairs;
  }
  EXPECT_GE(total, at_least_pairs);
}

std::string join(const std::vector<std::int64_t>& e) {
  std::ostringstream s;  // (not string +=: GCC 12 warns -Wrestrict on it)
  for (std::size_t k = 0; k < e.size(); ++k) s << (k ? "," : "") << e[k];
  return s.str();
}

/// A random VCF with LD (ref_ld_summary.py vcf @p args) and its store in chunks of @p chunk.
std::string make_data(const TempDir& dir, const std::string& name, const std::string& args,
                      int chunk) {
  const std::string vcf = (dir / (name + ".vcf")).string();
  run_ok(python() + " " + tool("ref_ld_summary.py") + " vcf " + shell_quote(vcf) + " " + args);
  run_ok(binary() + " convert " + shell_quote(vcf) + " " +
         shell_quote((dir / (name + ".vcz")).string()) + " --variants-chunk-size " +
         std::to_string(chunk) + " -t 2");
  return vcf;
}

}  // namespace

TEST(LdDecay, BinsEqualTheBinnedPairsOfLdAndTheBruteForceReference) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  const std::vector<std::int64_t> edges{0, 1, 50, 200, 450, 1000, 1700};
  for (const bool hap : {false, true}) {
    SCOPED_TRACE(hap ? "--hap" : "--r2");
    const std::string name = hap ? "p" : "u";
    const std::string vcf = make_data(
        dir, name, hap ? "--phased --seed 5 --variants 500" : "--seed 4 --variants 700", 90);
    const std::string store = (dir / (name + ".vcz")).string();
    const std::string measure = hap ? " --hap" : " --r2";
    for (const std::int64_t window : {0, 4000}) {
      SCOPED_TRACE("--window-size " + std::to_string(window));
      const std::string win = window ? " --window-size " + std::to_string(window) : "";
      const std::string pairs = (dir / "pairs.ld").string();
      run_ok(binary() + " ld " + shell_quote(store) + measure +
             " --ld-window 1000000 --ld-window-bp " + std::to_string(edges.back() - 1) +
             " --ld-window-r2 0 --max-unit-variants 31 -o " + shell_quote(pairs));
      Bins from_pairs;
      bin_pairs(pairs, true, edges, window, "", from_pairs);
      const Bins ours =
          read_decay(run_ok(binary() + " ld " + shell_quote(store) + measure + " --decay " +
                            join(edges) + win + " --max-unit-variants 37 -t 2"));
      expect_same_bins(from_pairs, ours, 1e-12, 0, 10000);
      const Bins ref =
          read_decay(run_ok(python() + " " + tool("ref_ld_summary.py") + " decay " +
                            shell_quote(vcf) + " --bins " + join(edges) + (hap ? " --hap" : "") +
                            (window ? " --window-size " + std::to_string(window) : "")));
      expect_same_bins(ref, ours, 1e-12, 0, 10000);
      // the empty bins too: every bin of every curve
      EXPECT_EQ(ours.size(), ref.size());
    }
  }
}

TEST(LdDecay, LdWindowAndStartStopStepBins) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  const std::string vcf = make_data(dir, "u", "--seed 8 --variants 400", 50);
  const std::string store = (dir / "u.vcz").string();
  const Bins ours = read_decay(run_ok(binary() + " ld " + shell_quote(store) +
                                      " --decay 0:1kb:300 --ld-window 20 --max-unit-variants 13"));
  const Bins ref =
      read_decay(run_ok(python() + " " + tool("ref_ld_summary.py") + " decay " + shell_quote(vcf) +
                        " --bins 0,300,600,900,1000 --ld-window 20"));
  expect_same_bins(ref, ours, 1e-12, 0, 3000);
  EXPECT_EQ(ours.size(), 4u);
}

TEST(LdDecay, PerPopulationEqualsEachPopulationAlone) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  make_data(dir, "u", "--seed 6 --samples 30 --variants 400", 70);
  const std::string store = (dir / "u.vcz").string();
  const std::string pops = (dir / "pops.tsv").string();
  std::string a, b;
  {
    std::ofstream f(pops);
    for (int i = 0; i < 30; ++i) {
      const bool first = i % 3 != 0;
      f << "s" << i << "\t" << (first ? "A" : "B") << "\n";
      std::string& list = first ? a : b;
      list.append(list.empty() ? "s" : ",s").append(std::to_string(i));
    }
  }
  const std::vector<std::int64_t> edges{0, 100, 400, 1200};
  const Bins ours =
      read_decay(run_ok(binary() + " ld " + shell_quote(store) + " --decay " + join(edges) +
                        " -P " + shell_quote(pops) + " --max-unit-variants 37"));
  Bins from_pairs;
  for (const auto& [pop, samples] :
       {std::pair{std::string("A"), a}, std::pair{std::string("B"), b}}) {
    const std::string pairs = (dir / ("pairs" + pop)).string();
    run_ok(binary() + " ld " + shell_quote(store) + " -s " + samples +
           " --ld-window 1000000 --ld-window-bp 1199 --ld-window-r2 0 -o " + shell_quote(pairs));
    bin_pairs(pairs, true, edges, 0, pop, from_pairs);
  }
  expect_same_bins(from_pairs, ours, 1e-12, 0, 20000);
}

// -P in one pass: each population's curves are, byte for byte, those of `-s` with its samples
// alone (--r2 and --hap, with windows, work units cut small so that pairs cross them), and the
// store is read once: one run report (-v), of the store's variants and every population's calls
// (a pass per population reports once per population, each with its own samples' calls). Count
// filters count each population's own samples (a pass each, as -s of its samples).
TEST(LdDecay, PopulationsShareOnePassAndEachEqualsItsSamplesAlone) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  make_data(dir, "p", "--phased --seed 11 --samples 25 --variants 300 --contigs 2", 40);
  const std::string store = (dir / "p.vcz").string();
  const std::string pops = (dir / "pops.tsv").string();
  const std::vector<std::string> names{"C", "A", "B"};  // in order of first appearance
  std::vector<std::string> lists(names.size());
  {
    std::ofstream f(pops);
    for (int i = 1; i < 25; ++i) {  // s0 in none; C: s1 and s2
      const std::size_t p = i < 3 ? 0 : 2 - static_cast<std::size_t>(i % 2);
      f << "s" << i << "\t" << names[p] << "\n";
      lists[p].append(lists[p].empty() ? "s" : ",s").append(std::to_string(i));
    }
  }
  for (const std::string options : {" --r2", " --hap", " --hap --maf 0.2"}) {
    SCOPED_TRACE(options);
    const bool count_filter = options.find("--maf") != std::string::npos;
    const std::string cmd = binary() + " ld " + shell_quote(store) + options +
                            " --decay 0,30,200,900 --window-size 3kb --max-unit-variants 23";
    const CommandResult all = run(cmd + " -P " + shell_quote(pops) + " -v");
    ASSERT_EQ(all.exit_code, 0) << all.err;
    std::string want =
        "pop\tchrom\twindow_start\twindow_end\tbin_start\tbin_end\tpairs\tsum_r2\t"
        "mean_r2\n";
    for (std::size_t p = 0; p < names.size(); ++p) {
      std::istringstream alone(run_ok(cmd + " -s " + lists[p]));
      std::string line;
      std::getline(alone, line);  // the header
      while (std::getline(alone, line))
        if (!line.empty() && line[0] != '#') want += names[p] + "\t" + line + "\n";
    }
    EXPECT_EQ(all.out, want);
    // one run: 300 variants, the 24 samples' calls
    std::vector<std::string> reports;
    std::istringstream err(all.err);
    for (std::string line; std::getline(err, line);)
      if (line.starts_with("vczstats: device ")) reports.push_back(line);
    if (count_filter) {
      EXPECT_EQ(reports.size(), names.size()) << all.err;
      continue;
    }
    ASSERT_EQ(reports.size(), 1u) << all.err;
    EXPECT_NE(reports[0].find("; 300 variants in "), std::string::npos) << reports[0];
    EXPECT_TRUE(reports[0].ends_with("; " + std::to_string(300 * 24 * 2) + " genotype calls"))
        << reports[0];
  }
}

/// plink 1.9 --r2 --ld-window-r2 0 on @p unphased_vcf (biallelic, REF against the rest), binned,
/// against ld --decay on @p store.
void expect_decay_matches_plink(const TempDir& dir, const std::string& unphased_vcf,
                                const std::string& store, const std::vector<std::int64_t>& edges,
                                std::int64_t at_least) {
  const std::string out = (dir / "pl").string();
  // plink's window reaches d <= kb × 1000: one bp more than the last bin, left out when binning
  run_ok("plink1.9 --vcf " + shell_quote(unphased_vcf) +
         " --allow-extra-chr --double-id --vcf-half-call missing --threads 1 --out " +
         shell_quote(out) + " --r2 --ld-window 100000 --ld-window-kb " +
         std::to_string(static_cast<double>(edges.back()) / 1000) +
         " --ld-window-r2 0 > /dev/null");
  Bins plink;
  bin_pairs(out + ".ld", false, edges, 0, "", plink);
  const Bins ours = read_decay(run_ok(binary() + " ld " + shell_quote(store) + " --decay " +
                                      join(edges) + " --max-unit-variants 41"));
  // plink prints r2 to six significant digits
  expect_same_bins(plink, ours, 1e-6, 1e-6, at_least);
}

TEST(LdDecay, BinsEqualBinnedPlink19PairsOnRandomData) {
  VCZ_REQUIRE_CONVERT();
  VCZ_REQUIRE_PROGRAM("plink1.9");
  TempDir dir;
  const std::string vcf = make_data(dir, "u", "--seed 11 --variants 800 --multiallelic 0.1", 100);
  const std::string bi = (dir / "bi.vcf").string();
  run_ok(python() + " " + tool("biallelic_vcf.py") + " " + shell_quote(vcf) + " " +
         shell_quote(bi) + " --unphase");
  expect_decay_matches_plink(dir, bi, (dir / "u.vcz").string(), {0, 10, 100, 500, 1000, 2000},
                             20000);
}

TEST(LdDecay, BinsEqualBinnedPlink19PairsOnAg1000g) {
  VCZ_REQUIRE_SHARED_DATA();
  VCZ_REQUIRE_CONVERT();
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PROGRAM("plink1.9");
  TempDir dir;
  const std::string sub = (dir / "sub.vcf").string(), bi = (dir / "bi.vcf").string();
  const std::string store = (dir / "bi.vcz").string();
  run_ok("bcftools view -t X:8000000-8010000 -Ov -o " + shell_quote(sub) + " " +
         shell_quote((shared_data() / "ag1000g/gamb.X.8-12Mb.n100.derived.vcf.gz").string()));
  run_ok(python() + " " + tool("biallelic_vcf.py") + " " + shell_quote(sub) + " " +
         shell_quote(bi) + " --unphase");
  run_ok(binary() + " convert " + shell_quote(bi) + " " + shell_quote(store) +
         " --variants-chunk-size 500 -t 2");
  expect_decay_matches_plink(dir, bi, store, {0, 20, 50, 100, 200, 400, 600, 1000}, 50000);
}

/// ld --ld-scores against ref_ld_summary.py ldscore: every row, pairs exact, l2 to 1e-12.
void expect_scores_match(const std::string& store, const std::string& vcf,
                         const std::string& ours_args, const std::string& ref_args) {
  SCOPED_TRACE(ours_args);
  const std::string ours = run_ok(binary() + " ld " + shell_quote(store) + " --ld-scores " +
                                  ours_args + " --max-unit-variants 29 -t 2");
  const std::string ref = run_ok(python() + " " + tool("ref_ld_summary.py") + " ldscore " +
                                 shell_quote(vcf) + " " + ref_args);
  std::istringstream a(ours), b(ref);
  std::string la, lb;
  int rows = 0, bad = 0, na = 0;
  while (std::getline(b, lb)) {
    do {
      ASSERT_TRUE(std::getline(a, la)) << "ours ends before " << lb;
    } while (!la.empty() && la[0] == '#');
    const auto fa = split_tabs(la), fb = split_tabs(lb);
    ASSERT_EQ(fa.size(), 5u) << la;
    ASSERT_EQ(fb.size(), 5u) << lb;
    if (rows++ == 0) {
      EXPECT_EQ(la, lb);
      continue;
    }
    bool same = fa[0] == fb[0] && fa[1] == fb[1] && fa[2] == fb[2] && fa[3] == fb[3];
    if (fb[4] == "NA") {
      same = same && fa[4] == "NA";
      ++na;
    } else {
      const double x = std::strtod(fa[4].c_str(), nullptr), y = std::strtod(fb[4].c_str(), nullptr);
      same = same && std::fabs(x - y) <= 1e-12 * std::max(1.0, std::fabs(y));
    }
    if (!same && ++bad <= 5) ADD_FAILURE() << "reference: " << lb << "\nours:      " << la;
  }
  while (std::getline(a, la)) EXPECT_TRUE(la.empty() || la[0] == '#') << "extra row " << la;
  EXPECT_EQ(bad, 0);
  EXPECT_GT(rows, 300);
  (void)na;
}

TEST(LdScores, EqualTheBruteForceSum) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  const std::string u = make_data(dir, "u", "--seed 12 --variants 600", 80);
  const std::string p = make_data(dir, "p", "--phased --seed 13 --variants 500", 80);
  const std::string us = (dir / "u.vcz").string(), ps = (dir / "p.vcz").string();
  expect_scores_match(us, u, "--ld-wind-kb 1", "--wind-kb 1");
  expect_scores_match(us, u, "--ld-wind-kb 0.25", "--wind-kb 0.25");
  expect_scores_match(us, u, "--ld-wind-snps 15", "--wind-snps 15");
  expect_scores_match(ps, p, "--hap --ld-wind-kb 0.6", "--hap --wind-kb 0.6");
  expect_scores_match(ps, p, "--hap --ld-wind-snps 4", "--hap --wind-snps 4");
  // cM windows on a plink .map with uneven rates, flat stretches, and positions outside it
  const std::string map = (dir / "g.map").string();
  {
    std::ofstream m(map);
    const double steps[] = {0.02, 0, 0.3, 0.05, 0.11, 0, 0.01, 0.2};
    for (const char* chrom : {"1", "2"}) {
      double cm = 0.5;
      for (int k = 0; k < 16; ++k) {
        m << chrom << "\tm" << k << "\t" << cm << "\t" << 1500 + 500 * k << "\n";
        cm += steps[k % 8];
      }
    }
  }
  expect_scores_match(us, u, "--ld-wind-cm 0.2 --map " + shell_quote(map),
                      "--wind-cm 0.2 --map " + shell_quote(map));
  expect_scores_match(ps, p, "--hap --ld-wind-cm 0.07 --map " + shell_quote(map),
                      "--hap --wind-cm 0.07 --map " + shell_quote(map));
}

/// A populations file (sample, population) in @p dir of samples s0 .. s<n - 1>, sample i in
/// population names[(i * step) % names.size()] (one-letter names).
std::string write_populations(const TempDir& dir, int n, const std::string& names, int step) {
  const std::string path = (dir / "pops.tsv").string();
  std::ofstream f(path);
  for (int i = 0; i < n; ++i)
    f << "s" << i << "\t" << names[static_cast<std::size_t>(i * step) % names.size()] << "\n";
  return path;
}

/// ld-stats (options @p ours_args) against ref_ld_summary.py ldstats (@p ref_args): the same
/// header (moments' names), counts exact, sums to 1e-10 relative (plus 1e-14 per pair, for sums
/// that cancel to nearly 0). Returns the number of columns.
std::size_t expect_ld_stats_match(const std::string& store, const std::string& vcf,
                                  const std::string& bins, const std::string& ours_args = "",
                                  const std::string& ref_args = "", std::int64_t min_pairs = 2000) {
  SCOPED_TRACE(bins + " " + ours_args);
  // (empty @p bins: the arguments give --r-bins)
  const std::string ours = run_ok(binary() + " ld-stats " + shell_quote(store) +
                                  (bins.empty() ? "" : " --bp-bins " + bins) +
                                  " --max-unit-variants 23 -t 2" + ours_args);
  const std::string ref =
      run_ok(python() + " " + tool("ref_ld_summary.py") + " ldstats " + shell_quote(vcf) +
             (bins.empty() ? "" : " --bins " + bins) + ref_args);
  std::istringstream a(ours), b(ref);
  std::string la, lb;
  std::vector<std::string> header;
  std::int64_t pairs = 0;
  while (std::getline(b, lb)) {
    if (!std::getline(a, la)) {
      ADD_FAILURE() << "ours ends before " << lb;
      return 0;
    }
    const auto fa = split_tabs(la), fb = split_tabs(lb);
    if (fa.size() != fb.size()) {
      ADD_FAILURE() << la << "\n" << lb;
      return 0;
    }
    if (header.empty()) {
      EXPECT_EQ(la, lb);  // the header: moments' names
      header = fa;
      continue;
    }
    for (std::size_t c = 0; c < fa.size(); ++c) {
      const std::string& name = header[c];
      if (name == "bin_start" || name == "bin_end") {  // (r bins: the same double)
        EXPECT_EQ(std::strtod(fa[c].c_str(), nullptr), std::strtod(fb[c].c_str(), nullptr)) << la;
        continue;
      }
      if (name == "pairs" || name == "sites") {
        EXPECT_EQ(fa[c], fb[c]) << name << "\n" << la << "\n" << lb;
        continue;
      }
      const double n = std::strtod(fb[2].c_str(), nullptr);
      const double x = std::strtod(fa[c].c_str(), nullptr), y = std::strtod(fb[c].c_str(), nullptr);
      EXPECT_LE(std::fabs(x - y), 1e-10 * std::fabs(y) + 1e-14 * n)
          << name << "\nours:      " << la << "\nreference: " << lb;
    }
    pairs += std::strtoll(fb[2].c_str(), nullptr, 10);
  }
  EXPECT_FALSE(std::getline(a, la)) << "extra row " << la;
  EXPECT_GT(pairs, min_pairs);
  return header.size();
}

TEST(LdStats, EqualTheBruteForceReferenceFromTheDefinitions) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  // 24 haplotypes; 1% of alleles missing (their sites are left out), multi-allelic sites
  const std::string vcf =
      make_data(dir, "p", "--phased --seed 31 --samples 12 --variants 400 --multiallelic 0.1", 60);
  const std::string store = (dir / "p.vcz").string();
  expect_ld_stats_match(store, vcf, "0,1,50,200,1000,2500");
  expect_ld_stats_match(store, vcf, "20,300,301,1400");
  // -P with --pop: the population's samples, as -s
  const std::string pops = (dir / "pops.tsv").string();
  std::string a;
  {
    std::ofstream f(pops);
    for (int i = 0; i < 12; ++i) {
      f << "s" << i << "\t" << (i % 2 ? "A" : "B") << "\n";
      if (i % 2) a.append(a.empty() ? "s" : ",s").append(std::to_string(i));
    }
  }
  const std::string cmd = binary() + " ld-stats " + shell_quote(store) + " --bp-bins 0,100,900";
  EXPECT_EQ(run_ok(cmd + " -P " + shell_quote(pops) + " --pop A"), run_ok(cmd + " -s " + a));
}

TEST(LdStats, TwoAndThreePopulationsEqualTheBruteForceReference) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  // 36 haplotypes in three populations; 1% of alleles missing, multi-allelic sites
  const std::string vcf =
      make_data(dir, "p", "--phased --seed 47 --samples 18 --variants 300 --multiallelic 0.1", 60);
  const std::string store = (dir / "p.vcz").string();
  const std::string pops = write_populations(dir, 18, "XYZ", 7);
  const std::string p = " -P " + shell_quote(pops), rp = " --pops " + shell_quote(pops);
  // two populations (15 two-locus statistics and 3 H), in the order --pop names them
  EXPECT_EQ(expect_ld_stats_match(store, vcf, "0,1,50,200,1000,2500", p + " --pop Y,X",
                                  rp + " --pop-names Y,X", 1000),
            3u + 15u + 1u + 3u);
  // the file's three populations (45 and 6), cut into units across bands' reach
  EXPECT_EQ(expect_ld_stats_match(store, vcf, "20,300,301,1400", p, rp, 500), 3u + 45u + 1u + 6u);
  // bins of recombination distance on a plink .map (one and three populations)
  // (and the same points as a HapMap-style table, its contigs named chr1 and chr2)
  const std::string map = (dir / "g.map").string(), hapmap = (dir / "g.hapmap.txt").string();
  {
    std::ofstream m(map), h(hapmap);
    h << "Chromosome\tPosition(bp)\tRate(cM/Mb)\tMap(cM)\n";
    for (const char* contig : {"1", "2"}) {
      double g = 0;
      for (std::int64_t x = 1; x <= 40001; x += 400) {
        g += static_cast<double>((x * 7919) % 1000) * 2e-5;
        m << contig << "\tm" << x << "\t" << g << "\t" << x << "\n";
        h << "chr" << contig << "\t" << x << "\t" << (x % 7) * 0.25 << "\t" << g << "\n";
      }
    }
  }
  const std::string r = " --r-bins 0,1e-5,5e-5,4e-4 --map " + shell_quote(map);
  expect_ld_stats_match(store, vcf, "", r, r, 500);
  expect_ld_stats_match(store, vcf, "", r + p, r + rp, 500);
  const std::string rh = " --r-bins 0,1e-5,5e-5,4e-4 --map " + shell_quote(hapmap);
  const std::string ld_stats = binary() + " ld-stats " + shell_quote(store);
  EXPECT_EQ(run_ok(ld_stats + rh + p), run_ok(ld_stats + r + p));
  const std::string scores =
      binary() + " ld " + shell_quote(store) + " --ld-scores --ld-wind-cm 0.05";
  EXPECT_EQ(run_ok(scores + " --map " + shell_quote(hapmap)),
            run_ok(scores + " --map " + shell_quote(map)));
  // one population of the file is the one-population table of its samples
  const std::string cmd = binary() + " ld-stats " + shell_quote(store) + " --bp-bins 0,100,900";
  std::string z;
  for (int i = 0; i < 18; ++i)
    if ((i * 7) % 3 == 2) z.append(z.empty() ? "s" : ",s").append(std::to_string(i));
  EXPECT_EQ(run_ok(cmd + p + " --pop Z"), run_ok(cmd + " -s " + z));
  // under -P without --pop, every population of the file
  EXPECT_EQ(run_ok(cmd + p), run_ok(cmd + p + " --pop X,Y,Z"));
}

TEST(LdStats, FourPopulationsEqualTheBruteForceReference) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  // 40 haplotypes in four populations of 10; 1% of alleles missing, multi-allelic sites
  const std::string vcf =
      make_data(dir, "p", "--phased --seed 53 --samples 20 --variants 200 --multiallelic 0.1", 30);
  const std::string store = (dir / "p.vcz").string();
  const std::string pops = write_populations(dir, 20, "WXYZ", 3);
  const std::string p = " -P " + shell_quote(pops), rp = " --pops " + shell_quote(pops);
  // moments.LD's basis of four populations: 10 DD, 40 Dz, 55 pi2 and 10 H
  EXPECT_EQ(expect_ld_stats_match(store, vcf, "0,1,50,200,1000,2500", p, rp, 500),
            3u + 105u + 1u + 10u);
  // in the order --pop names them
  EXPECT_EQ(expect_ld_stats_match(store, vcf, "20,300,301,1400", p + " --pop Z,X,W,Y",
                                  rp + " --pop-names Z,X,W,Y", 500),
            3u + 105u + 1u + 10u);
}

TEST(LdStats, GenotypesEqualTheBruteForceReference) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  // 16 unphased diploid samples; 3% of alleles missing (a pair counts the samples called at
  // both), multi-allelic sites (REF against the others)
  const std::string vcf = make_data(dir, "g", "--seed 61 --samples 16 --variants 160", 30);
  const std::string store = (dir / "g.vcz").string();
  const std::string g = " --genotypes";
  expect_ld_stats_match(store, vcf, "0,1,50,200,500", g, g, 1500);
  expect_ld_stats_match(store, vcf, "20,300,301,400", g, g, 500);
  const std::string map = (dir / "g.map").string();
  {
    std::ofstream m(map);
    for (const char* contig : {"1", "2"}) {
      double cm = 0;
      for (std::int64_t x = 1; x <= 20001; x += 300) {
        cm += static_cast<double>((x * 7919) % 1000) * 2e-5;
        m << contig << "\tm" << x << "\t" << cm << "\t" << x << "\n";
      }
    }
  }
  const std::string r = " --r-bins 0,1e-5,5e-5,2e-4 --map " + shell_quote(map);
  expect_ld_stats_match(store, vcf, "", r + g, r + g, 2000);
  // two populations (in the order --pop names them), bp and r bins
  const std::string pops = write_populations(dir, 16, "XY", 1);
  const std::string p = " -P " + shell_quote(pops), rp = " --pops " + shell_quote(pops);
  EXPECT_EQ(expect_ld_stats_match(store, vcf, "0,1,50,150", p + " --pop Y,X" + g,
                                  rp + " --pop-names Y,X" + g, 800),
            3u + 15u + 1u + 3u);
  const std::string r2 = " --r-bins 0,1e-5,3e-5 --map " + shell_quote(map);
  expect_ld_stats_match(store, vcf, "", r2 + p + g, r2 + rp + g, 600);
  // one population of the file is the one-population table of its samples
  const std::string cmd = binary() + " ld-stats " + shell_quote(store) + " --bp-bins 0,100,400" + g;
  std::string x;
  for (int i = 0; i < 16; i += 2) x.append(x.empty() ? "s" : ",s").append(std::to_string(i));
  EXPECT_EQ(run_ok(cmd + p + " --pop X"), run_ok(cmd + " -s " + x));
  // haploid calls: a usage error naming the ploidy
  const std::string hap = (dir / "hap.vcf").string(), hap_store = (dir / "hap.vcz").string();
  {
    std::ofstream f(hap);
    f << "##fileformat=VCFv4.2\n##contig=<ID=1,length=1000>\n"
         "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n"
         "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\ts0\ts1\ts2\ts3\ts4\ts5\n";
    for (int v = 0; v < 4; ++v)
      f << "1\t" << 10 + v << "\tv" << v << "\tA\tC\t.\tPASS\t.\tGT\t0\t1\t0\t1\t1\t0\n";
  }
  run_ok(binary() + " convert " + shell_quote(hap) + " " + shell_quote(hap_store));
  const CommandResult bad =
      run(binary() + " ld-stats " + shell_quote(hap_store) + " --bp-bins 0,100" + g);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("diploid genotypes only (the store's ploidy is 1)"), std::string::npos)
      << bad.err;
}

TEST(LdStats, GenotypesOfThreeAndFourPopulationsEqualTheBruteForceReference) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  // 24 unphased samples; missing calls and multi-allelic sites; units cut across the reach
  const std::string vcf = make_data(dir, "g", "--seed 67 --samples 24 --variants 80", 20);
  const std::string store = (dir / "g.vcz").string();
  const std::string g = " --genotypes";
  {
    const std::string pops = write_populations(dir, 24, "XYZ", 7);
    EXPECT_EQ(expect_ld_stats_match(store, vcf, "0,30,80", " -P " + shell_quote(pops) + g,
                                    " --pops " + shell_quote(pops) + g, 150),
              3u + 45u + 1u + 6u);
  }
  const std::string pops = write_populations(dir, 24, "WXYZ", 3);
  EXPECT_EQ(expect_ld_stats_match(store, vcf, "0,20,50", " -P " + shell_quote(pops) + g,
                                  " --pops " + shell_quote(pops) + g, 100),
            3u + 105u + 1u + 10u);
}

TEST(LdStats, GenotypeAndHaplotypeEstimatorsAgreeOnManyPhasedSamples) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  // 400 phased samples in Hardy-Weinberg proportions (independent haplotypes), no missing
  // calls: both estimators are unbiased for the same D², Dz and pi2, so their sums per bin
  // agree to sampling error (a few percent here); sites and H are the same sums.
  make_data(dir, "h",
            "--phased --seed 11 --samples 400 --variants 300 --contigs 1 --missing 0 "
            "--multiallelic 0",
            50);
  const std::string cmd =
      binary() + " ld-stats " + shell_quote((dir / "h.vcz").string()) + " --bp-bins 0,100,500,2000";
  std::istringstream hap(run_ok(cmd)), gen(run_ok(cmd + " --genotypes"));
  std::string lh, lg;
  std::getline(hap, lh);
  std::getline(gen, lg);
  ASSERT_EQ(lh, lg);
  int rows = 0;
  while (std::getline(hap, lh)) {
    ASSERT_TRUE(std::getline(gen, lg));
    const auto h = split_tabs(lh), x = split_tabs(lg);
    ASSERT_EQ(h.size(), 8u);
    EXPECT_EQ(h[2], x[2]);  // pairs
    EXPECT_EQ(h[6], x[6]);  // sites
    EXPECT_EQ(h[7], x[7]);  // H_0_0
    const auto at = [](const std::vector<std::string>& f, std::size_t c) {
      return std::strtod(f[c].c_str(), nullptr);
    };
    const double pi2 = at(h, 5);
    EXPECT_NEAR(at(x, 5), pi2, 1e-3 * pi2) << lg;
    for (std::size_t c : {3u, 4u})  // DD_0_0, Dz_0_0_0
      EXPECT_NEAR(at(x, c), at(h, c), 0.05 * std::fabs(at(h, c)) + 2e-3 * pi2)
          << "column " << c << "\nhaplotypes: " << lh << "\ngenotypes:  " << lg;
    ++rows;
  }
  EXPECT_EQ(rows, 3);
}

TEST(LdStats, ScrmTwoPopulationsEqualTheBruteForceReference) {
  VCZ_REQUIRE_PROGRAM("scrm");
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  // Two islands of 12 haplotypes (6 diploid samples each) exchanging migrants; the reference's
  // own ms-to-VCF conversion, which vczstats converts as any VCF.
  const std::string ms = (dir / "s.ms").string(), vcf = (dir / "s.vcf").string();
  const std::string store = (dir / "s.vcz").string(), pops = (dir / "s.pops").string();
  run_ok("scrm 24 1 -t 30 -r 60 30000 -I 2 12 12 0.5 -seed 4 5 6 > " + shell_quote(ms));
  run_ok(python() + " " + tool("ref_ld_summary.py") + " msvcf " + shell_quote(ms) + " " +
         shell_quote(vcf) + " --length 30000");
  run_ok(binary() + " convert " + shell_quote(vcf) + " " + shell_quote(store) +
         " --variants-chunk-size 40 -t 2");
  {
    std::ofstream f(pops);
    for (int i = 0; i < 12; ++i) f << "s" << i << "\t" << (i < 6 ? "A" : "B") << "\n";
  }
  EXPECT_EQ(expect_ld_stats_match(store, vcf, "0,500,2000,6000", " -P " + shell_quote(pops),
                                  " --pops " + shell_quote(pops), 5000),
            3u + 15u + 1u + 3u);
}

namespace {

/// The rows of an ld-stats table by column name: column -> value per row.
std::map<std::string, std::vector<double>> ld_stats_columns(const std::string& table) {
  std::istringstream in(table);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  {
    std::istringstream h(line);
    for (std::string n; std::getline(h, n, '\t');) names.push_back(n);
  }
  std::map<std::string, std::vector<double>> columns;
  while (std::getline(in, line)) {
    std::istringstream r(line);
    std::string cell;
    for (std::size_t i = 0; std::getline(r, cell, '\t') && i < names.size(); ++i)
      columns[names[i]].push_back(std::stod(cell));
  }
  return columns;
}

/// Ohta & Kimura's (1971) expectation of sigma_D^2 = E[D^2] / E[p(1-p)q(1-q)] at equilibrium,
/// rho = 4Nr: (10 + rho) / (22 + 13 rho + rho^2), averaged over the pairs of a bin [d0, d1) of
/// bp distance on replicates of @p length bp (pairs at distance d are proportional to
/// length - d) at @p rho_per_bp.
double ohta_kimura(double d0, double d1, double length, double rho_per_bp) {
  double num = 0, den = 0;
  for (int k = 0; k < 2000; ++k) {
    const double d = d0 + (d1 - d0) * (k + 0.5) / 2000, w = length - d, rho = d * rho_per_bp;
    num += w * (10 + rho) / (22 + 13 * rho + rho * rho);
    den += w;
  }
  return num / den;
}

}  // namespace

// The model-expectation sanity test (not the exactness test): on scrm's coalescent, the binned
// statistics behave as theory says. One population at equilibrium: DD/pi2 per bin is Ohta and
// Kimura's sigma_D^2 (within 10% where rho <= 20, 20% beyond; measured 0.5-6% off over three
// seeds). Two islands split T (4N generations) ago without migration: right after the split the
// populations share their LD (DD_0_1 near DD_0_0); long after it the covariance of D between
// them has decayed (DD_0_1 a small fraction of DD_0_0, smaller at larger distances), while LD
// within each is still the equilibrium's, as moments.LD's own two-population tests show.
TEST(LdStats, ScrmAgreesWithTheModelsExpectations) {
  VCZ_REQUIRE_PROGRAM("scrm");
  TempDir dir;
  // 300 replicates of 20 kb, 40 haplotypes, rho = 40 per replicate (0.002 per bp), theta 20.
  const std::string bins = "0,100,500,1000,2500,5000,10000,20000";
  auto store = [&](const std::string& name, const std::string& model) {
    const std::string ms = (dir / (name + ".ms")).string();
    const std::string out = (dir / (name + ".vcz")).string();
    run_ok("scrm 40 300 -t 20 -r 40 20000 " + model + " > " + shell_quote(ms));
    run_ok(binary() + " convert --from ms " + shell_quote(ms) + " " + shell_quote(out) +
           " --length 20000 --variants-chunk-size 500 -f");
    return out;
  };
  const auto one =
      ld_stats_columns(run_ok(binary() + " ld-stats " + shell_quote(store("one", "-seed 1 2 3")) +
                              " --bp-bins " + bins + " -t 2"));
  ASSERT_EQ(one.at("bin_start").size(), 7u);
  for (std::size_t b = 0; b < 7; ++b) {
    const double d0 = one.at("bin_start")[b], d1 = one.at("bin_end")[b];
    const double sigma = one.at("DD_0_0")[b] / one.at("pi2_0_0_0_0")[b];
    const double expected = ohta_kimura(d0, d1, 20000, 0.002);
    SCOPED_TRACE(std::to_string(d0) + "-" + std::to_string(d1) + " bp");
    EXPECT_GT(one.at("pairs")[b], 10000);
    EXPECT_NEAR(sigma / expected, 1.0, d1 <= 10000 ? 0.10 : 0.20) << sigma << " vs " << expected;
    if (b > 0) {
      EXPECT_LT(sigma, one.at("DD_0_0")[b - 1] / one.at("pi2_0_0_0_0")[b - 1]);
    }
  }
  // Two islands of 20 haplotypes (10 samples each), split T ago.
  const std::string pops = (dir / "pops.tsv").string();
  {
    std::ofstream f(pops);
    for (int i = 0; i < 20; ++i) f << "tsk_" << i << "\t" << (i < 10 ? "A" : "B") << "\n";
  }
  for (const double t : {0.01, 0.5}) {
    SCOPED_TRACE("split " + std::to_string(t));
    const std::string model = "-I 2 20 20 0 -ej " + std::to_string(t) + " 2 1 -seed 4 5 6";
    const auto two =
        ld_stats_columns(run_ok(binary() + " ld-stats " + shell_quote(store("two", model)) +
                                " -P " + shell_quote(pops) + " --bp-bins " + bins + " -t 2"));
    for (std::size_t b = 0; b < 4; ++b) {  // up to 2.5 kb, rho <= 5
      const double d0 = two.at("bin_start")[b], d1 = two.at("bin_end")[b];
      const double expected = ohta_kimura(d0, d1, 20000, 0.002);
      const double within0 = two.at("DD_0_0")[b] / two.at("pi2_0_0_0_0")[b];
      const double within1 = two.at("DD_1_1")[b] / two.at("pi2_1_1_1_1")[b];
      const double shared =
          two.at("DD_0_1")[b] / std::sqrt(two.at("DD_0_0")[b] * two.at("DD_1_1")[b]);
      SCOPED_TRACE(std::to_string(d0) + "-" + std::to_string(d1) + " bp");
      EXPECT_NEAR(within0 / expected, 1.0, 0.15);
      EXPECT_NEAR(within1 / expected, 1.0, 0.15);
      if (t < 0.1) {
        EXPECT_GT(shared, 0.85);  // measured 0.96, 0.96, 0.94, 0.91
        EXPECT_LE(shared, 1.0);
      } else {
        // decays with distance: measured 0.11, 0.08, 0.03, 0.005
        EXPECT_LT(shared, b == 0 ? 0.25 : b == 1 ? 0.15 : 0.05);
        EXPECT_GT(shared, -0.05);
      }
    }
  }
}

TEST(LdSummaries, BadOptionsAreUsageErrors) {
  VCZ_REQUIRE_CONVERT();
  TempDir dir;
  make_data(dir, "u", "--seed 1 --variants 50", 50);
  const std::string ld = binary() + " ld " + shell_quote((dir / "u.vcz").string());
  const std::vector<std::pair<std::string, std::string>> cases{
      {" --decay 10,5", "bin edges must increase"},
      {" --decay 100", "at least two bin edges"},
      {" --decay 0:100", "START:STOP:STEP"},
      {" --decay 0:100:0", "--decay STEP"},
      {" --decay 100:0:10", "STOP must be above START"},
      {" --decay 0,x", "--decay"},
      {" --decay 0,100 --dprime", "--dprime"},
      {" --decay 0,100 --ld-window-r2 0.2", "--ld-window-r2"},
      {" --decay 0,100 --ld-scores --ld-wind-kb 1", "one of --decay and --ld-scores"},
      {" --ld-scores", "give one window"},
      {" --ld-scores --ld-wind-kb 1 --ld-wind-snps 3", "give one window"},
      {" --ld-scores --ld-wind-cm 1", "--ld-wind-cm needs --map"},
      {" --ld-scores --ld-wind-kb 1 --map x.map", "--ld-wind-cm needs --map"},
      {" --window-size 1000", "needs --decay"},
  };
  for (const auto& [args, message] : cases) {
    const CommandResult r = run(ld + args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
  }
  const std::string ld_stats = binary() + " ld-stats " + shell_quote((dir / "u.vcz").string());
  const std::string pops5 = write_populations(dir, 40, "ABCDE", 1);
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"", "give --bp-bins or --r-bins"},
           {" --r-bins 0,0.001", "--r-bins needs --map"},
           {" --bp-bins 0,5 --r-bins 0,0.1", "give --bp-bins or --r-bins"},
           {" --r-bins 0,x --map m", "not a number"},
           {" --bp-bins 5,1", "bin edges must increase"},
           {" --bp-bins 0,5 --pop A", "--pop needs -P"},
           {" --bp-bins 0,5 -P " + shell_quote(pops5) + " --pop A,B,C,D,E", "four populations"},
           {" --bp-bins 0,5 -P " + shell_quote(pops5), "choose with --pop"},
           {" --bp-bins 0,5 -P " + shell_quote(pops5) + " --pop A,Q", "'Q' is not a population"},
           {" --bp-bins 0,5 -P " + shell_quote(pops5) + " --pop A,A", "named twice"},
           {" --bp-bins 0,5 --genotypes -s s0,s1,s2", "at least four samples"}}) {
    const CommandResult r = run(ld_stats + args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
  }
}
