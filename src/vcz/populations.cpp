// Populations files (-P/--pops) and grouping a sample selection by population.

#include "vczstats/populations.hpp"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "vcz/text_file.hpp"
#include "vczstats/error.hpp"

namespace vczstats::vcz {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_header(const std::string& a, const std::string& b) {
  std::string first = lower(a);
  if (first.starts_with("#")) first.erase(0, 1);
  const std::string second = lower(b);
  return (first == "sample" || first == "sample_id" || first == "iid" || first == "id") &&
         (second == "population" || second == "pop" || second == "group");
}

}  // namespace

std::vector<PopulationEntry> parse_populations_text(std::string_view text,
                                                    const std::string& name) {
  std::vector<PopulationEntry> entries;
  std::unordered_map<std::string, std::int64_t> seen;
  std::int64_t lineno = 0;
  bool first_content = true;
  for_each_line(text, [&](std::string_view line) {
    ++lineno;
    const auto cols = split_whitespace(line);
    if (cols.empty()) return;
    const std::string sample(cols[0]);
    if (cols.size() < 2) {
      if (sample.starts_with("#")) return;
      throw UsageError(name + ":" + std::to_string(lineno) +
                       ": expected two columns (sample, population), got '" + std::string(line) +
                       "'");
    }
    const std::string pop(cols[1]);
    const bool header = first_content && is_header(sample, pop);
    first_content = false;
    if (header || sample.starts_with("#")) return;
    if (cols.size() > 2)
      throw UsageError(name + ":" + std::to_string(lineno) +
                       ": expected two columns (sample, population), got more");
    auto [it, fresh] = seen.emplace(sample, lineno);
    if (!fresh)
      throw UsageError(name + ":" + std::to_string(lineno) + ": sample '" + sample +
                       "' is already listed on line " + std::to_string(it->second));
    entries.push_back({sample, pop});
  });
  if (entries.empty()) throw UsageError(name + ": no (sample, population) lines");
  return entries;
}

std::vector<PopulationEntry> read_populations_file(const std::filesystem::path& path) {
  return parse_populations_text(read_text_file(path), path.string());
}

Populations single_population(const SampleSelection& selection) {
  Populations p;
  p.names = {"all"};
  p.of.assign(static_cast<std::size_t>(selection.size()), 0);
  p.sizes = {selection.size()};
  return p;
}

Populations apply_populations(const VczStore& store, const std::vector<PopulationEntry>& entries,
                              SampleSelection& selection, bool ignore_missing) {
  Populations p;
  std::unordered_map<std::string, std::int32_t> pop_index;
  std::unordered_map<std::string, std::int32_t> sample_pop;
  for (const auto& e : entries) {
    auto [it, fresh] = pop_index.emplace(e.population, static_cast<std::int32_t>(p.names.size()));
    if (fresh) p.names.push_back(e.population);
    sample_pop.emplace(e.sample, it->second);
  }
  std::unordered_map<std::string, std::int64_t> in_store;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(store.sample_ids().size()); ++i)
    in_store.emplace(store.sample_ids()[static_cast<std::size_t>(i)], i);
  for (const auto& e : entries)
    if (!in_store.contains(e.sample) && !ignore_missing)
      throw UsageError("population file: sample '" + e.sample + "' is not in " + store.path() +
                       " (use --force-samples to ignore unknown samples)");

  // Keep the selected samples that have a population; within each sample chunk order them by
  // population, then by store index.
  const std::int64_t cs =
      store.has_genotypes() ? store.genotypes().chunks()[1] : store.num_samples_total() + 1;
  struct Keyed {
    std::int64_t chunk;
    std::int32_t pop;
    std::int64_t index;
  };
  std::vector<Keyed> kept;
  for (std::int64_t idx : selection.indices) {
    auto it = sample_pop.find(store.sample_ids()[static_cast<std::size_t>(idx)]);
    if (it != sample_pop.end())
      kept.push_back({idx / std::max<std::int64_t>(cs, 1), it->second, idx});
  }
  std::stable_sort(kept.begin(), kept.end(), [](const Keyed& a, const Keyed& b) {
    if (a.chunk != b.chunk) return a.chunk < b.chunk;
    if (a.pop != b.pop) return a.pop < b.pop;
    return a.index < b.index;
  });
  SampleSelection out;
  p.sizes.assign(p.names.size(), 0);
  for (const auto& k : kept) {
    out.indices.push_back(k.index);
    p.of.push_back(k.pop);
    ++p.sizes[static_cast<std::size_t>(k.pop)];
  }
  for (std::size_t i = 0; i < p.names.size(); ++i)
    if (p.sizes[i] == 0)
      throw UsageError("population '" + p.names[i] +
                       "' has no selected sample (check the population file and -s/-S)");
  selection = std::move(out);
  return p;
}

}  // namespace vczstats::vcz
