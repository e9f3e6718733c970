// vczstats simulate and convert --from ms, against independent references run in the test:
//  - the site frequency spectrum and Tajima's D of a simulated store against Debian's scrm
//    (a coalescent simulator; its output converted by convert --from ms) and against the
//    neutral expectation 1/i;
//  - the stores read by python3-zarr (Debian's) and by our reader, with equal values;
//  - determinism (same seed and any thread count or chunking: identical arrays), missing rate,
//    populations (and their F_ST through vczstats divergence);
//  - convert --from ms: genotypes equal the ms haplotypes, parsed here independently.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "test_util.hpp"
#include "vczstats/zarr.hpp"

using namespace vcztest;
namespace fs = std::filesystem;
namespace vz = vczstats::zarr;

namespace {

std::string cli(const std::string& args) {
  return run_ok(binary() + " " + args);
}

std::string simulate(const TempDir& dir, const std::string& name, const std::string& args) {
  const auto out = (dir / name).string();
  cli("simulate " + shell_quote(out) + " " + args);
  return out;
}

std::vector<std::int64_t> ints(const std::string& store, const std::string& name) {
  const auto a = vz::Array::open(vz::open_store(store), name);
  const std::vector<std::int64_t> start(a.shape().size(), 0);
  return a.read_region_as<std::int64_t>(start, a.shape());
}

std::vector<std::string> strings(const std::string& store, const std::string& name) {
  const auto a = vz::Array::open(vz::open_store(store), name);
  const std::vector<std::int64_t> start(a.shape().size(), 0);
  return a.read_region_strings(start, a.shape());
}

/// Every array of @p a equals the one of @p b (values, shapes), whatever the chunking
/// (region_index, which lists chunks, only when the chunking is the same).
void expect_same_arrays(const std::string& a, const std::string& b, bool same_chunks = true) {
  const auto sa = vz::open_store(a), sb = vz::open_store(b);
  const auto names = vz::list_arrays(*sa);
  ASSERT_EQ(names, vz::list_arrays(*sb));
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    if (name == "region_index" && !same_chunks) continue;
    const auto x = vz::Array::open(sa, name), y = vz::Array::open(sb, name);
    ASSERT_EQ(x.shape(), y.shape());
    ASSERT_EQ(x.dtype(), y.dtype());
    if (x.dtype().kind == vz::DataKind::String)
      EXPECT_EQ(strings(a, name), strings(b, name));
    else if (x.dtype().kind == vz::DataKind::Float)
      EXPECT_EQ(x.shape(), y.shape());  // variant_quality: missing everywhere (checked below)
    else
      EXPECT_EQ(ints(a, name), ints(b, name));
  }
}

/// The spectrum of `vczstats sfs` as proportions of the segregating sites, by derived count.
std::map<int, double> sfs(const std::string& store, std::int64_t* sites = nullptr) {
  std::istringstream in(cli("sfs " + shell_quote(store)));
  std::string line;
  std::getline(in, line);
  std::map<int, double> counts;
  double total = 0;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string pop;
    int n = 0, i = 0;
    double c = 0;
    f >> pop >> n >> i >> c;
    if (i == 0 || i == n) continue;
    counts[i] += c;
    total += c;
  }
  for (auto& [i, c] : counts) c /= total;
  if (sites) *sites = static_cast<std::int64_t>(total);
  return counts;
}

/// Sum of proportions over derived counts [lo, hi].
double band(const std::map<int, double>& s, int lo, int hi) {
  double t = 0;
  for (const auto& [i, p] : s)
    if (i >= lo && i <= hi) t += p;
  return t;
}

/// Column @p name of the first data row of a TSV table (comment lines skipped).
std::string column(const std::string& tsv, const std::string& name) {
  std::istringstream in(tsv);
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    if (line.starts_with("#")) continue;
    std::vector<std::string> cells;
    std::istringstream f(line);
    std::string c;
    while (std::getline(f, c, '\t')) cells.push_back(c);
    if (header.empty()) {
      header = cells;
      continue;
    }
    for (std::size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return cells.at(i);
  }
  ADD_FAILURE() << "no column " << name << " in\n" << tsv;
  return "";
}

