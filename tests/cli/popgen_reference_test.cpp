// diversity and divergence against independent references run in the test:
//  - tests/tools/ref_popgen.py (brute force over pairs of haplotypes; POPGEN.md) on random VCFs
//    with missing calls, multi-allelic sites and mixed ploidy, and on 1000 Genomes data, for
//    every window kind, regions and populations split across sample chunks;
//  - vcftools on 1000 Genomes data (no missing calls): --window-pi equals our pi_per_bp and
//    --weir-fst-pop's weighted and mean Fst equal our wc_fst and wc_fst_mean.
// Tolerance: 1e-9 relative plus 1e-12 absolute against the reference (double sums in the same
// order; differences such as da cancel to ~1e-16 instead of 0), vcftools'
// printed digits against vcftools.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "test_util.hpp"

using namespace vcztest;

namespace {

using Table = std::vector<std::vector<std::string>>;

Table rows(const std::string& text) {
  Table t;
  std::istringstream in(text);
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {  // the header line
      header = false;
      continue;
    }
    std::vector<std::string> cells;
    std::istringstream ls(line);
    std::string c;
    while (std::getline(ls, c, '\t')) cells.push_back(c);
    t.push_back(cells);
  }
  return t;
}

bool is_nan(const std::string& s) {
  return s == "NA" || s == "nan" || s == "-nan";
}

// Cells equal as text or numerically within @p rel (NA == nan); "all" == "ALL" (the reference
// names the single population ALL).
void expect_tables(const Table& ours, const Table& ref, double rel, const std::string& what,
                   std::size_t skip_from = 1000) {
  ASSERT_EQ(ours.size(), ref.size()) << what;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    ASSERT_EQ(ours[i].size(), ref[i].size()) << what << " row " << i;
    for (std::size_t j = 0; j < ours[i].size() && j < skip_from; ++j) {
      const std::string& a = ours[i][j];
      const std::string& b = ref[i][j];
      if (a == b || (a == "all" && b == "ALL") || (is_nan(a) && is_nan(b))) continue;
      char* end = nullptr;
      const double x = std::strtod(a.c_str(), &end);
      const double y = std::strtod(b.c_str(), nullptr);
      ASSERT_TRUE(*end == '\0' && !is_nan(a) && !is_nan(b))
          << what << " row " << i << " col " << j << ": " << a << " vs " << b;
      EXPECT_NEAR(x, y, rel * std::fabs(y) + 1e-12)  // absolute floor: cancellation near 0
          << what << " row " << i << " col " << j;
    }
  }
}

struct Data {
  std::string vcf, store, pops;
};

void compare_with_reference(const Data& d, const std::vector<std::string>& options, bool with_wc) {
  const std::string bin = binary() + " ";
  const std::string ref = python() + " " + tool("ref_popgen.py") + " ";
  for (const auto& opt : options) {
    const std::string what = d.store + " " + opt;
    expect_tables(rows(run_ok(bin + "diversity " + shell_quote(d.store) + " " + opt)),
                  rows(run_ok(ref + "diversity " + shell_quote(d.vcf) + " " + opt)), 1e-9,
                  "diversity " + what);
    if (d.pops.empty()) continue;
    const std::string p = " -P " + shell_quote(d.pops) + " ";
    expect_tables(rows(run_ok(bin + "diversity " + shell_quote(d.store) + p + opt + " -t 2")),
                  rows(run_ok(ref + "diversity " + shell_quote(d.vcf) + p + opt)), 1e-9,
                  "diversity -P " + what);
    // Columns from n_wc (16) on are Weir & Cockerham's (from complete diploid calls, every
    // allele).
    expect_tables(rows(run_ok(bin + "divergence " + shell_quote(d.store) + p + opt)),
                  rows(run_ok(ref + "divergence " + shell_quote(d.vcf) + p + opt)), 1e-9,
                  "divergence -P " + what, with_wc ? 1000 : 16);
  }
}

void write_pops(const std::string& vcf, const std::string& path, int npops) {
  std::istringstream names(run_ok("bcftools query -l " + shell_quote(vcf)));
  std::ofstream p(path);
  p << "sample population\n";
  std::string s;
  for (int i = 0; std::getline(names, s); ++i)
    if (i % 5 != 4) p << s << " pop" << (i * 7 % npops) << "\n";  // every 5th sample left out
}

