// The GPU band of the variant-pair family (backend/cuda/pair_band_gpu.cpp) against the CPU band
// on the same input: random packed 2-bit codes (missing calls, and rows called everywhere for
// the four-popcount path) and random haplotype planes, fed unit by unit to both bands over a
// simulated store's positions in units smaller than the window. Every batch must be the same:
// unit, rows, handed-over planes, and the pairs as sets with the same bits (n, r2, d, dprime).
// Each request kind: r2, a bp window, the EM (--dprime), plink's prune test, haplotypes, focal
// rows. Skips visibly without a GPU.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "backend/gpu_test_support.hpp"
#include "backend/pair_band.hpp"
#include "test_util.hpp"
#include "vczstats/packed.hpp"
#include "vczstats/vcz.hpp"
#ifdef VCZSTATS_HAVE_CUDA
#include <cuda_runtime.h>
#endif

using namespace vczstats;

#ifdef VCZSTATS_HAVE_CUDA
namespace {

/// Random rows of one unit: 2-bit codes over @p samples (code 3 missing), or haplotype planes
/// (non-REF within called) over @p width slots; a third of the rows called everywhere; most rows
/// copy most values of the row before (@p last, carried across units), so that thresholds bite.
std::vector<std::uint64_t> random_rows(std::mt19937_64& rng, std::int64_t rows, std::int64_t width,
                                       bool haplotypes, std::vector<int>& last) {
  const std::int64_t words = haplotypes ? 2 * ((width + 63) / 64) : packed_words(width);
  std::vector<std::uint64_t> out(static_cast<std::size_t>(rows * words), 0);
  std::uniform_real_distribution<double> u01(0, 1);
  last.resize(static_cast<std::size_t>(width), 0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const bool complete = r % 3 == 0, linked = u01(rng) < 0.7;
    const double freq = 0.05 + 0.5 * u01(rng);
    std::uint64_t* row = out.data() + r * words;
    for (std::int64_t i = 0; i < width; ++i) {
      int& value = last[static_cast<std::size_t>(i)];  // 0..2 non-REF alleles, 3 missing
      if (!linked || u01(rng) < 0.15 || (complete && value == 3)) {
        if (!complete && u01(rng) < 0.08)
          value = 3;
        else
          value = haplotypes ? u01(rng) < freq : (u01(rng) < freq) + (u01(rng) < freq);
      }
      if (haplotypes) {
        if (value == 3) continue;
        row[words / 2 + i / 64] |= 1ull << (i % 64);
        if (value) row[i / 64] |= 1ull << (i % 64);
      } else {
        row[i / 32] |= static_cast<std::uint64_t>(value) << (2 * (i % 32));
      }
    }
  }
  return out;
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void expect_same_batches(std::vector<PairBatch> cpu, std::vector<PairBatch> gpu) {
  ASSERT_EQ(cpu.size(), gpu.size());
  std::int64_t pairs = 0;
  for (std::size_t k = 0; k < cpu.size(); ++k) {
    PairBatch& c = cpu[k];
    PairBatch& g = gpu[k];
    SCOPED_TRACE("batch " + std::to_string(k) + " unit " + std::to_string(c.unit));
    EXPECT_EQ(c.unit, g.unit);
    ASSERT_EQ(c.rows.size(), g.rows.size());
    for (std::size_t r = 0; r < c.rows.size(); ++r) {
      const PairRow &x = c.rows[r], &y = g.rows[r];
      EXPECT_EQ(std::tie(x.variant, x.pos, x.contig, x.n, x.sum, x.ssq),
                std::tie(y.variant, y.pos, y.contig, y.n, y.sum, y.ssq))
          << "row " << r;
    }
    EXPECT_EQ(c.planes.words_per_row, g.planes.words_per_row);
    EXPECT_EQ(c.planes.variants, g.planes.variants);
    EXPECT_EQ(c.planes.words, g.planes.words);
    auto by_pair = [](const PairValue& x, const PairValue& y) {
      return std::tie(x.a, x.b) < std::tie(y.a, y.b);
    };
    std::sort(c.pairs.begin(), c.pairs.end(), by_pair);
    std::sort(g.pairs.begin(), g.pairs.end(), by_pair);
    ASSERT_EQ(c.pairs.size(), g.pairs.size());
    for (std::size_t p = 0; p < c.pairs.size(); ++p) {
      const PairValue &x = c.pairs[p], &y = g.pairs[p];
      EXPECT_TRUE(x.a == y.a && x.b == y.b && x.n == y.n && same_bits(x.r2, y.r2) &&
                  same_bits(x.d, y.d) && same_bits(x.dprime, y.dprime))
          << "pair " << x.a << "," << x.b << " cpu n " << x.n << " r2 " << x.r2 << " d " << x.d
          << " dprime " << x.dprime << "; gpu " << y.a << "," << y.b << " n " << y.n << " r2 "
          << y.r2 << " d " << y.d << " dprime " << y.dprime;
    }
    pairs += static_cast<std::int64_t>(c.pairs.size());
  }
  EXPECT_GT(pairs, 0);
}

}  // namespace
#endif

TEST(CudaPairBand, BatchesEqualTheCpuBandsOnRandomRows) {
  VCZ_REQUIRE_GPU();
#ifdef VCZSTATS_HAVE_CUDA
  vcztest::TempDir dir;
  const std::string path = (dir / "sim.vcz").string();
  vcztest::run_ok(vcztest::binary() + " simulate --samples 10 --variants 400 --seed 4 " +
                  "--variants-chunk-size 100 " + vcztest::shell_quote(path));
  const auto store = vcz::VczStore::open(path);
  const vcz::ChunkPlan plan = store.plan({}, vcz::RegionOverlap::Record, 13);
  ASSERT_GT(plan.units.size(), 20u);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);

