// Sample names, -s/-S selections and -P populations against brute-force references written from
// the documented rules (std::map lookups, std::istringstream parsing, a sort by chunk,
// population and index), on a store whose sample_id python3-zarr rewrote with random names
// (UTF-8, hidden samples, several sample chunks).

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include "test_util.hpp"
#include "vczstats/error.hpp"
#include "vczstats/populations.hpp"
#include "vczstats/vcz.hpp"

using namespace vczstats;
using namespace vcztest;

namespace {

constexpr std::int64_t kSamples = 2500, kChunk = 600;

// A store of kSamples samples in chunks of kChunk whose sample_id python3-zarr replaced by
// unique random names (1-24 characters, some non-ASCII), 1 in 30 hidden (""); the names are
// also written one per line to names.txt.
struct NamedStore {
  TempDir dir;
  std::string path;
  std::vector<std::string> ids;  // as python wrote them

  explicit NamedStore(int seed) {
    path = (dir / "s.vcz").string();
    run_ok(binary() + " simulate " + path + " --samples " + std::to_string(kSamples) +
           " --variants 3 --samples-chunk-size " + std::to_string(kChunk));
    const auto names = (dir / "names.txt").string();
    run_ok(python() + " -c " +
           shell_quote(
               "import random, sys, zarr\n"
               "random.seed(int(sys.argv[3]))\n"
               "z = zarr.open(sys.argv[1])\n"
               "ids = z['sample_id'][:]\n"
               "alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:|'"
               " + '\\u00e9\\u6570'\n"
               "seen, out = set(), []\n"
               "while len(out) < len(ids):\n"
               "    s = ''.join(random.choice(alphabet) for _ in range(random.randint(1, 24)))\n"
               "    if s not in seen:\n"
               "        seen.add(s)\n"
               "        out.append(s)\n"
               "for i in random.sample(range(len(out)), len(out) // 30):\n"
               "    out[i] = ''\n"
               "ids[:] = out\n"
               "z['sample_id'][:] = ids\n"
               "open(sys.argv[2], 'w', encoding='utf-8').write('\\n'.join(out) + '\\n')\n") +
           " " + path + " " + names + " " + std::to_string(seed));
    std::ifstream in(names);
    std::string line;
    while (std::getline(in, line)) ids.push_back(line);
  }

  // The reference lookup: name -> index of the visible samples, and their indices in order.
  std::pair<std::map<std::string, std::int64_t>, std::vector<std::int64_t>> reference_index()
      const {
    std::map<std::string, std::int64_t> index;
    std::vector<std::int64_t> visible;
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (!ids[i].empty()) {
        index[ids[i]] = static_cast<std::int64_t>(i);
        visible.push_back(static_cast<std::int64_t>(i));
      }
    return {index, visible};
  }
};

// The first whitespace-separated column of every line, skipping '#' lines (as documented).
std::vector<std::string> reference_samples_file(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string first;
    if (ls >> first && first.front() != '#') out.push_back(first);
  }
  return out;
}

struct RefPopulations {
  std::vector<std::pair<std::string, std::string>> entries;  // sample, population
  bool malformed = false;
};

// '#' lines and blank lines skipped. The first line decides the layout: a header naming a sample
// column (IID first, else sample, sample_id, id; any case, '#' allowed) and a population column
// (@p column, else the first of population, pop, group, cluster, super_pop, superpopulation);
// else two columns (sample population) or three (FID IID POP). Data lines have the first line's
// number of columns (at least as many with a header).
RefPopulations reference_populations_file(const std::string& text, const std::string& column = "") {
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  RefPopulations r;
  std::istringstream in(text);
  std::string line;
  int sample_col = -1, pop_col = -1;
  std::size_t width = 0;
  bool header = false;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<std::string> cols;
    for (std::string t; ls >> t;) cols.push_back(t);
    if (cols.empty()) continue;
    const bool comment = cols[0][0] == '#';
    if (sample_col < 0) {
      std::vector<std::string> low;
      for (auto c : cols) low.push_back(lower(c));
      if (low[0][0] == '#') low[0].erase(0, 1);
      auto find = [&](std::vector<std::string> words) {
        for (const auto& w : words)
          for (std::size_t i = 0; i < low.size(); ++i)
            if (low[i] == w) return static_cast<int>(i);
        return -1;
      };
      // Which population word comes first in the line, not in the list.
      auto first_of = [&](std::vector<std::string> words) {
        for (std::size_t i = 0; i < low.size(); ++i)
          if (std::find(words.begin(), words.end(), low[i]) != words.end())
            return static_cast<int>(i);
        return -1;
      };
      int sc = find({"iid"});
      if (sc < 0) sc = first_of({"sample", "sample_id", "iid", "id"});
      const int pc =
          column.empty()
              ? first_of({"population", "pop", "group", "cluster", "super_pop", "superpopulation"})
              : find({lower(column)});
      if (sc >= 0 && pc >= 0 && pc != sc) {
        sample_col = sc;
        pop_col = pc;
        width = static_cast<std::size_t>(std::max(sc, pc)) + 1;
        header = true;
        continue;
      }
      if (comment) continue;
      if (!column.empty() || (low.size() >= 2 && low[0] == "fid" && low[1] == "iid") ||
          (cols.size() != 2 && cols.size() != 3)) {
        r.malformed = true;
        return r;
      }
      width = cols.size();
      sample_col = width == 3 ? 1 : 0;
      pop_col = width == 3 ? 2 : 1;
    }
    if (comment) continue;
    if (header ? cols.size() < width : cols.size() != width) {
      r.malformed = true;
      return r;
    }
    r.entries.emplace_back(cols[static_cast<std::size_t>(sample_col)],
                           cols[static_cast<std::size_t>(pop_col)]);
  }
  if (r.entries.empty()) r.malformed = true;
  return r;
}

