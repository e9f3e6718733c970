// Pinned host memory (backend/cuda/cuda_util.cuh, PinnedBuffer): below kHugeBytes it comes from
// cudaHostAlloc, from there up it is memory mapped on huge pages and registered with CUDA. Both
// kinds must be page-locked host memory that asynchronous copies read and write, keep their
// bytes through moves, and be empty once moved from. Skips without a GPU.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "backend/gpu_test_support.hpp"
#ifdef VCZSTATS_HAVE_CUDA
#include "backend/cuda/cuda_util.cuh"
#endif

#ifdef VCZSTATS_HAVE_CUDA
namespace {

using vczstats::cuda::PinnedBuffer;

std::byte pattern(std::int64_t i, int seed) {
  return static_cast<std::byte>((i * 131 + seed * 7 + (i >> 12)) & 0xFF);
}

}  // namespace
#endif

TEST(CudaPinned, BuffersOfEverySizeArePinnedAndCopyBothWays) {
  VCZ_REQUIRE_GPU();
#ifdef VCZSTATS_HAVE_CUDA
  const std::int64_t huge = PinnedBuffer::kHugeBytes;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  for (const std::int64_t n :
       {std::int64_t{1}, std::int64_t{4095}, huge - 1, huge, huge + 3, std::int64_t{64} << 20}) {
    SCOPED_TRACE(n);
    PinnedBuffer src(n), back(n);
    ASSERT_NE(src.data(), nullptr);
    ASSERT_EQ(src.size(), n);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(src.data()) % 64, 0u);
    cudaPointerAttributes attr{};
    ASSERT_EQ(cudaPointerGetAttributes(&attr, src.data()), cudaSuccess);
    EXPECT_EQ(attr.type, cudaMemoryTypeHost);  // page-locked, known to CUDA (not unregistered)
    for (std::int64_t i = 0; i < n; ++i) src.data()[i] = pattern(i, 1);
    void* dev = nullptr;
    ASSERT_EQ(cudaMalloc(&dev, static_cast<std::size_t>(n)), cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(dev, src.data(), static_cast<std::size_t>(n), cudaMemcpyHostToDevice,
                              stream),
              cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(back.data(), dev, static_cast<std::size_t>(n), cudaMemcpyDeviceToHost,
                              stream),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaFree(dev);
    std::int64_t wrong = 0;
    for (std::int64_t i = 0; i < n; ++i) wrong += back.data()[i] != pattern(i, 1);
    EXPECT_EQ(wrong, 0);
    // Moves carry the memory; the source is left empty.
    std::byte* const at = back.data();
    PinnedBuffer moved(std::move(back));
    EXPECT_EQ(moved.data(), at);
    EXPECT_EQ(back.data(), nullptr);
    EXPECT_EQ(back.size(), 0);
    PinnedBuffer assigned(16);
    assigned = std::move(moved);
    EXPECT_EQ(assigned.data(), at);
    EXPECT_EQ(assigned.size(), n);
    EXPECT_EQ(moved.data(), nullptr);
    EXPECT_EQ(assigned.data()[n - 1], pattern(n - 1, 1));
  }
  cudaStreamDestroy(stream);
#endif
}
