// How the MPI driver splits a plan (src/dist/shares.hpp), without MPI: balanced cuts against a
// brute-force search, unit weights against the chunk files' sizes on disk, and the site cursor
// folded from per-share summaries against site_cursor (which reads every site before the cut).

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>

#include "backend/gpu_test_support.hpp"
#include "dist/shares.hpp"
#include "test_util.hpp"
#include "vczstats/testing.hpp"

using namespace vczstats;
namespace fs = std::filesystem;

TEST(DistShares, CutsAreTheBoundariesNearestToEqualShares) {
  std::mt19937_64 rng(3);
  for (int rep = 0; rep < 300; ++rep) {
    const std::size_t n = rng() % 40;
    std::vector<std::int64_t> w(n);
    for (auto& x : w) x = rep % 3 == 0 ? 1 : static_cast<std::int64_t>(rng() % 1000);
    if (n > 0 && rep % 5 == 0) w[rng() % n] = 100000;  // one unit outweighs the rest
    for (int parts = 1; parts <= 6; ++parts) {
      const auto cuts = dist::balanced_cuts(w, parts);
      ASSERT_EQ(cuts.size(), static_cast<std::size_t>(parts) + 1);
      EXPECT_EQ(cuts.front(), 0);
      EXPECT_EQ(cuts.back(), static_cast<std::int64_t>(n));
      std::int64_t total = 0;
      for (auto x : w) total += x;
      for (int r = 1; r < parts; ++r) {
        const auto c = cuts[static_cast<std::size_t>(r)];
        EXPECT_LE(cuts[static_cast<std::size_t>(r) - 1], c);
        // Brute force: the distance from the prefix at this cut to r/parts of the total is the
        // smallest over all boundaries at or after the previous cut.
        const double target = static_cast<double>(total) * r / parts;
        auto prefix = [&](std::int64_t i) {
          std::int64_t s = 0;
          for (std::int64_t j = 0; j < i; ++j) s += w[static_cast<std::size_t>(j)];
          return static_cast<double>(s);
        };
        double best = 1e300;
        for (auto i = cuts[static_cast<std::size_t>(r) - 1]; i <= static_cast<std::int64_t>(n); ++i)
          best = std::min(best, std::abs(prefix(i) - target));
        EXPECT_LE(std::abs(prefix(c) - target), best + 1) << "rep " << rep << " parts " << parts;
      }
    }
  }
}

TEST(DistShares, UnitWeightsAreStoredGenotypeBytesPlusSites) {
  vcztest::TempDir dir;
  int stores = 0;
  for (const auto& spec : gputest::store_specs()) {
    if (spec.convert_args.find("--zip") != std::string::npos) continue;  // files on disk only
    const std::string path = gputest::obtain_store(dir, spec);
    if (path.empty()) continue;
    ++stores;
    SCOPED_TRACE(spec.name);
    QueryOptions o;
    o.store = path;
    const auto all = vcz::VczStore::open(path).sample_ids();
    o.samples = {std::string(all[1]),
                 std::string(all[all.size() - 1])};  // two sample chunks at most
    const Query q = hooks::make_query(o, 7);
    const auto weights = dist::unit_weights(q);
    ASSERT_EQ(weights.size(), q.plan.units.size());
    const auto& gt = q.store.genotypes();
    const std::int64_t vc = gt.chunks()[0], sc = gt.chunks()[1];
    std::set<std::int64_t> sample_chunks;
    for (auto s : q.samples.indices) sample_chunks.insert(s / sc);
    for (std::size_t i = 0; i < weights.size(); ++i) {
      const auto& u = q.plan.units[i];
      double bytes = 0;
      for (auto s : sample_chunks) {
        const fs::path f = fs::path(path) / "call_genotype" /
                           (std::to_string(u.chunk) + "." + std::to_string(s) + ".0");
        if (fs::exists(f)) bytes += static_cast<double>(fs::file_size(f));
      }
      const std::int64_t rows = std::min(vc, q.store.num_variants() - u.chunk * vc);
      bytes = bytes * static_cast<double>(u.size()) / static_cast<double>(rows);
      EXPECT_NEAR(static_cast<double>(weights[i] - u.selected()), bytes, 1.0) << "unit " << i;
      EXPECT_GT(weights[i], u.selected());
    }
  }
  if (stores == 0) GTEST_SKIP() << "skipped: no test store (needs python3-zarr and bcftools)";
}

