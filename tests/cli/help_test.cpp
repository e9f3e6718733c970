// The command line's help and mistakes: one usage line and a one-line summary per command at the
// top, an Examples section (whose lines run) in every command's help, no testing options shown;
// one-line "vczstats: error: ..." messages with suggestions for misspelled commands and options.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "test_util.hpp"

using namespace vcztest;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The commands the top-level help lists ("  name   summary" rows; options start with '-').
std::vector<std::string> listed_commands() {
  const auto help = run(binary() + " --help");
  EXPECT_EQ(help.exit_code, 0) << help.err;
  std::vector<std::string> names;
  const std::regex row("^  ([a-z][a-z0-9-]*) {2,}\\S.*$");
  for (const auto& line : lines_of(help.out)) {
    std::smatch m;
    if (std::regex_match(line, m, row)) names.push_back(m[1]);
  }
  return names;
}

// The lines of the Examples section that ends @p help ("" when there is none).
std::vector<std::string> examples_of(const std::string& help) {
  const auto at = help.rfind("\nExamples:\n");
  if (at == std::string::npos) return {};
  std::vector<std::string> lines;
  for (const auto& line : lines_of(help.substr(at + 11)))
    if (!line.empty()) lines.push_back(line);
  return lines;
}

// One line on stderr, "vczstats: error: ...", exit status 2.
void expect_usage_error(const CommandResult& r, const std::string& args) {
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("vczstats: error: ", 0), 0u) << args << "\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
  EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
}

}  // namespace

TEST(CliHelp, TopLevelHasOneUsageLineAndOneLinePerCommand) {
  const auto r = run(binary() + " --help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_of(r.out, "Usage:"), 1u) << r.out;
  EXPECT_NE(r.out.find("Usage: vczstats <command> STORE [options]"), std::string::npos) << r.out;
  const auto names = listed_commands();
  EXPECT_GE(names.size(), 25u) << r.out;
  for (const std::string cmd : {"info", "afdist", "freq", "diversity", "divergence", "stats", "ihs",
                                "ld", "pca", "convert", "simulate", "recompress"})
    EXPECT_NE(std::find(names.begin(), names.end(), cmd), names.end()) << cmd << "\n" << r.out;
  // One line each: the row of a command is followed by another row, a blank line or a group
  // heading, never by the rest of a paragraph; and it fits a terminal.
  const auto lines = lines_of(r.out);
  const std::regex row("^  ([a-z][a-z0-9-]*) {2,}\\S.*$");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!std::regex_match(lines[i], row)) continue;
    EXPECT_LE(lines[i].size(), 80u) << lines[i];
    if (i + 1 < lines.size()) {
      EXPECT_TRUE(lines[i + 1].empty() || std::regex_match(lines[i + 1], row)) << lines[i] << "\n"
                                                                               << lines[i + 1];
    }
  }
  EXPECT_FALSE(examples_of(r.out).empty()) << r.out;
}

