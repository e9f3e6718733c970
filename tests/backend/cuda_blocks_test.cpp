// Genotype blocks in device memory (vczstats/blocks.hpp, backend/device_blocks.hpp), the GPU
// side of the Python package's iter_chunks(device="gpu"):
//  - CudaBlocks.* (run everywhere): asking for the GPU without one is a UsageError naming it.
//  - CudaBlocksGpu.* (skip without a GPU): every block of the stores of gpu_test_stores.tsv (with
//    a sample subset across sample chunks and a region across variant chunks), copied back from
//    the device, equals the host block of the same stream (the host blocks are checked against
//    python3-zarr by python/tests/test_chunks.py); materialize on the device equals the host's.

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backend/gpu_test_support.hpp"
#include "test_util.hpp"
#include "vczstats/blocks.hpp"
#include "vczstats/error.hpp"
#include "vczstats/query.hpp"
#ifdef VCZSTATS_HAVE_CUDA
#include <cuda_runtime.h>
#endif

using namespace vczstats;

namespace {

std::vector<std::byte> to_host(const GenotypeBlock& b) {
  std::vector<std::byte> out(static_cast<std::size_t>(b.bytes()));
  if (out.empty()) return out;
  if (!b.on_device) {
    std::memcpy(out.data(), b.data, out.size());
    return out;
  }
#ifdef VCZSTATS_HAVE_CUDA
  EXPECT_EQ(cudaMemcpy(out.data(), b.data, out.size(), cudaMemcpyDeviceToHost), cudaSuccess);
#else
  ADD_FAILURE() << "a device block without the CUDA backend";
#endif
  return out;
}

Query query_of(const std::string& store, bool subset) {
  QueryOptions o;
  o.store = store;
  auto s = vcz::VczStore::open(store);
  if (subset) {
    const auto& ids = s.sample_ids();
    for (std::int64_t i = 0; i < ids.size(); i += 3) o.samples.emplace_back(ids[i]);
    o.regions = s.contig_ids().front() + ":100-3000";
  }
  return make_query(o);
}

}  // namespace

TEST(CudaBlocks, GpuWithoutOneIsAUsageError) {
  std::string why;
  if (gpu_available(&why)) GTEST_SKIP() << "skipped: a GPU is usable here";
  const vcztest::TempDir dir;
  const auto specs = gputest::store_specs();
  ASSERT_FALSE(specs.empty());
  const std::string store = gputest::obtain_store(dir, specs.front());
  if (store.empty()) GTEST_SKIP() << "skipped: no test store (python3-zarr and bcftools)";
  const Query q = query_of(store, false);
  BlockStreamOptions o;
  o.device = parse_device("gpu");
  try {
    GenotypeBlockStream blocks(q, o);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu"), std::string::npos) << e.what();
  }
  EXPECT_THROW(materialize(q, o), UsageError);
}

TEST(CudaBlocksGpu, DeviceBlocksEqualHostBlocks) {
  VCZ_REQUIRE_GPU();
  const vcztest::TempDir dir;
  int stores = 0;
  for (const auto& spec : gputest::store_specs()) {
    const std::string store = gputest::obtain_store(dir, spec);
    if (store.empty()) continue;
    ++stores;
    for (const bool subset : {false, true}) {
      SCOPED_TRACE(spec.name + (subset ? " (subset)" : ""));
      const Query q = query_of(store, subset);
      BlockStreamOptions host, gpu;
      host.threads = 2;
      gpu.threads = 3;
      gpu.prefetch = 2;
      gpu.device = parse_device("gpu");
      GenotypeBlockStream a(q, host), b(q, gpu);
      ASSERT_TRUE(b.on_device());
      ASSERT_EQ(a.size(), b.size());
      std::vector<std::byte> all;
      while (auto x = a.next()) {
        auto y = b.next();
        ASSERT_TRUE(y);
        ASSERT_TRUE(y->on_device);
        EXPECT_EQ(x->variant, y->variant);
        EXPECT_EQ(x->position, y->position);
        const auto hx = to_host(*x), hy = to_host(*y);
        EXPECT_TRUE(hx == hy) << "unit " << x->unit;
        all.insert(all.end(), hx.begin(), hx.end());
      }
      EXPECT_FALSE(b.next());
      const GenotypeBlock m = materialize(q, gpu);
      EXPECT_TRUE(m.on_device);
      EXPECT_TRUE(to_host(m) == all);
    }
  }
  if (stores == 0)
    GTEST_SKIP() << "skipped: no test store (python3-zarr and bcftools, or "
                    "VCZSTATS_TEST_STORES)";
}
