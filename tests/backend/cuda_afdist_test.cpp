// CUDA backend of afdist.
//  - CudaAfdistLanes.* (run everywhere, no GPU needed): the per-lane code of the kernels
//    (src/backend/cuda/afdist_lanes.hpp) run lane by lane on the CPU: the int8-diploid SWAR
//    formulas against the per-call rules on every byte-value class and on random words; row
//    segmentation; every path (SWAR, word, generic) merged over the lanes of a warp against the
//    CPU heavy pass (AfdistAccumulator::count_sites), on random blocks of every width and ploidy,
//    with sample counts that are multiples of nothing and rows that are not 16-byte aligned.
//  - CudaAfdistGpu.* (skip without a GPU): the same blocks through the real kernels (sites bit for
//    bit, two sample blocks added in turn), and afdist through compute() on the GPU against the CPU
//    on stores made by tests/tools (random_vcf.py + vcf2vcz.py) with sample subsets, regions and
//    small chunks and units.

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cuda/afdist_lanes.hpp"
#include "backend/gpu_test_support.hpp"
#include "stats/afdist_math.hpp"
#include "stats/run_support.hpp"
#include "test_util.hpp"
#include "vczstats/afdist.hpp"
#include "vczstats/device.hpp"
#include "vczstats/error.hpp"
#include "vczstats/vcz.hpp"
#ifdef VCZSTATS_HAVE_CUDA
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

std::string describe(const AfdistSite& s) {
  std::ostringstream o;
  o << "{an " << s.an << ", ac1 " << s.ac1 << ", d1 " << s.n_dosage1 << ", d2 " << s.n_dosage2
    << ", ploidy " << s.ploidy << ", ref " << s.ref_count << ", het " << s.het << ", hom_alt "
    << s.hom_alt << "}";
  return o.str();
}

bool same(const AfdistSite& a, const AfdistSite& b) {
  return a.an == b.an && a.ac1 == b.ac1 && a.n_dosage1 == b.n_dosage1 &&
         a.n_dosage2 == b.n_dosage2 && a.ploidy == b.ploidy && a.ref_count == b.ref_count &&
         a.het == b.het && a.hom_alt == b.hom_alt;
}

/// Expect equal site arrays; report the first difference only (they can be long).
void expect_same_sites(const std::vector<AfdistSite>& want, const std::vector<AfdistSite>& got,
                       const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (!same(want[i], got[i])) {
      ADD_FAILURE() << what << ": row " << i << " expected " << describe(want[i]) << " got "
                    << describe(got[i]);
      return;
    }
}

std::vector<AfdistSite> cpu_count(const GenotypeChunkView& v, AfdistMethod method,
                                  std::vector<AfdistSite> sites = {}) {
  AfdistAccumulator acc;
  AfdistOptions o;
  o.method = method;
  acc.init(o, v.samples, method == AfdistMethod::ZarrAfdist ? 2 : v.ploidy);
  if (sites.empty()) sites.resize(static_cast<std::size_t>(v.variants));
  acc.count_sites(v, sites);
  return sites;
}

// ---- the lanes' code, lane by lane on the CPU ---------------------------------------------------

template <class T, AfdistMethod M>
AfdistSite word_lane(const std::byte* row, std::int64_t samples, int ploidy, int lane, int lanes) {
  if constexpr (M == AfdistMethod::ZarrAfdist) {
    if (ploidy == 2) return vc::lane_words<T, 2, M>(row, samples, lane, lanes);
  } else {
    switch (ploidy) {
      case 1:
        return vc::lane_words<T, 1, M>(row, samples, lane, lanes);
      case 2:
        return vc::lane_words<T, 2, M>(row, samples, lane, lanes);
      case 4:
        if constexpr (sizeof(T) <= 4) return vc::lane_words<T, 4, M>(row, samples, lane, lanes);
        break;
      case 8:
        if constexpr (sizeof(T) <= 2) return vc::lane_words<T, 8, M>(row, samples, lane, lanes);
        break;
      case 16:
        if constexpr (sizeof(T) == 1) return vc::lane_words<T, 16, M>(row, samples, lane, lanes);
        break;
      default:
        break;
    }
  }
  ADD_FAILURE() << "no word path for ploidy " << ploidy << " of " << sizeof(T) << " bytes";
  return {};
}