std::string write_file(const TempDir& dir, const std::string& name, const std::string& text) {
  const auto path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Random blanks around a token and a random line end.
std::string blank(std::mt19937& rng) {
  static const char* const kinds[] = {"", "", "", " ", "\t", "  \t"};
  return kinds[rng() % 6];
}
std::string line_end(std::mt19937& rng) {
  return rng() % 5 == 0 ? "\r\n" : "\n";
}

}  // namespace

TEST(VczSamples, SampleIdsAreReadAsPython3ZarrWroteThem) {
  VCZ_REQUIRE_PYTHON_ZARR();
  NamedStore s(1);
  const auto& ids = s.ids;
  ASSERT_EQ(static_cast<std::int64_t>(ids.size()), kSamples);
  const auto store = vcz::VczStore::open(s.path);
  EXPECT_EQ(std::vector<std::string>(store.sample_ids().begin(), store.sample_ids().end()), ids);
  std::vector<std::int64_t> visible;
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (!ids[i].empty()) visible.push_back(static_cast<std::int64_t>(i));
  EXPECT_EQ(store.all_samples().indices, visible);
}

TEST(VczSamples, SelectionsMatchABruteForceReference) {
  VCZ_REQUIRE_PYTHON_ZARR();
  NamedStore s(2);
  const auto store = vcz::VczStore::open(s.path);
  const auto reference = s.reference_index();
  const auto& index = reference.first;
  const auto& visible = reference.second;
  std::mt19937 rng(7);
  int threw = 0, selected = 0;
  for (int trial = 0; trial < 60; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    // Names: visible samples drawn with repetition, a few unknown ones, in random or store
    // order; a leading ^ on every fourth list.
    const auto count = 1 + rng() % (trial % 5 == 0 ? 3 : 2 * kSamples);
    std::vector<std::string> names;
    for (std::size_t k = 0; k < count; ++k)
      names.push_back(trial % 3 == 2 && rng() % 50 == 0
                          ? "unknown" + std::to_string(rng() % 10)
                          : s.ids[static_cast<std::size_t>(visible[rng() % visible.size()])]);
    if (trial % 3 == 1)
      std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
        auto key = [&](const std::string& n) { return index.contains(n) ? index.at(n) : kSamples; };
        return key(a) < key(b);
      });
    const bool exclude = trial % 4 == 1, force = trial % 2 == 1;
    std::string text = rng() % 2 ? "# a comment line\n\n" : "";
    for (std::size_t k = 0; k < names.size(); ++k) {
      text += blank(rng) + (k == 0 && exclude ? "^" : "") + names[k];
      if (rng() % 4 == 0) text += "\tsecond column";
      text += blank(rng) + line_end(rng);
      if (rng() % 20 == 0) text += rng() % 2 ? "\n" : "#skipped " + names[k] + "\n";
    }
    const auto file = write_file(s.dir, "list.txt", text);
    const auto parsed = vcz::read_samples_file(file);
    const auto want_names = reference_samples_file(text);
    ASSERT_EQ(std::vector<std::string>(parsed.begin(), parsed.end()), want_names);

    // Reference: the set of named store indices; unknown names are an error unless forced.
    std::set<std::int64_t> named;
    bool unknown = false;
    for (std::size_t k = 0; k < want_names.size(); ++k) {
      const std::string n = k == 0 && exclude ? want_names[k].substr(1) : want_names[k];
      if (auto it = index.find(n); it != index.end())
        named.insert(it->second);
      else
        unknown = true;
    }
    std::vector<std::int64_t> want;
    for (const auto i : visible)
      if (named.contains(i) != exclude) want.push_back(i);
    if ((unknown && !force) || want.empty()) {
      EXPECT_THROW(store.select_samples(parsed, force), UsageError);
      ++threw;
      continue;
    }
    EXPECT_EQ(store.select_samples(parsed, force).indices, want);
    ++selected;
  }
  EXPECT_GT(threw, 5);
  EXPECT_GT(selected, 30);
}

