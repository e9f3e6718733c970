// The library's Runner in one process (the MPI path: tests/dist/mpi_cli_test.cpp): the rows a
// statistic finishes reach the RowStream after each unit, in plan order, each once, and the
// run reports what it read. The rows' variants are checked against the plan's own selection
// (a region and a sample subset), not against another run of the statistic.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_util.hpp"
#include "vczstats/runner.hpp"
#include "vczstats/statistics.hpp"
#include "vczstats/testing.hpp"

using namespace vczstats;

namespace {

/// 12 simulated samples x 900 variants in chunks of 97 variants.
std::string simulated_store(const vcztest::TempDir& dir) {
  const std::string store = (dir / "sim.vcz").string();
  vcztest::run_ok(vcztest::binary() + " simulate " + store +
                  " --samples 12 --variants 900 --seed 5 --variants-chunk-size 97");
  return store;
}

}  // namespace

TEST(Runner, StreamsEveryUnitsRowsInPlanOrderInOneProcess) {
  vcztest::TempDir dir;
  QueryOptions o;
  o.store = simulated_store(dir);
  o.regions = "1:2000-70000";
  Query q = hooks::make_query(o, 13);  // many units, some partly selected by the region
  ASSERT_GT(q.plan.units.size(), 10u);
  std::vector<std::int64_t> want;  // the plan's selected variants, in order
  for (const auto& u : q.plan.units)
    for (std::int64_t v = u.begin; v < u.end; ++v)
      if (u.mask.empty() || u.mask[static_cast<std::size_t>(v - u.begin)]) want.push_back(v);
  ASSERT_FALSE(want.empty());

  RunOptions run;
  run.device = parse_device("cpu");
  run.threads = 2;
  Runner runner(
      q, [&q] { return make_site_table(q, SiteTable::Freq); }, run);
  std::vector<std::int64_t> got;
  std::int64_t units = 0, written = 0;
  RowStream rows;
  rows.unit_rows = [&](const UnitData& u, Statistic& s,
                       const std::function<void(const Cells&)>& row) {
    EXPECT_EQ(u.index, units) << "units in plan order";
    ++units;
    const Table t = s.take_rows();
    for (const auto v : t.column("variant").ints) {
      got.push_back(v);
      row({std::to_string(v)});
    }
  };
  rows.write = [&](const Cells& c) {
    ASSERT_EQ(c.size(), 1u);
    EXPECT_EQ(c[0], std::to_string(got[static_cast<std::size_t>(written)]));
    ++written;
  };
  const RunnerResult r = runner.run(rows);
  EXPECT_TRUE(r.writes);
  EXPECT_TRUE(r.rank_lines.empty());
  EXPECT_EQ(units, static_cast<std::int64_t>(q.plan.units.size()));
  EXPECT_EQ(runner.statistic().finish().rows(), 0) << "every row was streamed";
  EXPECT_EQ(got, want);
  EXPECT_EQ(written, static_cast<std::int64_t>(want.size()));
  EXPECT_EQ(r.stats.variants, static_cast<std::int64_t>(want.size()));
  EXPECT_EQ(r.stats.units, static_cast<std::int64_t>(q.plan.units.size()));
}

// A maker may keep a share of what it made (the Python package reads its statistic after the
// run): the Runner runs the statistic made last. Count filters are left to the pass of a
// statistic of per-site counts (made once) and filter the plan by a counting pass first for
// one of per-sample sums (made again from the filtered plan); both keep the same sites.
TEST(Runner, MakesTheStatisticAgainOnlyWhenACountingPassFilteredThePlan) {
  vcztest::TempDir dir;
  QueryOptions o;
  o.store = simulated_store(dir);
  o.filters.maf = 0.2;
  RunOptions run;
  run.device = parse_device("cpu");
  run.threads = 2;
  std::int64_t kept[2] = {0, 0};
  for (const bool per_sample : {false, true}) {
    SCOPED_TRACE(per_sample ? "sample-stats" : "freq");
    Query q = make_query(o);
    const std::int64_t selected = q.plan.selected_variants();
    std::vector<std::shared_ptr<Statistic>> made;
    Runner runner(
        q,
        [&]() -> std::shared_ptr<Statistic> {
          if (per_sample)
            made.push_back(make_sample_stats(q));
          else
            made.push_back(make_site_table(q, SiteTable::Freq));
          return made.back();
        },
        run);
    EXPECT_EQ(made.size(), per_sample ? 2u : 1u);
    EXPECT_EQ(q.count_filters_pending(), !per_sample);
    EXPECT_EQ(&runner.statistic(), made.back().get());
    const RunnerResult r = runner.run();
    EXPECT_EQ(r.stats.note.find("applied in this pass") != std::string::npos, !per_sample)
        << r.stats.note;
    EXPECT_GT(r.stats.variants, 0);
    EXPECT_LT(r.stats.variants, selected);
    kept[per_sample] = r.stats.variants;
  }
  EXPECT_EQ(kept[0], kept[1]);
}

// TableSink: a streamed table (freq, rows after every unit) written as JSON has one object per
// selected variant, in plan order (the plan's own selection), and a
// format other than tsv or json is refused before the run.
TEST(Runner, TableSinkStreamsTheRowsAsJson) {
  vcztest::TempDir dir;
  QueryOptions o;
  o.store = simulated_store(dir);
  o.regions = "1:2000-70000";
  Query q = hooks::make_query(o, 13);
  std::vector<std::int64_t> want;  // the plan's selected variants, in order
  for (const auto& u : q.plan.units)
    for (std::int64_t v = u.begin; v < u.end; ++v)
      if (u.mask.empty() || u.mask[static_cast<std::size_t>(v - u.begin)]) want.push_back(v);

  RunOptions run;
  run.device = parse_device("cpu");
  run.threads = 2;
  Runner runner(
      q, [&q] { return make_site_table(q, SiteTable::Freq); }, run);
  EXPECT_THROW(TableSink(
                   runner.statistic(), [](std::string_view) {}, "csv"),
               UsageError);
  std::string text;
  int pieces = 0;
  TableSink table(
      runner.statistic(),
      [&](std::string_view s) {
        text.append(s);
        ++pieces;
      },
      "json");
  ASSERT_TRUE(runner.run(table.rows()).writes);
  table.finish(runner.statistic());
  const auto j = nlohmann::json::parse(text);
  ASSERT_EQ(j.at("rows").size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(j.at("rows")[i].at("variant").get<std::int64_t>(), want[i]) << "row " << i;
  EXPECT_TRUE(j.contains("note"));
}