// `stats` (one pass, long format) against the reference's diversity, divergence and PBS
// tables; --windows-file windows against the reference run on each window as a region.
void check_stats_and_file_windows(const Data& d, const std::vector<std::string>& positions) {
  const std::string bin = binary() + " ";
  const std::string ref = python() + " " + tool("ref_popgen.py") + " ";
  const std::string p = " -P " + shell_quote(d.pops) + " ";
  const std::string w = " --window-size 250 --window-step 70 ";
  const Table ours =
      rows(run_ok(bin + "stats " + shell_quote(d.store) + p + w +
                  "--stats pi,tajima_d,dxy,fst_hudson,fst_wc,pbs --pbs pop1,pop0,pop2"));
  // Expected long rows from the reference's tables, in our order (window, statistic, pops).
  const Table div = rows(run_ok(ref + "diversity " + shell_quote(d.vcf) + p + w));
  const std::string text =
      run_ok(ref + "divergence " + shell_quote(d.vcf) + p + w + "--pbs pop1,pop0,pop2");
  const std::size_t second = text.find("chrom\tstart\tend\tpbs_pop");
  ASSERT_NE(second, std::string::npos);
  const Table pair = rows(text.substr(0, second));
  const Table pbs = rows(text.substr(second));
  Table expect;
  const std::size_t npops = 3, npairs = 3;
  for (std::size_t win = 0; win < pbs.size(); ++win) {
    auto row = [&](const std::vector<std::string>& base, const std::string& stat,
                   const std::string& pops, const std::string& value) {
      expect.push_back({base[0], base[1], base[2], stat, pops, value});
    };
    for (std::size_t k = 0; k < npops; ++k)
      row(div[win * npops + k], "pi", div[win * npops + k][3], div[win * npops + k][7]);
    for (std::size_t k = 0; k < npops; ++k)
      row(div[win * npops + k], "tajima_d", div[win * npops + k][3], div[win * npops + k][11]);
    for (const auto& [stat, col] : std::vector<std::pair<std::string, std::size_t>>{
             {"dxy", 7}, {"fst_hudson", 15}, {"fst_wc", 19}})
      for (std::size_t k = 0; k < npairs; ++k) {
        const auto& r = pair[win * npairs + k];
        row(r, stat, r[3] + "," + r[4], r[col]);
      }
    row(pbs[win], "pbs", pbs[win][3] + ";" + pbs[win][4] + "," + pbs[win][5], pbs[win][9]);
  }
  expect_tables(ours, expect, 1e-9, "stats");

  // Windows from a file (overlapping, unsorted, one on a contig the store lacks).
  const std::string bed = d.store + ".windows.bed";
  {
    std::ofstream f(bed);
    const long a = std::stol(positions[5]), b = std::stol(positions[40]);
    f << "chr1\t" << b - 10 << "\t" << b + 300 << "\n"
      << "chr1\t" << a - 1 << "\t" << b << "\n"
      << "chrZ\t0\t100\n"
      << "chr1\t" << a + 3 << "\t" << a + 4 << "\n";
  }
  const Table got = rows(run_ok(bin + "diversity " + shell_quote(d.store) + p +
                                " -r chr1 --windows-file " + shell_quote(bed)));
  ASSERT_EQ(got.size(), 3u * npops);
  for (std::size_t i = 0; i < got.size(); i += npops) {
    const std::string region = "chr1:" + got[i][1] + "-" + got[i][2];
    const Table window(got.begin() + static_cast<long>(i),
                       got.begin() + static_cast<long>(i + npops));
    const Table expected = rows(run_ok(ref + "diversity " + shell_quote(d.vcf) + p + " -r " +
                                       region + " --regions-overlap pos"));
    if (expected.empty()) {  // the reference lists no region without records; we list it empty
      for (const auto& r : window) {
        EXPECT_EQ(r[4], "0") << region;   // n_sites: a count
        EXPECT_EQ(r[6], "NA") << region;  // pi_sum: no value without sites
      }
      continue;
    }
    expect_tables(window, expected, 1e-9, "--windows-file " + region);
  }
}

}  // namespace

TEST(CliPopgen, DiversityAndDivergenceMatchBruteForceOnRandomData) {
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  struct Case {
    std::string name, args;
    bool with_wc;
  };
  for (const Case& c : std::vector<Case>{
           {"missing_multi",
            "--seed 21 --samples 33 --variants 600 --contigs 2 --missing 0.07 "
            "--multiallelic 0.25 --indels 0.1",
            true},
           {"mixed_ploidy",
            "--seed 22 --samples 19 --variants 300 --mixed-ploidy 0.3 --missing 0.05", false},
       }) {
    Data d;
    d.vcf = (dir / (c.name + ".vcf.gz")).string();
    run_ok(python() + " " + tool("random_vcf.py") + " " + c.args + " -o " + shell_quote(d.vcf));
    d.store = (dir / (c.name + ".vcz")).string();
    run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(d.vcf) + " " +
           shell_quote(d.store) + " --variants-chunk-size 41 --samples-chunk-size 8");
    d.pops = (dir / (c.name + ".pops")).string();
    write_pops(d.vcf, d.pops, 3);
    // The contig span and the first records, to build regions.
    std::istringstream recs(run_ok("bcftools query -f '%CHROM\\t%POS\\n' " + shell_quote(d.vcf)));
    std::string contig, pos;
    std::vector<std::string> positions;
    while (recs >> contig >> pos)
      if (contig == "chr1") positions.push_back(pos);
    const std::string r1 = "chr1:" + positions[10] + "-" + positions[positions.size() / 2];
    if (c.with_wc) {  // sfs and f-statistics (the SFS's ploidy rule differs with mixed ploidy)
      const std::string bin = binary() + " ";
      const std::string ref = python() + " " + tool("ref_popgen.py") + " ";
      const std::string p = " -P " + shell_quote(d.pops) + " ";
      for (const std::string& opt : std::vector<std::string>{
               "sfs", "sfs --folded", "sfs --joint pop0,pop2", "sfs -r " + r1,
               "fstats --f2 pop0,pop1 --blocks 25", "fstats --f3 pop2,pop0,pop1 --blocks 40",
               "fstats --d pop0,pop1,pop2,pop0 --blocks 30 -r chr2"}) {
        const auto space = opt.find(' ');
        const std::string cmd = opt.substr(0, space);
        const std::string rest = space == std::string::npos ? "" : opt.substr(space + 1);
        expect_tables(rows(run_ok(bin + cmd + " " + shell_quote(d.store) + p + rest)),
                      rows(run_ok(ref + cmd + " " + shell_quote(d.vcf) + p + rest)), 1e-9, opt);
      }
    }
    if (c.with_wc) {  // joint folded SFS: the reference's joint table folded here
      const Table joint =
          rows(run_ok(python() + " " + tool("ref_popgen.py") + " sfs " + shell_quote(d.vcf) +
                      " -P " + shell_quote(d.pops) + " --joint pop0,pop2"));
      ASSERT_FALSE(joint.empty());
      const long n1 = std::stol(joint[0][2]), n2 = std::stol(joint[0][3]);
      std::map<std::pair<long, long>, long> folded;
      for (const auto& r : joint) {
        const long i = std::stol(r[4]), j = std::stol(r[5]);
        folded[{std::min(i, n1 - i), std::min(j, n2 - j)}] += std::stol(r[6]);
      }
      const Table ours = rows(run_ok(binary() + " sfs " + shell_quote(d.store) + " -P " +
                                     shell_quote(d.pops) + " --joint pop0,pop2 --folded"));
      ASSERT_EQ(ours.size(), folded.size());
      for (const auto& r : ours)
        EXPECT_EQ(std::stol(r[6]), (folded[{std::stol(r[4]), std::stol(r[5])}]))
            << r[4] << "," << r[5];
    }
    if (c.with_wc) check_stats_and_file_windows(d, positions);
    compare_with_reference(
        d,
        {"", "--window-size 100", "--window-size 250 --window-step 70", "--window-variants 17",
         "-r " + r1 + " --window-size 60",
         "-r chr2,chr1:1-" + positions[20] + " --window-size 90 --window-step 45",
         "-r " + r1 + " --regions-overlap pos", "-r chr2,chr1:" + positions[30] + "-",
         "-r chr2,chr1:" + positions[10] + "- --window-size 80", "--window-span contig",
         "--window-span contig --window-size 100",
         "--window-span contig --window-size 250 --window-step 70",
         "--window-span contig -r chr2,chr1:1-" + positions[20] +
             " --window-size 90 --window-step 45"},
        true);
  }
}

