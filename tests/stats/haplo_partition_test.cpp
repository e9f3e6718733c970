// The haplotype statistics cut into partitions at random sites, each carried through bytes
// (save/load, as between MPI ranks) and merged in order, equal one pass: the halo a partition
// lacks (flanks of its first and last sites, windows begun before it) is read from the store by
// the statistic itself, and finish() completes the sites whose flanks were not known at save().
// Also: results do not depend on threads, work-unit size, segment and context sizes.
// Stores: `vczstats simulate` (phased, two populations), chunks that do not divide anything.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "test_util.hpp"
#include "vczstats/compute.hpp"
#include "vczstats/haplotypes.hpp"
#include "vczstats/testing.hpp"

using namespace vczstats;

namespace {

using Make = std::function<std::unique_ptr<Statistic>(const Query&)>;

/// A selection scan made with kernel segments of @p segment sites and contexts of @p context
/// rows (hooks::set_selection_kernel_sizes, read when the scan is made; 0: automatic).
std::unique_ptr<Statistic> scan_with_sizes(const Query& q, SelectionScan s,
                                           const SelectionOptions& o, std::int64_t segment,
                                           std::int64_t context) {
  hooks::set_selection_kernel_sizes(segment, context);
  auto made = make_selection_scan(q, s, o);
  hooks::set_selection_kernel_sizes(0, 0);
  return made;
}

/// Tables equal: integers exactly, floats to 1e-12 relative (standardisation sums in another
/// order would differ in the last bits; they are computed in one place, so they do not).
void expect_equal_tables(const Table& a, const Table& b, const std::string& what) {
  ASSERT_EQ(a.columns.size(), b.columns.size()) << what;
  ASSERT_EQ(a.rows(), b.rows()) << what;
  ASSERT_GT(a.rows(), 0) << what << ": nothing to compare";
  for (std::size_t c = 0; c < a.columns.size(); ++c) {
    const auto& x = a.columns[c];
    const auto& y = b.columns[c];
    EXPECT_EQ(x.ints, y.ints) << what << " " << x.name;
    ASSERT_EQ(x.floats.size(), y.floats.size());
    for (std::size_t i = 0; i < x.floats.size(); ++i) {
      const double u = x.floats[i], v = y.floats[i];
      if (std::isnan(u) || std::isnan(v)) {
        EXPECT_TRUE(std::isnan(u) && std::isnan(v)) << what << " " << x.name << " row " << i;
        continue;
      }
      EXPECT_LE(std::abs(u - v), 1e-12 * std::max(std::abs(u), std::abs(v)))
          << what << " " << x.name << " row " << i << ": " << u << " vs " << v;
    }
  }
}

RunOptions cpu(unsigned threads) {
  RunOptions r;
  r.device.kind = DeviceKind::Cpu;
  r.threads = threads;
  return r;
}

Table single_pass(const Query& q, const Make& make, unsigned threads) {
  auto s = make(q);
  return compute_table(q, *s, cpu(threads));
}

Table partitioned(const Query& q, const Make& make, std::vector<PlanCut> cuts) {
  std::vector<PlanCut> bounds{{0, 0}};
  bounds.insert(bounds.end(), cuts.begin(), cuts.end());
  bounds.push_back({static_cast<std::int64_t>(q.plan.units.size()), 0});
  Table out;
  std::unique_ptr<Statistic> merged;
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    Query part = q;
    part.plan = partition_plan(q.plan, bounds[i], bounds[i + 1]);
    auto s = make(part);
    s->begin(site_cursor(q, bounds[i]));
    ComputeHooks hooks;
    if (i == 0) hooks.after_unit = [&](const UnitData&) { out.append(s->take_rows()); };
    Statistic* list[] = {s.get()};
    compute(part, list, cpu(2), hooks);
    ByteWriter w;
    s->save(w);
    auto loaded = make(q);
    ByteReader r(w.bytes());
    loaded->load(r);
    EXPECT_TRUE(r.done());
    if (merged)
      merged->merge(*loaded);
    else
      merged = std::move(loaded);
  }
  Table rest = merged->take_rows();
  if (out.columns.empty()) out = rest.empty_like();
  out.append(rest);
  out.append(merged->finish());
  return out;
}

std::vector<PlanCut> random_cuts(const vcz::ChunkPlan& plan, int k, std::mt19937_64& rng) {
  std::vector<PlanCut> cuts;
  for (int i = 0; i + 1 < k; ++i) {
    const auto u = static_cast<std::int64_t>(rng() % plan.units.size());
    cuts.push_back({u, static_cast<std::int64_t>(
                           rng() % static_cast<std::uint64_t>(
                                       plan.units[static_cast<std::size_t>(u)].size() + 1))});
  }
  std::sort(cuts.begin(), cuts.end(), [](const PlanCut& a, const PlanCut& b) {
    return a.unit != b.unit ? a.unit < b.unit : a.row < b.row;
  });
  return cuts;
}

}  // namespace

