// CUDA backend of the allele-counts heavy pass.
//  - CudaCountsLanes.* (run everywhere, no GPU needed): the per-lane code of the kernels
//    (src/backend/cuda/counts_lanes.hpp) run lane by lane on the CPU: the int8-diploid SWAR
//    formulas against the per-call rules (stats::counts::add_call) on every byte-value class
//    and on random words; every path (SWAR, word, generic) summed over the lanes of a warp,
//    segment by segment, against AlleleCountsPass::count_sites on random blocks.
//  - CudaCountsGpu.* (skip without a GPU): the same blocks through the real kernels (counts bit
//    for bit, two sample blocks added in turn) for int8/16/32/64, ploidy 1-5 and 8, 1..8 and
//    many alleles, 1-5 populations in runs and interleaved; and run_allele_counts on the GPU
//    against the CPU on the stores of gpu_test_stores.tsv and ../shared/data, with sample
//    subsets, populations from a file, regions and small units.

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cuda/counts_lanes.hpp"
#include "backend/gpu_test_support.hpp"
#include "stats/counts_math.hpp"
#include "stats/run_support.hpp"
#include "test_util.hpp"
#include "vczstats/counts.hpp"
#include "vczstats/device.hpp"
#include "vczstats/error.hpp"
#include "vczstats/populations.hpp"
#include "vczstats/testing.hpp"
#include "vczstats/vcz.hpp"
#ifdef VCZSTATS_HAVE_CUDA
#include "backend/cuda/counts_kernels.cuh"
#include "backend/gpu_kernel_hooks.hpp"
#endif

using namespace vczstats;
using namespace vczstats::stats;
namespace vc = vczstats::cuda;
namespace fs = std::filesystem;
using gputest::Block;
using gputest::make_block;
using gputest::obtain_store;
using gputest::Profile;
using gputest::store_specs;