TEST(CliPopgen, MatchBruteForceAndVcftoolsOn1000GenomesData) {
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PROGRAM("vcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  VCZ_REQUIRE_SHAPEIT4_EXAMPLE();
  TempDir dir;
  Data d;
  d.vcf = make_1kg_subset(dir, "k.vcf.gz");
  d.store = (dir / "k.vcz").string();
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(d.vcf) + " " +
         shell_quote(d.store) + " --variants-chunk-size 500 --samples-chunk-size 64");
  // Two populations: the first and the second 150 samples of the file.
  d.pops = (dir / "pops").string();
  const std::string a = (dir / "a").string(), b = (dir / "b").string();
  run_ok("bcftools query -l " + shell_quote(d.vcf) +
         " | awk '{print $1, (NR<=150 ? \"A\" : \"B\")}' > " + shell_quote(d.pops) +
         " && awk '$2==\"A\"{print $1}' " + shell_quote(d.pops) + " > " + shell_quote(a) +
         " && awk '$2==\"B\"{print $1}' " + shell_quote(d.pops) + " > " + shell_quote(b));
  compare_with_reference(d, {"--window-size 50000 --window-step 20000"}, true);

  // vcftools --window-pi: windows [sW+1, (s+1)W], only those holding variable sites printed;
  // ours with --window-span contig (windows from base 1).
  const std::string out = (dir / "vt").string();
  run_ok("cd " + shell_quote(dir.path().string()) + " && vcftools --gzvcf " + shell_quote(d.vcf) +
         " --window-pi 100000 --out vt >/dev/null 2>&1");
  std::map<std::string, std::string> ours;
  for (const auto& r : rows(run_ok(binary() + " diversity " + shell_quote(d.store) +
                                   " --window-size 100kb --window-span contig")))
    ours[r[1]] = r[7];  // start → pi_per_bp
  const Table vt = rows(run_ok("cat " + shell_quote(out + ".windowed.pi")));
  ASSERT_FALSE(vt.empty());
  for (const auto& r : vt) {
    ASSERT_TRUE(ours.contains(r[1])) << r[1];
    EXPECT_NEAR(std::stod(ours[r[1]]), std::stod(r[4]), 5e-6 * std::stod(r[4])) << r[1];
  }
  // vcftools --weir-fst-pop: weighted and mean Fst of the whole file.
  const std::string log =
      run_ok("cd " + shell_quote(dir.path().string()) + " && vcftools --gzvcf " +
             shell_quote(d.vcf) + " --weir-fst-pop a --weir-fst-pop b --out wc 2>&1");
  auto value_after = [&](const std::string& key) {
    const auto at = log.find(key);
    EXPECT_NE(at, std::string::npos) << log;
    return std::stod(log.substr(at + key.size()));
  };
  const Table div =
      rows(run_ok(binary() + " divergence " + shell_quote(d.store) + " -P " + shell_quote(d.pops)));
  ASSERT_EQ(div.size(), 1u);
  EXPECT_NEAR(std::stod(div[0][19]), value_after("weighted Fst estimate: "), 5e-8);
  EXPECT_NEAR(std::stod(div[0][20]), value_after("mean Fst estimate: "), 5e-8);

  // vcftools --site-pi: per-site pi = our pi_sum of one-site windows.
  run_ok("cd " + shell_quote(dir.path().string()) + " && vcftools --gzvcf " + shell_quote(d.vcf) +
         " --site-pi --out sp >/dev/null 2>&1");
  const Table site_pi = rows(run_ok("cat " + shell_quote((dir / "sp.sites.pi").string())));
  const Table one =
      rows(run_ok(binary() + " diversity " + shell_quote(d.store) + " --window-variants 1"));
  ASSERT_EQ(site_pi.size(), one.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i][1], site_pi[i][1]);
    EXPECT_NEAR(std::stod(one[i][6]), std::stod(site_pi[i][2]), 5e-6 * std::stod(site_pi[i][2]))
        << site_pi[i][1];
  }

  // vcftools --TajimaD 100000: its bins are [sW, (s+1)W - 1] with n = 2 x samples, which equal
  // ours through a windows file when no call is missing and every site is biallelic.
  run_ok("cd " + shell_quote(dir.path().string()) + " && vcftools --gzvcf " + shell_quote(d.vcf) +
         " --TajimaD 100000 --out td >/dev/null 2>&1");
  const Table td = rows(run_ok("cat " + shell_quote((dir / "td.Tajima.D").string())));
  const std::string bins = (dir / "bins.bed").string();
  {
    std::ofstream f(bins);
    for (const auto& r : td)
      if (std::stol(r[1]) > 0)
        f << r[0] << "\t" << std::stol(r[1]) - 1 << "\t" << std::stol(r[1]) + 99999 << "\n";
  }
  std::map<std::string, std::vector<std::string>> by_start;
  for (const auto& r : rows(run_ok(binary() + " diversity " + shell_quote(d.store) +
                                   " --windows-file " + shell_quote(bins))))
    by_start[r[1]] = r;  // our 1-based start = vcftools' BIN_START
  for (const auto& r : td) {
    if (std::stol(r[1]) == 0) continue;
    ASSERT_TRUE(by_start.contains(r[1])) << r[1];
    const auto& bin = by_start[r[1]];
    EXPECT_EQ(bin[5], r[2]) << "n_seg of bin " << r[1];
    if (is_nan(r[3])) {
      EXPECT_TRUE(is_nan(bin[11])) << r[1];
    } else {
      EXPECT_NEAR(std::stod(bin[11]), std::stod(r[3]), 5e-6 * std::fabs(std::stod(r[3])) + 1e-6)
          << "Tajima's D of bin " << r[1];
    }
  }

  // plink2 --fst (Hudson; Weir & Cockerham): on biallelic data its summary is our ratio of sums.
  if (!have_program("plink2") && reference_tools_required())
    ADD_FAILURE() << "plink2 is not installed, and CI=true requires every reference tool";
  if (have_program("plink2")) {
    const std::string pheno = (dir / "pheno.tsv").string();
    {
      std::ifstream in(d.pops);
      std::ofstream ph(pheno);
      ph << "#IID\tPOP\n";
      for (std::string sample, pop; in >> sample >> pop;) ph << sample << "\t" << pop << "\n";
    }
    for (const auto& [method, column] :
         std::vector<std::pair<std::string, std::size_t>>{{"hudson", 15}, {"wc", 19}}) {
      run_ok("cd " + shell_quote(dir.path().string()) + " && plink2 --vcf " + shell_quote(d.vcf) +
             " --pheno " + shell_quote(pheno) + " --fst POP method=" + method + " --out f" +
             method + " >/dev/null 2>&1");
      // One line after plink2's '#POP1 POP2 ...' header: the value is its last column.
      const std::string line =
          run_ok("tail -n 1 " + shell_quote((dir / ("f" + method + ".fst.summary")).string()));
      const double theirs = std::stod(line.substr(line.find_last_of('\t') + 1));
      EXPECT_NEAR(std::stod(div[0][column]), theirs, 5e-6 * std::fabs(theirs))
          << "plink2 --fst method=" << method;
    }
  }
}