TEST(VczSamples, PopulationsMatchABruteForceReference) {
  VCZ_REQUIRE_PYTHON_ZARR();
  NamedStore s(3);
  const auto store = vcz::VczStore::open(s.path);
  const auto reference = s.reference_index();
  const auto& index = reference.first;
  const auto& visible = reference.second;
  std::mt19937 rng(11);
  int threw = 0, grouped = 0;
  for (int trial = 0; trial < 80; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    // Entries: distinct visible samples (a random share of them), in random or store order, in
    // 1-6 populations; some trials add unknown samples, list a sample twice, or use a header.
    std::vector<std::int64_t> pick = visible;
    std::shuffle(pick.begin(), pick.end(), rng);
    pick.resize(1 + rng() % pick.size());
    if (trial % 3 == 1) std::sort(pick.begin(), pick.end());
    const int npop = 1 + static_cast<int>(rng() % 6);
    std::vector<std::pair<std::string, std::string>> entries;
    for (const auto i : pick)
      entries.emplace_back(s.ids[static_cast<std::size_t>(i)],
                           "pop" + std::to_string(rng() % static_cast<unsigned>(npop)));
    if (trial % 5 == 2)
      entries.insert(entries.begin() + static_cast<long>(rng() % entries.size()),
                     {"unknown_sample", "popX"});
    if (trial % 7 == 3) entries.push_back(entries[rng() % entries.size()]);  // listed twice
    std::string text;
    if (trial % 4 == 0) text += rng() % 2 ? "sample\tpopulation\n" : "#IID POP\n";
    for (const auto& [sample, pop] : entries) {
      text += blank(rng) + sample + (rng() % 2 ? "\t" : " ") + blank(rng) + pop + blank(rng) +
              line_end(rng);
      if (rng() % 30 == 0) text += "# comment\n\n";
    }
    const auto file = write_file(s.dir, "pops.tsv", text);

    // The selection it applies to: all samples, or a subset (ascending or shuffled).
    vcz::SampleSelection selection = store.all_samples();
    if (trial % 2 == 1) {
      std::erase_if(selection.indices, [&](std::int64_t) { return rng() % 3 == 0; });
      if (trial % 4 == 3) std::shuffle(selection.indices.begin(), selection.indices.end(), rng);
    }
    const bool force = trial % 5 == 2 && trial % 10 == 2;

    // Reference: populations in order of first appearance, samples by name; the selection
    // sorted by (sample chunk, population, index).
    const auto ref = reference_populations_file(text);
    ASSERT_FALSE(ref.malformed);
    std::vector<std::string> pop_names;
    std::map<std::int64_t, int> pop_of;
    bool bad = false;
    for (const auto& [sample, pop] : ref.entries) {
      auto p = std::find(pop_names.begin(), pop_names.end(), pop);
      if (p == pop_names.end()) p = pop_names.insert(p, pop);
      auto it = index.find(sample);
      if (it == index.end()) {
        bad = bad || !force;
        continue;
      }
      if (pop_of.contains(it->second)) bad = true;
      pop_of[it->second] = static_cast<int>(p - pop_names.begin());
    }
    std::vector<std::tuple<std::int64_t, int, std::int64_t>> keyed;
    for (const auto i : selection.indices)
      if (pop_of.contains(i)) keyed.emplace_back(i / kChunk, pop_of[i], i);
    std::sort(keyed.begin(), keyed.end());
    std::vector<std::int64_t> want_indices, want_sizes(pop_names.size(), 0);
    std::vector<std::int32_t> want_of;
    for (const auto& [chunk, pop, i] : keyed) {
      want_indices.push_back(i);
      want_of.push_back(pop);
      ++want_sizes[static_cast<std::size_t>(pop)];
    }
    bad = bad || std::count(want_sizes.begin(), want_sizes.end(), 0) > 0;

    const auto parsed = vcz::read_populations_file(file);
    if (bad) {
      EXPECT_THROW(vcz::apply_populations(store, parsed, selection, force), UsageError);
      ++threw;
      continue;
    }
    const auto p = vcz::apply_populations(store, parsed, selection, force);
    EXPECT_EQ(p.names, pop_names);
    EXPECT_EQ(p.of, want_of);
    EXPECT_EQ(p.sizes, want_sizes);
    EXPECT_EQ(selection.indices, want_indices);
    ++grouped;
  }
  EXPECT_GT(threw, 10);
  EXPECT_GT(grouped, 40);
}

