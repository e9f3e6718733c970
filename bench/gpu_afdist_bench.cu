// Kernel-only benchmark of the afdist heavy pass on device-resident data.
//
// Makes a random int8 diploid genotype block on the GPU (default 10^4 samples × 10^5 variants =
// 2 GB; allele frequencies from a neutral-like 1/k spectrum, some multi-allelic sites, rare
// missing alleles), then times with CUDA events (median of --reps runs after a warm-up):
//   - a device-to-device cudaMemcpy of a large buffer (bytes read + written: the copy roof);
//   - the heavy-pass kernels as the pipeline runs them (SWAR, the default for int8 diploid) and
//     the per-call word path, for both methods;
//   - a seed-style baseline: one thread per variant looping over its samples with 1-byte loads.
// Reports GB/s of genotype bytes read and their ratio to the copy bandwidth as a Markdown table,
// and checks that every kernel produced the same sites.
//
// Registers (nvcc 13.0, sm_90, -Xptxas -v; heavy kernels capped at 64 by __launch_bounds__(256, 4),
// i.e. 32 warps per SM): SWAR bcftools 62, SWAR zarr-afdist 59, word path 47-62 (int8 diploid:
// bcftools 58, zarr-afdist 47), generic 40-48, histogram 32; all 25 kernels 0 bytes of stack and
// no spills. scripts/gpu-check.sh records the same report (and SASS) on the GPU machine.
//
// Usage: gpu_afdist_bench [--samples N] [--variants N] [--reps N]

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cuda/afdist_kernels.cuh"
#include "backend/cuda/cuda_util.cuh"
#include "stats/afdist_math.hpp"

using namespace vczstats;
using stats::AfdistMethod;
using stats::AfdistSite;