namespace {

/// Expect equal count arrays; report the first difference (site, population, column) only.
void expect_same_counts(const std::vector<std::int32_t>& want, const std::vector<std::int32_t>& got,
                        const CountsLayout& layout, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (want[i] != got[i]) {
      const auto sw = static_cast<std::size_t>(layout.site_width());
      const auto w = static_cast<std::size_t>(layout.width());
      ADD_FAILURE() << what << ": site " << i / sw << " pop " << (i % sw) / w << " column "
                    << (i % w) << " expected " << want[i] << " got " << got[i];
      return;
    }
}

/// Population of each selected sample: @p pops populations over @p n samples, in runs or
/// interleaved at random.
std::vector<std::int32_t> make_pops(std::mt19937_64& rng, std::int64_t n, int pops, bool runs) {
  std::vector<std::int32_t> of(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < of.size(); ++i)
    of[i] = runs ? static_cast<std::int32_t>(i * static_cast<std::size_t>(pops) / of.size())
                 : static_cast<std::int32_t>(rng() % static_cast<unsigned>(pops));
  return of;
}

std::vector<std::int32_t> cpu_counts(const AlleleCountsPass& pass, const GenotypeChunkView& v,
                                     std::vector<std::int32_t> sites = {}) {
  if (sites.empty()) sites.assign(static_cast<std::size_t>(v.variants * pass.site_width()), 0);
  pass.count_sites(v, sites);
  return sites;
}

// ---- the lanes' code, lane by lane on the CPU ---------------------------------------------------

/// Alleles >= KR counted into a host array (the kernels' shared-memory counters).
struct HostBig {
  std::vector<std::int32_t>* big;
  void operator()(int a) const { ++(*big)[static_cast<std::size_t>(a)]; }
};

template <int KR>
void add_lanes(std::int32_t* out, const vc::LaneCounts<KR>& c, int alleles) {
  for (int j = 0; j < vc::LaneCounts<KR>::kValues; ++j) {
    const int col = vc::lane_value_column(j, KR, alleles);
    if (col >= 0) out[col] += c.v[j];
  }
}

template <class T, int KR>
vc::LaneCounts<KR> word_lane(const std::byte* seg, std::int64_t calls, int ploidy, int alleles,
                             int lane, int lanes, HostBig& big) {
  switch (ploidy) {
    case 1:
      return vc::lane_counts_words<KR, T, 1>(seg, calls, alleles, lane, lanes, big);
    case 2:
      return vc::lane_counts_words<KR, T, 2>(seg, calls, alleles, lane, lanes, big);
    case 4:
      if constexpr (sizeof(T) <= 4)
        return vc::lane_counts_words<KR, T, 4>(seg, calls, alleles, lane, lanes, big);
      break;
    case 8:
      if constexpr (sizeof(T) <= 2)
        return vc::lane_counts_words<KR, T, 8>(seg, calls, alleles, lane, lanes, big);
      break;
    default:
      break;
  }
  ADD_FAILURE() << "no word path for ploidy " << ploidy << " of " << sizeof(T) << " bytes";
  return {};
}

/// What a warp of @p lanes lanes adds for each row, segment by segment, as the kernel does.
template <class T>
void lanes_count_typed(const GenotypeChunkView& v, const AlleleCountsPass& pass,
                       vc::CountsPath path, int lanes, std::vector<std::int32_t>& sites) {
  const CountsLayout& layout = pass.layout();
  const int k = layout.alleles, w = layout.width(), ploidy = static_cast<int>(v.ploidy);
  const std::int64_t call_bytes = v.ploidy * v.elem_bytes;
  const auto segments = pass.segments(v);
  std::vector<std::int32_t> big_counts(static_cast<std::size_t>(k));
  HostBig big{&big_counts};
  for (std::int64_t r = 0; r < v.variants; ++r) {
    const std::byte* row = v.data + r * v.samples * call_bytes;
    for (const auto& s : segments) {
      std::int32_t* out = sites.data() + r * layout.site_width() + std::int64_t{s.pop} * w;
      const std::byte* seg = row + s.begin * call_bytes;
      const std::int64_t calls = s.end - s.begin;
      std::fill(big_counts.begin(), big_counts.end(), 0);
      for (int lane = 0; lane < lanes; ++lane) {
        if (path == vc::CountsPath::Swar) {
          if constexpr (sizeof(T) == 1) {
            if (k <= 2)
              add_lanes(out, vc::lane_counts_int8_diploid<2>(seg, calls, k, lane, lanes), k);
            else
              add_lanes(out, vc::lane_counts_int8_diploid<4>(seg, calls, k, lane, lanes), k);
          }
        } else if (path == vc::CountsPath::Word) {
          add_lanes(out,
                    word_lane<T, vc::kRegisterAlleles>(seg, calls, ploidy, k, lane, lanes, big), k);
        } else {
          add_lanes(out,
                    vc::lane_counts_generic<vc::kGenericAlleles, T>(seg, calls, ploidy, k, lane,
                                                                    lanes, big),
                    k);
        }
      }
      for (int a = 0; a < k; ++a) out[a] += big_counts[static_cast<std::size_t>(a)];
    }
  }
}

std::vector<std::int32_t> lanes_count(const GenotypeChunkView& v, const AlleleCountsPass& pass,
                                      vc::CountsPath path, int lanes) {
  std::vector<std::int32_t> sites(static_cast<std::size_t>(v.variants * pass.site_width()), 0);
  switch (v.elem_bytes) {
    case 1:
      lanes_count_typed<std::int8_t>(v, pass, path, lanes, sites);
      break;
    case 2:
      lanes_count_typed<std::int16_t>(v, pass, path, lanes, sites);
      break;
    case 4:
      lanes_count_typed<std::int32_t>(v, pass, path, lanes, sites);
      break;
    default:
      lanes_count_typed<std::int64_t>(v, pass, path, lanes, sites);
  }
  return sites;
}

std::vector<vc::CountsPath> paths_for(int elem, int ploidy, int alleles) {
  std::vector<vc::CountsPath> out;
  for (auto p : {vc::CountsPath::Swar, vc::CountsPath::Word, vc::CountsPath::Generic})
    if (vc::counts_path_fits(p, elem, ploidy, alleles)) out.push_back(p);
  return out;
}

const char* path_name(vc::CountsPath p) {
  switch (p) {
    case vc::CountsPath::Swar:
      return "swar";
    case vc::CountsPath::Word:
      return "word";
    case vc::CountsPath::Generic:
      return "generic";
    default:
      return "auto";
  }
}

struct Layout {
  int elem, ploidy;
};
std::vector<Layout> layouts() {
  std::vector<Layout> out;
  for (int elem : {1, 2, 4, 8})
    for (int ploidy : {1, 2, 3, 4, 5, 8}) out.push_back({elem, ploidy});
  return out;
}

/// One random case: a block (sample_offset set), its population map and layout.
struct Case {
  Block block;
  std::vector<std::int32_t> pop_of;
  CountsLayout layout;
  std::string what;
};

Case make_case(std::mt19937_64& rng, int elem, int ploidy, std::int64_t samples, int alleles,
               int pops, bool runs) {
  Case c;
  Profile prof;
  prof.max_allele = std::max(alleles + 1, 4);
  if (samples > 1000 && rng() % 2) prof.fill_rows = 0;  // rows that take the no-fill branch
  const std::int64_t row_bytes = samples * ploidy * elem;
  const std::int64_t rows = row_bytes > 20000 ? 9 : 37;  // every start offset mod 16
  c.block = make_block(rng, elem, rows, samples, ploidy, prof);
  const std::int64_t offset = static_cast<std::int64_t>(rng() % 5);
  c.pop_of = make_pops(rng, offset + samples, pops, runs);
  c.block.view.sample_offset = offset;
  c.layout = {alleles, pops};
  c.what = "int" + std::to_string(8 * elem) + " ploidy " + std::to_string(ploidy) + " samples " +
           std::to_string(samples) + " alleles " + std::to_string(alleles) + " pops " +
           std::to_string(pops) + (runs ? " runs" : " interleaved");
  return c;
}

}  // namespace