// Polarisation by INFO/AA (variant_AA, written by vczstats convert) against the reference's
// --ancestral aa, and by an ancestral FASTA holding the same bases (same result).
TEST(CliPopgen, AncestralAlleleFromVariantAaAndFasta) {
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  if (run(binary() + " convert --help").exit_code != 0)
    GTEST_SKIP() << "skipped: this build has no convert command (htslib)";
  TempDir dir;
  const std::string plain = (dir / "plain.vcf.gz").string();
  run_ok(python() + " " + tool("random_vcf.py") +
         " --seed 31 --samples 25 --variants 400 --contigs 2 --missing 0.05 --multiallelic 0.2 "
         "--indels 0 "
         "-o " +
         shell_quote(plain));
  // INFO/AA: REF, an ALT in lower case, N (unknown) or G|||, at random; a FASTA with the same
  // base at each position (N where unknown). No indels: a FASTA base matches single-base alleles
  // only.
  const std::string vcf = (dir / "aa.vcf").string(), fasta = (dir / "anc.fa").string();
  const std::string script = R"PY(
import gzip, random, sys
random.seed(4)
lines = gzip.open(sys.argv[1], "rt").read().splitlines()
seq = {}
with open(sys.argv[2], "w") as out:
    for line in lines:
        if line.startswith("##"):
            out.write(line + "\n"); continue
        if line.startswith("#CHROM"):
            out.write('##INFO=<ID=AA,Number=1,Type=String,Description="Ancestral allele">\n')
            out.write(line + "\n"); continue
        f = line.split("\t")
        alts = [] if f[4] == "." else f[4].split(",")
        r = random.random()
        aa = f[3] if r < 0.5 else (alts[0].lower() if r < 0.8 and alts else ("N" if r < 0.9 else "G|||"))
        f[7] = "AA=" + aa if f[7] == "." else f[7] + ";AA=" + aa
        out.write("\t".join(f) + "\n")
        s = seq.setdefault(f[0], {})
        s[int(f[1])] = aa.split("|")[0].upper()[:1]
with open(sys.argv[3], "w") as fa:
    for contig, bases in seq.items():
        n = max(bases) + 10
        fa.write(">" + contig + " ancestral\n")
        text = "".join(bases.get(i + 1, "N") for i in range(n))
        for i in range(0, n, 60):
            fa.write(text[i:i + 60] + "\n")
)PY";
  const std::string py = (dir / "aa.py").string();
  {
    std::ofstream f(py);
    f << script;
  }
  run_ok(python() + " " + shell_quote(py) + " " + shell_quote(plain) + " " + shell_quote(vcf) +
         " " + shell_quote(fasta));
  const std::string store = (dir / "aa.vcz").string();
  run_ok(binary() + " convert " + shell_quote(vcf) + " " + shell_quote(store) +
         " --variants-chunk-size 64 --no-progress");
  const std::string pops = (dir / "pops").string();
  write_pops(vcf, pops, 2);
  const std::string bin = binary() + " ";
  const std::string ref = python() + " " + tool("ref_popgen.py") + " ";
  for (const std::string& opt :
       {std::string(" --window-size 300"), std::string(" -P ") + shell_quote(pops)}) {
    expect_tables(rows(run_ok(bin + "diversity " + shell_quote(store) + " --ancestral aa" + opt)),
                  rows(run_ok(ref + "diversity " + shell_quote(vcf) + " --ancestral aa" + opt)),
                  1e-9, "diversity --ancestral aa" + opt);
    expect_tables(rows(run_ok(bin + "sfs " + shell_quote(store) + " --ancestral aa" +
                              opt.substr(0, opt.find("--window")))),
                  rows(run_ok(ref + "sfs " + shell_quote(vcf) + " --ancestral aa" +
                              opt.substr(0, opt.find("--window")))),
                  1e-9, "sfs --ancestral aa" + opt);
    EXPECT_EQ(rows(run_ok(bin + "diversity " + shell_quote(store) + " --ancestral aa" + opt)),
              rows(run_ok(bin + "diversity " + shell_quote(store) + " --ancestral " +
                          shell_quote(fasta) + opt)))
        << "FASTA" << opt;
  }
  // REF polarisation is the default and says so, in the run's notes (--log), not in the table.
  const std::string log = (dir / "run.log").string();
  const std::string table = run_ok(bin + "diversity " + shell_quote(store) + " --log " + log);
  EXPECT_EQ(table.rfind("chrom\tstart\tend\tpopulation\t", 0), 0u) << table;
  EXPECT_NE(run_ok("cat " + shell_quote(log)).find("ancestral allele: REF"), std::string::npos);
}

