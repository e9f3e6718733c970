// grm, king, distance and pca against independent references run in the test:
//  - tests/tools/ref_matrix.py, brute force over pairs of samples from the definitions
//    (POPGEN.md), on random VCFs with missing calls, multi-allelic sites and mixed ploidy:
//    1e-9 relative (plus 1e-12 absolute); without missing calls also pca --approx (exact when
//    its Krylov block spans all samples) and --project (of the samples onto their own loadings);
//  - plink2 --make-rel, --make-king, --make-king-table, --pca (exact: eigenvalues, eigenvectors
//    and variant weights), plink 1.9 --distance (allele-ct, ibs, 1-ibs; default and flat-missing
//    missing-data scaling; triangle, square, square0, bin), with --maf and --extract, on random
//    data with missing calls and multi-allelic sites (plink given the same calls with the ALT
//    alleles merged, which is how our codes see them) and on 1000 Genomes data: the digits plink
//    prints (6 significant: 2e-5 relative plus 1e-8 absolute).
// Also: results do not depend on threads, work-unit size or stripes of rows.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "test_util.hpp"

using namespace vcztest;

namespace {

using Matrix = std::vector<std::vector<double>>;

double parse(const std::string& s) {
  if (s == "NA" || s == "nan" || s == "-nan") return NAN;
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  return std::stod(s);
}

/// Rows of numbers (lines starting with '#' skipped; @p skip_header: the first line too).
Matrix numbers(const std::string& text, bool skip_header = false, std::size_t first_col = 0) {
  Matrix m;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (skip_header) {
      skip_header = false;
      continue;
    }
    std::vector<double> row;
    std::istringstream ls(line);
    std::string c;
    for (std::size_t k = 0; ls >> c; ++k)
      if (k >= first_col) row.push_back(parse(c));
    m.push_back(row);
  }
  return m;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<double> doubles(const std::string& path, bool single = false) {
  const std::string b = slurp(path);
  std::vector<double> v;
  if (single) {
    for (std::size_t i = 0; i + 4 <= b.size(); i += 4) {
      float f;
      std::memcpy(&f, b.data() + i, 4);
      v.push_back(f);
    }
  } else {
    v.resize(b.size() / 8);
    std::memcpy(v.data(), b.data(), v.size() * 8);
  }
  return v;
}

bool close(double a, double b, double rel, double abs) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= rel * std::fabs(b) + abs;
}

void expect_matrix(const Matrix& ours, const Matrix& ref, double rel, double abs,
                   const std::string& what) {
  ASSERT_EQ(ours.size(), ref.size()) << what;
  for (std::size_t i = 0; i < ours.size(); ++i) {
    ASSERT_EQ(ours[i].size(), ref[i].size()) << what << " row " << i;
    for (std::size_t j = 0; j < ours[i].size(); ++j)
      ASSERT_TRUE(close(ours[i][j], ref[i][j], rel, abs))
          << what << " row " << i << " col " << j << ": " << ours[i][j] << " vs " << ref[i][j];
  }
}

/// PCA eigenvectors (samples x k) equal up to the sign of each column.
void expect_vectors(const Matrix& ours, const Matrix& ref, std::size_t k, double abs,
                    const std::string& what) {
  ASSERT_EQ(ours.size(), ref.size()) << what;
  for (std::size_t c = 0; c < k; ++c) {
    double dot = 0;
    for (std::size_t i = 0; i < ours.size(); ++i) dot += ours[i][c] * ref[i][c];
    const double sign = dot < 0 ? -1 : 1;
    for (std::size_t i = 0; i < ours.size(); ++i)
      ASSERT_NEAR(sign * ours[i][c], ref[i][c], abs) << what << " pc" << c + 1 << " sample " << i;
  }
}

constexpr double kPlinkRel = 2e-5, kPlinkAbs = 1e-8;  // plink prints 6 significant digits
constexpr double kRefRel = 1e-9, kRefAbs = 1e-12;

struct Data {
  std::string vcf;        // the calls as the store has them
  std::string plink_vcf;  // the same calls for plink (contig 1, ALT alleles merged)
  std::string store;
};