template <class T>
AfdistSite any_lane(vc::HeavyPath path, AfdistMethod m, const std::byte* row, std::int64_t samples,
                    int ploidy, int lane, int lanes) {
  const bool bcf = m == AfdistMethod::Bcftools;
  switch (path) {
    case vc::HeavyPath::Swar:
      if constexpr (sizeof(T) == 1)
        return bcf ? vc::lane_int8_diploid<AfdistMethod::Bcftools>(row, samples, lane, lanes)
                   : vc::lane_int8_diploid<AfdistMethod::ZarrAfdist>(row, samples, lane, lanes);
      break;
    case vc::HeavyPath::Word:
      return bcf ? word_lane<T, AfdistMethod::Bcftools>(row, samples, ploidy, lane, lanes)
                 : word_lane<T, AfdistMethod::ZarrAfdist>(row, samples, ploidy, lane, lanes);
    default:
      return vc::lane_generic<T>(row, samples, ploidy, m, lane, lanes);
  }
  ADD_FAILURE() << "SWAR path for a wide type";
  return {};
}

/// What a warp of @p lanes lanes computes for each row, merged as the shuffles merge it.
std::vector<AfdistSite> lanes_count(const GenotypeChunkView& v, AfdistMethod m, vc::HeavyPath path,
                                    int lanes) {
  std::vector<AfdistSite> out(static_cast<std::size_t>(v.variants));
  const std::int64_t row_bytes = v.samples * v.ploidy * v.elem_bytes;
  const int ploidy = static_cast<int>(v.ploidy);
  for (std::int64_t r = 0; r < v.variants; ++r) {
    const std::byte* row = v.data + r * row_bytes;
    AfdistSite total;
    for (int lane = 0; lane < lanes; ++lane) {
      AfdistSite s;
      switch (v.elem_bytes) {
        case 1:
          s = any_lane<std::int8_t>(path, m, row, v.samples, ploidy, lane, lanes);
          break;
        case 2:
          s = any_lane<std::int16_t>(path, m, row, v.samples, ploidy, lane, lanes);
          break;
        case 4:
          s = any_lane<std::int32_t>(path, m, row, v.samples, ploidy, lane, lanes);
          break;
        default:
          s = any_lane<std::int64_t>(path, m, row, v.samples, ploidy, lane, lanes);
      }
      afdist::merge_site(total, s);
    }
    out[static_cast<std::size_t>(r)] = total;
  }
  return out;
}

std::vector<vc::HeavyPath> paths_for(int elem, int ploidy) {
  std::vector<vc::HeavyPath> out;
  for (auto p : {vc::HeavyPath::Swar, vc::HeavyPath::Word, vc::HeavyPath::Generic})
    if (vc::heavy_path_fits(p, elem, ploidy)) out.push_back(p);
  return out;
}

const char* path_name(vc::HeavyPath p) {
  switch (p) {
    case vc::HeavyPath::Swar:
      return "swar";
    case vc::HeavyPath::Word:
      return "word";
    case vc::HeavyPath::Generic:
      return "generic";
    default:
      return "auto";
  }
}

std::vector<AfdistMethod> methods_for(int ploidy) {
  if (ploidy == 2) return {AfdistMethod::Bcftools, AfdistMethod::ZarrAfdist};
  return {AfdistMethod::Bcftools};
}

/// Every layout the tests cover: widths × ploidies (the word path's and the generic ones).
struct Layout {
  int elem, ploidy;
};
std::vector<Layout> layouts() {
  std::vector<Layout> out;
  for (int elem : {1, 2, 4, 8})
    for (int ploidy : {1, 2, 3, 4, 5, 8, 16})
      if (ploidy <= 4 || elem * ploidy <= 16) out.push_back({elem, ploidy});
  return out;
}

const std::vector<std::int64_t> kSampleCounts = {1, 3, 7, 100, 1001, 4099};

std::int64_t rows_for(std::int64_t samples, int ploidy, int elem) {
  // Enough rows to hit every start offset mod 16, fewer when rows are long.
  const std::int64_t row_bytes = samples * ploidy * elem;
  return row_bytes > 20000 ? 9 : 37;
}

}  // namespace

// ---- CPU: the lanes' code
// --------------------------------------------------------------------------

