// sfs --project, --project-preview and --format fs against references written in the tests:
//  - tests/tools/ref_sfs_project.py: the hypergeometric projection in exact rational
//    arithmetic (Fraction, math.comb) from the VCF text, on random VCFs with missing and partly
//    missing calls, multi-allelic sites and INFO/AA, for 1 to 4 populations, folded and
//    unfolded, whole or per bp window; tolerance 1e-12 relative (plus 1e-15 absolute);
//  - projecting to the full sample on complete data is today's sfs, exactly;
//  - a .fs reader written here from dadi's file format (dimensions, folded|unfolded, quoted
//    population names; values; mask) reads back the values, mask and names, and the folded
//    file is dadi's folding of the unfolded spectrum.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "test_util.hpp"

using namespace vcztest;

namespace {

using Rows = std::vector<std::vector<std::string>>;

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::istringstream in(line);
  std::string c;
  while (std::getline(in, c, sep)) out.push_back(c);
  return out;
}

/// The header and the rows of a TSV.
Rows tsv(const std::string& text) {
  Rows t;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) t.push_back(split(line, '\t'));
  return t;
}

void expect_close(const Rows& ours, const Rows& ref, const std::string& what) {
  ASSERT_EQ(ours.size(), ref.size()) << what;
  ASSERT_FALSE(ours.empty()) << what;
  EXPECT_EQ(ours[0], ref[0]) << what << ": header";
  for (std::size_t i = 1; i < ours.size(); ++i) {
    ASSERT_EQ(ours[i].size(), ref[i].size()) << what << " row " << i;
    for (std::size_t j = 0; j + 1 < ours[i].size(); ++j)
      EXPECT_EQ(ours[i][j], ref[i][j]) << what << " row " << i << " col " << j;
    const double x = std::stod(ours[i].back()), y = std::stod(ref[i].back());
    EXPECT_NEAR(x, y, 1e-12 * std::fabs(y) + 1e-15) << what << " row " << i;
  }
}

struct Store {
  std::string vcf, store, pops;
};

Store random_store(const TempDir& dir, const std::string& name, const std::string& args) {
  Store s{(dir / (name + ".vcf")).string(), (dir / (name + ".vcz")).string(),
          (dir / (name + ".pops")).string()};
  run_ok(python() + " " + tool("ref_sfs_project.py") + " vcf " + shell_quote(s.vcf) +
         " --pops-out " + shell_quote(s.pops) + " " + args);
  run_ok(binary() + " convert " + shell_quote(s.vcf) + " " + shell_quote(s.store) +
         " --variants-chunk-size 23 --samples-chunk-size 5 -f");
  return s;
}

/// A .fs file read from its definition (dadi's Spectrum.to_file): '#' comment lines; a line
/// of dimensions, then "folded" or "unfolded", then quoted population names; a line of the
/// values in row-major order; a line of the mask, 1 for masked.
struct Fs {
  std::vector<long> shape;
  bool folded = false;
  std::vector<std::string> names;
  std::vector<double> values;
  std::vector<int> mask;
  std::vector<std::string> comments;
};

Fs read_fs(const std::string& text) {
  Fs f;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line) && !line.empty() && line[0] == '#') f.comments.push_back(line);
  {
    std::istringstream h(line);
    std::string word;
    while (h >> word && word != "folded" && word != "unfolded") f.shape.push_back(std::stol(word));
    EXPECT_TRUE(word == "folded" || word == "unfolded") << line;
    f.folded = word == "folded";
    const std::string rest = line.substr(line.find(word) + word.size());
    for (std::size_t q = rest.find('"'); q != std::string::npos; q = rest.find('"', q + 1)) {
      const std::size_t end = rest.find('"', q + 1);
      f.names.push_back(rest.substr(q + 1, end - q - 1));
      q = end;
    }
  }
  long total = 1;
  for (long d : f.shape) total *= d;
  std::getline(in, line);
  {
    std::istringstream v(line);
    std::string x;
    while (v >> x) f.values.push_back(std::stod(x));
  }
  std::getline(in, line);
  {
    std::istringstream m(line);
    int x;
    while (m >> x) f.mask.push_back(x);
  }
  EXPECT_EQ(static_cast<long>(f.values.size()), total) << text;
  EXPECT_EQ(static_cast<long>(f.mask.size()), total) << text;
  EXPECT_FALSE(std::getline(in, line) && !line.empty()) << "after the mask: " << line;
  return f;
}

/// The index tuple of flat entry @p flat of @p shape.
std::vector<long> unflatten(long flat, const std::vector<long>& shape) {
  std::vector<long> idx(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    idx[i] = flat % shape[i];
    flat /= shape[i];
  }
  return idx;
}

}  // namespace

