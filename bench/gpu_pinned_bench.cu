// Pinning host memory for the GPU: the library's PinnedBuffer (anonymous memory advised onto
// transparent huge pages, then cudaHostRegister; backend/cuda/cuda_util.cuh) against
// cudaHostAlloc, its peer and what it replaced. For each size: the seconds to allocate and pin,
// to free, and the host-to-device copy rate from the buffer; medians of --reps fresh buffers.
//
//   gpu_pinned_bench [--reps N] [MiB ...]      (default: 3 reps of 64, 256 and 1024 MiB)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cuda/cuda_util.cuh"
#include "gpu_timing.cuh"

namespace {

using Clock = std::chrono::steady_clock;
using vczstats::bench::median;
using vczstats::cuda::PinnedBuffer;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct Times {
  std::vector<double> pin, free, gbs;
};

/// One fresh buffer of @p bytes: allocate and pin (and fault in), copy it to the device, free.
template <class Alloc, class Free>
void once(std::size_t bytes, void* dev, Times& t, Alloc&& alloc, Free&& release) {
  const auto a = Clock::now();
  std::byte* p = alloc(bytes);
  std::memset(p, 1, bytes);  // both kinds are written by the readers before the copy
  const auto b = Clock::now();
  VCZ_CUDA_CHECK(cudaMemcpy(dev, p, bytes, cudaMemcpyHostToDevice));
  const auto c = Clock::now();
  release();
  const auto d = Clock::now();
  t.pin.push_back(seconds(a, b));
  t.gbs.push_back(static_cast<double>(bytes) / seconds(b, c) * 1e-9);
  t.free.push_back(seconds(c, d));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    int reps = 3;
    std::vector<double> mib;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--reps" && i + 1 < argc)
        reps = std::max(1, std::atoi(argv[++i]));
      else
        mib.push_back(std::atof(argv[i]));
    }
    if (mib.empty()) mib = {64, 256, 1024};
    VCZ_CUDA_CHECK(cudaFree(nullptr));  // the context, outside the timings
    std::printf(
        "# pinned host memory: PinnedBuffer (huge pages + cudaHostRegister) against "
        "cudaHostAlloc, median of %d fresh buffers\n\n",
        reps);
    std::printf(
        "| MiB | cudaHostAlloc pin+write s | PinnedBuffer pin+write s | speed-up | "
        "cudaFreeHost s | PinnedBuffer free s | H2D GB/s (hostalloc / huge) |\n");
    std::printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const double m : mib) {
      const auto bytes = static_cast<std::size_t>(m * 1024 * 1024);
      void* dev = nullptr;
      VCZ_CUDA_CHECK(cudaMalloc(&dev, bytes));
      Times host, huge;
      for (int r = 0; r < reps; ++r) {
        void* h = nullptr;
        once(
            bytes, dev, host,
            [&](std::size_t n) {
              VCZ_CUDA_CHECK(cudaHostAlloc(&h, n, cudaHostAllocPortable));
              return static_cast<std::byte*>(h);
            },
            [&] { VCZ_CUDA_CHECK(cudaFreeHost(h)); });
        PinnedBuffer buf;
        once(
            bytes, dev, huge,
            [&](std::size_t n) {
              buf = PinnedBuffer(static_cast<std::int64_t>(n));
              return buf.data();
            },
            [&] { buf = PinnedBuffer(); });
      }
      VCZ_CUDA_CHECK(cudaFree(dev));
      std::printf("| %.0f | %.3f | %.3f | %.1fx | %.3f | %.3f | %.1f / %.1f |\n", m,
                  median(host.pin), median(huge.pin), median(host.pin) / median(huge.pin),
                  median(host.free), median(huge.free), median(host.gbs), median(huge.gbs));
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_pinned_bench: %s\n", e.what());
    return 1;
  }
}