// --accessible: sites outside the mask are left out, per-bp values divide by accessible bases.
TEST(CliPopgen, AccessibleMaskSelectsSitesAndScalesPerBp) {
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const std::string vcf = (dir / "m.vcf.gz").string(), store = (dir / "m.vcz").string();
  run_ok(python() + " " + tool("random_vcf.py") +
         " --seed 41 --samples 15 --variants 300 --contigs 1 --missing 0.05 -o " +
         shell_quote(vcf));
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(vcf) + " " + shell_quote(store) +
         " --variants-chunk-size 50");
  const std::string bed = (dir / "acc.bed").string();
  {
    std::ofstream f(bed);
    f << "chr1\t99\t400\nchr1\t350\t700\nchr1\t1000\t1100\n";  // 1-based 100-700, 1001-1100
  }
  const auto with = rows(run_ok(binary() + " diversity " + shell_quote(store) +
                                " --window-size 500 --accessible " + shell_quote(bed)));
  // The same sites through regions: one window per mask interval in the reference.
  std::istringstream pos(run_ok("bcftools query -f '%POS\\n' " + shell_quote(vcf)));
  std::vector<long> sites;
  for (long p; pos >> p;) sites.push_back(p);
  for (const auto& r : with) {
    const long start = std::stol(r[1]), end = std::stol(r[2]);
    long n = 0, accessible = 0;
    for (long p : sites)
      n += p >= start && p <= end && ((p >= 100 && p <= 700) || (p >= 1001 && p <= 1100));
    for (long b = start; b <= end; ++b)
      accessible += (b >= 100 && b <= 700) || (b >= 1001 && b <= 1100);
    EXPECT_EQ(std::stol(r[4]), n) << r[1];
    if (accessible > 0) {
      EXPECT_NEAR(std::stod(r[7]), std::stod(r[6]) / static_cast<double>(accessible), 1e-15)
          << r[1];
    } else {
      EXPECT_EQ(r[7], "NA") << r[1];
    }
  }
  // A mask covering everything changes nothing.
  {
    std::ofstream f(bed);
    f << "chr1\t0\t100000000\n";
  }
  const std::string plain_args = " --window-size 500 " + shell_quote(store);
  auto a = rows(run_ok(binary() + " diversity" + plain_args + " --accessible " + shell_quote(bed)));
  auto b = rows(run_ok(binary() + " diversity" + plain_args));
  EXPECT_EQ(a, b);
}