TEST(VczSamples, PlinkAndPanelPopulationFilesMatchTheReference) {
  // Every layout a user brings: two columns, plink's FID IID POP with and without its header,
  // a 1000 Genomes .panel file by pop and by super_pop, the columns in another order.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"s1 A\ns2 B\n", ""},
      {"fam1 s1 A\nfam2 s2 B\n", ""},
      {"#FID IID POP\nfam1 s1 A\nfam2 s2 B\n", ""},
      {"FID\tIID\tcluster\nfam1\ts1\tA\n", ""},
      {"sample\tpop\tsuper_pop\tgender\ns1\tGBR\tEUR\tmale\ns2\tYRI\tAFR\tfemale\n", ""},
      {"sample\tpop\tsuper_pop\tgender\ns1\tGBR\tEUR\tmale\ns2\tYRI\tAFR\tfemale\n", "super_pop"},
      {"population sample\nA s1\nB s2\n", ""},
      {"# made by hand\ns1 A\n# a comment\ns2 B\n", ""},
  };
  TempDir dir;
  for (const auto& [text, column] : cases) {
    SCOPED_TRACE(text + " column " + column);
    const auto ref = reference_populations_file(text, column);
    ASSERT_FALSE(ref.malformed);
    const auto f = vcz::read_populations_file(write_file(dir, "p.txt", text), column);
    std::vector<std::pair<std::string, std::string>> got;
    for (std::int64_t k = 0; k < f.size(); ++k)
      got.emplace_back(
          std::string(f.samples[k]),
          f.names[static_cast<std::size_t>(f.population[static_cast<std::size_t>(k)])]);
    EXPECT_EQ(got, ref.entries);
  }
  // Spot checks of the reference itself, written by hand.
  EXPECT_EQ(reference_populations_file(cases[1].first).entries[0].first, "s1");
  EXPECT_EQ(reference_populations_file(cases[5].first, "super_pop").entries[1].second, "AFR");
  EXPECT_EQ(reference_populations_file(cases[4].first).entries[1].second, "YRI");
  EXPECT_EQ(reference_populations_file(cases[6].first).entries[0],
            (std::pair<std::string, std::string>{"s1", "A"}));
}

TEST(VczSamples, MalformedPopulationFilesAndDuplicateStoreNamesAreErrors) {
  VCZ_REQUIRE_PYTHON_ZARR();
  NamedStore s(4);
  for (const char* text : {"a\n", "a b c d\n", "a b\nc d e\n", "f a b\nc d\n", "",
                           "# only a comment\n", "sample population\n", "FID IID SEX\nf a 1\n"}) {
    EXPECT_TRUE(reference_populations_file(text).malformed) << text;
    EXPECT_THROW(vcz::read_populations_file(write_file(s.dir, "bad.tsv", text)), UsageError)
        << text;
  }
  // A named column that the header lacks, or a file without a header.
  EXPECT_THROW(
      vcz::read_populations_file(write_file(s.dir, "bad.tsv", "sample pop\na x\n"), "super_pop"),
      UsageError);
  EXPECT_THROW(vcz::read_populations_file(write_file(s.dir, "bad.tsv", "a x\n"), "pop"),
               UsageError);
  // Two visible samples with one name: selecting by name is ambiguous.
  std::size_t a = 0;
  while (s.ids[a].empty()) ++a;
  std::size_t b = a + 1;
  while (s.ids[b].empty()) ++b;
  run_ok(python() + " -c \"import zarr; z = zarr.open('" + s.path +
         "'); ids = z['sample_id'][:]; ids[" + std::to_string(b) + "] = ids[" + std::to_string(a) +
         "]; z['sample_id'][:] = ids\"");
  const auto store = vcz::VczStore::open(s.path);
  EXPECT_EQ(store.all_samples().size(),
            static_cast<std::int64_t>(
                std::count_if(s.ids.begin(), s.ids.end(), [](auto& id) { return !id.empty(); })));
  EXPECT_THROW(store.select_samples({s.ids[a]}), FormatError);
}
