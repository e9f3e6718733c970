#pragma once
/// @file bins.hpp
/// @brief Lengths in bp and bins of distance as the CLI and Python take them (`--window-size`,
/// `ld --decay`, `ld-stats --bp-bins`): one parser for both.

#include <cstdint>
#include <string>
#include <vector>

namespace vczstats {

/// @brief A length in bp from @p text: a whole number (bp), or a number with a kb or Mb suffix
/// (100kb, 1.5Mb; also bp, k, M, any case); it must be a positive whole number of bases.
/// @throws UsageError naming @p option (when not empty) and the text.
std::int64_t parse_bp_length(const std::string& text, const std::string& option);

/// @brief Bin edges in bp from @p text: "E0,E1,...,En" (each 0 or a length as
/// parse_bp_length() reads it), or "START:STOP:STEP" (START, START + STEP, ..., and STOP as the
/// last edge even when STEP does not divide STOP - START).
/// @throws UsageError naming @p option and the text unless there are two or more increasing
/// edges (at most 10^7 bins).
std::vector<std::int64_t> parse_bin_edges(const std::string& text, const std::string& option);

/// @brief Numbers from @p text, comma-separated (e.g. `--r-bins` edges, in Morgans).
/// @throws UsageError naming @p option and the first item that is not a number.
std::vector<double> parse_number_list(const std::string& text, const std::string& option);

/// @brief Check bin edges given as numbers. @throws UsageError naming @p option unless @p edges
/// are two or more strictly increasing edges from 0 on.
void check_bin_edges(const std::vector<std::int64_t>& edges, const std::string& option);

/// @brief The bin of distance @p d among the edges @p edges (bin k: edges[k] <= d <
/// edges[k + 1]), or -1 outside them.
std::int64_t bin_of(const std::vector<std::int64_t>& edges, std::int64_t d);

}  // namespace vczstats
