// Populations files (-P/--pops) and grouping a sample selection by population.

#include "vczstats/populations.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <numeric>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "vcz/text_file.hpp"
#include "vczstats/error.hpp"

namespace vczstats::vcz {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

template <class Words>
bool any_of_words(std::string_view s, const Words& words) {
  return std::any_of(words.begin(), words.end(), [&](auto w) { return iequals(s, w); });
}

constexpr std::array<std::string_view, 4> kSampleWords = {"sample", "sample_id", "iid", "id"};
constexpr std::array<std::string_view, 6> kPopulationWords = {
    "population", "pop", "group", "cluster", "super_pop", "superpopulation"};

/// The columns of one line, the '#' of a header's first word removed.
std::vector<std::string_view> tokens(std::string_view line) {
  std::vector<std::string_view> out;
  for (auto t = next_token(line); !t.empty(); t = next_token(line)) out.push_back(t);
  if (!out.empty() && out[0].starts_with('#')) out[0].remove_prefix(1);
  return out;
}

/// Which columns hold the sample and the population, read from the file's first line.
struct Layout {
  bool header = false;
  std::size_t sample = 0, population = 1, columns = 2;
};

/// The layout of a populations file whose first line is @p first: a header naming a sample
/// column (sample, sample_id, IID, id) and a population column (@p column, or population, pop,
/// group, cluster, super_pop); else two columns (sample population) or three (plink's FID IID
/// POP).
Layout layout_of(const std::vector<std::string_view>& first, const std::string& name,
                 std::int64_t lineno, const std::string& column) {
  Layout l;
  const auto find = [&](auto&& match) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < first.size(); ++i)
      if (match(first[i])) return i;
    return std::nullopt;
  };
  const auto iid = find([](auto t) { return iequals(t, "iid"); });
  const auto sample = iid ? iid : find([](auto t) { return any_of_words(t, kSampleWords); });
  const bool plink_header = first.size() >= 2 && iequals(first[0], "fid") && iid;
  if (sample || plink_header) {
    const auto pop = column.empty() ? find([](auto t) { return any_of_words(t, kPopulationWords); })
                                    : find([&](auto t) { return iequals(t, column); });
    if (pop && pop != sample) {
      l.header = true;
      l.sample = *sample;
      l.population = *pop;
      l.columns = std::max(l.sample, l.population) + 1;
      return l;
    }
    if (!column.empty() || plink_header) {
      std::string names;
      for (auto t : first) names += (names.empty() ? "" : ", ") + std::string(t);
      throw UsageError(name + ":" + std::to_string(lineno) + ": no population column " +
                       (column.empty() ? std::string("(population, pop, group, cluster)")
                                       : "named '" + column + "'") +
                       " among the header's columns " + names);
    }
  }
  if (!column.empty())
    throw UsageError(name + ": the population column '" + column +
                     "' was asked for, but the first line is not a header naming the columns");
  if (first.size() == 3) {  // plink's FID IID POP (a --within cluster file)
    l.sample = 1;
    l.population = 2;
    l.columns = 3;
  } else if (first.size() != 2) {
    throw UsageError(name + ":" + std::to_string(lineno) + ": expected 2 columns (sample " +
                     "population) or 3 (plink's FID IID POP), got " + std::to_string(first.size()) +
                     "; a first line naming the columns (e.g. 'sample pop super_pop') lets a "
                     "file have more");
  }
  return l;
}

// Population names to indices: a scan of the names while they are few, a hash map beyond.
class PopulationIndex {
 public:
  explicit PopulationIndex(std::vector<std::string>& names) : names_(names) {}
  std::int32_t operator()(std::string_view name) {
    if (names_.size() <= kScan) {
      for (std::size_t i = 0; i < names_.size(); ++i)
        if (names_[i] == name) return static_cast<std::int32_t>(i);
    } else if (auto it = map_.find(std::string(name)); it != map_.end()) {
      return it->second;
    }
    const auto id = static_cast<std::int32_t>(names_.size());
    names_.emplace_back(name);
    if (names_.size() > kScan)
      for (std::size_t i = map_.size(); i < names_.size(); ++i)
        map_.emplace(names_[i], static_cast<std::int32_t>(i));
    return id;
  }

 private:
  static constexpr std::size_t kScan = 16;
  std::vector<std::string>& names_;
  std::unordered_map<std::string, std::int32_t> map_;
};

}  // namespace

PopulationFile parse_populations_text(std::string text, const std::string& name,
                                      const std::string& column) {
  PopulationFile f;
  f.path = name;
  const std::int64_t lines = count_lines(text);
  TokenPacker samples(text, lines);
  f.population.reserve(static_cast<std::size_t>(lines));
  f.lines.reserve(static_cast<std::size_t>(lines));
  PopulationIndex population(f.names);
  Layout layout;
  bool decided = false;  // whether a line has decided the layout yet
  for_each_line(text, [&](std::string_view line, std::int64_t lineno) {
    const bool comment = line.find_first_not_of(" \t") != std::string_view::npos &&
                         line[line.find_first_not_of(" \t")] == '#';
    const auto cols = tokens(line);
    if (cols.empty()) return;
    if (!decided) {
      // The first line decides the layout; a '#' line counts only as a header ('#FID IID POP').
      try {
        layout = layout_of(cols, f.path, lineno, column);
      } catch (const UsageError&) {
        if (comment) return;  // a comment before the data
        throw;
      }
      if (comment && !layout.header) return;
      decided = true;
      if (layout.header) return;
    }
    if (comment) return;
    const auto where = [&] { return f.path + ":" + std::to_string(lineno) + ": "; };
    if (layout.header ? cols.size() < layout.columns : cols.size() != layout.columns)
      throw UsageError(where() + "expected " + std::to_string(layout.columns) +
                       " columns, as on the first line, got " + std::to_string(cols.size()));
    f.population.push_back(population(cols[layout.population]));
    samples.add(cols[layout.sample]);
    f.lines.push_back(lineno);
  });
  f.samples = samples.finish();
  if (f.samples.empty()) throw UsageError(f.path + ": no (sample, population) lines");
  return f;
}