// A contig without a length in the header (contig_length 0 in the store, beside one that has a
// length): windows run to the
// last site, as in the reference.
TEST(CliPopgen, ContigWithoutLengthEndsAtTheLastSite) {
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const std::string with = (dir / "w.vcf.gz").string(), vcf = (dir / "n.vcf").string();
  run_ok(python() + " " + tool("random_vcf.py") +
         " --seed 51 --samples 9 --variants 120 --contigs 2 --missing 0.05 -o " +
         shell_quote(with));
  run_ok("zcat " + shell_quote(with) + " | sed '/ID=chr1,/s/,length=[0-9]*//' > " +
         shell_quote(vcf));
  const std::string store = (dir / "n.vcz").string();
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(vcf) + " " + shell_quote(store));
  for (const std::string opt : {"", " --window-size 200", " --window-span contig",
                                " --window-span contig --window-size 200"})
    expect_tables(rows(run_ok(binary() + " diversity " + shell_quote(store) + opt)),
                  rows(run_ok(python() + " " + tool("ref_popgen.py") + " diversity " +
                              shell_quote(vcf) + opt)),
                  1e-9, "no contig length" + opt);
}

// Windows span the data by default, as scikit-allel's position_windows (its documented
// defaults: start = the first position, stop = the last, windows [start + k * step, start +
// k * step + size - 1], the first window with start + size >= stop is the last and ends at
// stop; a window without sites has no value). The bounds below are written from that rule by
// hand; pi from its definition (differing pairs of the 4 haplotypes / 6): a site 0|0 0|1 has
// pi 1/2, a site 0|1 0|1 pi 2/3.
TEST(CliPopgen, WindowsSpanTheDataAsScikitAllel) {
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const std::string vcf = (dir / "w.vcf").string(), store = (dir / "w.vcz").string();
  {
    std::ofstream f(vcf);
    f << "##fileformat=VCFv4.2\n##contig=<ID=chr1,length=10000>\n##contig=<ID=chr2,length=8000>\n"
      << "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n"
      << "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\ts1\ts2\n";
    auto rec = [&](const char* chrom, int pos, const char* gt) {
      f << chrom << "\t" << pos << "\t.\tA\tC\t.\tPASS\t.\tGT\t" << gt << "\n";
    };
    rec("chr1", 1001, "0|0\t0|1");  // 1/2
    rec("chr1", 1400, "0|1\t0|1");  // 2/3
    rec("chr1", 2500, "0|0\t0|1");  // 1/2
    rec("chr1", 3001, "0|1\t0|1");  // 2/3: at the stop, in the last window (no [3001, 3001])
    rec("chr2", 101, "0|1\t0|1");   // 2/3
    rec("chr2", 150, "0|0\t0|1");   // 1/2
    rec("chr2", 2600, "0|0\t0|1");  // 1/2
    rec("chr2", 3101, "0|0\t0|1");  // 1/2
  }
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(vcf) + " " + shell_quote(store) +
         " --variants-chunk-size 3");
  const double a = 0.5, b = 2.0 / 3.0;
  struct Want {
    std::string chrom;
    long start, end, n_sites;
    double pi_sum;  // NaN: the window has no site
  };
  const double none = std::nan("");
  auto check = [&](const std::string& args, const std::vector<Want>& want) {
    for (const std::string threads : {" -t 1", " -t 3 --max-unit-variants 1"}) {
      const Table got =
          rows(run_ok(binary() + " diversity " + shell_quote(store) + " " + args + threads));
      ASSERT_EQ(got.size(), want.size()) << args;
      for (std::size_t i = 0; i < want.size(); ++i) {
        const auto& r = got[i];
        const Want& w = want[i];
        const std::string what = args + " row " + std::to_string(i);
        EXPECT_EQ(r[0], w.chrom) << what;
        EXPECT_EQ(std::stol(r[1]), w.start) << what;
        EXPECT_EQ(std::stol(r[2]), w.end) << what;
        EXPECT_EQ(std::stol(r[4]), w.n_sites) << what;
        if (std::isnan(w.pi_sum)) {
          EXPECT_EQ(r[6], "NA") << what;  // pi_sum
          EXPECT_EQ(r[7], "NA") << what;  // pi_per_bp
        } else {
          EXPECT_NEAR(std::stod(r[6]), w.pi_sum, 1e-12) << what;
          EXPECT_NEAR(std::stod(r[7]), w.pi_sum / static_cast<double>(w.end - w.start + 1), 1e-15)
              << what;
        }
      }
    }
  };
  // No windows: one window per contig over its data; per bp divides by the data's span.
  check("", {{"chr1", 1001, 3001, 4, a + b + a + b}, {"chr2", 101, 3101, 4, b + a + a + a}});
  // As vcftools: base 1 to the contig length.
  check("--window-span contig",
        {{"chr1", 1, 10000, 4, a + b + a + b}, {"chr2", 1, 8000, 4, b + a + a + a}});
  // 1000 bp: chr1 2001 + 1000 >= 3001 ends the windows; chr2 has an empty window.
  const std::vector<Want> kb = {{"chr1", 1001, 2000, 2, a + b},
                                {"chr1", 2001, 3001, 2, a + b},
                                {"chr2", 101, 1100, 2, b + a},
                                {"chr2", 1101, 2100, 0, none},
                                {"chr2", 2101, 3101, 2, a + a}};
  check("--window-size 1000", kb);
  check("--window-size 1kb", kb);
  // Overlapping windows: starts 1001, 1501, 2001 (2001 + 1000 >= 3001: the last).
  check(
      "-r chr1 --window-size 1000 --window-step 500",
      {{"chr1", 1001, 2000, 2, a + b}, {"chr1", 1501, 2500, 1, a}, {"chr1", 2001, 3001, 2, a + b}});
  // A region's own bounds: the issue's regional plot, no 1-bp window at the region end.
  check("-r chr1:1001-3001 --window-size 1000",
        {{"chr1", 1001, 2000, 2, a + b}, {"chr1", 2001, 3001, 2, a + b}});
  check("-r chr2:1-4000 --window-size 1000", {{"chr2", 1, 1000, 2, b + a},
                                              {"chr2", 1001, 2000, 0, none},
                                              {"chr2", 2001, 3000, 1, a},
                                              {"chr2", 3001, 4000, 1, a}});
  // Contig-wide windows end at the contig length: chr2 [7001, 8000] is the last.
  const Table wide = rows(run_ok(binary() + " diversity " + shell_quote(store) +
                                 " --window-size 1000 --window-span contig -r chr2"));
  ASSERT_EQ(wide.size(), 8u);
  EXPECT_EQ(wide.front()[1], "1");
  EXPECT_EQ(wide.back()[1], "7001");
  EXPECT_EQ(wide.back()[2], "8000");
  EXPECT_EQ(wide.back()[7], "NA");

  // scikit-allel's windowed_diversity docstring: pos 2 ... 27, size=10, start=1, stop=31 gives
  // windows [1, 10], [11, 20], [21, 31], pi 0.11666667, 0.21666667, 0.09090909, counts 3, 4, 2.
  const std::string doc = (dir / "doc.vcf").string(), doc_store = (dir / "doc.vcz").string();
  {
    std::ofstream f(doc);
    f << "##fileformat=VCFv4.2\n##contig=<ID=1,length=1000>\n"
      << "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n"
      << "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tX\tY\n";
    const std::vector<std::pair<int, std::string>> sites = {
        {2, "C\t0/0\t0/0"},    {4, "C\t0/0\t0/1"},  {7, "C\t0/0\t1/1"},
        {14, "C\t0/1\t1/1"},   {15, "C\t1/1\t1/1"}, {18, "C,G\t0/0\t1/2"},
        {19, "C,G\t0/1\t1/2"}, {25, "C\t0/1\t./."}, {27, "C\t./.\t./."}};
    for (const auto& [p, rest] : sites) {
      const auto tab = rest.find('\t');
      f << "1\t" << p << "\t.\tA\t" << rest.substr(0, tab) << "\t.\t.\t.\tGT" << rest.substr(tab)
        << "\n";
    }
  }
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(doc) + " " +
         shell_quote(doc_store) + " --variants-chunk-size 4");
  const Table allel = rows(
      run_ok(binary() + " diversity " + shell_quote(doc_store) + " -r 1:1-31 --window-size 10"));
  ASSERT_EQ(allel.size(), 3u);
  const std::vector<std::vector<std::string>> bounds = {{"1", "10"}, {"11", "20"}, {"21", "31"}};
  const double pi[] = {0.11666667, 0.21666667, 0.09090909};
  const char* counts[] = {"3", "4", "2"};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(allel[i][1], bounds[i][0]);
    EXPECT_EQ(allel[i][2], bounds[i][1]);
    EXPECT_EQ(allel[i][4], counts[i]);
    EXPECT_NEAR(std::stod(allel[i][7]), pi[i], 5e-9) << i;
  }
  // Its defaults (start and stop: the first and last position): range(2, 27, 10).
  const Table data =
      rows(run_ok(binary() + " diversity " + shell_quote(doc_store) + " --window-size 10"));
  ASSERT_EQ(data.size(), 3u);
  EXPECT_EQ(data[0][1] + "-" + data[0][2], "2-11");
  EXPECT_EQ(data[1][1] + "-" + data[1][2], "12-21");
  EXPECT_EQ(data[2][1] + "-" + data[2][2], "22-27");
}

