// Kernel benchmark of the GPU zstd decoder (ZstdDeviceDecoder) on genotype-like chunks.
//
// Data: int8 genotype matrices (1000 diploid samples per row, 0/1 alleles with ALT frequencies
// from a neutral-like 1/k spectrum, -1 missing with probability 0.002), bit-shuffled as blosc
// does for 1-byte elements (8 bit planes; --no-shuffle keeps the plain bytes), cut into chunks of
// 64 KiB, 256 KiB and 1 MiB and compressed by libzstd at levels 1, 3, 7 and 19 (--levels,
// --sizes change them; 64 distinct chunks per configuration, repeated up to --batch-mib of
// decoded bytes per launch, and to at least --min-tasks tasks: by default twice the warps the
// decoder keeps resident, so that every warp has work).
//
// For each configuration, timed with CUDA events (median of --reps launches after a warm-up):
//  - the decoder on the whole batch (decoded bytes per second);
//  - a device-to-device cudaMemcpy of the same number of bytes (bytes copied per second: each is
//    read and written once), the roof of any kernel that writes the output once;
// and, on the host in the same run, libzstd decoding the same batch with --threads threads
// (default: all cores). Every output is checked against the original chunks.
//
// Registers and shared memory of the kernel (nvcc 13.0, sm_90, -Xptxas -v): see
// src/backend/cuda/decode/zstd_decoder.cu; scripts/gpu-check.sh records them on the GPU machine.
//
// Usage: gpu_zstd_bench [--reps N] [--batch-mib N] [--min-tasks N] [--threads N]
//                       [--levels 1,3,7,19] [--sizes 65536,262144,1048576] [--no-shuffle]

#include <cuda_runtime.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/decode/decode_task.hpp"
#include "backend/cuda/decode/zstd_decoder.cuh"
#include "gpu_timing.cuh"

using namespace vczstats;
using bench::median_ms;
namespace dec = vczstats::cuda::decode;
using Bytes = std::vector<std::uint8_t>;

namespace {

struct Options {
  int reps = 10;
  std::int64_t batch_mib = 256;
  std::int64_t min_tasks = -1;  // -1: twice the decoder's resident warps
  int threads = 0;
  std::vector<int> levels = {1, 3, 7, 19};
  std::vector<std::int64_t> sizes = {65536, 262144, 1048576};
  bool shuffle = true;
};

std::vector<std::int64_t> parse_list(const char* s) {
  std::vector<std::int64_t> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) v.push_back(std::stoll(item));
  return v;
}

/// @p bytes of genotypes: rows of 1000 samples x 2 alleles.
Bytes genotypes(std::mt19937_64& rng, std::int64_t bytes) {
  Bytes g(static_cast<std::size_t>(bytes));
  std::uniform_real_distribution<double> u(0, 1);
  const std::int64_t row = 2000;
  const double h = 2000.0;
  double af = 0;
  for (std::int64_t i = 0; i < bytes; ++i) {
    if (i % row == 0) af = std::exp(u(rng) * std::log(h)) / h;
    const double x = u(rng);
    g[static_cast<std::size_t>(i)] = x < 0.002 ? 0xFF : (u(rng) < af ? 1 : 0);
  }
  return g;
}

/// Bit planes of 1-byte elements (blosc's bit shuffle within one block).
Bytes bitshuffle(const Bytes& in) {
  const std::size_t n8 = in.size() / 8 * 8, plane = n8 / 8;
  Bytes out(in);
  for (std::size_t k = 0; k < 8; ++k)
    for (std::size_t j = 0; j < plane; ++j) {
      std::uint8_t b = 0;
      for (std::size_t e = 0; e < 8; ++e)
        b |= static_cast<std::uint8_t>(((in[8 * j + e] >> k) & 1u) << e);
      out[k * plane + j] = b;
    }
  return out;
}

