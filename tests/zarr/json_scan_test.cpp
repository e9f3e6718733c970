// The bounded JSON helpers: nesting limits, and the scanner that splits consolidated metadata
// into its documents, checked against nlohmann's parse of the same text.

#include "zarr/json_scan.hpp"

#include <gtest/gtest.h>

namespace {

using vczstats::FormatError;
using vczstats::zarr::detail::check_json_depth;
using vczstats::zarr::detail::JsonScanner;
using vczstats::zarr::detail::kMaxJsonDepth;
using vczstats::zarr::detail::parse_json_bounded;

TEST(JsonScan, NestingDeeperThanTheLimitIsAFormatErrorNamingTheDocument) {
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_NO_THROW(check_json_depth(ok, "doc"));
  const std::string deep = "{\"a\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
  try {
    parse_json_bounded(deep, "store: .zmetadata");
    FAIL() << "expected FormatError";
  } catch (const FormatError& e) {
    EXPECT_NE(std::string(e.what()).find("store: .zmetadata: invalid JSON: nested deeper"),
              std::string::npos)
        << e.what();
  }
  // Brackets inside strings (escaped quotes too) do not count.
  const std::string in_string = "{\"a\": \"" + std::string(1000, '[') + "\\\"\"}";
  EXPECT_EQ(parse_json_bounded(in_string, "doc")["a"].get<std::string>().size(), 1001u);
}

TEST(JsonScan, MembersAreTheTextOfEachValueAsNlohmannReadsIt) {
  const std::string text = R"( {"metadata": {".zgroup": {"zarr_format": 2},
    "a\"b/.zarray": {"chunks": [1, 2], "s": "}]{[\\", "n": null},
    "x/.zattrs": [], "\u00e9": -1.5e3, "t": true }, "zarr_consolidated_format": 1} )";
  const JsonScanner scan(text, "doc");
  const auto root = scan.root();
  const auto meta = scan.member(root, "metadata");
  ASSERT_FALSE(meta.empty());
  const auto reference = nlohmann::json::parse(text)["metadata"];
  const auto members = scan.members(meta);
  ASSERT_EQ(members.size(), reference.size());
  for (const auto& [name, value] : members) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(reference.contains(name));
    EXPECT_EQ(nlohmann::json::parse(value), reference[name]);
  }
  EXPECT_EQ(scan.member(root, "zarr_consolidated_format"), "1");
  EXPECT_TRUE(scan.member(root, "absent").empty());
}

TEST(JsonScan, BrokenTextIsAFormatError) {
  for (const std::string bad : {"{\"a\": 1", "{\"a\" 1}", "{\"a\": \"open}", "{\"a\": 1} x",
                                "{\"a\": [1, 2}", "[1]", "{a: 1}"}) {
    SCOPED_TRACE(bad);
    const JsonScanner scan(bad, "doc");
    EXPECT_THROW(scan.members(scan.root()), FormatError);
  }
}

}  // namespace