TEST(CliSfsProjection, MatchesExactReferenceOnRandomData) {
  TempDir dir;
  struct Case {
    std::string name, args;
    std::vector<std::string> options;
  };
  for (const Case& c : std::vector<Case>{
           {"four_pops",
            "--seed 11 --samples 26 --variants 220 --pops 4 --missing 0.12 --partial 0.04 "
            "--multiallelic 0.12 --aa 0.7",
            {"--project 7", "--project 6 --folded", "--project pop0=5,pop3=4",
             "--project 8 --ancestral aa", "--project 9 --folded --ancestral aa",
             "--project 3 --joint pop1", "--project 4 --joint pop2,pop0",
             "--project pop0=3,pop1=5 --joint pop0,pop1 --folded",
             "--project 3 --joint pop3,pop1,pop2 --ancestral aa",
             "--project pop0=2,pop1=3,pop2=2,pop3=4 --joint pop0,pop1,pop2,pop3",
             "--project 3 --joint pop0,pop1,pop2,pop3 --folded --ancestral aa",
             "--project-preview --project 10", "--project-preview --project pop2=9 --ancestral aa",
             "--project 5 --window-size 900",
             "--project 3 --joint pop2,pop1 --folded --window-size 2500"}},
           {"one_pop_dense_missing",
            "--seed 12 --samples 9 --variants 150 --pops 1 --missing 0.3 --partial 0.1 "
            "--multiallelic 0.2",
            {"--project 2", "--project 11", "--project 11 --folded",
             "--project-preview --project 18"}},
       }) {
    SCOPED_TRACE(c.name);
    const Store s = random_store(dir, c.name, c.args);
    for (const auto& opt : c.options) {
      const std::string ref_opt =
          opt.find("--project-preview") == 0 ? "--preview" + opt.substr(17) : opt;
      const Rows ours =
          tsv(run_ok(binary() + " sfs " + shell_quote(s.store) + " -P " + shell_quote(s.pops) +
                     " " + opt + " --max-unit-variants 30 -t 2"));
      const Rows ref =
          tsv(run_ok(python() + " " + tool("ref_sfs_project.py") + " sfs " + shell_quote(s.vcf) +
                     " -P " + shell_quote(s.pops) + " " + ref_opt));
      expect_close(ours, ref, opt);
    }
  }
}

TEST(CliSfsProjection, SplitsAndThreadsGiveIdenticalBytes) {
  TempDir dir;
  const Store s =
      random_store(dir, "split", "--seed 13 --samples 30 --variants 300 --pops 3 --missing 0.05");
  for (const std::string opt : {"--project 9", "--project 5 --joint pop0,pop1,pop2 --folded",
                                "--project-preview", "--project 7 --joint pop2,pop1 --format fs",
                                "--project 6 --window-size 1500 --joint pop1,pop0"}) {
    const std::string base =
        binary() + " sfs " + shell_quote(s.store) + " -P " + shell_quote(s.pops) + " " + opt;
    const std::string one = run_ok(base + " -t 1");
    EXPECT_EQ(one, run_ok(base + " -t 2 --max-unit-variants 7")) << opt;
    EXPECT_EQ(one, run_ok(base + " -t 2 --max-unit-variants 1")) << opt;
  }
}

TEST(CliSfsProjection, FullSizeOnCompleteDataIsThePlainSpectrum) {
  TempDir dir;
  const std::string store = (dir / "complete.vcz").string(), pops = (dir / "pops.tsv").string();
  run_ok(binary() + " simulate " + shell_quote(store) +
         " --samples 24 --variants 800 --pops 2 --seed 5 --pops-file " + shell_quote(pops));
  const std::string base = binary() + " sfs " + shell_quote(store) + " -P " + shell_quote(pops);
  for (const std::string opt :
       {"", " --folded", " --scaled", " --joint pop0,pop1", " --joint pop0,pop1 --folded"}) {
    const Rows plain = tsv(run_ok(base + opt));
    const Rows projected = tsv(run_ok(base + opt + " --project 24"));  // 12 diploid samples
    ASSERT_EQ(plain.size(), projected.size()) << opt;
    ASSERT_GT(plain.size(), 10u) << opt;
    EXPECT_EQ(plain[0], projected[0]) << opt;
    for (std::size_t i = 1; i < plain.size(); ++i) {
      ASSERT_EQ(plain[i].size(), projected[i].size());
      for (std::size_t j = 0; j < plain[i].size(); ++j)
        if (plain[i][j] != projected[i][j]) {
          EXPECT_EQ(std::stod(plain[i][j]), std::stod(projected[i][j]))
              << opt << " row " << i << " col " << j;
        }
    }
  }
}

