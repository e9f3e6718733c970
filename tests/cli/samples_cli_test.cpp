// End to end at 10^5 samples: one sample selection or population table given by different
// routes (-S in random or store order, ^ and the complement, -s, a -P file restricted to the
// -S samples, lines shuffled, unknown names with --force-samples) gives byte-identical output.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>

#include "test_util.hpp"

using namespace vcztest;

namespace {

std::string write_lines(const TempDir& dir, const std::string& name,
                        const std::vector<std::string>& lines, const std::string& first = "") {
  const auto path = (dir / name).string();
  std::ofstream out(path);
  if (!first.empty()) out << first << "\n";
  for (const auto& l : lines) out << l << "\n";
  return path;
}

// Shuffle @p lines (sample TAB population) keeping each population's first line ahead of every
// line of a later population, so the order of first appearance (the output order) is kept.
std::vector<std::string> shuffle_keeping_first(std::vector<std::string> lines, std::mt19937& rng) {
  std::vector<std::string> firsts, rest;
  std::vector<std::string> seen;
  for (auto& l : lines) {
    const auto pop = l.substr(l.find('\t') + 1);
    if (std::find(seen.begin(), seen.end(), pop) == seen.end()) {
      seen.push_back(pop);
      firsts.push_back(l);
    } else {
      rest.push_back(l);
    }
  }
  std::shuffle(rest.begin(), rest.end(), rng);
  firsts.insert(firsts.end(), rest.begin(), rest.end());
  return firsts;
}

}  // namespace

TEST(CliSamples, OneSelectionByDifferentRoutesGivesIdenticalOutput) {
  TempDir dir;
  const auto store = (dir / "big.vcz").string(), pops = (dir / "pops.tsv").string();
  run_ok(binary() + " simulate " + store + " --samples 100000 --variants 40 --pops 3 --pops-file " +
         pops + " --samples-chunk-size 30000 --missing 0.01 --seed 5 -t 2");
  std::vector<std::string> table, samples;  // "sample\tpop" lines, sample names, store order
  {
    std::ifstream in(pops);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      table.push_back(line);
      samples.push_back(line.substr(0, line.find('\t')));
    }
  }
  ASSERT_EQ(samples.size(), 100000u);
  std::mt19937 rng(17);
  std::vector<char> in_subset(samples.size());
  std::vector<std::string> subset, complement, sub_table;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    in_subset[i] = rng() % 5 < 2;  // 40%
    (in_subset[i] ? subset : complement).push_back(samples[i]);
    if (in_subset[i]) sub_table.push_back(table[i]);
  }
  auto shuffled = [&](std::vector<std::string> v) {
    std::shuffle(v.begin(), v.end(), rng);
    return v;
  };
  const auto run_cmd = [&](const std::string& args) {
    return run_ok(binary() + " " + args + " --no-progress -t 2");
  };

  // afdist: -S in random order, in store order, as ^ and the complement, against -s.
  const auto s_random = write_lines(dir, "random.txt", shuffled(subset));
  const auto s_sorted = write_lines(dir, "sorted.txt", subset);
  auto excl = shuffled(complement);
  excl.front() = "^" + excl.front();
  const auto s_excl = write_lines(dir, "excl.txt", excl);
  const auto want = run_cmd("afdist " + store + " -S " + s_sorted);
  EXPECT_EQ(run_cmd("afdist " + store + " -S " + s_random), want);
  EXPECT_EQ(run_cmd("afdist " + store + " -S " + s_excl), want);
  EXPECT_NE(run_cmd("afdist " + store), want);  // the selection changes the result
  std::vector<std::string> few(subset.begin(), subset.begin() + 300);
  std::string list;
  for (const auto& s : few) list += (list.empty() ? "" : ",") + s;
  std::reverse(few.begin(), few.end());
  EXPECT_EQ(run_cmd("afdist " + store + " -s " + list),
            run_cmd("afdist " + store + " -S " + write_lines(dir, "few.txt", few)));

  // freq: -P with -S against -P of the -S samples only, lines shuffled.
  const auto p_sub = write_lines(dir, "pops_sub.tsv", shuffle_keeping_first(sub_table, rng));
  const auto freq = run_cmd("freq " + store + " -P " + pops + " -S " + s_random);
  EXPECT_EQ(run_cmd("freq " + store + " -P " + p_sub), freq);
  EXPECT_EQ(run_cmd("freq " + store + " -P " + p_sub + " -S " + s_excl), freq);

  // stats: the table as simulate wrote it, shuffled, and with unknown samples ignored.
  const auto stats = run_cmd("stats " + store + " -P " + pops);
  auto extra = shuffle_keeping_first(table, rng);
  EXPECT_EQ(run_cmd("stats " + store + " -P " + write_lines(dir, "pops_shuf.tsv", extra)), stats);
  extra.insert(extra.begin() + 10, "not_a_sample\tpop0");
  extra.push_back("nobody\tpop2");
  const auto p_extra = write_lines(dir, "pops_extra.tsv", extra, "sample\tpopulation");
  EXPECT_EQ(run_cmd("stats " + store + " -P " + p_extra + " --force-samples"), stats);
  const auto r = run(binary() + " stats " + store + " -P " + p_extra + " --no-progress");
  EXPECT_EQ(r.exit_code, 2);  // a usage error: unknown sample
  EXPECT_NE(r.err.find("not_a_sample"), std::string::npos) << r.err;
}