namespace {

__device__ std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__device__ double unit(std::uint64_t x) {
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

/// Genotypes of variant v, sample s: ALT frequency from the 1/k spectrum, 5% of sites with a
/// second ALT, missing alleles with probability 0.002.
__global__ void make_genotypes(std::int8_t* g, std::int64_t variants, std::int64_t samples) {
  const std::int64_t n = variants * samples;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t v = i / samples;
    const std::uint64_t hv = mix(static_cast<std::uint64_t>(v) * 7919u);
    // k in 1..2n-1 with weight 1/k, approximately: k = (2n)^u.
    const double af = exp(unit(hv) * log(2.0 * static_cast<double>(samples))) /
                      (2.0 * static_cast<double>(samples));
    const bool multi = (hv & 0xFF) < 13;
    for (int j = 0; j < 2; ++j) {
      const std::uint64_t h = mix(static_cast<std::uint64_t>(2 * i + j) ^ 0xABCDEF);
      const double x = unit(h);
      std::int8_t a = x < af ? 1 : 0;
      if (multi && x < af * 0.3) a = 2;
      if ((h & 0x3FF) < 2) a = -1;
      g[2 * i + j] = a;
    }
  }
}

/// The seed-style kernel: one thread per variant, 1-byte loads, the same per-call math.
__global__ void baseline_kernel(const std::int8_t* g, std::int64_t variants, std::int64_t samples,
                                AfdistMethod method, AfdistSite* sites) {
  const std::int64_t v = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (v >= variants) return;
  AfdistSite s;
  const std::int8_t* row = g + v * samples * 2;
  for (std::int64_t i = 0; i < samples; ++i) {
    if (method == AfdistMethod::Bcftools)
      stats::afdist::bcftools_add_sample(s, row + 2 * i, 2);
    else
      stats::afdist::zarr_add_sample(s, row + 2 * i);
  }
  sites[v] = s;
}

template <class F>
double median_ms(cudaStream_t st, int reps, F&& launch) {
  cuda::Event a(true), b(true);
  launch();  // warm-up
  launch();
  VCZ_CUDA_CHECK(cudaStreamSynchronize(st));
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    a.record(st);
    launch();
    b.record(st);
    b.synchronize();
    float t = 0;
    VCZ_CUDA_CHECK(cudaEventElapsedTime(&t, a.get(), b.get()));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return static_cast<double>(ms[ms.size() / 2]);
}

bool same(const AfdistSite& a, const AfdistSite& b) {
  return a.an == b.an && a.ac1 == b.ac1 && a.n_dosage1 == b.n_dosage1 &&
         a.n_dosage2 == b.n_dosage2 && a.ploidy == b.ploidy && a.ref_count == b.ref_count &&
         a.het == b.het && a.hom_alt == b.hom_alt;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t samples = 10000, variants = 100000;
  int reps = 15;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--samples")
      samples = std::atoll(argv[i + 1]);
    else if (k == "--variants")
      variants = std::atoll(argv[i + 1]);
    else if (k == "--reps")
      reps = std::max(10, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: %s [--samples N] [--variants N] [--reps N]\n", argv[0]);
      return 2;
    }
  }
  try {
    VCZ_CUDA_CHECK(cudaSetDevice(0));
    const cuda::DeviceInfo info = cuda::device_info(0);
    cuda::DevicePool pool(0);
    cuda::Stream stream;
    const cudaStream_t st = stream.get();
    const std::int64_t bytes = variants * samples * 2;
    cuda::DeviceBuffer data(pool, bytes, st);
    cuda::DeviceBuffer copy(pool, bytes / 2, st);
    cuda::DeviceBuffer sites(pool, variants * static_cast<std::int64_t>(sizeof(AfdistSite)), st);
    cuda::DeviceBuffer ref_sites(pool, variants * static_cast<std::int64_t>(sizeof(AfdistSite)),
                                 st);
    make_genotypes<<<4096, 256, 0, st>>>(data.as<std::int8_t>(), variants, samples);
    VCZ_CUDA_CHECK_LAUNCH("make_genotypes");
    VCZ_CUDA_CHECK(cudaStreamSynchronize(st));

    std::printf("# afdist heavy pass, %s: %lld samples x %lld variants, int8 diploid, %.2f GB\n\n",
                info.name.c_str(), static_cast<long long>(samples),
                static_cast<long long>(variants), static_cast<double>(bytes) * 1e-9);
    const double copy_ms = median_ms(st, reps, [&] {
      VCZ_CUDA_CHECK(cudaMemcpyAsync(copy.data(), data.data(), static_cast<std::size_t>(bytes / 2),
                                     cudaMemcpyDeviceToDevice, st));
    });
    const double copy_gbs = static_cast<double>(bytes) / (copy_ms * 1e-3) * 1e-9;  // read + write
    std::printf("| kernel | method | median ms | GB/s read | of D2D copy |\n");
    std::printf("|---|---|---:|---:|---:|\n");
    std::printf("| cudaMemcpy D2D (%.2f GB read + written) | - | %.3f | %.0f (r+w) | 100%% |\n",
                static_cast<double>(bytes) * 1e-9, copy_ms, copy_gbs);

    const std::size_t site_bytes = static_cast<std::size_t>(variants) * sizeof(AfdistSite);
    std::vector<AfdistSite> want(static_cast<std::size_t>(variants)),
        got(static_cast<std::size_t>(variants));
    bool all_same = true;
    for (AfdistMethod m : {AfdistMethod::Bcftools, AfdistMethod::ZarrAfdist}) {
      const char* mname = m == AfdistMethod::Bcftools ? "bcftools" : "zarr-afdist";
      cuda::HeavyArgs a;
      a.data = data.data();
      a.elem_bytes = 1;
      a.rows = variants;
      a.samples = samples;
      a.ploidy = 2;
      a.method = m;
      // Reference sites: the baseline kernel, once.
      baseline_kernel<<<static_cast<unsigned>((variants + 127) / 128), 128, 0, st>>>(
          data.as<std::int8_t>(), variants, samples, m, ref_sites.as<AfdistSite>());
      VCZ_CUDA_CHECK_LAUNCH("baseline_kernel");
      VCZ_CUDA_CHECK(
          cudaMemcpyAsync(want.data(), ref_sites.data(), site_bytes, cudaMemcpyDeviceToHost, st));
      VCZ_CUDA_CHECK(cudaStreamSynchronize(st));
      struct Case {
        const char* name;
        cuda::HeavyPath path;
      };
      for (const Case c : {Case{"heavy, SWAR (default)", cuda::HeavyPath::Swar},
                           Case{"heavy, word path", cuda::HeavyPath::Word}}) {
        a.sites = sites.as<AfdistSite>();
        // Timed as the pipeline runs it: clear the sites, count one block.
        const double ms = median_ms(st, reps, [&] {
          VCZ_CUDA_CHECK(cudaMemsetAsync(sites.data(), 0, site_bytes, st));
          cuda::launch_afdist_heavy(a, st, c.path);
        });
        VCZ_CUDA_CHECK(
            cudaMemcpyAsync(got.data(), sites.data(), site_bytes, cudaMemcpyDeviceToHost, st));
        VCZ_CUDA_CHECK(cudaStreamSynchronize(st));
        for (std::int64_t v = 0; v < variants; ++v)
          if (!same(want[static_cast<std::size_t>(v)], got[static_cast<std::size_t>(v)])) {
            std::fprintf(stderr, "MISMATCH: %s %s at variant %lld\n", c.name, mname,
                         static_cast<long long>(v));
            all_same = false;
            break;
          }
        const double gbs = static_cast<double>(bytes) / (ms * 1e-3) * 1e-9;
        std::printf("| %s | %s | %.3f | %.0f | %.0f%% |\n", c.name, mname, ms, gbs,
                    100.0 * gbs / copy_gbs);
      }
      const double ms = median_ms(st, std::min(reps, 10), [&] {
        baseline_kernel<<<static_cast<unsigned>((variants + 127) / 128), 128, 0, st>>>(
            data.as<std::int8_t>(), variants, samples, m, ref_sites.as<AfdistSite>());
        VCZ_CUDA_CHECK_LAUNCH("baseline_kernel");
      });
      const double gbs = static_cast<double>(bytes) / (ms * 1e-3) * 1e-9;
      std::printf(
          "| seed-style baseline (thread per variant, 1-byte loads) | %s | %.3f | %.0f | "
          "%.0f%% |\n",
          mname, ms, gbs, 100.0 * gbs / copy_gbs);
    }
    std::printf("\nsites of every kernel equal the baseline's: %s\n", all_same ? "yes" : "NO");
    return all_same ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_afdist_bench: %s\n", e.what());
    return 1;
  }
}
