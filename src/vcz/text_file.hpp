#pragma once
// Small text inputs of the query (regions, samples and populations files): reading them, and
// parsing their text (separate, so that the parsers can be fuzzed without files).

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "vczstats/populations.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats::vcz {

/// Read a whole (optionally gzip-compressed) text file. @throws IoError naming the file.
std::string read_text_file(const std::filesystem::path& path);

/// Call @p fn for each line of @p text (without its '\n'; a last line without one included).
void for_each_line(std::string_view text, const std::function<void(std::string_view)>& fn);

/// The whitespace-separated columns of a line.
std::vector<std::string_view> split_whitespace(std::string_view line);

/// Regions from the text of a regions file named @p name (BED when @p bed), as
/// read_regions_file(). @throws UsageError naming the file and line.
std::vector<Region> parse_regions_text(std::string_view text, const std::string& name, bool bed);

/// Sample names from the text of a samples file, as read_samples_file().
std::vector<std::string> parse_samples_text(std::string_view text);

/// Entries from the text of a populations file named @p name, as read_populations_file().
/// @throws UsageError naming the file and line.
std::vector<PopulationEntry> parse_populations_text(std::string_view text, const std::string& name);

}  // namespace vczstats::vcz
