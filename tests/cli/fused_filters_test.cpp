// Count filters (--maf, --geno, --hwe, -i of the counts, ...) applied inside the run's own pass
// (compute()'s fused path, for statistics that need only per-site counts) give byte for byte the
// output of the counting pass first (apply_count_filters, forced here by the hidden test
// option --two-pass-filters, hooks::set_two_pass_count_filters): every site and window command,
// windows over the data (whose spans are those of the kept sites), regions, small units, the
// warning of filters that keep nothing. The two-pass path itself equals statistics of the store
// that bcftools filtered (filters_reference_test.cpp); the windowed `stats` of the fused path is
// checked against such a store here too.

#include <gtest/gtest.h>

#include <fstream>

#include "cli/site_lists.hpp"
#include "test_util.hpp"

using namespace vcztest;

namespace {

struct Store {
  std::string vcf, path, pops;
};

/// A random VCF with QUAL and FILTER (tests/tools/qc_vcf.py), its store cut in small chunks and
/// three populations.
Store make_store(const TempDir& dir) {
  Store s;
  const std::string raw = (dir / "raw.vcf").string();
  run_ok(python() + " " + tool("random_vcf.py") +
         " --seed 29 --samples 45 --variants 600 --contigs 3 --missing 0.06 --multiallelic 0.15 "
         "--indels 0.1 -o " +
         shell_quote(raw));
  s.vcf = (dir / "qc.vcf").string();
  run_ok(python() + " " + tool("qc_vcf.py") + " " + shell_quote(raw) + " --full-missing -o " +
         shell_quote(s.vcf));
  s.path = (dir / "qc.vcz").string();
  run_ok(binary() + " convert " + shell_quote(s.vcf) + " " + shell_quote(s.path) +
         " --variants-chunk-size 41 --samples-chunk-size 7 -t 2");
  s.pops = (dir / "pops.tsv").string();
  run_ok("bcftools query -l " + shell_quote(s.vcf) +
         " | awk '{print $1\"\\t\"substr(\"ABC\", NR % 3 + 1, 1)}' > " + shell_quote(s.pops));
  return s;
}

/// `vczstats COMMAND STORE ARGS` on the CPU (fused when the library fuses), or with the counting
/// pass first.
CommandResult run_command(const std::string& command, const std::string& store,
                          const std::string& args, bool two_pass) {
  const auto space = command.find(' ');
  const std::string rest = space == std::string::npos ? "" : command.substr(space);
  return run(binary() + " " + command.substr(0, space) + " " + shell_quote(store) + rest + " " +
             args + (two_pass ? " --two-pass-filters" : "") + " --device cpu -t 2 -v");
}

const char* kFusedNote = "applied in this pass";

}  // namespace

