#pragma once
// Small text inputs of the query (regions, samples and populations files).

#include <filesystem>
#include <string>

namespace vczstats::vcz {

/// Read a whole (optionally gzip-compressed) text file. @throws IoError naming the file.
std::string read_text_file(const std::filesystem::path& path);

}  // namespace vczstats::vcz
