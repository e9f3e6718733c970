// Every statistic of the library, split into partitions cut at arbitrary sites and merged, equals
// one pass: integers exactly, floats within 1e-12 relative (1e-12 absolute for differences of
// sums that cancel). Each partition begins at the cursor
// of the sites before it (site_cursor), its state goes through save()/load() (as between MPI
// ranks), and the partitions merge in order. The first partition also streams rows out
// (take_rows) while it runs. Stores: tests/backend/gpu_test_stores.tsv (random VCFs with missing
// calls, multi-allelic sites, mixed ploidy, several chunks), populations interleaved.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include "backend/gpu_test_support.hpp"
#include "test_util.hpp"
#include "vczstats/compute.hpp"
#include "vczstats/ld.hpp"
#include "vczstats/matrix.hpp"
#include "vczstats/statistics.hpp"
#include "vczstats/testing.hpp"

using namespace vczstats;
namespace fs = std::filesystem;

namespace {

using Factory = std::function<std::unique_ptr<Statistic>(const Query&)>;

/// A named statistic configuration and the query options it needs.
struct Config {
  std::string name;
  std::function<void(QueryOptions&)> options;
  Factory make;
};

void expect_same(const Table& want, const Table& got, const std::string& what) {
  ASSERT_EQ(want.columns.size(), got.columns.size()) << what;
  ASSERT_EQ(want.rows(), got.rows()) << what;
  for (std::size_t c = 0; c < want.columns.size(); ++c) {
    const auto& a = want.columns[c];
    const auto& b = got.columns[c];
    ASSERT_EQ(a.name, b.name) << what;
    EXPECT_EQ(a.ints, b.ints) << what << " column " << a.name;
    EXPECT_EQ(a.offsets, b.offsets) << what << " column " << a.name;
    ASSERT_EQ(a.floats.size(), b.floats.size()) << what << " column " << a.name;
    for (std::size_t i = 0; i < a.floats.size(); ++i) {
      const double x = a.floats[i], y = b.floats[i];
      if (std::isnan(x) || std::isnan(y)) {
        EXPECT_TRUE(std::isnan(x) && std::isnan(y)) << what << " " << a.name << " row " << i;
        continue;
      }
      if (std::isinf(x) || std::isinf(y)) {
        EXPECT_EQ(x, y) << what << " " << a.name << " row " << i;
        continue;
      }
      // 1e-12 relative; and 1e-12 absolute for differences of sums that cancel (da = dxy -
      // mean pi, Fay & Wu's H): their terms are sums of per-site values of order 1.
      EXPECT_LE(std::abs(x - y), 1e-12 * std::max(std::abs(x), std::abs(y)) + 1e-12)
          << what << " column " << a.name << " row " << i << ": " << x << " vs " << y;
    }
  }
}

/// The rows of @p s after one pass over @p q.
Table one_pass(const Query& q, Statistic& s) {
  RunOptions run;
  run.device.kind = DeviceKind::Cpu;
  run.threads = 2;
  return compute_table(q, s, run);
}

/// The rows of the statistic over @p q computed in partitions cut at @p cuts (sorted).
Table in_partitions(const Query& q, const Factory& make, const std::vector<PlanCut>& cuts) {
  RunOptions run;
  run.device.kind = DeviceKind::Cpu;
  run.threads = 2;
  std::vector<Query> parts;
  std::vector<PlanCut> bounds{{0, 0}};
  bounds.insert(bounds.end(), cuts.begin(), cuts.end());
  bounds.push_back({static_cast<std::int64_t>(q.plan.units.size()), 0});
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    Query p = q;
    p.plan = partition_plan(q.plan, bounds[i], bounds[i + 1]);
    parts.push_back(std::move(p));
  }
  Table streamed;  // rows the first partition hands out while it runs
  std::unique_ptr<Statistic> merged;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto s = make(parts[i]);
    s->begin(site_cursor(q, bounds[i]));
    ComputeHooks hooks;
    if (i == 0)
      hooks.after_unit = [&](const UnitData& u) {
        if (u.index % 2 == 0) streamed.append(s->take_rows());
      };
    Statistic* list[] = {s.get()};
    compute(parts[i], list, run, hooks);
    // Carry the state through bytes, as between MPI ranks.
    ByteWriter w;
    s->save(w);
    auto loaded = make(q);
    ByteReader r(w.bytes());
    loaded->load(r);
    EXPECT_TRUE(r.done());
    if (!merged)
      merged = std::move(loaded);
    else
      merged->merge(*loaded);
  }
  streamed.append(merged->take_rows());
  streamed.append(merged->finish());
  return streamed;
}