// Window lengths take kb and Mb suffixes; bad text is a usage error that names the option.
TEST(CliPopgen, WindowLengthsTakeSuffixes) {
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const std::string small = make_random_store(dir, "s", "--seed 3 --samples 6 --variants 50", "");
  const std::string base = binary() + " diversity " + shell_quote(small) + " ";
  const std::string bp = run_ok(base + "--window-size 1500000 --window-step 500000");
  EXPECT_EQ(run_ok(base + "--window-size 1.5Mb --window-step 500kb"), bp);
  EXPECT_EQ(run_ok(base + "--window-size 1500kb --window-step 0.5m"), bp);
  for (const std::string bad : {"100kbp", "1.0005kb", "abc", "0", "-5", "1e6", "1.5.0Mb", "kb"}) {
    const auto r = run(base + "--window-size " + shell_quote(bad));
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find("--window-size"), std::string::npos) << bad << ": " << r.err;
    EXPECT_EQ(r.err.find("179769"), std::string::npos) << bad << ": " << r.err;
    EXPECT_LT(r.err.size(), 400u) << r.err;
  }
}

// --windows-file on a store without contig lengths and without -r: every window keeps the start
// and end the file gives (the last one runs past the last site; one lies wholly after it), and
// pi per bp divides by the file's length, as vcftools --window-pi does for the same bins.
TEST(CliPopgen, WindowsFileKeepsItsEndsWithoutContigLength) {
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PROGRAM("vcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const std::string with = make_1kg_subset(dir, "k.vcf.gz");
  const std::string vcf = (dir / "n.vcf").string(), store = (dir / "n.vcz").string();
  run_ok("zcat " + shell_quote(with) + " | sed '/^##contig/s/,length=[0-9]*//' > " +
         shell_quote(vcf));
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(vcf) + " " + shell_quote(store) +
         " --variants-chunk-size 700");
  run_ok("cd " + shell_quote(dir.path().string()) + " && vcftools --vcf " + shell_quote(vcf) +
         " --window-pi 10000 --out vt >/dev/null 2>&1");
  const Table vt = rows(run_ok("cat " + shell_quote((dir / "vt.windowed.pi").string())));
  ASSERT_GE(vt.size(), 2u);
  // vcftools' bins as a BED file, and one more bin wholly after the last one.
  const std::string bins = (dir / "bins.bed").string();
  const long last = std::stol(vt.back()[2]);
  {
    std::ofstream f(bins);
    for (const auto& r : vt) f << r[0] << "\t" << std::stol(r[1]) - 1 << "\t" << r[2] << "\n";
    f << vt.back()[0] << "\t" << last + 50000 << "\t" << last + 60000 << "\n";
  }
  const Table ours = rows(run_ok(binary() + " diversity " + shell_quote(store) +
                                 " --windows-file " + shell_quote(bins)));
  ASSERT_EQ(ours.size(), vt.size() + 1);
  for (std::size_t i = 0; i < vt.size(); ++i) {
    EXPECT_EQ(ours[i][1], vt[i][1]);
    EXPECT_EQ(ours[i][2], vt[i][2]) << "the file's end, not the last site's position";
    EXPECT_NEAR(std::stod(ours[i][7]), std::stod(vt[i][4]), 5e-6 * std::stod(vt[i][4]))
        << "pi_per_bp of " << vt[i][1] << "-" << vt[i][2];
  }
  EXPECT_EQ(ours.back()[1], std::to_string(last + 50001));
  EXPECT_EQ(ours.back()[2], std::to_string(last + 60000));
  EXPECT_EQ(ours.back()[4], "0");  // no site
}