/// A random VCF, its store (several variant and sample chunks), and plink's copy.
Data matrix_data(const TempDir& dir, const std::string& name, const std::string& args) {
  Data d;
  d.vcf = (dir / (name + ".vcf")).string();
  d.store = (dir / (name + ".vcz")).string();
  run_ok(python() + " " + tool("random_vcf.py") + " " + args + " -o " + shell_quote(d.vcf));
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(d.vcf) + " " +
         shell_quote(d.store) + " --variants-chunk-size 37 --samples-chunk-size 11");
  // plink: contig "1", and every ALT allele as the first (our codes count non-REF alleles).
  d.plink_vcf = (dir / (name + ".plink.vcf")).string();
  run_ok(python() + " -c " +
         shell_quote("import sys,re\n"
                     "out=open(sys.argv[2],'w')\n"
                     "for l in open(sys.argv[1]):\n"
                     "  if l.startswith('##contig'): l=re.sub('ID=[^,>]*','ID=1',l)\n"
                     "  if not l.startswith('#'):\n"
                     "    f=l.rstrip('\\n').split('\\t'); f[0]='1'; f[4]=f[4].split(',')[0]\n"
                     "    f[9:]=[re.sub('[2-9]','1',g) for g in f[9:]]\n"
                     "    l='\\t'.join(f)+'\\n'\n"
                     "  out.write(l)\n") +
         " " + shell_quote(d.vcf) + " " + shell_quote(d.plink_vcf));
  return d;
}

std::string ours(const std::string& cmd, const Data& d, const std::string& opts) {
  return run_ok(binary() + " " + cmd + " " + shell_quote(d.store) + " " + opts);
}

std::string ref(const Data& d, const std::string& args) {
  return run_ok(python() + " " + tool("ref_matrix.py") + " " + shell_quote(d.vcf) + " " + args);
}

/// plink2's pgen of the data (half calls missing, as our codes have them) in @p dir.
std::string plink2_data(const TempDir& dir, const Data& d, const std::string& name) {
  const std::string out = (dir / name).string();
  run_ok("plink2 --vcf " + shell_quote(d.plink_vcf) +
         " --vcf-half-call m --max-alleles 2 --make-pgen --threads 2 --silent --out " +
         shell_quote(out));
  return out;
}

/// The brute-force reference for every statistic and option of a random store.
void check_brute_force(const Data& d, bool complete = false) {
  struct Case {
    std::string cmd, ours, ref;
  };
  const std::vector<Case> cases = {
      {"grm", "", "grm"},
      {"grm", "--cov", "grm --cov"},
      {"grm", "--maf 0.15", "grm --maf 0.15"},
      {"king", "", "king"},
      {"king", "--maf 0.2", "king --maf 0.2"},
      {"distance", "", "distance"},
      {"distance", "--metric ibs", "distance --metric ibs"},
      {"distance", "--metric 1-ibs --flat-missing", "distance --metric 1-ibs --flat-missing"},
      {"distance", "--flat-missing --maf 0.1", "distance --flat-missing --maf 0.1"},
  };
  for (const auto& c : cases) {
    const std::string what = d.store + " " + c.cmd + " " + c.ours;
    const Matrix want = numbers(ref(d, c.ref));
    expect_matrix(numbers(ours(c.cmd, d, "--shape square " + c.ours)), want, kRefRel, kRefAbs,
                  what);
    // Threads, work units and stripes of rows change nothing (text identical).
    const std::string one = ours(c.cmd, d, c.ours + " -t 1");
    EXPECT_EQ(one, ours(c.cmd, d, c.ours + " -t 2 --max-unit-variants 7")) << what;
    EXPECT_EQ(one, ours(c.cmd, d, c.ours + " -t 2 --rows-per-pass 4")) << what;
  }
  // The KING table.
  const Matrix want = numbers(ref(d, "king-table"), true, 2);
  expect_matrix(numbers(ours("king", d, "--table"), true, 2), want, kRefRel, kRefAbs,
                d.store + " king --table");
  // PCA: eigenvalues, and eigenvectors up to sign.
  const Matrix r = numbers(ref(d, "pca -k 3"));
  const Matrix values(r.begin(), r.begin() + 1), vectors(r.begin() + 1, r.end());
  const TempDir tmp;
  const std::string ev = (tmp / "ev").string();
  const Matrix got = numbers(ours("pca", d, "-k 3 --exact --eigenvalues " + ev), true, 1);
  const Matrix got_values = numbers(slurp(ev), true, 1);
  ASSERT_EQ(got_values.size(), 3u);
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(got_values[c][0], values[0][c], 1e-9 * values[0][c]);
  expect_vectors(got, vectors, 3, 1e-7, d.store + " pca");
  if (!complete) return;
  // Without missing calls the GRM is X^T X / m, and with 2k(k + 1) >= samples the randomized
  // method's Krylov block spans every sample, so it gives the exact eigenvectors; projecting the
  // samples onto their own loadings gives their eigenvectors back.
  const Matrix r4 = numbers(ref(d, "pca -k 4"));
  const Matrix vectors4(r4.begin() + 1, r4.end());
  ASSERT_LE(vectors4.size(), 40u);
  const Matrix approx = numbers(ours("pca", d, "-k 4 --approx --eigenvalues " + ev), true, 1);
  const Matrix approx_values = numbers(slurp(ev), true, 1);
  ASSERT_EQ(approx_values.size(), 4u);
  for (int c = 0; c < 4; ++c)
    EXPECT_NEAR(approx_values[c][0], r4[0][c], 1e-9 * r4[0][c]) << "approx pc" << c + 1;
  expect_vectors(approx, vectors4, 4, 1e-7, d.store + " pca --approx");
  const std::string wts = (tmp / "wts").string();
  ours("pca", d, "-k 4 --exact --loadings " + wts);
  expect_vectors(numbers(ours("pca", d, "--project " + wts), true, 2), vectors4, 4, 1e-7,
                 d.store + " pca --project");
}

}  // namespace