  struct Case {
    const char* name;
    PairRequest request;
  };
  std::vector<Case> cases;
  auto add = [&](const char* name, PairMeasure m, std::int64_t variants, std::int64_t bp,
                 double min_r2) {
    PairRequest r;
    r.measure = m;
    r.max_variants = variants;
    r.max_bp = bp;
    r.min_r2 = min_r2;
    cases.push_back({name, r});
  };
  add("r2 window 20", PairMeasure::GenotypeR2, 20, 1 << 30, 0);
  add("r2 bp window", PairMeasure::GenotypeR2, 1 << 30, 3000, 0.05);
  add("em window 30", PairMeasure::GenotypeEm, 30, 1 << 30, 0);
  add("prune window 25", PairMeasure::PruneEdge, 25, 1 << 30, 0.05);
  add("haplotypes window 20", PairMeasure::Haplotype, 20, 1 << 30, 0);
  add("focal r2", PairMeasure::GenotypeR2, 40, 1 << 30, 0);
  cases.back().request.focal = {3, 77, 78, 200, 399};
  cases.back().request.focal_only = true;

  for (const std::int64_t samples : {std::int64_t{45}, std::int64_t{1100}})
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.name) + ", " + std::to_string(samples) + " samples");
      backend::PairBandSpec spec;
      spec.store = &store;
      spec.plan = &plan;
      spec.samples = samples;
      spec.ploidy = 2;
      spec.request = c.request;
      spec.threads = 2;
      auto cpu = backend::make_pair_band_cpu(spec);
      auto gpu = backend::make_pair_band_gpu(spec);
      const bool hap = c.request.haplotypes();
      const std::int64_t width = hap ? 2 * samples : samples;
      std::mt19937_64 rng(static_cast<std::uint64_t>(samples) * 31 + c.request.max_variants);
      std::vector<PairBatch> from_cpu, from_gpu;
      std::vector<int> last;
      void* device = nullptr;
      std::size_t device_bytes = 0;
      for (std::size_t u = 0; u < plan.units.size(); ++u) {
        const vcz::WorkUnit& unit = plan.units[u];
        const auto words = random_rows(rng, unit.size(), width, hap, last);
        const std::size_t bytes = words.size() * 8;
        if (bytes > device_bytes) {
          if (device) {
            ASSERT_EQ(cudaFree(device), cudaSuccess);
          }
          ASSERT_EQ(cudaMalloc(&device, bytes), cudaSuccess);
          device_bytes = bytes;
        }
        ASSERT_EQ(cudaMemcpy(device, words.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
        const auto ui = static_cast<std::int64_t>(u);
        if (hap) {
          backend::PackedHaplotypeView v;
          v.words = words.data();
          v.variants = unit.size();
          v.haplotypes = width;
          v.words_per_plane = (width + 63) / 64;
          v.variant_offset = unit.begin;
          cpu->host_haplotypes(ui, v);
          v.words = static_cast<const std::uint64_t*>(device);
          gpu->device_haplotypes(ui, v, stream);
        } else {
          PackedGenotypeView v;
          v.words = words.data();
          v.variants = unit.size();
          v.samples = samples;
          v.words_per_row = packed_words(samples);
          v.variant_offset = unit.begin;
          cpu->host_unit(ui, v);
          v.words = static_cast<const std::uint64_t*>(device);
          gpu->device_unit(ui, v, stream);
        }
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        for (auto& b : cpu->take()) from_cpu.push_back(std::move(b));
        for (auto& b : gpu->take()) from_gpu.push_back(std::move(b));
      }
      for (auto& b : cpu->finish()) from_cpu.push_back(std::move(b));
      for (auto& b : gpu->finish()) from_gpu.push_back(std::move(b));
      if (device) {
        ASSERT_EQ(cudaFree(device), cudaSuccess);
      }
      expect_same_batches(std::move(from_cpu), std::move(from_gpu));
    }
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
#endif
}