template <class F>
void parallel_for(int threads, std::int64_t n, F&& f) {
  std::atomic<std::int64_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::int64_t i; (i = next.fetch_add(1)) < n;) f(i);
    });
  for (auto& t : pool) t.join();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--reps")
      o.reps = std::atoi(next());
    else if (a == "--batch-mib")
      o.batch_mib = std::atoll(next());
    else if (a == "--min-tasks")
      o.min_tasks = std::atoll(next());
    else if (a == "--threads")
      o.threads = std::atoi(next());
    else if (a == "--levels") {
      o.levels.clear();
      for (auto v : parse_list(next())) o.levels.push_back(static_cast<int>(v));
    } else if (a == "--sizes")
      o.sizes = parse_list(next());
    else if (a == "--no-shuffle")
      o.shuffle = false;
    else {
      std::fprintf(stderr,
                   "usage: gpu_zstd_bench [--reps N] [--batch-mib N] [--min-tasks N] [--threads N] "
                   "[--levels 1,3,7,19] [--sizes 65536,262144,1048576] [--no-shuffle]\n");
      return 2;
    }
  }
  if (o.threads <= 0)
    o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  try {
    const cuda::DeviceInfo info = cuda::device_info(0);
    std::printf(
        "# GPU zstd decoder: %s (%d SMs), %s genotype chunks, batch %lld MiB, median of "
        "%d launches; host libzstd with %d threads\n\n",
        info.name.c_str(), info.multiprocessors, o.shuffle ? "bit-shuffled" : "plain",
        static_cast<long long>(o.batch_mib), o.reps, o.threads);
    cuda::Stream stream;
    cuda::DevicePool pool(0);
    dec::ZstdDeviceDecoder decoder(pool, stream.get());
    if (o.min_tasks < 0) o.min_tasks = 2 * decoder.warps();
    std::printf(
        "# %lld resident warps (one task each), workspace %lld MiB; at least %lld tasks "
        "per launch\n\n",
        static_cast<long long>(decoder.warps()),
        static_cast<long long>(decoder.workspace_bytes() >> 20),
        static_cast<long long>(o.min_tasks));
    std::printf(
        "| chunk | level | ratio | tasks | GPU decode GB/s | D2D copy GB/s | decode / copy "
        "| host libzstd GB/s | check |\n|---|---|---|---|---|---|---|---|---|\n");
    constexpr std::int64_t kDistinct = 64;
    std::mt19937_64 rng(42);
    for (const std::int64_t size : o.sizes) {
      // 64 distinct chunks of this size.
      std::vector<Bytes> plain(kDistinct);
      for (auto& p : plain) {
        p = genotypes(rng, size);
        if (o.shuffle) p = bitshuffle(p);
      }
      const std::int64_t tasks_n = std::max({kDistinct, (o.batch_mib << 20) / size, o.min_tasks});
      const std::int64_t total = tasks_n * size;
      cuda::DeviceBuffer d_dst(pool, total, stream.get());
      cuda::DeviceBuffer d_copy(pool, total, stream.get());
      for (const int level : o.levels) {
        std::vector<Bytes> frames(kDistinct);
        parallel_for(o.threads, kDistinct, [&](std::int64_t i) {
          Bytes f(ZSTD_compressBound(static_cast<std::size_t>(size)));
          const std::size_t r =
              ZSTD_compress(f.data(), f.size(), plain[i].data(), plain[i].size(), level);
          if (ZSTD_isError(r)) std::abort();
          f.resize(r);
          frames[i] = std::move(f);
        });
        std::vector<std::int64_t> off(kDistinct + 1, 0);
        for (int i = 0; i < kDistinct; ++i)
          off[i + 1] = off[i] + static_cast<std::int64_t>(frames[i].size());
        Bytes h_src(static_cast<std::size_t>(off[kDistinct]));
        for (int i = 0; i < kDistinct; ++i)
          std::memcpy(h_src.data() + off[i], frames[i].data(), frames[i].size());
        cuda::DeviceBuffer d_src(pool, off[kDistinct], stream.get());
        std::vector<dec::DecodeTask> tasks(static_cast<std::size_t>(tasks_n));
        for (std::int64_t t = 0; t < tasks_n; ++t) {
          const std::int64_t i = t % kDistinct;
          tasks[t].src = d_src.as<std::uint8_t>() + off[i];
          tasks[t].src_size = frames[i].size();
          tasks[t].dst = d_dst.as<std::uint8_t>() + t * size;
          tasks[t].dst_size = static_cast<std::uint64_t>(size);
          tasks[t].codec = dec::TaskCodec::Zstd;
        }
        cuda::DeviceBuffer d_tasks(
            pool, tasks_n * static_cast<std::int64_t>(sizeof(dec::DecodeTask)), stream.get());
        cuda::DeviceBuffer d_status(
            pool, tasks_n * static_cast<std::int64_t>(sizeof(dec::DecodeStatus)), stream.get());
        VCZ_CUDA_CHECK(cudaMemcpyAsync(d_src.data(), h_src.data(), h_src.size(),
                                       cudaMemcpyHostToDevice, stream.get()));
        VCZ_CUDA_CHECK(cudaMemcpyAsync(d_tasks.data(), tasks.data(),
                                       tasks.size() * sizeof(dec::DecodeTask),
                                       cudaMemcpyHostToDevice, stream.get()));
        VCZ_CUDA_CHECK(
            cudaMemsetAsync(d_dst.data(), 0, static_cast<std::size_t>(total), stream.get()));

        const double ms = median_ms(stream.get(), o.reps, [&] {
          decoder.decode(d_tasks.as<dec::DecodeTask>(), d_status.as<dec::DecodeStatus>(), tasks_n,
                         stream.get());
        });
        const double copy_ms = median_ms(stream.get(), o.reps, [&] {
          VCZ_CUDA_CHECK(cudaMemcpyAsync(d_copy.data(), d_dst.data(),
                                         static_cast<std::size_t>(total), cudaMemcpyDeviceToDevice,
                                         stream.get()));
        });

        // Check every output and status.
        Bytes h_dst(static_cast<std::size_t>(total));
        std::vector<dec::DecodeStatus> status(static_cast<std::size_t>(tasks_n));
        VCZ_CUDA_CHECK(cudaMemcpyAsync(h_dst.data(), d_dst.data(), h_dst.size(),
                                       cudaMemcpyDeviceToHost, stream.get()));
        VCZ_CUDA_CHECK(cudaMemcpyAsync(status.data(), d_status.data(),
                                       status.size() * sizeof(dec::DecodeStatus),
                                       cudaMemcpyDeviceToHost, stream.get()));
        stream.synchronize();
        std::int64_t bad = 0;
        for (std::int64_t t = 0; t < tasks_n; ++t)
          if (status[t].error != 0 ||
              std::memcmp(h_dst.data() + t * size, plain[t % kDistinct].data(),
                          static_cast<std::size_t>(size)) != 0)
            ++bad;

        // The host peer: libzstd on all threads, same batch.
        Bytes host_out(static_cast<std::size_t>(total));
        std::vector<double> host_s;
        for (int r = 0; r < std::max(1, o.reps / 3); ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          parallel_for(o.threads, tasks_n, [&](std::int64_t t) {
            const auto& f = frames[t % kDistinct];
            ZSTD_decompress(host_out.data() + t * size, static_cast<std::size_t>(size), f.data(),
                            f.size());
          });
          host_s.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(host_s.begin(), host_s.end());
        const double gb = static_cast<double>(total) / 1e9;
        const double ratio =
            static_cast<double>(size) * kDistinct / static_cast<double>(off[kDistinct]);
        std::printf("| %lld KiB | %d | %.1f | %lld | %.1f | %.1f | %.0f%% | %.1f | %s |\n",
                    static_cast<long long>(size >> 10), level, ratio,
                    static_cast<long long>(tasks_n), gb / (ms / 1e3), gb / (copy_ms / 1e3),
                    100.0 * copy_ms / ms, gb / host_s[host_s.size() / 2],
                    bad ? ("FAILED " + std::to_string(bad)).c_str() : "ok");
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_zstd_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
