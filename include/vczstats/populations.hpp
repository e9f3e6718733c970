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

/// @brief Read a populations file, its layout told by its first line:
/// - a header naming the columns (any case, optionally '#'-prefixed): the sample column is the
///   first of IID, sample, sample_id, id; the population column is @p column when given (e.g.
///   "super_pop" of a 1000 Genomes `.panel` file: `sample pop super_pop gender`), else the first
///   of population, pop, group, cluster, super_pop; other columns are ignored;
/// - no header: two columns (sample, population), or three (plink's `FID IID POP`, as a
///   `--within` cluster file; a `#FID IID POP` header is read as a header).
/// '#' lines and blank lines are skipped. One pass over the text, one buffer for the names. A
/// sample listed twice is found by apply_populations. @throws IoError, UsageError (a line with
/// another number of columns than the first, a header without the population column, no
/// entries) naming the file and line.
PopulationFile read_populations_file(const std::filesystem::path& path,
                                     const std::string& column = "");

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