// Weir & Cockerham's Fst at multi-allelic sites with missing calls: the weighted and mean
// estimates of the whole selection equal vcftools --weir-fst-pop (sums over alleles, Weir &
// Cockerham 1984), which the REF-and-one-ALT restriction of earlier versions did not.
TEST(CliPopgen, WeirCockerhamMatchesVcftoolsAtMultiallelicSites) {
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PROGRAM("vcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const std::string vcf = (dir / "m.vcf.gz").string(), store = (dir / "m.vcz").string();
  run_ok(python() + " " + tool("random_vcf.py") +
         " --seed 61 --samples 40 --variants 1500 --contigs 2 --missing 0.06 --multiallelic 0.3"
         " -o " +
         shell_quote(vcf));
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(vcf) + " " + shell_quote(store) +
         " --variants-chunk-size 97 --samples-chunk-size 16");
  const std::string pops = (dir / "pops").string(), a = (dir / "a").string(),
                    b = (dir / "b").string();
  run_ok("bcftools query -l " + shell_quote(vcf) +
         " | awk '{print $1, (NR % 3 ? \"A\" : \"B\")}' > " + shell_quote(pops) +
         " && awk '$2==\"A\"{print $1}' " + shell_quote(pops) + " > " + shell_quote(a) +
         " && awk '$2==\"B\"{print $1}' " + shell_quote(pops) + " > " + shell_quote(b));
  const std::string multi = run_ok("bcftools view -H -m3 " + shell_quote(vcf) + " | wc -l");
  ASSERT_GT(std::stol(multi), 100) << "the data should have many multi-allelic sites";
  const std::string log =
      run_ok("cd " + shell_quote(dir.path().string()) + " && vcftools --gzvcf " + shell_quote(vcf) +
             " --weir-fst-pop a --weir-fst-pop b --out wc 2>&1");
  auto value_after = [&](const std::string& key) {
    const auto at = log.find(key);
    EXPECT_NE(at, std::string::npos) << log;
    return std::stod(log.substr(at + key.size()));
  };
  const Table div =
      rows(run_ok(binary() + " divergence " + shell_quote(store) + " -P " + shell_quote(pops)));
  ASSERT_EQ(div.size(), 2u);  // one row per contig: add their sums
  double a_sum = 0, abc_sum = 0, fst_sum = 0, n_wc = 0;
  for (const auto& r : div) {
    a_sum += std::stod(r[17]);
    abc_sum += std::stod(r[18]);
    fst_sum += std::stod(r[20]) * std::stod(r[16]);
    n_wc += std::stod(r[16]);
  }
  // vcftools prints 5 significant digits.
  const double weighted = value_after("weighted Fst estimate: ");
  const double mean = value_after("mean Fst estimate: ");
  EXPECT_NEAR(a_sum / abc_sum, weighted, 6e-6 + 5e-5 * std::fabs(weighted));
  EXPECT_NEAR(fst_sum / n_wc, mean, 6e-6 + 5e-5 * std::fabs(mean));
  // vcftools counts a site when its Fst is a number; so do we.
  const std::string per_site =
      run_ok("grep -vc -e nan -e CHROM " + shell_quote((dir / "wc.weir.fst").string()));
  EXPECT_EQ(static_cast<long>(n_wc), std::stol(per_site));
}