std::string write_text(const TempDir& dir, const std::string& name, const std::string& text) {
  const auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST(Simulate, LayoutReadByOurReaderAndPythonZarr) {
  TempDir dir;
  const auto store = simulate(dir, "a.vcz",
                              "--samples 30 --variants 500 --seed 3 --variants-chunk-size 100 "
                              "--samples-chunk-size 16 -t 2");
  const auto s = vz::open_store(store);
  const std::vector<std::string> expected = {
      "call_genotype",    "call_genotype_mask", "call_genotype_phased",
      "contig_id",        "contig_length",      "filter_description",
      "filter_id",        "region_index",       "sample_id",
      "variant_allele",   "variant_contig",     "variant_filter",
      "variant_id",       "variant_id_mask",    "variant_length",
      "variant_position", "variant_quality"};
  EXPECT_EQ(vz::list_arrays(*s), expected);
  const auto gt = vz::Array::open(s, "call_genotype");
  EXPECT_EQ(gt.shape(), (std::vector<std::int64_t>{500, 30, 2}));
  EXPECT_EQ(gt.chunks(), (std::vector<std::int64_t>{100, 16, 2}));
  EXPECT_EQ(gt.dtype(), (vz::DataType{vz::DataKind::Int, 1}));
  EXPECT_EQ(gt.metadata().codecs, "blosc(zstd:7,bitshuffle)");
  EXPECT_EQ(vz::open_group(*s).attributes["vcf_zarr_version"], "0.4");

  const auto pos = ints(store, "variant_position");
  for (std::size_t i = 1; i < pos.size(); ++i) ASSERT_LT(pos[i - 1], pos[i]);
  const auto alleles = strings(store, "variant_allele");
  for (std::size_t i = 0; i < alleles.size(); i += 2) {
    ASSERT_EQ(alleles[i].size(), 1u);
    ASSERT_EQ(alleles[i + 1].size(), 1u);
    ASSERT_NE(alleles[i], alleles[i + 1]);
  }
  const auto g = ints(store, "call_genotype");
  std::int64_t alt = 0;
  for (auto v : g) {
    ASSERT_TRUE(v == 0 || v == 1);
    alt += v;
  }
  // Every site segregates.
  for (std::int64_t v = 0; v < 500; ++v) {
    std::int64_t c = 0;
    for (std::int64_t k = 0; k < 60; ++k) c += g[v * 60 + k];
    ASSERT_GT(c, 0);
    ASSERT_LT(c, 60);
  }
  EXPECT_EQ(strings(store, "sample_id")[29], "s29");

  VCZ_REQUIRE_PYTHON_ZARR();
  const std::string script =
      "import sys, zarr, numpy as np\n"
      "z = zarr.open(sys.argv[1], 'r')\n"
      "g = z['call_genotype'][:]\n"
      "assert g.dtype == np.int8 and g.shape == (500, 30, 2), g.shape\n"
      "assert (z['call_genotype_mask'][:] == (g < 0)).all()\n"
      "assert z['call_genotype_phased'][:].all()\n"
      "assert list(z['contig_id'][:]) == ['1']\n"
      "q = z['variant_quality'][:].view(np.uint32)\n"
      "assert (q == 0x7F800001).all()\n"
      "assert z['variant_id_mask'][:].all() and (z['variant_id'][:] == '.').all()\n"
      "print(int(g.sum()), int(z['variant_position'][:].sum()))\n";
  const auto py = write_text(dir, "read.py", script);
  std::int64_t pos_sum = 0;
  for (auto p : pos) pos_sum += p;
  EXPECT_EQ(run_ok(python() + " " + py + " " + shell_quote(store)),
            fmt::format("{} {}\n", alt, pos_sum));
}

TEST(Simulate, DeterministicForAnyThreadsAndChunks) {
  TempDir dir;
  const std::string model = "--samples 40 --variants 700 --pops 2 --fst 0.1 --missing 0.02 ";
  const auto a = simulate(dir, "a.vcz", model + "--seed 7 -t 1");
  const auto b = simulate(dir, "b.vcz", model + "--seed 7 -t 3");
  const auto c = simulate(dir, "c.vcz",
                          model + "--seed 7 -t 2 --variants-chunk-size 33 --samples-chunk-size 7");
  const auto d = simulate(dir, "d.vcz.zip", model + "--seed 7 -t 2 --zarr-format 3");
  expect_same_arrays(a, b);
  expect_same_arrays(a, c, false);
  expect_same_arrays(a, d);
  const auto e = simulate(dir, "e.vcz", model + "--seed 8 -t 1");
  EXPECT_NE(ints(a, "call_genotype"), ints(e, "call_genotype"));
  // The output exists: without --force it is left alone.
  const auto r = run(binary() + " simulate " + shell_quote(a) + " --samples 5 --variants 5");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(ints(a, "call_genotype"), ints(b, "call_genotype"));
}

TEST(Simulate, MissingRateAndPhasing) {
  TempDir dir;
  const auto store = simulate(dir, "m.vcz", "--samples 200 --variants 2000 --missing 0.05 -t 2");
  const auto g = ints(store, "call_genotype");
  const auto mask = ints(store, "call_genotype_mask");
  const auto phased = ints(store, "call_genotype_phased");
  std::int64_t missing_calls = 0;
  for (std::size_t call = 0; call < phased.size(); ++call) {
    const bool a = g[2 * call] < 0, b = g[2 * call + 1] < 0;
    ASSERT_EQ(a, b) << "a missing call has every allele missing";
    ASSERT_EQ(mask[2 * call], a);
    ASSERT_EQ(phased[call], !a);
    missing_calls += a;
  }
  // 400,000 calls: the standard error of the rate is 0.00034.
  EXPECT_NEAR(static_cast<double>(missing_calls) / static_cast<double>(phased.size()), 0.05, 0.002);
}

TEST(Simulate, GenotypeQualityAndDepth) {
  TempDir dir;
  const std::string model = "--samples 150 --variants 900 --gq-dp --seed 3 ";
  const auto store = simulate(dir, "q.vcz", model + "-t 2 --variants-chunk-size 100");
  const auto gq = ints(store, "call_GQ"), dp = ints(store, "call_DP");
  ASSERT_EQ(gq.size(), 150u * 900u);
  ASSERT_EQ(dp.size(), gq.size());
  // Uniform over 0-99 and 0-49: every value seen, none outside, the means where they belong.
  std::map<std::int64_t, int> gq_seen, dp_seen;
  double gq_sum = 0, dp_sum = 0;
  for (std::size_t i = 0; i < gq.size(); ++i) {
    ++gq_seen[gq[i]];
    ++dp_seen[dp[i]];
    gq_sum += static_cast<double>(gq[i]);
    dp_sum += static_cast<double>(dp[i]);
  }
  ASSERT_EQ(gq_seen.size(), 100u);
  EXPECT_EQ(gq_seen.begin()->first, 0);
  EXPECT_EQ(gq_seen.rbegin()->first, 99);
  ASSERT_EQ(dp_seen.size(), 50u);
  EXPECT_EQ(dp_seen.rbegin()->first, 49);
  // 135,000 calls: standard errors 0.08 (GQ) and 0.04 (DP).
  EXPECT_NEAR(gq_sum / static_cast<double>(gq.size()), 49.5, 0.4);
  EXPECT_NEAR(dp_sum / static_cast<double>(dp.size()), 24.5, 0.2);
  // The same values whatever the chunking, and a mask that uses them: GQ < 20 is a fifth.
  const auto other = simulate(dir, "r.vcz", model + "-t 1 --samples-chunk-size 40");
  EXPECT_EQ(ints(other, "call_GQ"), gq);
  const std::string mean_f_miss =
      run_ok(binary() + " missing " + shell_quote(store) +
             " --min-gq 20 --device cpu | awk -F'\t' "
             "'NR == 1 { for (i = 1; i <= NF; i++) if ($i == \"f_miss\") c = i; next } "
             "{ s += $c; n++ } END { printf \"%.6f\", s / n }'");
  // 135,000 calls, no missing ones: the standard error of the masked fraction is 0.0011.
  EXPECT_NEAR(std::stod(mean_f_miss), 0.2, 0.006) << mean_f_miss;
}

TEST(Simulate, PopulationsAndFst) {
  TempDir dir;
  const auto pops = (dir / "pops.tsv").string();
  const auto store = simulate(
      dir, "p.vcz",
      "--samples 90 --variants 6000 --pops 3 --fst 0.1 --pops-file " + shell_quote(pops) + " -t 2");
  std::ifstream in(pops);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "sample\tpopulation");
  std::map<std::string, int> sizes;
  const auto ids = strings(store, "sample_id");
  for (std::size_t i = 0; std::getline(in, line); ++i) {
    const auto tab = line.find('\t');
    ASSERT_LT(i, ids.size());
    EXPECT_EQ(line.substr(0, tab), ids[i]);
    EXPECT_TRUE(ids[i].starts_with(line.substr(tab + 1) + "_s")) << ids[i];
    ++sizes[line.substr(tab + 1)];
  }
  EXPECT_EQ(sizes, (std::map<std::string, int>{{"pop0", 30}, {"pop1", 30}, {"pop2", 30}}));
  // Balding-Nichols F = 0.1: Hudson's F_ST between two populations is about F (loose bounds:
  // the spectrum weights sites, and the sites share carriers).
  const auto div = cli("divergence " + shell_quote(store) + " -P " + shell_quote(pops));
  const double fst = std::stod(column(div, "hudson_fst"));
  EXPECT_GT(fst, 0.06) << div;
  EXPECT_LT(fst, 0.15) << div;
  const auto flat = simulate(dir, "flat.vcz", "--samples 90 --variants 3000 --pops 3 --fst 0 -t 2");
  const double fst0 = std::stod(
      column(cli("divergence " + shell_quote(flat) + " -P " + shell_quote(pops)), "hudson_fst"));
  EXPECT_LT(std::abs(fst0), 0.02);
}

