// The library's TableWriter (vczstats/table_writer.hpp): the TSV and JSON the CLI writes, checked
// against text written out by hand from the format's definition and against an independent JSON
// parser (nlohmann), not against the writer's own earlier output.

#include "vczstats/table_writer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vczstats/error.hpp"

using namespace vczstats;

namespace {

/// Three rows: an Int, a Float (1.5, NaN, 0.1), a Label ("a", "b", "a") and an IntList.
Table small_table() {
  Table t;
  auto labels =
      std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"a", "b"});
  const int n = t.add("n", Column::Kind::Int);
  const int x = t.add("x", Column::Kind::Float);
  const int pop = t.add("pop", Column::Kind::Label, labels);
  const int list = t.add("list", Column::Kind::IntList);
  const double xs[] = {1.5, std::nan(""), 0.1};
  for (int r = 0; r < 3; ++r) {
    t.push_int(n, r - 1);
    t.push_float(x, xs[r]);
    t.push_int(pop, r == 1 ? 1 : 0);
    for (int k = 0; k < r; ++k) t.push_int(list, 10 + k);
    t.end_list(list);
  }
  return t;
}

std::string written(const Table& t, const char* format, const std::string& note = "") {
  std::string out;
  TableWriter w([&](std::string_view s) { out.append(s); }, format, table_columns(t));
  w.rows(t);
  w.finish(note);
  return out;
}

TEST(TableWriter, TsvIsTheHeaderThenOneTabSeparatedLinePerRow) {
  EXPECT_EQ(written(small_table(), "tsv"),
            "n\tx\tpop\tlist\n"
            "-1\t1.5\ta\t\n"
            "0\tNA\tb\t10\n"
            "1\t0.1\ta\t10,11\n");
}

TEST(TableWriter, JsonParsesToRowsWithNumbersNullsAndTheNote) {
  const auto j = nlohmann::json::parse(written(small_table(), "json", "a note"));
  ASSERT_EQ(j.at("rows").size(), 3u);
  EXPECT_EQ(j.at("note"), "a note");
  const auto& r0 = j.at("rows")[0];
  EXPECT_TRUE(r0.at("n").is_number_integer());
  EXPECT_EQ(r0.at("n").get<int>(), -1);
  EXPECT_DOUBLE_EQ(r0.at("x").get<double>(), 1.5);
  EXPECT_EQ(r0.at("pop"), "a");
  EXPECT_TRUE(j.at("rows")[1].at("x").is_null());  // NA
  EXPECT_DOUBLE_EQ(j.at("rows")[2].at("x").get<double>(), 0.1);
  // Keys in column order, as the TSV header.
  std::vector<std::string> keys;
  for (const auto& [k, v] : r0.items()) keys.push_back(k);
  EXPECT_EQ(keys.size(), 4u);
}

TEST(TableWriter, EmptyTablesAreValid) {
  Table t = small_table().empty_like();
  EXPECT_EQ(written(t, "tsv"), "n\tx\tpop\tlist\n");
  const auto j = nlohmann::json::parse(written(t, "json"));
  EXPECT_TRUE(j.at("rows").empty());
  EXPECT_EQ(j.at("note"), "");
}

TEST(TableWriter, TextThatIsNotUtf8StaysValidJson) {
  std::string out;
  TableWriter w([&](std::string_view s) { out.append(s); }, "json", {{"name", false}});
  w.row(
      {std::string("s\xff"
                   "1")});
  w.finish();
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j.at("rows")[0].at("name"),
            "s\xEF\xBF\xBD"
            "1");  // U+FFFD
}

TEST(TableWriter, BadUseIsAnError) {
  std::string out;
  auto sink = [&](std::string_view s) { out.append(s); };
  EXPECT_THROW(TableWriter(sink, "csv", {{"a"}}), UsageError);
  TableWriter w(sink, "tsv", {{"a"}, {"b"}});
  EXPECT_THROW(w.row({"1"}), Error);
}

TEST(TableWriter, AFailedWriteIsAnIoError) {
  std::FILE* full = std::fopen("/dev/full", "w");
  if (!full) GTEST_SKIP() << "no /dev/full here";
  std::setvbuf(full, nullptr, _IONBF, 0);
  TableWriter w(full, "tsv", {{"a"}});
  w.row({"1"});
  EXPECT_THROW(w.finish(), IoError);
  std::fclose(full);
}

}  // namespace