TEST(MatrixReference, BruteForceOnRandomData) {
  VCZ_REQUIRE_PYTHON_ZARR();
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  // Missing calls, multi-allelic sites (REF against the rest), haploid calls (missing).
  check_brute_force(matrix_data(
      dir, "multi", "--seed 11 --samples 29 --variants 260 --missing 0.08 --multiallelic 0.25"));
  check_brute_force(matrix_data(
      dir, "mixed", "--seed 12 --samples 21 --variants 200 --missing 0.05 --mixed-ploidy 0.3"));
  // No missing calls: also the randomized PCA and the projection.
  check_brute_force(
      matrix_data(dir, "complete", "--seed 13 --samples 25 --variants 150 --multiallelic 0.2"),
      true);
}

namespace {

/// plink2 --make-rel, --make-king, --make-king-table, --pca and plink 1.9 --distance on the data
/// of @p d (plink2 computes frequencies for the GRM only from 50 samples or more).
void check_plink(const TempDir& dir, const Data& d) {
  const std::string pf = plink2_data(dir, d, "r");
  const std::string out = (dir / "o").string();
  const std::string p2 =
      "plink2 --pfile " + shell_quote(pf) + " --threads 2 --silent --out " + shell_quote(out) + " ";
  // grm: every shape, text and binary; cov; --maf.
  for (const std::string shape : {"triangle", "square", "square0"}) {
    run_ok(p2 + "--make-rel " + shape);
    expect_matrix(numbers(ours("grm", d, "--shape " + shape)), numbers(slurp(out + ".rel")),
                  kPlinkRel, kPlinkAbs, "grm " + shape);
    run_ok(p2 + "--make-rel bin " + shape);
    const std::string bin = (dir / "g.bin").string();
    ours("grm", d, "--bin --shape " + shape + " -o " + bin);
    EXPECT_EQ(doubles(bin).size(), doubles(out + ".rel.bin").size()) << shape;
    const auto a = doubles(bin), b = doubles(out + ".rel.bin");
    for (std::size_t k = 0; k < a.size() && k < b.size(); ++k)
      ASSERT_TRUE(close(a[k], b[k], 1e-9, 1e-12)) << "grm bin " << shape << " " << k;
    EXPECT_EQ(slurp(bin + ".id"), slurp(out + ".rel.id"));
  }
  {  // binary without a shape: square, as plink2
    run_ok(p2 + "--make-rel bin");
    const std::string bin = (dir / "g.bin").string();
    ours("grm", d, "--bin -o " + bin);
    const auto a = doubles(bin), b = doubles(out + ".rel.bin");
    ASSERT_EQ(a.size(), b.size()) << "grm bin default";
    for (std::size_t k = 0; k < a.size(); ++k)
      ASSERT_TRUE(close(a[k], b[k], 1e-9, 1e-12)) << "grm bin default " << k;
  }
  run_ok(p2 + "--make-rel cov");
  expect_matrix(numbers(ours("grm", d, "--cov")), numbers(slurp(out + ".rel")), kPlinkRel,
                kPlinkAbs, "grm cov");
  run_ok(p2 + "--maf 0.1 --make-rel");
  expect_matrix(numbers(ours("grm", d, "--maf 0.1")), numbers(slurp(out + ".rel")), kPlinkRel,
                kPlinkAbs, "grm --maf 0.1");
  // A variant list (plink --extract): the IDs of every third variant with one.
  const std::string list = (dir / "list").string();
  run_ok("zcat -f " + shell_quote(d.vcf) +
         " | grep -v '^#' | cut -f3 | grep -v '^[.]$' | awk 'NR%3==0' > " + shell_quote(list));
  run_ok(p2 + "--extract " + shell_quote(list) + " --make-rel");
  expect_matrix(numbers(ours("grm", d, "--extract " + list)), numbers(slurp(out + ".rel")),
                kPlinkRel, kPlinkAbs, "grm --extract");
  // With a count filter too: the run's counting pass decides it over the listed variants.
  run_ok(p2 + "--extract " + shell_quote(list) + " --maf 0.1 --make-rel");
  expect_matrix(numbers(ours("grm", d, "--extract " + list + " --maf 0.1")),
                numbers(slurp(out + ".rel")), kPlinkRel, kPlinkAbs, "grm --extract --maf 0.1");
  // king: triangle and square matrices, binary, the table.
  run_ok(p2 + "--make-king");
  expect_matrix(numbers(ours("king", d, "")), numbers(slurp(out + ".king")), kPlinkRel, kPlinkAbs,
                "king");
  run_ok(p2 + "--make-king square bin");
  {
    const std::string bin = (dir / "k.bin").string();
    ours("king", d, "--shape square --bin -o " + bin);
    const auto a = doubles(bin), b = doubles(out + ".king.bin");
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t k = 0; k < a.size(); ++k)
      ASSERT_TRUE(close(a[k], b[k], 1e-12, 1e-15)) << "king bin " << k;
  }
  run_ok(p2 + "--make-king-table");
  expect_matrix(numbers(ours("king", d, "--table"), true, 2),
                numbers(slurp(out + ".kin0"), false, 2), kPlinkRel, kPlinkAbs, "king table");
  run_ok(p2 + "--make-king-table --king-table-filter 0.02");
  expect_matrix(numbers(ours("king", d, "--table --table-filter 0.02"), true, 2),
                numbers(slurp(out + ".kin0"), false, 2), kPlinkRel, kPlinkAbs, "king table filter");
  // distance: plink 1.9 on the .bed plink2 writes.
  run_ok(p2 + "--make-bed");
  const std::string p1 =
      "plink1.9 --bfile " + shell_quote(out) + " --silent --out " + shell_quote(out) + " ";
  for (const std::string flat : {"", "flat-missing"}) {
    for (const std::string shape : {"triangle", "square", "square0"}) {
      run_ok(p1 + "--distance allele-ct ibs 1-ibs " + shape + " " + flat);
      const std::string o = "--shape " + shape + (flat.empty() ? "" : " --flat-missing");
      expect_matrix(numbers(ours("distance", d, o)), numbers(slurp(out + ".dist")), kPlinkRel,
                    kPlinkAbs, "distance " + o);
      expect_matrix(numbers(ours("distance", d, o + " --metric ibs")),
                    numbers(slurp(out + ".mibs")), kPlinkRel, kPlinkAbs, "ibs " + o);
      expect_matrix(numbers(ours("distance", d, o + " --metric 1-ibs")),
                    numbers(slurp(out + ".mdist")), kPlinkRel, kPlinkAbs, "1-ibs " + o);
    }
    // Binary: square by default (as plink), the triangle without its diagonal.
    for (const std::string shape : {"", "triangle"}) {
      run_ok(p1 + "--distance ibs bin " + shape + " " + flat);
      const std::string bin = (dir / "d.bin").string();
      ours("distance", d,
           "--metric ibs --bin -o " + bin + (shape.empty() ? "" : " --shape " + shape) +
               (flat.empty() ? "" : " --flat-missing"));
      const auto a = doubles(bin), b = doubles(out + ".mibs.bin");
      ASSERT_EQ(a.size(), b.size()) << "ibs bin " << shape << " " << flat;
      for (std::size_t k = 0; k < a.size(); ++k)
        ASSERT_TRUE(close(a[k], b[k], 1e-6, 1e-9))
            << "ibs bin " << shape << " " << flat << " " << k;
    }
  }
  run_ok(p1 + "--maf 0.1 --distance");
  expect_matrix(numbers(ours("distance", d, "--maf 0.1")), numbers(slurp(out + ".dist")), kPlinkRel,
                kPlinkAbs, "distance --maf");
  // pca: eigenvalues, eigenvectors up to sign, variant weights.
  run_ok(p2 + "--pca 4 biallelic-var-wts");
  const std::string ev = (dir / "ev").string(), wts = (dir / "wts").string();
  const Matrix vec =
      numbers(ours("pca", d, "-k 4 --eigenvalues " + ev + " --loadings " + wts), true, 1);
  const Matrix plink_values = numbers(slurp(out + ".eigenval"));
  const Matrix values = numbers(slurp(ev), true, 1);
  ASSERT_EQ(values.size(), 4u);
  for (int c = 0; c < 4; ++c)
    EXPECT_NEAR(values[c][0], plink_values[c][0], kPlinkRel * plink_values[c][0]);
  expect_vectors(vec, numbers(slurp(out + ".eigenvec"), false, 1), 4, 2e-6, "pca eigenvectors");
  // Variant weights: plink2's are for the non-major allele, ours for ALT.
  const Matrix ours_w = numbers(slurp(wts), true, 6);
  std::istringstream pv(slurp(out + ".eigenvec.var"));
  std::string line;
  std::getline(pv, line);  // header: #CHROM ID MAJ NONMAJ PC1..
  std::istringstream ov(slurp(wts));
  std::getline(ov, line);  // header (the first line; the eigenvalues are in wts.eigenval)
  for (std::size_t v = 0; std::getline(pv, line); ++v) {
    std::istringstream ls(line), os;
    std::string chrom, id, maj, nonmaj;
    ls >> chrom >> id >> maj >> nonmaj;
    std::string orow;
    ASSERT_TRUE(static_cast<bool>(std::getline(ov, orow))) << v;
    std::istringstream ocells(orow);
    std::string ochrom, opos, oid, oref, oalt;
    ocells >> ochrom >> opos >> oid >> oref >> oalt;
    const double sign = maj == oref ? 1 : -1;
    for (int c = 0; c < 4; ++c) {
      std::string w;
      ls >> w;
      ASSERT_TRUE(close(sign * ours_w[v][c], parse(w), kPlinkRel, 1e-6))
          << "weight of variant " << v << " pc" << c + 1;
    }
  }
}

}  // namespace