// ---- CPU: the lanes' code
// --------------------------------------------------------------------------

TEST(CudaCountsLanes, SwarEqualsPerCallRulesOnEveryByteClass) {
  const std::vector<int> values = {-128, -127, -3, -2, -1, 0, 1, 2, 3, 4, 5, 126, 127};
  auto check = [&](const std::int8_t(&b)[4]) {
    std::uint32_t w;
    std::memcpy(&w, b, 4);
    for (int k : {1, 2, 3, 4}) {
      std::int32_t want[4 + CountsLayout::kExtra] = {};
      counts::add_call(want, b, 2, k);
      counts::add_call(want, b + 2, 2, k);
      const std::uint32_t f = vc::swar::Counts<4>::fills(w);
      const bool fill = b[0] == -2 || b[1] == -2 || b[2] == -2 || b[3] == -2;
      ASSERT_EQ(fill, f != 0);
      for (bool full : {true, false}) {
        if (!full && fill) continue;
        vc::swar::Counts<4> acc;
        if (full) {
          acc.add<true>(w, f);
        } else {
          acc.add<false>(w, 0);
          acc.calls += 2;
        }
        std::int32_t got[4 + CountsLayout::kExtra] = {};
        add_lanes(got, acc.result(), k);
        for (int j = 0; j < k + CountsLayout::kExtra; ++j)
          ASSERT_EQ(want[j], got[j])
              << "bytes " << int(b[0]) << " " << int(b[1]) << " " << int(b[2]) << " " << int(b[3])
              << " alleles " << k << " column " << j << (full ? " full" : " no-fill");
      }
    }
  };
  gputest::for_each_int8_word(values, 300000, 11, check);
}