TEST(DistShares, FoldedSummariesEqualTheSiteCursor) {
  vcztest::TempDir dir;
  int stores = 0;
  for (const auto& spec : gputest::store_specs()) {
    if (spec.name == "wide_int8" || spec.name == "wide_int32") continue;  // time, not cases
    const std::string path = gputest::obtain_store(dir, spec);
    if (path.empty()) continue;
    ++stores;
    SCOPED_TRACE(spec.name);
    const auto store = vcz::VczStore::open(path);
    const auto& contigs = store.contig_ids();
    const fs::path bed = dir / (spec.name + ".windows.bed");
    const fs::path mask = dir / (spec.name + ".mask.bed");
    {
      std::ofstream b(bed), m(mask);
      b << contigs[0] << "\t0\t3000\n" << contigs[0] << "\t1000\t2000\n";
      m << contigs[0] << "\t100\t2200\n" << contigs[0] << "\t2500\t1000000\n";
    }
    const std::string regions = contigs[0] + ":500-2600" +
                                (contigs.size() > 1 ? "," + contigs[1] + ":1-1500" : "") + "," +
                                contigs[0] + ":2000-4000";
    std::vector<std::function<void(QueryOptions&)>> configs = {
        [](QueryOptions&) {},
        [&](QueryOptions& o) { o.regions = regions; },  // record overlap: REF lengths
        [&](QueryOptions& o) {
          o.regions = regions;
          o.overlap = vcz::RegionOverlap::Pos;
          o.accessible = mask.string();
        },
        [&](QueryOptions& o) { o.windows.file = bed.string(); },
    };
    std::mt19937_64 rng(std::hash<std::string>{}(spec.name));
    for (std::size_t c = 0; c < configs.size(); ++c) {
      QueryOptions o;
      o.store = path;
      configs[c](o);
      const Query q = hooks::make_query(o, 9);
      const auto n = static_cast<std::int64_t>(q.plan.units.size());
      for (int rep = 0; rep < 4; ++rep) {
        std::vector<std::int64_t> cuts{0};
        for (int k = 0; k < 4; ++k) cuts.push_back(static_cast<std::int64_t>(rng() % (n + 1)));
        cuts.push_back(n);
        std::sort(cuts.begin(), cuts.end());
        stats::SiteCursor folded;
        for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
          const auto want = site_cursor(q, {cuts[i], 0});
          EXPECT_EQ(folded.any, want.any) << "config " << c << " cut " << cuts[i];
          if (want.any) {
            EXPECT_EQ(folded.group.key, want.group.key) << "config " << c << " cut " << cuts[i];
            EXPECT_EQ(folded.group.start, want.group.start);
            EXPECT_EQ(folded.group.end, want.group.end);
            EXPECT_EQ(folded.group.known_end, want.group.known_end);
            EXPECT_EQ(folded.group.contig, want.group.contig);
            EXPECT_EQ(folded.pos, want.pos) << "config " << c << " cut " << cuts[i];
            EXPECT_EQ(folded.group_sites, want.group_sites) << "config " << c << " cut " << cuts[i];
          }
          EXPECT_EQ(folded.biallelic, want.biallelic) << "config " << c << " cut " << cuts[i];
          // (The variant-pair family starts resolved only when no selected site comes before.)
          EXPECT_EQ(folded.selected, want.selected) << "config " << c << " cut " << cuts[i];
          folded = dist::advance(folded, dist::summarise_sites(q, cuts[i], cuts[i + 1], true));
          // Without alleles only the biallelic count (which needs them) is missing, unless
          // regions select by record overlap (REF lengths).
          if (o.regions.empty() || o.overlap == vcz::RegionOverlap::Pos) {
            const auto a = dist::summarise_sites(q, cuts[i], cuts[i + 1], true);
            const auto b = dist::summarise_sites(q, cuts[i], cuts[i + 1], false);
            EXPECT_EQ(a.tail.group_sites, b.tail.group_sites);
            EXPECT_EQ(a.tail.pos, b.tail.pos);
            EXPECT_EQ(a.tail.selected, b.tail.selected);
            EXPECT_EQ(a.one_run, b.one_run);
            EXPECT_EQ(b.tail.biallelic, 0);
          }
        }
      }
    }
  }
  if (stores == 0) GTEST_SKIP() << "skipped: no test store (needs python3-zarr and bcftools)";
}