TEST(CudaAfdistLanes, SwarBcftoolsEqualsPerCallRulesOnEveryByteClass) {
  const std::vector<int> v = {-128, -127, -100, -3, -2, -1, 0, 1, 2, 3, 4, 100, 126, 127};
  auto check = [&](const std::int8_t(&b)[4]) {
    std::uint32_t w;
    std::memcpy(&w, b, 4);
    AfdistSite want;
    afdist::bcftools_add_sample(want, b, 2);
    afdist::bcftools_add_sample(want, b + 2, 2);
    vc::swar::Bcftools any;
    any.add_any(w, vc::swar::Bcftools::t1_of(w));
    any.fold();
    ASSERT_TRUE(same(want, any.site()))
        << "bytes " << int(b[0]) << " " << int(b[1]) << " " << int(b[2]) << " " << int(b[3])
        << ": expected " << describe(want) << " got " << describe(any.site());
    const bool fill = b[0] == -2 || b[1] == -2 || b[2] == -2 || b[3] == -2;
    ASSERT_EQ(fill, vc::swar::Bcftools::fills(w, vc::swar::Bcftools::t1_of(w)) != 0);
    if (!fill) {
      vc::swar::Bcftools fast;
      fast.add_no_fill(w, vc::swar::Bcftools::t1_of(w));
      fast.seen2 = 1;
      fast.fold();
      ASSERT_TRUE(same(want, fast.site())) << "no-fill path, word " << std::hex << w;
    }
  };
  gputest::for_each_int8_word(v, 1000000, 7, check);
}

TEST(CudaAfdistLanes, SwarZarrEqualsPerCallRulesOnEveryByteClass) {
  auto check = [&](std::uint32_t w) {
    std::int8_t b[4];
    std::memcpy(b, &w, 4);
    AfdistSite want;
    afdist::zarr_add_sample(want, b);
    afdist::zarr_add_sample(want, b + 2);
    vc::swar::Zarr z;
    z.add(w);
    z.calls = 2;
    z.fold();
    ASSERT_TRUE(same(want, z.site())) << "word " << std::hex << w << ": expected " << describe(want)
                                      << " got " << describe(z.site());
  };
  const std::vector<int> v = {-128, -127, -3, -2, -1, 0, 1, 2, 127};
  for (int a0 : v)
    for (int b0 : v)
      for (int a1 : v)
        for (int b1 : v)
          check(static_cast<std::uint32_t>(static_cast<std::uint8_t>(a0)) |
                static_cast<std::uint32_t>(static_cast<std::uint8_t>(b0)) << 8 |
                static_cast<std::uint32_t>(static_cast<std::uint8_t>(a1)) << 16 |
                static_cast<std::uint32_t>(static_cast<std::uint8_t>(b1)) << 24);
  std::mt19937_64 rng(8);
  for (int i = 0; i < 1000000; ++i) check(static_cast<std::uint32_t>(rng()));
  // The padding word adds nothing to either method.
  vc::swar::Zarr z;
  z.add(vc::kNeutralWord);
  z.fold();
  EXPECT_TRUE(same(AfdistSite{}, z.site()));
  vc::swar::Bcftools b;
  b.add_any(vc::kNeutralWord, vc::swar::Bcftools::t1_of(vc::kNeutralWord));
  b.add_no_fill(vc::kNeutralWord, vc::swar::Bcftools::t1_of(vc::kNeutralWord));
  b.fold();
  EXPECT_TRUE(same(AfdistSite{}, b.site()));
}

TEST(CudaAfdistLanes, RowSegmentsCoverEveryCallOnce) {
  alignas(16) static std::byte buffer[4096];
  for (int cb : {1, 2, 4, 8, 16})
    for (std::int64_t start = 0; start < 64; start += cb)
      for (std::int64_t calls = 0; calls < 40; ++calls) {
        const std::byte* row = buffer + start;
        const auto s = vc::row_segments(row, calls * cb, cb);
        EXPECT_EQ(s.head_calls + s.tail_calls + s.words * 16 / cb, calls);
        if (s.words > 0) {
          EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s.words_begin) % 16, 0u);
          EXPECT_EQ(s.words_begin, row + s.head_calls * cb);
          EXPECT_EQ(s.tail_begin, s.words_begin + 16 * s.words);
          EXPECT_LT(s.head_calls * cb, 16);
          EXPECT_LT(s.tail_calls * cb, 16);
        }
      }
}