/// @p k - 1 random cuts of the plan's rows, sorted (equal cuts make empty partitions).
std::vector<PlanCut> random_cuts(const vcz::ChunkPlan& plan, int k, std::mt19937_64& rng) {
  std::vector<std::pair<std::int64_t, std::int64_t>> rows;  // (unit, row) of every row
  for (std::size_t u = 0; u < plan.units.size(); ++u)
    for (std::int64_t r = 0; r < plan.units[u].size(); ++r)
      rows.emplace_back(static_cast<std::int64_t>(u), r);
  std::vector<PlanCut> cuts;
  if (rows.empty()) return cuts;
  for (int i = 0; i + 1 < k; ++i) {
    const auto& [u, r] = rows[rng() % rows.size()];
    cuts.push_back({u, r});
  }
  std::sort(cuts.begin(), cuts.end(), [](const PlanCut& a, const PlanCut& b) {
    return a.unit != b.unit ? a.unit < b.unit : a.row < b.row;
  });
  return cuts;
}

}  // namespace

TEST(StatisticPartitions, MergedPartitionsEqualOnePass) {
  vcztest::TempDir dir;
  int stores = 0;
  std::map<std::string, std::int64_t> pair_rows, pruned;  // the pair family did something
  for (const auto& spec : gputest::store_specs()) {
    if (spec.name == "wide_int8") continue;  // the widest store adds time, not cases
    const std::string path = gputest::obtain_store(dir, spec);
    if (path.empty()) continue;
    ++stores;
    SCOPED_TRACE(spec.name);
    const auto store = vcz::VczStore::open(path);
    const auto& contigs = store.contig_ids();
    // Populations A, B, C interleaved; windows files and masks on the first contig.
    const fs::path pops = dir / (spec.name + ".pops");
    const fs::path bed = dir / (spec.name + ".windows.bed");
    const fs::path mask = dir / (spec.name + ".mask.bed");
    {
      std::ofstream p(pops), b(bed), m(mask);
      const auto all = store.all_samples();
      for (std::size_t i = 0; i < all.indices.size(); ++i)
        p << store.sample_ids()[static_cast<std::size_t>(all.indices[i])] << "\t"
          << "ABC"[i % 3] << "\n";
      b << contigs[0] << "\t0\t3000\n"
        << contigs[0] << "\t1000\t2000\n"
        << contigs[0] << "\t2500\t9000\n"
        << contigs[0] << "\t99000\t99999\n";
      m << contigs[0] << "\t100\t2200\n" << contigs[0] << "\t2500\t1000000\n";
      for (std::size_t c = 1; c < contigs.size(); ++c) m << contigs[c] << "\t0\t500000\n";
    }
    const std::string regions = contigs[0] + ":500-2600" +
                                (contigs.size() > 1 ? "," + contigs[1] + ":1-1500" : "") + "," +
                                contigs[0] + ":2000-4000";
    const bool diploid = store.ploidy() == 2;
    auto with_pops = [&](QueryOptions& o) { o.pops_file = pops.string(); };
    std::vector<Config> configs = {
        {"afdist", [](QueryOptions&) {},
         [](const Query& q) {
           return make_afdist(q, {stats::AfdistMethod::Bcftools, 10});
         }},
        {"freq", with_pops, [](const Query& q) { return make_site_table(q, SiteTable::Freq); }},
        {"hardy", with_pops, [](const Query& q) { return make_site_table(q, SiteTable::Hardy); }},
        {"sample-stats", with_pops, [](const Query& q) { return make_sample_stats(q); }},
        {"sfs", with_pops, [](const Query& q) { return make_sfs(q, {}); }},
        {"sfs joint folded", with_pops,
         [](const Query& q) {
           SfsOptions o;
           o.folded = true;
           o.joint = "A,C";
           return make_sfs(q, o);
         }},
        {"sfs projected", with_pops,
         [](const Query& q) {
           SfsOptions o;
           o.project = "4";
           return make_sfs(q, o);
         }},
        {"sfs projected joint folded", with_pops,
         [](const Query& q) {
           SfsOptions o;
           o.project = "A=3,B=4,C=2";
           o.joint = "C,A,B";
           o.folded = true;
           return make_sfs(q, o);
         }},
        {"sfs projection preview", with_pops,
         [](const Query& q) {
           SfsOptions o;
           o.project = "5";
           o.preview = true;
           return make_sfs(q, o);
         }},
        {"f2 blocks 7", with_pops,
         [](const Query& q) {
           return make_fstats(q, {"A,B", "", "", 7});
         }},
        {"d blocks 13", with_pops,
         [](const Query& q) {
           return make_fstats(q, {"", "", "A,B,C,A", 13});
         }},
        {"diversity per contig", with_pops, [](const Query& q) { return make_diversity(q); }},
        {"diversity bp windows",
         [&](QueryOptions& o) {
           with_pops(o);
           o.windows.size = 700;
           o.windows.step = 300;
         },
         [](const Query& q) { return make_diversity(q); }},
        {"diversity contig-wide bp windows",
         [&](QueryOptions& o) {
           with_pops(o);
           o.windows.size = 700;
           o.windows.step = 300;
           o.windows.span = stats::WindowSpan::Contig;
         },
         [](const Query& q) { return make_diversity(q); }},
        {"divergence variant windows",
         [&](QueryOptions& o) {
           with_pops(o);
           o.windows.variants = 9;
         },
         [](const Query& q) { return make_divergence(q, ""); }},
        {"divergence windows file",
         [&](QueryOptions& o) {
           with_pops(o);
           o.windows.file = bed.string();
         },
         [](const Query& q) { return make_divergence(q, "A,B;C,B"); }},
        {"scan regions mask",
         [&](QueryOptions& o) {
           with_pops(o);
           o.regions = regions;
           o.accessible = mask.string();
           o.windows.size = 500;
         },
         [](const Query& q) {
           return make_scan(q, {{"pi", "tajima_d", "zeng_e", "dxy", "fst_wc", "pbs"}, "", "A,B,C"});
         }},
        {"scan regions pos overlap, variant windows",
         [&](QueryOptions& o) {
           with_pops(o);
           o.regions = regions;
           o.overlap = vcz::RegionOverlap::Pos;
           o.windows.variants = 4;
         },
         [](const Query& q) {
           return make_scan(q, {{"theta_w", "fst_hudson"}, "", ""});
         }},
        {"diversity regions whole",
         [&](QueryOptions& o) {
           with_pops(o);
           o.regions = regions;
         },
         [](const Query& q) { return make_diversity(q); }},
    };
    // The variant-pair family: its bands cross partitions (pairs between a partition's last
    // rows and the next one's first), and prune's greedy continues across them.
    std::vector<std::string> focal;  // every 7th named variant
    {
      const vcz::VariantReader ids(store, false, true);
      const auto vb = ids.read(0, store.num_variants());
      for (std::size_t i = 0; i < vb.id.size(); i += 7)
        if (vb.id[i] != ".") focal.push_back(vb.id[i]);
    }
    configs.push_back({"ld r2", [](QueryOptions&) {},
                       [](const Query& q) {
                         LdOptions o;
                         o.window_variants = 6;
                         o.window_bp = 400;
                         o.min_r2 = 0.01;
                         return make_ld(q, o);
                       }});
    configs.push_back({"ld hap regions", [&](QueryOptions& o) { o.regions = regions; },
                       [](const Query& q) {
                         LdOptions o;
                         o.measure = PairMeasure::Haplotype;
                         o.window_variants = 30;
                         o.window_bp = 150;
                         o.min_r2 = 0;
                         return make_ld(q, o);
                       }});
    if (!focal.empty())
      configs.push_back({"ld dprime focal", [](QueryOptions&) {},
                         [focal](const Query& q) {
                           LdOptions o;
                           o.measure = PairMeasure::GenotypeEm;
                           o.window_variants = 9;
                           o.min_r2 = 0;
                           o.focal = focal;
                           return make_ld(q, o);
                         }});
    // ld's summaries (ld --decay, --ld-scores): bins add up, LD scores gain the pairs across cuts.
    configs.push_back({"ld decay windows", [](QueryOptions&) {},
                       [](const Query& q) {
                         LdDecayOptions o;
                         o.edges = {0, 3, 20, 60, 150};
                         o.window_size = 500;
                         return make_ld_decay(q, o);
                       }});
    configs.push_back({"ld decay hap regions", [&](QueryOptions& o) { o.regions = regions; },
                       [](const Query& q) {
                         LdDecayOptions o;
                         o.measure = PairMeasure::Haplotype;
                         o.edges = {1, 10, 100};
                         o.window_variants = 12;
                         return make_ld_decay(q, o);
                       }});
    // -P: a band per population, each curve's rows and cross-cut pairs its own
    configs.push_back({"ld decay pops hap", with_pops, [](const Query& q) {
                         LdDecayOptions o;
                         o.measure = PairMeasure::Haplotype;
                         o.edges = {0, 3, 20, 60, 150};
                         o.window_size = 500;
                         o.per_population = true;
                         return make_ld_decay(q, o);
                       }});
    configs.push_back({"ld decay pops r2", with_pops, [](const Query& q) {
                         LdDecayOptions o;
                         o.edges = {1, 10, 100};
                         o.window_variants = 12;
                         o.per_population = true;
                         return make_ld_decay(q, o);
                       }});
    configs.push_back({"ld scores kb", [](QueryOptions&) {},
                       [](const Query& q) {
                         LdScoreOptions o;
                         o.window_bp = 120;
                         return make_ld_scores(q, o);
                       }});
    configs.push_back({"ld scores hap snps regions", [&](QueryOptions& o) { o.regions = regions; },
                       [](const Query& q) {
                         LdScoreOptions o;
                         o.measure = PairMeasure::Haplotype;
                         o.window_variants = 5;
                         return make_ld_scores(q, o);
                       }});
    configs.push_back({"ld stats regions", [&](QueryOptions& o) { o.regions = regions; },
                       [](const Query& q) {
                         LdStatsOptions o;
                         o.edges = {0, 5, 40, 200};
                         return make_ld_stats(q, o);
                       }});
    // ld-stats of three populations: one band per population but the last, joined per unit.
    configs.push_back({"ld stats three pops", with_pops, [](const Query& q) {
                         LdStatsOptions o;
                         o.edges = {0, 7, 60, 300};
                         return make_ld_stats(q, o);
                       }});
    configs.push_back({"prune 7 3", [](QueryOptions&) {},
                       [](const Query& q) {
                         return make_prune(q, {7, false, 3, 0.05});
                       }});
    configs.push_back({"prune kb", [&](QueryOptions& o) { o.regions = regions; },
                       [](const Query& q) {
                         return make_prune(q, {1, true, 2, 0.02});
                       }});
    // The matrix family (sums over pairs of samples; PCA is left out: its eigenvectors' signs).
    configs.push_back(
        {"grm", [](QueryOptions&) {},
         [](const Query& q) -> std::unique_ptr<Statistic> { return make_grm(q, {}); }});
    configs.push_back({"grm cov, rows 3..9", [](QueryOptions&) {},
                       [](const Query& q) -> std::unique_ptr<Statistic> {
                         return make_grm(q, {{0, 3, 9}, true});
                       }});
    configs.push_back(
        {"king", [](QueryOptions&) {},
         [](const Query& q) -> std::unique_ptr<Statistic> { return make_king(q, {}); }});
    configs.push_back({"distance --maf 0.1", [](QueryOptions&) {},
                       [](const Query& q) -> std::unique_ptr<Statistic> {
                         return make_distance(q, {{0.1, 0, -1}, DistanceMetric::Ibs, false});
                       }});
    if (diploid)
      configs.push_back({"afdist zarr", [](QueryOptions&) {},
                         [](const Query& q) {
                           return make_afdist(q, {stats::AfdistMethod::ZarrAfdist, 7});
                         }});
    std::mt19937_64 rng(std::hash<std::string>{}(spec.name));
    for (const auto& c : configs) {
      QueryOptions o;
      o.store = path;
      c.options(o);
      const Query q = hooks::make_query(o, 11);  // many units: cuts fall inside and between them
      auto single = c.make(q);
      const Table want = one_pass(q, *single);
      pair_rows[c.name] += want.rows();
      if (c.name.starts_with("ld decay") || c.name.starts_with("ld scores") ||
          c.name.starts_with("ld stats"))
        for (const auto n : want.column("pairs").ints) pair_rows[c.name] += n;
      if (c.name.starts_with("prune"))
        for (const auto k : want.column("kept").ints) pruned[c.name] += k == 0;
      {  // A fresh query: the partitions' copies of it must see the windows of the whole run.
        const Query fresh = hooks::make_query(o, 11);
        const auto cuts = random_cuts(fresh.plan, 3, rng);
        expect_same(want, in_partitions(fresh, c.make, cuts), c.name + ", fresh query");
      }
      for (int k : {1, 2, 3, 6})
        for (int rep = 0; rep < (k == 1 ? 1 : 3); ++rep) {
          const auto cuts = random_cuts(q.plan, k, rng);
          std::ostringstream where;  // (not string +=: GCC 12 warns -Wrestrict on it)
          for (const auto& cut : cuts) where << " " << cut.unit << ":" << cut.row;
          expect_same(want, in_partitions(q, c.make, cuts), c.name + ", cuts" + where.str());
        }
    }
  }
  if (stores == 0)
    GTEST_SKIP() << "skipped: no test store (needs python3-zarr and bcftools, or "
                    "VCZSTATS_TEST_STORES)";
  for (const char* name : {"ld r2", "ld hap regions", "ld dprime focal", "ld decay windows",
                           "ld decay hap regions", "ld decay pops hap", "ld decay pops r2",
                           "ld scores kb", "ld scores hap snps regions", "ld stats regions"})
    EXPECT_GT(pair_rows[name], 100) << name;
  for (const char* name : {"prune 7 3", "prune kb"}) EXPECT_GT(pruned[name], 20) << name;
}
