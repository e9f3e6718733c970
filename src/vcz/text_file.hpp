#pragma once
// Small text inputs of the query (regions, samples and populations files), a tokenizer that
// walks such a text once without copying it, and the parsers of those texts (separate from
// reading the files, so that they can be fuzzed without files).

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "vczstats/populations.hpp"
#include "vczstats/string_table.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats::vcz {

/// Read a whole (optionally gzip-compressed) text file. @throws IoError naming the file.
std::string read_text_file(const std::filesystem::path& path);

/// Whitespace as std::isspace in the C locale (what `istream >> string` splits on).
inline bool is_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

/// The next whitespace-separated token of @p rest, removed from it; empty when none is left.
inline std::string_view next_token(std::string_view& rest) {
  std::size_t b = 0;
  while (b < rest.size() && is_space(rest[b])) ++b;
  std::size_t e = b;
  while (e < rest.size() && !is_space(rest[e])) ++e;
  const auto token = rest.substr(b, e - b);
  rest.remove_prefix(e);
  return token;
}

/// Number of lines of @p text (for reserving).
inline std::int64_t count_lines(std::string_view text) {
  std::int64_t n = 0;
  for (char c : text) n += c == '\n';
  return n + (!text.empty() && text.back() != '\n');
}

/// Moves tokens of a text to the front of that text, one after another, and makes them a
/// StringTable owning the text: a million names cost no second buffer. Tokens must be added in
/// the order they appear in the text.
class TokenPacker {
 public:
  explicit TokenPacker(std::string& text, std::int64_t expected = 0) : text_(text) {
    offsets_.reserve(static_cast<std::size_t>(expected) + 1);
    offsets_.push_back(0);
  }
  /// Append @p token, a view into the text at or after everything added so far.
  void add(std::string_view token) {
    const auto end = static_cast<std::size_t>(offsets_.back());
    std::memmove(text_.data() + end, token.data(), token.size());
    offsets_.push_back(static_cast<std::int64_t>(end + token.size()));
  }
  std::int64_t size() const { return static_cast<std::int64_t>(offsets_.size()) - 1; }
  /// The tokens as a table; the text is moved into it.
  StringTable finish() {
    text_.resize(static_cast<std::size_t>(offsets_.back()));
    return StringTable::adopt(std::move(text_), std::move(offsets_));
  }

 private:
  std::string& text_;
  std::vector<std::int64_t> offsets_;
};

/// Call fn(line, line_number) for every '\n'-separated line of @p text (numbered from 1; a last
/// line without '\n' counts, as std::getline reads it).
template <class Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  std::int64_t number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const auto line = text.substr(0, end);
    fn(line, ++number);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
}

/// Regions from the text of a regions file named @p name (BED when @p bed), as
/// read_regions_file(). @throws UsageError naming the file and line.
std::vector<Region> parse_regions_text(std::string_view text, const std::string& name, bool bed);

/// Sample names from the text of a samples file, as read_samples_file() (the text is moved into
/// the table).
StringTable parse_samples_text(std::string text);

/// Entries from the text of a populations file named @p name, as read_populations_file() (the
/// text is moved into it). @throws UsageError naming the file and line.
PopulationFile parse_populations_text(std::string text, const std::string& name,
                                      const std::string& column = "");

}  // namespace vczstats::vcz