TEST(CudaAfdistLanes, EveryPathMergedOverLanesEqualsCpuCountSites) {
  std::mt19937_64 rng(2024);
  for (const auto& [elem, ploidy] : layouts())
    for (std::int64_t samples : kSampleCounts) {
      Profile prof;
      if (samples > 1000 && rng() % 2) prof.fill_rows = 0;  // rows that take the no-fill path
      const Block b = make_block(rng, elem, rows_for(samples, ploidy, elem), samples, ploidy, prof);
      for (AfdistMethod m : methods_for(ploidy)) {
        const auto want = cpu_count(b.view, m);
        for (vc::HeavyPath path : paths_for(elem, ploidy))
          for (int lanes : {32, 5}) {
            const std::string what = "int" + std::to_string(8 * elem) + " ploidy " +
                                     std::to_string(ploidy) + " samples " +
                                     std::to_string(samples) + " " + to_string(m) + " " +
                                     path_name(path) + " lanes " + std::to_string(lanes);
            expect_same_sites(want, lanes_count(b.view, m, path, lanes), what);
          }
      }
    }
}

TEST(CudaAfdistLanes, SwarByteCountersDoNotOverflowOnUniformRows) {
  // Every byte of every word counted (all 1/1, all 0/0, all 1/0): the packed counters reach
  // their bound between folds; one lane takes a whole row, and 32 lanes.
  for (std::int8_t a : {0, 1})
    for (std::int8_t b : {0, 1}) {
      std::vector<vc::Word16> storage(4099 * 2 * 3 / 16 + 1);
      auto* p = reinterpret_cast<std::int8_t*>(storage.data());
      for (int i = 0; i < 4099 * 3; ++i) {
        p[2 * i] = a;
        p[2 * i + 1] = b;
      }
      GenotypeChunkView v;
      v.data = reinterpret_cast<const std::byte*>(storage.data());
      v.variants = 3;
      v.samples = 4099;
      v.ploidy = 2;
      for (AfdistMethod m : {AfdistMethod::Bcftools, AfdistMethod::ZarrAfdist})
        for (int lanes : {1, 32})
          expect_same_sites(cpu_count(v, m), lanes_count(v, m, vc::HeavyPath::Swar, lanes),
                            "uniform " + std::to_string(a) + "/" + std::to_string(b) + " " +
                                to_string(m) + " lanes " + std::to_string(lanes));
    }
}

TEST(CudaAfdistLanes, AutoPathPicksTheFastestFit) {
  EXPECT_EQ(vc::auto_heavy_path(1, 2), vc::HeavyPath::Swar);
  EXPECT_EQ(vc::auto_heavy_path(2, 2), vc::HeavyPath::Word);
  EXPECT_EQ(vc::auto_heavy_path(1, 16), vc::HeavyPath::Word);
  EXPECT_EQ(vc::auto_heavy_path(8, 2), vc::HeavyPath::Word);
  EXPECT_EQ(vc::auto_heavy_path(8, 4), vc::HeavyPath::Generic);
  EXPECT_EQ(vc::auto_heavy_path(1, 3), vc::HeavyPath::Generic);
  EXPECT_EQ(vc::auto_heavy_path(4, 3), vc::HeavyPath::Generic);
}

// ---- GPU: the kernels
// ----------------------------------------------------------------------------

TEST(CudaAfdistGpu, HeavyKernelsEqualCpuCountSitesBitForBit) {
  VCZ_REQUIRE_GPU();
#ifdef VCZSTATS_HAVE_CUDA
  std::mt19937_64 rng(99);
  for (const auto& [elem, ploidy] : layouts())
    for (std::int64_t samples : kSampleCounts) {
      Profile prof;
      if (samples > 1000 && rng() % 2) prof.fill_rows = 0;
      const std::int64_t rows = rows_for(samples, ploidy, elem);
      // Two sample blocks of the same rows, added one after the other as the pipeline does.
      const Block b1 = make_block(rng, elem, rows, samples, ploidy, prof);
      const Block b2 = make_block(rng, elem, rows, 1 + samples / 3, ploidy, prof);
      for (AfdistMethod m : methods_for(ploidy)) {
        const auto want = cpu_count(b2.view, m, cpu_count(b1.view, m));
        for (vc::HeavyPath path : paths_for(elem, ploidy)) {
          std::vector<AfdistSite> got(static_cast<std::size_t>(rows));
          gputest::kernels::count_sites(b1.view, m, path, got);
          gputest::kernels::count_sites(b2.view, m, path, got);
          expect_same_sites(want, got,
                            "int" + std::to_string(8 * elem) + " ploidy " + std::to_string(ploidy) +
                                " samples " + std::to_string(samples) + " " + to_string(m) + " " +
                                path_name(path));
        }
      }
    }
#endif
}