TEST(CudaCountsLanes, SwarByteCountersDoNotOverflowOnUniformRows) {
  // Every byte of every word counted (all 0/0, all 1/1, ...): every counter adds its most per
  // word; one lane takes a whole segment, and 32 lanes.
  for (std::int8_t a : {0, 1})
    for (std::int8_t b : {0, 1, -2}) {
      const std::int64_t samples = 8195;
      std::vector<vc::Word16> storage(static_cast<std::size_t>(samples * 2 * 3 / 16 + 1));
      auto* p = reinterpret_cast<std::int8_t*>(storage.data());
      for (std::int64_t i = 0; i < samples * 3; ++i) {
        p[2 * i] = a;
        p[2 * i + 1] = b;
      }
      GenotypeChunkView v;
      v.data = reinterpret_cast<const std::byte*>(storage.data());
      v.variants = 3;
      v.samples = samples;
      v.ploidy = 2;
      AlleleCountsPass pass;
      pass.init({2, 1}, {});
      for (int lanes : {1, 32})
        expect_same_counts(cpu_counts(pass, v), lanes_count(v, pass, vc::CountsPath::Swar, lanes),
                           pass.layout(),
                           "uniform " + std::to_string(a) + "/" + std::to_string(b) + " lanes " +
                               std::to_string(lanes));
    }
}

TEST(CudaCountsLanes, EveryPathSummedOverLanesEqualsCpuCountSites) {
  std::mt19937_64 rng(2025);
  for (const auto& [elem, ploidy] : layouts())
    for (std::int64_t samples : {1, 3, 7, 100, 1001, 4099})
      for (int alleles : {1, 2, 3, 4, 6, 9, 40}) {
        if (samples > 1000 && alleles % 3 != 0 && elem > 1) continue;  // keep the test quick
        const int pops = 1 + static_cast<int>(rng() % 5);
        const Case c = make_case(rng, elem, ploidy, samples, alleles, pops, rng() % 3 != 0);
        AlleleCountsPass pass;
        pass.init(c.layout, c.pop_of);
        const auto want = cpu_counts(pass, c.block.view);
        for (vc::CountsPath path : paths_for(elem, ploidy, alleles))
          for (int lanes : {32, 8, 5})
            expect_same_counts(want, lanes_count(c.block.view, pass, path, lanes), c.layout,
                               c.what + " " + path_name(path) + " lanes " + std::to_string(lanes));
      }
}

TEST(CudaCountsLanes, AutoPathPicksTheFastestFit) {
  EXPECT_EQ(vc::auto_counts_path(1, 2, 2), vc::CountsPath::Swar);
  EXPECT_EQ(vc::auto_counts_path(1, 2, 4), vc::CountsPath::Swar);
  EXPECT_EQ(vc::auto_counts_path(1, 2, 5), vc::CountsPath::Word);
  EXPECT_EQ(vc::auto_counts_path(2, 2, 2), vc::CountsPath::Word);
  EXPECT_EQ(vc::auto_counts_path(8, 2, 2), vc::CountsPath::Word);
  EXPECT_EQ(vc::auto_counts_path(8, 4, 2), vc::CountsPath::Generic);
  EXPECT_EQ(vc::auto_counts_path(1, 3, 2), vc::CountsPath::Generic);
}