TEST(CliHelp, EveryCommandEndsWithExamplesAndHidesTestingOptions) {
  const auto names = listed_commands();
  ASSERT_FALSE(names.empty());
  for (const auto& cmd : names) {
    const auto r = run(binary() + " " + cmd + " --help");
    ASSERT_EQ(r.exit_code, 0) << cmd << "\n" << r.err;
    EXPECT_EQ(count_of(r.out, "Usage:"), 1u) << cmd << "\n" << r.out;
    const auto examples = examples_of(r.out);
    EXPECT_GE(examples.size(), 1u) << cmd << ": no Examples section at the end\n" << r.out;
    EXPECT_LE(examples.size(), 3u) << cmd << "\n" << r.out;
    for (const auto& e : examples)
      EXPECT_EQ(e.rfind("  vczstats " + cmd + " ", 0), 0u) << cmd << ": " << e;
    for (const std::string hidden :
         {"--gpu-seed-baseline", "--pinned-hostalloc", "--no-gpu-prestart", "--max-unit-variants",
          "--segment", "--context", "--thread-shares", "(testing)", "Benchmarks only", "Tests only",
          "{false}"})
      EXPECT_EQ(r.out.find(hidden), std::string::npos) << cmd << " shows " << hidden;
  }
  // Every statistic lists the site filters (the commands of stores read no sites).
  for (const auto& cmd : names) {
    if (cmd == "info" || cmd == "convert" || cmd == "simulate" || cmd == "recompress") continue;
    const auto r = run(binary() + " " + cmd + " --help");
    for (const std::string option :
         {"--snps-only", "--min-alleles", "--max-alleles", "--apply-filters", "--min-qual",
          "--max-maf", "--mac", "--max-mac", "--geno", "--hwe", "--maf", "-i,--include",
          "-e,--exclude"})
      EXPECT_NE(r.out.find(option + " "), std::string::npos) << cmd << " lacks " << option;
    EXPECT_NE(r.out.find("Site filters"), std::string::npos) << cmd;
  }
  const auto h = run(binary() + " afdist --help");
  EXPECT_NE(h.out.find("--progress,--no-progress "), std::string::npos) << h.out;
  const auto s = run(binary() + " simulate --help");
  EXPECT_NE(s.out.find("--progress,--no-progress "), std::string::npos) << s.out;
}

// The examples of every command's help run on a stand-in for the default data set (.data/ of
// scripts/make-default-data.sh): chr20:1-1.4 Mb of the same 1000 Genomes panel (its phased
// part), with populations files of the same names and layout as make-default-data.sh writes.
TEST(CliHelp, ExamplesRunOnAStandInForTheDefaultData) {
  if (shapeit4_reference_vcf().empty())
    GTEST_SKIP() << "skipped: shapeit4-example is not installed (run scripts/setup.sh)";
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  fs::create_directory(dir / ".data");
  const std::string data = (dir / ".data").string();
  const std::string vcf = make_1kg_subset(dir, ".data/1kg_chr20.vcf.gz");
  bool convert = false;
#ifdef VCZSTATS_HAVE_CONVERT
  convert = true;
  run_ok(binary() + " convert " + shell_quote(vcf) + " " + shell_quote(data + "/1kg_chr20.vcz"));
#else
  VCZ_REQUIRE_PYTHON_ZARR();
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + shell_quote(vcf) + " " +
         shell_quote(data + "/1kg_chr20.vcz"));
#endif
  // The two populations files of make-default-data.sh, from the same 1000 Genomes labels
  // (scripts/data/1kg_chr20.panel.tsv): every sample here is phased, so both hold them all.
  const std::string samples = run_ok("bcftools query -l " + shell_quote(vcf));
  std::map<std::string, std::string> pop_of;
  {
    std::ifstream panel(std::string(VCZ_SOURCE_DIR) + "/scripts/data/1kg_chr20.panel.tsv");
    std::string id, pop, super_pop;
    while (panel >> id >> pop >> super_pop) pop_of[id] = pop;
  }
  std::ofstream pops(data + "/1kg_chr20.pops.tsv"), phased(data + "/1kg_chr20.phased.pops.tsv");
  pops << "sample\tpop\tsuper_pop\n";
  phased << "sample\tpop\tsuper_pop\n";
  for (const auto& id : lines_of(samples)) {
    ASSERT_TRUE(pop_of.contains(id)) << id << " is not in scripts/data/1kg_chr20.panel.tsv";
    pops << id << '\t' << pop_of[id] << "\tEUR\n";
    phased << id << '\t' << pop_of[id] << "\tEUR\n";
  }
  pops.close();
  phased.close();
  int ran = 0;
  for (const auto& cmd : listed_commands()) {
    if (cmd == "convert" && !convert) continue;
    const auto help = run(binary() + " " + cmd + " --help");
    for (auto e : examples_of(help.out)) {
      e = e.substr(e.find("vczstats ") + 9);
      const auto r = run("cd " + shell_quote(dir.path().string()) + " && " + binary() + " " + e);
      EXPECT_EQ(r.exit_code, 0) << "vczstats " << e << "\n" << r.err;
      ++ran;
    }
  }
  EXPECT_GE(ran, 27);
}

