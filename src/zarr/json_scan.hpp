#pragma once
/// @file json_scan.hpp
/// @brief Private: JSON from stores, bounded. Metadata may come from a server that misbehaves:
/// nesting is limited before nlohmann sees a document (its parser is iterative, but dump() and
/// other walks recurse), and consolidated metadata is split into its documents by scanning the
/// text, so each document keeps its own bytes (no DOM of the whole object, no re-serialising).

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "vczstats/error.hpp"

namespace vczstats::zarr::detail {

/// @brief Deepest nesting of arrays and objects accepted in a metadata document.
inline constexpr std::size_t kMaxJsonDepth = 128;

/// @brief Throws FormatError naming @p what when @p text nests arrays and objects deeper than
/// kMaxJsonDepth (strings are skipped, so brackets inside them do not count).
inline void check_json_depth(std::string_view text, const std::string& what) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        throw FormatError(
            fmt::format("{}: invalid JSON: nested deeper than {} levels", what, kMaxJsonDepth));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

/// @brief Parse @p text after check_json_depth; errors are FormatErrors naming @p what.
inline nlohmann::json parse_json_bounded(std::string_view text, const std::string& what) {
  check_json_depth(text, what);
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(fmt::format("{}: invalid JSON: {}", what, e.what()));
  }
}

/// @brief A scanner over one JSON text that finds the members of objects without building
/// them: values come back as spans of the text. Assumes check_json_depth passed.
class JsonScanner {
 public:
  JsonScanner(std::string_view text, std::string what) : text_(text), what_(std::move(what)) {}

  /// @brief The members of the object spanning @p value: (decoded name, value's text).
  std::vector<std::pair<std::string, std::string_view>> members(std::string_view value) const {
    std::vector<std::pair<std::string, std::string_view>> out;
    for_each_member(value, [&](std::string_view name, std::string_view v) {
      out.emplace_back(std::string(name), v);
    });
    return out;
  }

  /// @brief Call @p fn(decoded name, value's text) for each member of the object spanning
  /// @p value, in order, without building them all (consolidated metadata may hold millions).
  template <class Fn>
  void for_each_member(std::string_view value, Fn&& fn) const {
    std::size_t i = offset_of(value);
    const std::size_t end = i + value.size();
    i = skip_ws(i);
    if (i >= end || text_[i] != '{') fail(i, "an object");
    i = skip_ws(i + 1);
    if (i < end && text_[i] == '}') return;
    std::string decoded;
    for (;;) {
      if (i >= end || text_[i] != '"') fail(i, "a member name");
      const std::size_t name_end = skip_string(i);
      std::string_view name = text_.substr(i + 1, name_end - i - 2);
      if (name.find('\\') != std::string_view::npos) {  // escapes: let nlohmann decode them
        try {
          decoded = nlohmann::json::parse(text_.substr(i, name_end - i)).get<std::string>();
        } catch (const nlohmann::json::exception& e) {
          throw FormatError(fmt::format("{}: invalid JSON at byte {}: {}", what_, i, e.what()));
        }
        name = decoded;
      }
      i = skip_ws(name_end);
      if (i >= end || text_[i] != ':') fail(i, "':'");
      const std::size_t v = skip_ws(i + 1);
      const std::size_t v_end = skip_value(v);
      fn(name, text_.substr(v, v_end - v));
      i = skip_ws(v_end);
      if (i < end && text_[i] == ',') {
        i = skip_ws(i + 1);
        continue;
      }
      if (i < end && text_[i] == '}') return;
      fail(i, "',' or '}'");
    }
  }

  /// @brief The whole text as a value (leading and trailing white space trimmed); it must be
  /// one value with nothing after it.
  std::string_view root() const {
    const std::size_t a = skip_ws(0);
    const std::size_t b = skip_value(a);
    if (skip_ws(b) != text_.size()) fail(skip_ws(b), "the end of the document");
    return text_.substr(a, b - a);
  }

  /// @brief The value of member @p name of the object @p value, or an empty view.
  std::string_view member(std::string_view value, std::string_view name) const {
    for (const auto& [k, v] : members(value))
      if (k == name) return v;
    return {};
  }

 private:
  std::size_t offset_of(std::string_view v) const {
    return static_cast<std::size_t>(v.data() - text_.data());
  }
  [[noreturn]] void fail(std::size_t at, const char* expected) const {
    throw FormatError(fmt::format("{}: invalid JSON at byte {}: expected {}", what_, at, expected));
  }
  std::size_t skip_ws(std::size_t i) const {
    while (i < text_.size() &&
           (text_[i] == ' ' || text_[i] == '\n' || text_[i] == '\r' || text_[i] == '\t'))
      ++i;
    return i;
  }
  /// Past the string starting at @p i (a '"').
  std::size_t skip_string(std::size_t i) const {
    for (++i; i < text_.size(); ++i) {
      if (text_[i] == '\\')
        ++i;
      else if (text_[i] == '"')
        return i + 1;
    }
    fail(text_.size(), "the end of a string");
  }
  /// Past the value starting at @p i (brackets counted, strings skipped).
  std::size_t skip_value(std::size_t i) const {
    if (i >= text_.size()) fail(i, "a value");
    const char c = text_[i];
    if (c == '"') return skip_string(i);
    if (c == '{' || c == '[') {
      std::size_t depth = 0;
      for (; i < text_.size(); ++i) {
        const char d = text_[i];
        if (d == '"') {
          i = skip_string(i) - 1;
        } else if (d == '{' || d == '[') {
          ++depth;
        } else if (d == '}' || d == ']') {
          if (--depth == 0) return i + 1;
        }
      }
      fail(text_.size(), "the end of an object or array");
    }
    const std::size_t start = i;
    while (i < text_.size() && text_[i] != ',' && text_[i] != '}' && text_[i] != ']' &&
           text_[i] != ' ' && text_[i] != '\n' && text_[i] != '\r' && text_[i] != '\t')
      ++i;
    if (i == start) fail(i, "a value");
    return i;
  }

  std::string_view text_;
  std::string what_;
};

}  // namespace vczstats::zarr::detail