TEST(CliFusedFilters, SiteAndWindowCommandsEqualTheCountingPassFirstByteForByte) {
  VCZ_REQUIRE_CONVERT();
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const Store s = make_store(dir);
  const std::string p = "-P " + shell_quote(s.pops);
  const std::vector<std::string> commands = {
      "freq " + p,
      "missing " + p,
      "hardy " + p,
      "geno-counts " + p,
      "sfs " + p,
      "sfs " + p + " --joint A,C --folded",
      "diversity " + p,  // one window per contig, spanning its kept sites
      "diversity " + p + " --window-size 500",
      "diversity " + p + " --window-size 400 --window-span contig",
      "divergence " + p + " --window-variants 9",
      "stats " + p + " --window-size 500 --stats pi,theta_w,tajima_d,dxy,fst_hudson",
      "stats " + p + " --window-size 700 --window-step 250 --stats pi,dxy -r chr2:300-,chr1",
      "fstats " + p + " --d A,B,C,A --blocks 7",
      "fstats " + p + " --f2 A,B --blocks 5",
  };
  const std::vector<std::string> filters = {
      "--maf 0.05 --geno 0.1 --hwe 1e-4 --apply-filters PASS",
      "--maf 0.2 --max-unit-variants 13",  // many sites go, the ends of contigs among them
      "-i " + shell_quote("MAF>0.1 && F_MISSING<0.1") + " --max-alleles 3",
      "--mac 3 --max-mac 40 --geno 0.05 --max-unit-variants 7",
  };
  for (const auto& f : filters)
    for (const auto& c : commands) {
      SCOPED_TRACE(c + " " + f);
      const CommandResult fused = run_command(c, s.path, f, false);
      const CommandResult two = run_command(c, s.path, f, true);
      ASSERT_EQ(fused.exit_code, 0) << fused.err;
      ASSERT_EQ(two.exit_code, 0) << two.err;
      EXPECT_NE(fused.err.find(kFusedNote), std::string::npos) << "not fused: " << fused.err;
      EXPECT_EQ(two.err.find(kFusedNote), std::string::npos) << "fused: " << two.err;
      EXPECT_EQ(fused.out, two.out);
      // The filters did something.
      EXPECT_NE(fused.out, run_command(c, s.path, "", false).out);
    }
  // Filters that keep nothing: the same output and the same warning.
  for (const std::string& c : {"freq " + p, "diversity " + p + " --window-size 500", "sfs " + p}) {
    SCOPED_TRACE(c);
    const CommandResult fused = run_command(c, s.path, "--mac 100000", false);
    const CommandResult two = run_command(c, s.path, "--mac 100000", true);
    ASSERT_EQ(fused.exit_code, 0) << fused.err;
    ASSERT_EQ(two.exit_code, 0) << two.err;
    EXPECT_EQ(fused.out, two.out);
    EXPECT_NE(fused.err.find("keep none of the 600 variants"), std::string::npos) << fused.err;
    EXPECT_NE(two.err.find("keep none of the 600 variants"), std::string::npos) << two.err;
  }
  // Statistics that need more than the counts keep the counting pass first.
  for (const std::string& c : {std::string("afdist"), "sample-stats " + p, std::string("grm")}) {
    const CommandResult r = run_command(c, s.path, "--maf 0.05", false);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find(kFusedNote), std::string::npos) << c << ": " << r.err;
  }
}

TEST(CliFusedFilters, WindowedStatsEqualStatsOfTheBcftoolsFilteredStore) {
  VCZ_REQUIRE_CONVERT();
  VCZ_REQUIRE_PROGRAM("bcftools");
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const Store s = make_store(dir);
  // bcftools keeps the PASS sites whose MAF (over called alleles) is at least 0.1, biallelic.
  const std::string filtered_vcf = (dir / "f.vcf.gz").string(), filtered = (dir / "f.vcz").string();
  run_ok("bcftools view -M2 -f PASS -i 'MAF>=0.1' " + shell_quote(s.vcf) + " -Oz -o " +
         shell_quote(filtered_vcf));
  run_ok(binary() + " convert " + shell_quote(filtered_vcf) + " " + shell_quote(filtered) +
         " --variants-chunk-size 41 --samples-chunk-size 7 -t 2");
  const std::string ours = "--max-alleles 2 --apply-filters PASS --maf 0.1";
  ASSERT_EQ(freq_sites(s.path, ours), freq_sites(filtered, ""));
  for (const std::string& c : {"stats -P " + shell_quote(s.pops) +
                                   " --window-size 500 --stats pi,theta_w,tajima_d,dxy,fst_hudson",
                               "diversity -P " + shell_quote(s.pops)}) {
    SCOPED_TRACE(c);
    const CommandResult a = run_command(c, s.path, ours, false);
    const CommandResult b = run_command(c, filtered, "", false);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_NE(a.err.find(kFusedNote), std::string::npos) << a.err;
    // The same windows (spans of the kept sites) and sites per window; the sums may differ in
    // the last digits with the stores' chunking, so compare the columns before them.
    auto columns = [](const std::string& text) {
      std::string out;
      std::istringstream in(text);
      std::string line;
      while (std::getline(in, line)) {
        std::istringstream cells(line);
        std::string cell;
        for (int k = 0; k < 5 && std::getline(cells, cell, '\t'); ++k) out += cell + "\t";
        out += "\n";
      }
      return out;
    };
    EXPECT_EQ(columns(a.out), columns(b.out));
  }
}