TEST(CliMistakes, MisspelledCommandsAndStatisticNamesSuggestTheCommand) {
  for (const auto& [args, want] : std::vector<std::pair<std::string, std::string>>{
           {"fst store.vcz", "vczstats divergence"},
           {"pi store.vcz", "vczstats diversity"},
           {"tajima store.vcz", "vczstats diversity"},
           {"tajimas-d store.vcz", "vczstats diversity"},
           {"maf store.vcz", "vczstats freq"},
           {"diversty store.vcz", "did you mean diversity?"},
           {"afdsit store.vcz", "did you mean afdist?"},
           {"simulte out.vcz", "did you mean simulate?"},
           {"frobnicate store.vcz", "`vczstats --help` lists the commands"},
           {"help", "`vczstats --help` lists the commands"},
           {"", "no command given"}}) {
    const auto r = run(binary() + " " + args);
    expect_usage_error(r, args);
    EXPECT_NE(r.err.find(want), std::string::npos) << args << "\n" << r.err;
  }
}

TEST(CliMistakes, ParseErrorsAreOneLineWithSuggestions) {
  for (const auto& [args, want] : std::vector<std::pair<std::string, std::string>>{
           {"diversity /no/store.vcz --window-sise 1000",
            "diversity: unknown option --window-sise; did you mean --window-size?"},
           {"diversity /no/store.vcz --widnow-size=1000", "did you mean --window-size?"},
           {"afdist /no/store.vcz --bisn 5", "did you mean --bins?"},
           {"afdist /no/store.vcz --no-progres", "did you mean --no-progress?"},
           {"afdist /no/store.vcz --regions-overl pos", "did you mean --regions-overlap?"},
           {"afdist /no/store.vcz --zzzzzz", "afdist: unknown option --zzzzzz ("},
           {"afdist", "afdist: STORE is required"},
           {"afdist /no/store.vcz --bins", "afdist: --bins"},
           {"afdist /no/store.vcz --format xml", "afdist: --format"},
           {"--frobnicate", "unknown option --frobnicate"}}) {
    const auto r = run(binary() + " " + args);
    expect_usage_error(r, args);
    EXPECT_NE(r.err.find(want), std::string::npos) << args << "\n" << r.err;
  }
  // --help and --version still print on stdout and succeed.
  EXPECT_EQ(run(binary() + " --version").exit_code, 0);
  EXPECT_EQ(run(binary() + " ihs --help").exit_code, 0);
}

TEST(CliMistakes, HiddenTestingOptionsAreStillAccepted) {
  TempDir dir;
  const std::string store = (dir / "s.vcz").string();
  run_ok(binary() + " simulate " + store + " --samples 8 --variants 200 --seed 3");
  const auto plain = run_ok(binary() + " afdist " + store);
  EXPECT_EQ(run_ok(binary() + " afdist " + store + " --max-unit-variants 7"), plain);
  EXPECT_EQ(run_ok(binary() + " afdist " + store + " --gpu-seed-baseline --device cpu"), plain);
  EXPECT_EQ(run_ok(binary() + " afdist " + store + " --pinned-hostalloc --device cpu"), plain);
  EXPECT_EQ(run_ok(binary() + " afdist " + store + " --no-gpu-prestart --device cpu"), plain);
  EXPECT_EQ(run_ok(binary() + " afdist " + store + " --thread-shares 2 --device cpu"), plain);
  run_ok(binary() + " ihs " + store + " --segment 64 --context 16 -o " +
         shell_quote((dir / "ihs.tsv").string()));
}