// The neutral spectrum: the simulated store against scrm (the standard coalescent, 40
// haplotypes, 300 replicates of theta 30 with recombination) and against 1/i.
// Tolerance: 0.02 on each band's proportion, 0.005 for singletons against 1/(i a_n).
TEST(Simulate, SpectrumMatchesScrmAndTajimaDIsZero) {
  VCZ_REQUIRE_PROGRAM("scrm");
  TempDir dir;
  const auto ms = (dir / "scrm.ms").string();
  run_ok("scrm 40 300 -t 30 -r 30 100000 -seed 11 22 33 > " + shell_quote(ms));
  const auto coalescent = (dir / "scrm.vcz").string();
  cli("convert --from ms " + shell_quote(ms) + " " + shell_quote(coalescent));
  const auto ours = simulate(dir, "sim.vcz", "--samples 20 --variants 60000 --seed 5 -t 2");

  std::int64_t n_scrm = 0, n_ours = 0;
  const auto a = sfs(coalescent, &n_scrm), b = sfs(ours, &n_ours);
  EXPECT_EQ(n_ours, 60000);
  EXPECT_GT(n_scrm, 20000);
  double a_n = 0;
  for (int i = 1; i < 40; ++i) a_n += 1.0 / i;
  EXPECT_NEAR(band(b, 1, 1), 1 / a_n, 0.005);
  const std::vector<std::pair<int, int>> bands = {{1, 1},   {2, 2},   {3, 4},  {5, 9},
                                                  {10, 19}, {20, 29}, {30, 39}};
  for (const auto& [lo, hi] : bands) {
    double expected = 0;
    for (int i = lo; i <= hi; ++i) expected += 1.0 / i / a_n;
    EXPECT_NEAR(band(b, lo, hi), band(a, lo, hi), 0.02) << "derived counts " << lo << "-" << hi;
    EXPECT_NEAR(band(b, lo, hi), expected, 0.02) << "derived counts " << lo << "-" << hi;
  }
  // Tajima's D over the whole contig: 0 in expectation (scrm's replicates average near 0 too).
  const double d = std::stod(column(cli("diversity " + shell_quote(ours)), "tajima_d"));
  EXPECT_LT(std::abs(d), 0.15);
}

