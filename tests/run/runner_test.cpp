// The library's Runner in one process (the MPI path: tests/dist/mpi_cli_test.cpp): the rows a
// statistic finishes reach the RowStream after each unit, in plan order, each once, and the
// run reports what it read. The rows' variants are checked against the plan's own selection
// (a region and a sample subset), not against another run of the statistic.

#include <gtest/gtest.h>

#include "test_util.hpp"
#include "vczstats/runner.hpp"
#include "vczstats/statistics.hpp"
#include "vczstats/testing.hpp"

using namespace vczstats;

TEST(Runner, StreamsEveryUnitsRowsInPlanOrderInOneProcess) {
  vcztest::TempDir dir;
  const std::string store = (dir / "sim.vcz").string();
  vcztest::run_ok(vcztest::binary() + " simulate " + store +
                  " --samples 12 --variants 900 --seed 5 --variants-chunk-size 97");
  QueryOptions o;
  o.store = store;
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
