#pragma once
/// @file populations.hpp
/// @brief Populations: a sample → population table (-P/--pops) applied to a sample selection.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "vczstats/vcz.hpp"

namespace vczstats::vcz {

/// @brief One line of a populations file.
struct PopulationEntry {
  std::string sample;
  std::string population;
};

/// @brief Read a populations file: two whitespace-separated columns (sample, population), '#'
/// lines and blank lines skipped; a first line "sample population" (any case, optionally '#'
/// prefixed) is a header. @throws IoError, UsageError (a line with one column, a sample listed
/// twice) naming the file and line.
std::vector<PopulationEntry> read_populations_file(const std::filesystem::path& path);

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

/// @brief Restrict @p selection to the samples of @p entries and group it by population (see
/// Populations). @p selection keeps its chunk order; the result's `of` follows the new order.
/// Samples of @p entries absent from the store are an error unless @p ignore_missing; samples
/// of the file outside @p selection are dropped. @throws UsageError (unknown sample, a
/// population left empty, nothing selected).
Populations apply_populations(const VczStore& store, const std::vector<PopulationEntry>& entries,
                              SampleSelection& selection, bool ignore_missing);

}  // namespace vczstats::vcz
