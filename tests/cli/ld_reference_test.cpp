// ld and prune against plink 1.9 on real data: Ag1000G X:8,000,000-8,030,000 (100 samples,
// 7,989 sites, multi-allelic sites read as REF against the rest by tests/tools/biallelic_vcf.py,
// as vczstats does). ld --r2 must give plink's pairs and r2 (to plink's printed digits), and
// prune --indep-pairwise the same .prune.in and .prune.out, with work units cut small so that
// windows cross them.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "test_util.hpp"

using namespace vcztest;

namespace {

using Pairs = std::map<std::pair<std::string, std::string>, double>;

/// SNP_A, SNP_B -> R2 from plink's whitespace-aligned .ld, or our TSV (columns by header name).
Pairs read_pairs(const std::string& path, bool ours) {
  std::ifstream in(path);
  Pairs p;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    std::istringstream f(line);
    std::string chr_a, bp_a, a, chr_b, bp_b, b, n, r2;
    f >> chr_a >> bp_a >> a >> chr_b >> bp_b >> b;
    if (ours) f >> n;
    f >> r2;
    p[{a, b}] = std::strtod(r2.c_str(), nullptr);
  }
  return p;
}

std::set<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::set<std::string> s;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) s.insert(line);
  return s;
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
  const Pairs want = read_pairs((dir / "pl.ld").string(), false);
  const Pairs got = read_pairs((dir / "ours.ld").string(), true);
  ASSERT_GT(want.size(), 5000u);
  ASSERT_EQ(want.size(), got.size());
  int bad = 0;
  for (const auto& [k, r2] : want) {
    const auto it = got.find(k);
    ASSERT_NE(it, got.end()) << k.first << " " << k.second;
    if (!(std::fabs(it->second - r2) <= 1e-5 * std::max(1.0, std::fabs(r2))) && ++bad <= 5)
      ADD_FAILURE() << k.first << " " << k.second << ": plink " << r2 << ", ours " << it->second;
  }
  EXPECT_EQ(bad, 0);

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