#ifdef VCZSTATS_HAVE_CUDA
TEST(CudaCountsLanes, RowLanesFollowTheSegmentLength) {
  // No GPU needed: the launcher's choice of lanes per row for the SWAR kernel.
  vc::CountsArgs a;
  auto lanes = [&](std::int64_t samples, std::int64_t segments, int alleles = 2) {
    a.samples = samples;
    a.num_segments = segments;
    a.alleles = alleles;
    return vc::swar_row_lanes(a);
  };
  // 16-byte words per segment: 10^4 samples are 1,250 words; at least 12 per lane.
  EXPECT_EQ(lanes(10000, 1), 32);
  EXPECT_EQ(lanes(10000, 2), 32);
  EXPECT_EQ(lanes(10000, 4), 16);
  EXPECT_EQ(lanes(10000, 26), 4);
  EXPECT_EQ(lanes(1000, 1), 8);  // a bio2zarr sample chunk: 125 words
  EXPECT_EQ(lanes(1000, 2), 4);
  EXPECT_EQ(lanes(1, 1), 4);
  EXPECT_EQ(lanes(1 << 20, 1), 32);
  // Four allele columns: at least 24 words per lane at 16 or 32 lanes, 12 at 8 or 4.
  EXPECT_EQ(lanes(10000, 1, 4), 32);  // 39 words per lane
  EXPECT_EQ(lanes(10000, 2, 4), 16);  // 625 words: 19 per lane at 32, 39 at 16
  EXPECT_EQ(lanes(10000, 4, 4), 8);   // 312 words: 19 per lane at 16, 39 at 8
  EXPECT_EQ(lanes(10000, 26, 4), 4);
  EXPECT_EQ(lanes(1000, 1, 4), 8);  // 125 words: 15 per lane
  EXPECT_EQ(lanes(1000, 4, 3), 4);
  // Rows too long for the unfolded byte counters at few lanes take more lanes: 2^26 samples in
  // 2^17 segments (64 words each) would want 4 lanes, but 128 MiB rows need 8 (16 MiB a lane).
  EXPECT_EQ(lanes(std::int64_t{1} << 26, 1 << 17), 8);
  // Words in flight: 4 for every layout since the remainder of a segment is one masked step.
  for (int alleles : {1, 2, 3, 4})
    for (std::int64_t samples : {1, 1000, 10000})
      for (std::int64_t segments : {1, 4, 26}) {
        lanes(samples, segments, alleles);
        EXPECT_EQ(vc::swar_words_in_flight(a, vc::swar_row_lanes(a)), 4);
      }
}
#endif

// ---- GPU: the kernels
// ----------------------------------------------------------------------------

// One test per genotype width (a ctest each: the suite's longest test, split four ways so that
// the GPU suite runs them side by side).
class CudaCountsGpuWidth : public ::testing::TestWithParam<int> {};

TEST_P(CudaCountsGpuWidth, KernelsEqualCpuCountSitesBitForBit) {
  VCZ_REQUIRE_GPU();
#ifdef VCZSTATS_HAVE_CUDA
  const int width = GetParam();
  std::mt19937_64 rng(77 + static_cast<std::uint64_t>(width));
  // VCZSTATS_GPU_TEST_QUICK (under compute-sanitizer): fewer sizes and allele counts.
  const bool quick = std::getenv("VCZSTATS_GPU_TEST_QUICK") != nullptr;
  int cases = 0;
  for (const auto& [elem, ploidy] : layouts())
    for (std::int64_t samples : {1, 7, 100, 1001, 4099})
      for (int alleles : {1, 2, 3, 4, 5, 6, 7, 8, 40, 2000}) {
        if (elem != width) continue;
        if (alleles == 2000 && elem == 1) continue;  // int8 holds alleles up to 127
        if (quick && (samples != 1001 || (alleles != 2 && alleles != 6 && alleles != 2000)))
          continue;
        if (samples > 1000 && alleles > 2 && alleles < 40 && rng() % 3 != 0) continue;
        const int pops = 1 + static_cast<int>(rng() % 5);
        const bool runs = rng() % 3 != 0;
        Case c = make_case(rng, elem, ploidy, samples, alleles, pops, runs);
        // A second sample block of the same rows (the next columns), added in turn.
        Profile prof;
        prof.max_allele = std::max(alleles + 1, 4);
        Block second = make_block(rng, elem, c.block.view.variants, 1 + samples / 3, ploidy, prof);
        const auto more =
            make_pops(rng, second.view.samples, pops, runs);  // columns after the first block
        c.pop_of.insert(c.pop_of.end(), more.begin(), more.end());
        second.view.sample_offset = c.block.view.sample_offset + samples;
        AlleleCountsPass pass;
        pass.init(c.layout, c.pop_of);
        const auto want = cpu_counts(pass, second.view, cpu_counts(pass, c.block.view));
        std::vector<vc::CountsPath> paths = paths_for(elem, ploidy, alleles);
        paths.push_back(vc::CountsPath::Auto);
        // Each run: a path, the seed-style baseline, or the SWAR kernel with 4/8/16/32 lanes
        // per row (several rows per warp, rows of different alignment when samples is odd).
        struct Run {
          vc::CountsPath path;
          bool baseline;
          int row_lanes, words;
        };
        std::vector<Run> launches;
        for (vc::CountsPath path : paths) launches.push_back({path, false, 0, 0});
        launches.push_back({vc::CountsPath::Auto, true, 0, 0});
        if (vc::counts_path_fits(vc::CountsPath::Swar, elem, ploidy, alleles))
          for (int l : {4, 8, 16, 32})
            for (int u : {2, 4}) launches.push_back({vc::CountsPath::Swar, false, l, u});
        for (const Run& r : launches) {
          std::vector<std::int32_t> got(want.size(), 0);
          gputest::kernels::allele_counts(c.block.view, c.layout, pass.segments(c.block.view),
                                          r.path, got, r.baseline, r.row_lanes, r.words);
          gputest::kernels::allele_counts(second.view, c.layout, pass.segments(second.view), r.path,
                                          got, r.baseline, r.row_lanes, r.words);
          expect_same_counts(want, got, c.layout,
                             c.what + " " + (r.baseline ? "seed baseline" : path_name(r.path)) +
                                 (r.row_lanes > 0 ? " lanes/row " + std::to_string(r.row_lanes) +
                                                        " words " + std::to_string(r.words)
                                                  : std::string()));
          ++cases;
        }
      }
  EXPECT_GT(cases, quick ? 10 : 200);
#endif
}
INSTANTIATE_TEST_SUITE_P(Widths, CudaCountsGpuWidth, ::testing::Values(1, 2, 4, 8),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return "int" + std::to_string(8 * i.param);
                         });