TEST(CliSfsProjection, FsFilesReadBackFromTheirDefinition) {
  TempDir dir;
  const Store s = random_store(
      dir, "fs", "--seed 14 --samples 21 --variants 250 --pops 3 --missing 0.08 --aa 0.5");
  const std::string base =
      binary() + " sfs " + shell_quote(s.store) + " -P " + shell_quote(s.pops) + " ";
  for (const std::string opt :
       {"--project 6 --joint pop1", "--project 5 --joint pop0,pop2",
        "--project pop0=4,pop1=3,pop2=5 --joint pop2,pop0,pop1 --ancestral aa",
        "--project 7 --joint pop1,pop0"}) {
    SCOPED_TRACE(opt);
    const Rows table = tsv(run_ok(base + opt));  // unfolded TSV: pops, sizes, indices, count
    const std::size_t k = (table[0].size() - 1) / 3;
    std::vector<long> shape;
    std::vector<std::string> names;
    for (std::size_t i = 0; i < k; ++i) {
      names.push_back(table[1][i]);
      shape.push_back(std::stol(table[1][k + i]) + 1);
    }
    std::vector<double> data;
    for (std::size_t r = 1; r < table.size(); ++r) data.push_back(std::stod(table[r].back()));
    const auto total = static_cast<long>(data.size());

    const Fs u = read_fs(run_ok(base + opt + " --format fs"));
    EXPECT_FALSE(u.folded);
    EXPECT_EQ(u.shape, shape);
    EXPECT_EQ(u.names, names);
    ASSERT_EQ(u.comments.size(), 1u);  // the note: sites projected and left out
    EXPECT_NE(u.comments[0].find("left out"), std::string::npos) << u.comments[0];
    ASSERT_EQ(static_cast<long>(u.values.size()), total);
    for (long f = 0; f < total; ++f) {
      EXPECT_EQ(u.values[f], data[f]) << f;  // shortest round-trip text: the same double
      EXPECT_EQ(u.mask[f], f == 0 || f == total - 1 ? 1 : 0) << f;
    }

    // Folded (dadi's definition): S = the alleles of all populations; an entry whose indices
    // sum past S/2 moves onto its mirror image (index n - i in every population) and is
    // masked, one at exactly S/2 shares equally with its mirror image, and the corners of the
    // unfolded spectrum stay masked.
    const Fs f = read_fs(run_ok(base + opt + " --format fs --folded"));
    EXPECT_TRUE(f.folded);
    EXPECT_EQ(f.shape, shape);
    EXPECT_EQ(f.names, names);
    long samples = 0;
    for (long d : shape) samples += d - 1;
    for (long e = 0; e < total; ++e) {
      const auto idx = unflatten(e, shape);
      long sum = 0, mirror = 0;
      for (std::size_t i = 0; i < k; ++i) {
        sum += idx[i];
        mirror = mirror * shape[i] + (shape[i] - 1 - idx[i]);
      }
      double want = 0;
      if (2 * sum < samples)
        want = data[e] + data[mirror];
      else if (2 * sum == samples)
        want = (data[e] + data[mirror]) / 2;
      EXPECT_NEAR(f.values[e], want, 1e-12 * std::fabs(want) + 1e-15) << e;
      const int masked = e == 0 || e == total - 1 || 2 * sum > samples - samples % 2 ? 1 : 0;
      EXPECT_EQ(f.mask[e], masked) << e;
    }
  }
}

TEST(CliSfsProjection, BadOptionsAreOneLineErrors) {
  TempDir dir;
  // 4 populations of 5 diploid samples: 10 alleles each.
  const Store s = random_store(dir, "bad", "--seed 15 --samples 20 --variants 40 --pops 4");
  const std::string base =
      binary() + " sfs " + shell_quote(s.store) + " -P " + shell_quote(s.pops) + " ";
  for (const auto& [opt, says] : std::vector<std::pair<std::string, std::string>>{
           {"--project 0", "--project"},
           {"--project x", "--project"},
           {"--project 11", "cannot project to 11"},
           {"--project popX=3", "popX"},
           {"--project pop0=3 --joint pop0,pop1", "no size for population 'pop1'"},
           {"--project 3 --joint pop0,pop1,pop0", "twice"},
           {"--project 3 --joint pop0,pop1,pop0,pop1,pop0", "1 to 4"},
           {"--project 10 --joint pop0,pop1,pop2,pop3 --memory 1", "--memory"},
           {"--project 3 --format fs", "one spectrum"},
           {"--project-preview --joint pop0,pop1", "--joint"},
           {"--project-preview --format fs", "--project-preview"},
           {"--window-size 1000", "need --project"},
           {"--project 3 --joint pop0 --window-size 1000 --format fs", "not with windows"},
           {"--project-preview --project 3 --window-size 1000", "per window"},
       }) {
    const auto r = run(base + opt);
    EXPECT_NE(r.exit_code, 0) << opt;
    EXPECT_NE(r.err.find(says), std::string::npos) << opt << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << opt << ": " << r.err;
  }
}
