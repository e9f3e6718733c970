#pragma once
/// @file populations.hpp
/// @brief Populations: a sample → population table (-P/--pops) applied to a sample selection.

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "vczstats/vcz.hpp"

namespace vczstats::vcz {

/// @brief A populations file as read: one entry per (sample, population) line, in file order,
/// the sample names in one buffer.
struct PopulationFile {
  std::string path;                      ///< the file, for messages
  StringTable samples;                   ///< sample of each entry
  std::vector<std::int32_t> population;  ///< population of each entry (index into names)
  std::vector<std::int64_t> lines;       ///< line number of each entry, for messages
  std::vector<std::string> names;        ///< populations in order of first appearance
  /// @brief Number of entries.
  std::int64_t size() const { return samples.size(); }
};

/// @brief Read a populations file: two whitespace-separated columns (sample, population), '#'
/// lines and blank lines skipped; a first line "sample population" (any case, optionally '#'
/// prefixed) is a header. One pass over the text, one buffer for the names. A sample listed
/// twice is found by apply_populations. @throws IoError, UsageError (a line with one column or
/// more than two, no entries) naming the file and line.
PopulationFile read_populations_file(const std::filesystem::path& path);

/// @brief The same from (sample, population) pairs given in memory (entry i is "line" i + 1).
/// @throws UsageError when empty.
PopulationFile population_file(const std::vector<std::pair<std::string, std::string>>& entries);

/// @brief Selected samples grouped by population. The selection is reordered so that within
/// each sample chunk the samples of one population are adjacent (populations in order of first
/// appearance in the file, samples in store order within a population), which gives every
/// genotype block a few contiguous population segments.
struct Populations {
  std::vector<std::string> names;   ///< population names, in order of first appearance
  std::vector<std::int32_t> of;     ///< population index of each selected sample (selection order)
  std::vector<std::int64_t> sizes;  ///< selected samples per population
  int count() const { return static_cast<int>(names.size()); }
};

/// @brief A single population "all" holding every sample of @p selection.
Populations single_population(const SampleSelection& selection);

/// @brief Restrict @p selection to the samples of @p file and group it by population (see
/// Populations). @p selection keeps its chunk order; the result's `of` follows the new order.
/// Samples of @p file absent from the store are an error unless @p ignore_missing; samples
/// of the file outside @p selection are dropped. Linear in the samples of the store and the
/// file (a counting sort by population, then by chunk). @throws UsageError (unknown sample, a
/// sample listed twice, a population left empty).
Populations apply_populations(const VczStore& store, const PopulationFile& file,
                              SampleSelection& selection, bool ignore_missing);

}  // namespace vczstats::vcz