TEST(HaploPartitions, MergedPartitionsEqualOnePass) {
  vcztest::TempDir dir;
  const std::string store = (dir / "sim.vcz").string();
  const std::string pops = (dir / "pops.tsv").string();
  vcztest::run_ok(vcztest::binary() + " simulate " + store +
                  " --samples 36 --variants 2500 --pops 2 --fst 0.1 --ld-length 3000 --seed 4 "
                  "--variants-chunk-size 211 --samples-chunk-size 7 --pops-file " +
                  pops);
  SelectionOptions small;  // with kernel segments of 5 sites and contexts of 3 rows
  small.trunc_ok = true;
  small.min_bin_sites = 3;
  small.bins = 10;
  SelectionOptions defaults;
  struct Config {
    std::string name;
    std::function<void(QueryOptions&)> options;
    Make make;
  };
  auto scan = [](SelectionScan s, SelectionOptions o, std::int64_t segment = 5,
                 std::int64_t context = 3) {
    return [s, o, segment, context](const Query& q) -> std::unique_ptr<Statistic> {
      return scan_with_sizes(q, s, o, segment, context);
    };
  };
  auto with_pops = [&](QueryOptions& o) { o.pops_file = pops; };
  SelectionOptions xp = small;
  xp.pairs = "pop1,pop0";
  const std::vector<Config> configs = {
      {"ihs", with_pops, scan(SelectionScan::Ihs, small)},
      {"ihs defaults", [](QueryOptions&) {}, scan(SelectionScan::Ihs, defaults, 0, 0)},
      {"nsl", with_pops, scan(SelectionScan::Nsl, small)},
      {"xpehh", with_pops, scan(SelectionScan::Xpehh, xp)},
      {"xpnsl regions",
       [&](QueryOptions& o) {
         with_pops(o);
         o.regions = "1:100000-900000,1:1200000-";
       },
       scan(SelectionScan::Xpnsl, xp)},
      {"haplotypes bp windows",
       [&](QueryOptions& o) {
         with_pops(o);
         o.windows.size = 20000;
         o.windows.step = 7000;
       },
       [](const Query& q) { return make_haplotype_windows(q); }},
      {"haplotypes variant windows", [&](QueryOptions& o) { o.windows.variants = 37; },
       [](const Query& q) { return make_haplotype_windows(q); }},
      {"haplotypes whole region",
       [&](QueryOptions& o) {
         with_pops(o);
         o.regions = "1:300000-700000";
       },
       [](const Query& q) { return make_haplotype_windows(q); }},
  };
  std::mt19937_64 rng(12);
  for (const auto& c : configs) {
    QueryOptions o;
    o.store = store;
    c.options(o);
    const Query q = hooks::make_query(o, 97);
    const Table want = single_pass(q, c.make, 2);
    expect_equal_tables(want, single_pass(q, c.make, 1), c.name + ", one thread");
    {
      const Query qw = make_query(o);
      expect_equal_tables(want, single_pass(qw, c.make, 3), c.name + ", whole chunks");
    }
    for (int k : {2, 3, 6}) {
      const auto cuts = random_cuts(q.plan, k, rng);
      std::string where;
      for (const auto& cut : cuts) {
        where += ' ';
        where += std::to_string(cut.unit);
        where += ':';
        where += std::to_string(cut.row);
      }
      expect_equal_tables(want, partitioned(q, c.make, cuts), c.name + ", cuts" + where);
    }
  }
}

TEST(HaploPartitions, SegmentAndContextSizesDoNotMatter) {
  vcztest::TempDir dir;
  const std::string store = (dir / "sim.vcz").string();
  vcztest::run_ok(vcztest::binary() + " simulate " + store +
                  " --samples 30 --variants 3000 --ld-length 2000 --seed 9 "
                  "--variants-chunk-size 500");
  QueryOptions o;
  o.store = store;
  const Query q = make_query(o);
  for (SelectionScan s : {SelectionScan::Ihs, SelectionScan::Nsl}) {
    SelectionOptions a;
    auto one = make_selection_scan(q, s, a);
    const Table want = compute_table(q, *one, cpu(2));
    for (std::int64_t segment : {1, 3, 64}) {
      for (std::int64_t context : {1, 2, 50}) {
        auto two = scan_with_sizes(q, s, SelectionOptions{}, segment, context);
        expect_equal_tables(
            want, compute_table(q, *two, cpu(2)),
            "segment " + std::to_string(segment) + " context " + std::to_string(context));
      }
    }
  }
}