PopulationFile read_populations_file(const std::filesystem::path& path, const std::string& column) {
  return parse_populations_text(read_text_file(path), path.string(), column);
}

PopulationFile population_file(const std::vector<std::pair<std::string, std::string>>& entries) {
  PopulationFile f;
  f.path = "populations";
  PopulationIndex population(f.names);
  std::vector<std::string_view> names;
  names.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    names.push_back(entries[i].first);
    f.population.push_back(population(entries[i].second));
    f.lines.push_back(static_cast<std::int64_t>(i) + 1);
  }
  f.samples = StringTable::from(names);
  if (f.samples.empty()) throw UsageError("populations: no (sample, population) entries");
  return f;
}

Populations single_population(const SampleSelection& selection) {
  Populations p;
  p.names = {"all"};
  p.of.assign(static_cast<std::size_t>(selection.size()), 0);
  p.sizes = {selection.size()};
  return p;
}

namespace {

// Stable counting sort of @p in into @p out by key(value) in [0, keys).
template <class Key>
void counting_sort(const std::vector<std::int64_t>& in, std::vector<std::int64_t>& out,
                   std::int64_t keys, Key&& key) {
  std::vector<std::int64_t> start(static_cast<std::size_t>(keys) + 1, 0);
  for (const auto v : in) ++start[static_cast<std::size_t>(key(v)) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  out.resize(in.size());
  for (const auto v : in)
    out[static_cast<std::size_t>(start[static_cast<std::size_t>(key(v))]++)] = v;
}

}  // namespace

Populations apply_populations(const VczStore& store, const PopulationFile& file,
                              SampleSelection& selection, bool ignore_missing) {
  // The population of every store sample (-1: none), in one pass over the file.
  const std::int64_t total = store.num_samples_total();
  std::vector<std::int32_t> pop_of(static_cast<std::size_t>(total), -1);
  const auto found = store.find_samples(file.samples);
  for (std::int64_t k = 0; k < file.size(); ++k) {
    const std::int64_t i = found[static_cast<std::size_t>(k)];
    const auto line = [&](std::int64_t entry) {
      return std::to_string(file.lines[static_cast<std::size_t>(entry)]);
    };
    if (i < 0) {
      if (ignore_missing) continue;
      throw UsageError(file.path + ":" + line(k) + ": sample '" + std::string(file.samples[k]) +
                       "' is not in " + store.path() +
                       " (use --force-samples to ignore unknown samples)");
    }
    auto& pop = pop_of[static_cast<std::size_t>(i)];
    if (pop >= 0) {
      std::int64_t first = 0;
      while (found[static_cast<std::size_t>(first)] != i) ++first;
      throw UsageError(file.path + ":" + line(k) + ": sample '" + std::string(file.samples[k]) +
                       "' is already listed on line " + line(first));
    }
    pop = file.population[static_cast<std::size_t>(k)];
  }

  // Keep the selected samples that have a population; within each sample chunk order them by
  // population, then by store index: sorted by index, a stable counting sort by population and
  // then one by chunk gives that order.
  auto& kept = selection.indices;
  if (!std::is_sorted(kept.begin(), kept.end())) std::sort(kept.begin(), kept.end());
  std::erase_if(kept, [&](std::int64_t i) { return pop_of[static_cast<std::size_t>(i)] < 0; });
  const std::int64_t cs =
      std::max<std::int64_t>(1, store.has_genotypes() ? store.genotypes().chunks()[1] : total + 1);
  const auto npop = static_cast<std::int64_t>(file.names.size());
  std::vector<std::int64_t> by_pop;
  counting_sort(kept, by_pop, npop,
                [&](std::int64_t i) { return pop_of[static_cast<std::size_t>(i)]; });
  counting_sort(by_pop, kept, total / cs + 1, [&](std::int64_t i) { return i / cs; });

  Populations p;
  p.names = file.names;
  p.sizes.assign(p.names.size(), 0);
  p.of.resize(kept.size());
  for (std::size_t k = 0; k < kept.size(); ++k) {
    const auto pop = pop_of[static_cast<std::size_t>(kept[k])];
    p.of[k] = pop;
    ++p.sizes[static_cast<std::size_t>(pop)];
  }
  for (std::size_t i = 0; i < p.names.size(); ++i)
    if (p.sizes[i] == 0)
      throw UsageError("population '" + p.names[i] +
                       "' has no selected sample (check the population file and -s/-S)");
  return p;
}

}  // namespace vczstats::vcz