TEST(MatrixReference, Plink2AndPlink19OnRandomData) {
  VCZ_REQUIRE_PYTHON_ZARR();
  VCZ_REQUIRE_PROGRAM("plink2");
  VCZ_REQUIRE_PROGRAM("plink1.9");
  TempDir dir;
  check_plink(dir, matrix_data(dir, "r",
                               "--seed 21 --samples 64 --variants 700 --missing 0.05 "
                               "--multiallelic 0.2"));
}

TEST(MatrixReference, Plink2AndPlink19On1000GenomesData) {
  VCZ_REQUIRE_PYTHON_ZARR();
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PROGRAM("plink2");
  VCZ_REQUIRE_PROGRAM("plink1.9");
  if (shapeit4_reference_vcf().empty())
    GTEST_SKIP() << "skipped: shapeit4-example is not installed";
  TempDir dir;
  Data d;  // 300 samples x 3244 biallelic variants of chr20, no missing calls
  d.vcf = d.plink_vcf = make_1kg_subset(dir, "k.vcf.gz");
  d.store = (dir / "k.vcz").string();
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(d.vcf) + " " +
         shell_quote(d.store) + " --variants-chunk-size 500 --samples-chunk-size 64");
  check_plink(dir, d);
}

// Every cell is the same double whatever the stripe of rows that computes it (the CPU pass's
// BLAS products on the whole matrix's tile grid): more samples than a tile (256), stripes that
// begin and end inside a tile, on its edges, or not at all. (Before, a stripe's tiles began at
// its first row and a few GRM cells differed in the last bits.)
TEST(MatrixStripes, AnyRowsPerPassGivesTheBytesOfOnePass) {
  TempDir dir;
  const std::string store = (dir / "s.vcz").string();
  run_ok(binary() + " simulate " + shell_quote(store) +
         " --samples 600 --variants 2500 --missing 0.02 --seed 7 --no-progress");
  for (const std::string c : {"grm", "grm --cov", "distance", "distance --flat-missing", "king"}) {
    const std::string cmd = binary() + " " + c + " " + shell_quote(store) + " -t 2";
    const std::string one = run_ok(cmd);
    ASSERT_GT(one.size(), 600u * 600u) << c;
    for (const char* rows : {"90", "256", "300", "599"})
      EXPECT_EQ(one, run_ok(cmd + " --rows-per-pass " + rows)) << c << " --rows-per-pass " << rows;
  }
}