// ---- GPU: run_allele_counts end to end
// ------------------------------------------------------------------

namespace {

/// Every store to compare on: the generated ones and the VCZ stores of ../shared/data.
std::vector<std::string> all_stores(const vcztest::TempDir& dir) {
  std::vector<std::string> out;
  for (const auto& spec : store_specs()) {
    const std::string path = obtain_store(dir, spec);
    if (!path.empty()) out.push_back(path);
  }
  const fs::path shared = vcztest::shared_data();
  if (!shared.empty())
    for (const auto& e : fs::recursive_directory_iterator(shared)) {
      const std::string name = e.path().filename().string();
      if (name.ends_with(".vcz.zip") || name.ends_with(".vcz3.zip") || name.ends_with(".vcz"))
        out.push_back(e.path().string());
    }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(CudaCountsGpu, RunAlleleCountsOnGpuEqualsCpu) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const auto stores = all_stores(dir);
  // VCZSTATS_GPU_TEST_QUICK (under compute-sanitizer): fewer queries per store.
  const bool quick = std::getenv("VCZSTATS_GPU_TEST_QUICK") != nullptr;
  int stores_run = 0;
  for (const auto& path : stores) {
    ++stores_run;
    SCOPED_TRACE(path);
    const auto store = vcz::VczStore::open(path);
    if (!store.has_genotypes()) continue;
    const auto all = store.all_samples();
    std::vector<std::string> every_other;
    for (std::size_t i = 0; i < all.indices.size(); i += 2)
      every_other.emplace_back(store.sample_ids()[all.indices[i]]);
    // Populations from a file: three interleaved in store order (regrouped per sample chunk),
    // and five in runs over every other sample.
    const fs::path pops3 = dir / (fs::path(path).filename().string() + ".pops3.tsv");
    const fs::path pops5 = dir / (fs::path(path).filename().string() + ".pops5.tsv");
    {
      std::ofstream p3(pops3), p5(pops5);
      p3 << "sample\tpopulation\n";
      for (std::size_t i = 0; i < all.indices.size(); ++i)
        p3 << store.sample_ids()[all.indices[i]] << "\tpop"
           << "ABC"[i % 3] << "\n";
      const std::size_t n = every_other.size();
      for (std::size_t i = 0; i < n; ++i) p5 << every_other[i] << " run" << (i * 5 / n) << "\n";
    }
    struct Query {
      std::string name;
      vcz::SampleSelection samples;
      std::vector<std::int32_t> pop_of;
      int pops = 1;
    };
    std::vector<Query> queries;
    queries.push_back({"all, one population", all, {}, 1});
    for (const auto& [name, file] :
         std::vector<std::pair<std::string, fs::path>>{{"pops3", pops3}, {"pops5", pops5}}) {
      Query q{name, all, {}, 1};
      const auto p =
          vcz::apply_populations(store, vcz::read_populations_file(file), q.samples, false);
      q.pop_of = p.of;
      q.pops = p.count();
      queries.push_back(q);
    }
    const auto plans = gputest::test_plans(store);
    const std::string regions = plans.back().first;
    // Large stores (ag1000g: 10^6 variants): no 5-variant units, one allele count.
    const bool large = store.num_variants() > 50000;
    for (const auto& q : queries)
      for (const auto& [pname, plan] : plans)
        for (int alleles : {2, 4, 6}) {
          if ((quick || large) && alleles != 4) continue;
          if (quick && pname != "units of 5") continue;
          if (large && pname == "units of 5") continue;
          AlleleCountsPass pass;
          pass.init({alleles, q.pops}, q.pop_of);
          RunOptions cpu;
          cpu.device.kind = DeviceKind::Cpu;
          cpu.threads = 2;
          const auto want = vcztest::run_counts(store, plan, q.samples, pass, cpu);
          for (unsigned streams : {1u, 3u}) {
            if (quick && streams == 1) continue;
            RunOptions gpu;
            gpu.device.kind = DeviceKind::Gpu;
            gpu.threads = 3;
            gpu.prefetch = streams == 1 ? 1 : 0;
            gpu.gpu_streams = streams;
            RunStats rs;
            const auto got = vcztest::run_counts(store, plan, q.samples, pass, gpu, &rs);
            expect_same_counts(want, got, pass.layout(),
                               q.name + ", " + pname + ", alleles " + std::to_string(alleles) +
                                   ", " + std::to_string(streams) + " streams");
            if (!plan.units.empty()) {
              EXPECT_EQ(rs.device.rfind("gpu", 0), 0u) << rs.device;
            }
          }
        }
  }
  if (stores_run == 0)
    GTEST_SKIP() << "skipped: no test store (needs python3-zarr and bcftools, or "
                    "VCZSTATS_TEST_STORES from scripts/fetch-gpu-deps.sh)";
}

TEST(CudaCountsGpu, SeedBaselineModeEqualsPipeline) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const auto specs = store_specs();
  ASSERT_FALSE(specs.empty());
  for (const auto& spec : specs) {
    const std::string path = obtain_store(dir, spec);
    if (path.empty()) continue;
    SCOPED_TRACE(path);
    const auto store = vcz::VczStore::open(path);
    const auto plan = store.plan({}, vcz::RegionOverlap::Record, 11);
    AlleleCountsPass pass;
    pass.init({3, 1}, {});
    RunOptions gpu;
    gpu.device.kind = DeviceKind::Gpu;
    const auto want = vcztest::run_counts(store, plan, store.all_samples(), pass, gpu);
    hooks::set_gpu_seed_baseline(true);
    RunStats rs;
    const auto got = vcztest::run_counts(store, plan, store.all_samples(), pass, gpu, &rs);
    AfdistOptions o;
    const auto afdist_seed = vcztest::run_afdist(store, plan, store.all_samples(), o, gpu);
    hooks::set_gpu_seed_baseline(false);
    expect_same_counts(want, got, pass.layout(), "seed baseline");
    EXPECT_NE(rs.device.find("seed-style"), std::string::npos) << rs.device;
    EXPECT_EQ(afdist_seed.counts,
              vcztest::run_afdist(store, plan, store.all_samples(), o, gpu).counts);
  }
}