// ---- GPU: afdist end to end
// ----------------------------------------------------------------------

TEST(CudaAfdistGpu, RunAfdistOnGpuEqualsCpu) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const auto specs = store_specs();
  ASSERT_FALSE(specs.empty());
  // VCZSTATS_GPU_TEST_QUICK (under compute-sanitizer): one query per store.
  const bool quick = std::getenv("VCZSTATS_GPU_TEST_QUICK") != nullptr;
  int stores_run = 0;
  for (const auto& spec : specs) {
    const std::string path = obtain_store(dir, spec);
    if (path.empty()) continue;
    ++stores_run;
    SCOPED_TRACE(spec.name);
    const auto store = vcz::VczStore::open(path);
    const auto all = store.all_samples();
    std::vector<std::string> every_other, one;
    for (std::size_t i = 0; i < all.indices.size(); i += 2)
      every_other.emplace_back(store.sample_ids()[all.indices[i]]);
    one.emplace_back(store.sample_ids()[all.indices.back()]);
    const std::vector<std::pair<std::string, vcz::SampleSelection>> selections = {
        {"all", all},
        {"every other", store.select_samples(StringTable::from(every_other))},
        {"one", store.select_samples(StringTable::from(one))}};
    const auto plans = gputest::test_plans(store);
    const std::string regions = plans.back().first;
    for (AfdistMethod m : methods_for(static_cast<int>(store.ploidy())))
      for (const auto& [sname, samples] : selections)
        for (const auto& [pname, plan] : plans) {
          if (quick && (sname != "every other" || pname != regions)) continue;
          AfdistOptions o;
          o.method = m;
          o.bins = pname == "whole" ? 10 : 13;
          RunOptions cpu;
          cpu.device.kind = DeviceKind::Cpu;
          cpu.threads = 2;
          const auto want = vcztest::run_afdist(store, plan, samples, o, cpu);
          for (unsigned streams : {1u, 3u}) {
            if (quick && streams == 1) continue;
            RunOptions gpu;
            gpu.device.kind = DeviceKind::Gpu;
            gpu.threads = 3;
            gpu.prefetch = streams == 1 ? 1 : 0;
            gpu.gpu_streams = streams;
            RunStats rs;
            const auto got = vcztest::run_afdist(store, plan, samples, o, gpu, &rs);
            const std::string what = to_string(m) + ", samples " + sname + ", " + pname + ", " +
                                     std::to_string(streams) + " streams";
            EXPECT_EQ(want.counts, got.counts) << what;
            EXPECT_EQ(want.edges, got.edges) << what;
            EXPECT_EQ(want.sites, got.sites) << what;
            EXPECT_EQ(rs.device.rfind("gpu", 0), 0u) << rs.device;
          }
        }
  }
  if (stores_run == 0)
    GTEST_SKIP() << "skipped: no test store (needs python3-zarr and bcftools, or "
                    "VCZSTATS_TEST_STORES from scripts/fetch-gpu-deps.sh)";
}

TEST(CudaAfdistGpu, DeviceGpuWithoutGpuIsAUsageError) {
  std::string why;
  if (gpu_available(&why)) GTEST_SKIP() << "skipped: a GPU is present";
  vcztest::TempDir dir;
  const auto specs = store_specs();
  ASSERT_FALSE(specs.empty());
  const std::string path = obtain_store(dir, specs.front());
  if (path.empty()) GTEST_SKIP() << "skipped: no test store";
  const auto store = vcz::VczStore::open(path);
  RunOptions gpu;
  gpu.device.kind = DeviceKind::Gpu;
  EXPECT_THROW(vcztest::run_afdist(store, store.plan({}, vcz::RegionOverlap::Record),
                                   store.all_samples(), AfdistOptions{}, gpu),
               UsageError);
}