TEST(Simulate, RejectsBadOptions) {
  TempDir dir;
  const auto out = (dir / "x.vcz").string();
  for (const std::string args :
       {"--samples 10", "--samples 10 --variants 100 --length 50",
        "--samples 10 --variants 10 --pops 11", "--samples 10 --variants 10 --missing 2"}) {
    const auto r = run(binary() + " simulate " + shell_quote(out) + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
}

// ---- convert --from ms ------------------------------------------------------------------------

namespace {

/// ms output parsed here: per replicate, positions and haplotype lines.
struct MsReplicate {
  std::vector<double> positions;
  std::vector<std::string> haplotypes;
};

std::vector<MsReplicate> parse_ms(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<MsReplicate> reps;
  while (std::getline(in, line)) {
    if (line == "//") {
      reps.emplace_back();
    } else if (line.starts_with("positions:")) {
      std::istringstream f(line.substr(10));
      double x;
      while (f >> x) reps.back().positions.push_back(x);
    } else if (!reps.empty() && !line.empty() && (line[0] == '0' || line[0] == '1')) {
      reps.back().haplotypes.push_back(line);
    }
  }
  return reps;
}

}  // namespace

TEST(ConvertMs, GenotypesEqualScrmHaplotypes) {
  VCZ_REQUIRE_PROGRAM("scrm");
  TempDir dir;
  const auto ms = (dir / "x.ms").string();
  run_ok("scrm 12 3 -t 8 -r 4 5000 -seed 1 2 3 > " + shell_quote(ms));
  const auto reps = parse_ms(ms);
  ASSERT_EQ(reps.size(), 3u);
  for (const auto& [fmt_args, ploidy] :
       std::vector<std::pair<std::string, int>>{{"", 2}, {"--ploidy 3 --zarr-format 3", 3}}) {
    SCOPED_TRACE(fmt_args);
    const auto store = (dir / fmt::format("x{}.vcz.zip", ploidy)).string();
    cli("convert --from ms " + shell_quote(ms) + " " + shell_quote(store) + " " + fmt_args +
        " --variants-chunk-size 7 --samples-chunk-size 3 -t 2");
    const auto g = ints(store, "call_genotype");
    const auto pos = ints(store, "variant_position");
    const auto contig = ints(store, "variant_contig");
    EXPECT_EQ(strings(store, "contig_id"), (std::vector<std::string>{"1", "2", "3"}));
    EXPECT_EQ(ints(store, "contig_length"), (std::vector<std::int64_t>{5000, 5000, 5000}));
    EXPECT_EQ(strings(store, "sample_id").size(), 12u / ploidy);
    std::size_t v = 0;
    for (std::size_t r = 0; r < reps.size(); ++r)
      for (std::size_t j = 0; j < reps[r].positions.size(); ++j, ++v) {
        ASSERT_LT(v, pos.size());
        EXPECT_EQ(contig[v], static_cast<std::int64_t>(r));
        if (j > 0) {
          EXPECT_LT(pos[v - 1], pos[v]);
        }
        EXPECT_GE(pos[v], 1);
        EXPECT_LE(pos[v], 5000);
        // Collisions move a position by a few bp at most here.
        EXPECT_NEAR(static_cast<double>(pos[v]), std::floor(reps[r].positions[j] * 5000) + 1, 3);
        for (std::size_t h = 0; h < 12; ++h)
          ASSERT_EQ(g[v * 12 + h], reps[r].haplotypes[h][j] - '0')
              << "replicate " << r << " site " << j << " haplotype " << h;
      }
    EXPECT_EQ(v, pos.size());
  }
  const auto first = (dir / "first.vcz").string();
  cli("convert --from ms --first-replicate " + shell_quote(ms) + " " + shell_quote(first));
  EXPECT_EQ(strings(first, "contig_id"), (std::vector<std::string>{"1"}));
  EXPECT_EQ(ints(first, "variant_position").size(), reps[0].positions.size());
}

TEST(ConvertMs, CollidingPositionsAndErrors) {
  TempDir dir;
  const auto ms = write_text(dir, "c.ms",
                             "ms 4 1 -t 5\n1 2 3\n\n//\nsegsites: 5\n"
                             "positions: 0.1 0.1 0.1 0.9999 1.0\n"
                             "10000\n01000\n00101\n00011\n");
  const auto store = (dir / "c.vcz").string();
  cli("convert --from ms --length 10 " + shell_quote(ms) + " " + shell_quote(store));
  EXPECT_EQ(ints(store, "variant_position"), (std::vector<std::int64_t>{2, 3, 4, 9, 10}));
  EXPECT_EQ(strings(store, "variant_allele"),
            (std::vector<std::string>{"A", "T", "A", "T", "A", "T", "A", "T", "A", "T"}));
  EXPECT_EQ(
      ints(store, "call_genotype"),
      (std::vector<std::int64_t>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 1}));
  // Too many sites for the length; a short haplotype line.
  auto r = run(binary() + " convert --from ms --length 4 " + shell_quote(ms) + " " +
               shell_quote((dir / "d.vcz").string()));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("more than --length 4"), std::string::npos) << r.err;
  const auto bad = write_text(dir, "bad.ms",
                              "ms 2 1 -t 5\n1 2 3\n\n//\nsegsites: 2\npositions: 0.1 0.2\n10\n1\n");
  r = run(binary() + " convert --from ms " + shell_quote(bad) + " " +
          shell_quote((dir / "e.vcz").string()));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("bad.ms: line 8: a haplotype of 1 characters"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "e.vcz"));
}
