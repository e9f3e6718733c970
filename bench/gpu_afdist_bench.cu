// Kernel-only benchmark of the GPU heavy passes on device-resident data (afdist and the
// allele-counts pass), and an end-to-end mode for the allele-counts pipeline.
//
// Kernels: makes a random int8 diploid genotype block on the GPU (default 10^4 samples × 10^5
// variants = 2 GB; allele frequencies from a neutral-like 1/k spectrum, some multi-allelic
// sites, rare missing alleles), then times with CUDA events (median of --reps runs after a
// warm-up):
//   - a device-to-device cudaMemcpy of a large buffer (bytes read + written: the copy roof);
//   - the afdist heavy-pass kernels as the pipeline runs them (SWAR, the default for int8
//     diploid) and the per-call word path, for both methods; a seed-style baseline (one thread
//     per variant looping over its samples with 1-byte loads);
//   - the allele-counts kernels as the pipeline runs them (clear the counts, count the block)
//     for 1, 2, 4 and 26 populations (equal runs of samples; 26 as in the 1000 Genomes) and 2
//     or 4 allele columns: the default path (SWAR with the lanes per row and words in flight
//     that launch_allele_counts picks), SWAR with each of 32 (one row per warp, the kernel
//     before 2026-11-25), 16, 8 and 4 lanes per row and 4 or 2 words in flight, the word path,
//     and the seed-style baseline.
// Reports GB/s of genotype bytes read and their ratio to the copy bandwidth as Markdown tables,
// and checks that every kernel produced the same sites / counts as the baseline.
//
// End to end (--counts-e2e STORE): run_allele_counts on the CPU (all cores), the GPU pipeline
// and the seed-style baseline (hooks::set_gpu_seed_baseline of vczstats/testing.hpp), one
// population or --pops N equal runs, --reps times each after a warm-up run; prints wall
// seconds, calls/s, the -v style stage breakdown, and whether the counts are identical.
//
// Registers (nvcc 13.0, sm_90, -Xptxas -v): afdist heavy kernels capped at 64 by
// __launch_bounds__(256, 4): SWAR bcftools 62, SWAR zarr-afdist 59, word path 47-62, generic
// 40-48; counts kernels capped at 80 by __launch_bounds__(256, 3) (SWAR, word), 96 by
// (128, 5) (SWAR with four allele columns and 4 words in flight: 0-24 bytes spilled) or 64
// (generic); no other spills (2026-11-25). scripts/gpu-check.sh records the report (and SASS)
// on the GPU machine.
//
// Usage: gpu_afdist_bench [--samples N] [--variants N] [--reps N]
//        gpu_afdist_bench --counts-e2e STORE [--pops N] [--reps N]

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backend/cuda/afdist_kernels.cuh"
#include "backend/cuda/counts_kernels.cuh"
#include "backend/cuda/cuda_util.cuh"
#include "backend/site_pass.hpp"
#include "gpu_timing.cuh"
#include "stats/afdist_math.hpp"
#include "vczstats/run.hpp"
#include "vczstats/testing.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/vcz.hpp"

using namespace vczstats;
using bench::median_ms;
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

bool same(const AfdistSite& a, const AfdistSite& b) {
  return a.an == b.an && a.ac1 == b.ac1 && a.n_dosage1 == b.n_dosage1 &&
         a.n_dosage2 == b.n_dosage2 && a.ploidy == b.ploidy && a.ref_count == b.ref_count &&
         a.het == b.het && a.hom_alt == b.hom_alt;
}

/// The allele-counts kernels on the block: GB/s against the copy roof, counts checked against
/// the seed-style baseline. Returns whether every kernel agreed.
bool bench_counts(cuda::DevicePool& pool, cudaStream_t st, const cuda::DeviceBuffer& data,
                  std::int64_t variants, std::int64_t samples, int reps, double copy_gbs) {
  const std::int64_t bytes = variants * samples * 2;
  std::printf("\n| counts kernel | alleles | pops | median ms | GB/s read | of D2D copy |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  bool all_same = true;
  for (int alleles : {2, 4})
    for (int pops : {1, 2, 4, 26}) {
      std::vector<cuda::CountSegment> segs;
      for (int p = 0; p < pops; ++p)
        segs.push_back({samples * p / pops, samples * (p + 1) / pops, p, 0});
      cuda::DeviceBuffer dsegs(pool, static_cast<std::int64_t>(segs.size() * sizeof(segs[0])), st);
      VCZ_CUDA_CHECK(cudaMemcpyAsync(dsegs.data(), segs.data(), segs.size() * sizeof(segs[0]),
                                     cudaMemcpyHostToDevice, st));
      const stats::CountsLayout layout{alleles, pops};
      const std::int64_t n = variants * layout.site_width();
      const auto count_bytes = static_cast<std::size_t>(n) * sizeof(std::int32_t);
      cuda::DeviceBuffer counts(pool, static_cast<std::int64_t>(count_bytes), st);
      GenotypeChunkView view;
      view.data = data.data();
      view.variants = variants;
      view.samples = samples;
      view.ploidy = 2;
      const cuda::CountsArgs a =
          cuda::counts_args(view, layout, dsegs.as<cuda::CountSegment>(),
                            static_cast<std::int64_t>(segs.size()), counts.as<std::int32_t>());
      std::vector<std::int32_t> want(static_cast<std::size_t>(n)), got(want.size());
      auto fetch = [&](std::vector<std::int32_t>& into) {
        VCZ_CUDA_CHECK(
            cudaMemcpyAsync(into.data(), counts.data(), count_bytes, cudaMemcpyDeviceToHost, st));
        VCZ_CUDA_CHECK(cudaStreamSynchronize(st));
      };
      auto row = [&](const char* name, double ms) {
        const double gbs = static_cast<double>(bytes) / (ms * 1e-3) * 1e-9;
        std::printf("| %s | %d | %d | %.3f | %.0f | %.0f%% |\n", name, alleles, pops, ms, gbs,
                    100.0 * gbs / copy_gbs);
      };
      // Timed as the pipeline runs them: clear the counts, count the block.
      const double base_ms = median_ms(st, std::min(reps, 10), [&] {
        VCZ_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, count_bytes, st));
        cuda::launch_allele_counts_baseline(a, st);
      });
      fetch(want);
      struct Case {
        std::string name;
        cuda::CountsPath path;
        int row_lanes;  // SWAR: lanes per row (0: the default launch)
        int words;      // SWAR: words in flight per lane
      };
      std::vector<Case> cases{
          {"counts, default (SWAR, lanes per row and words in flight as "
           "launch_allele_counts picks)",
           cuda::CountsPath::Auto, 0, 0}};
      for (int words : {4, 2})
        for (int lanes : {32, 16, 8, 4})
          cases.push_back({"counts, SWAR, " + std::to_string(lanes) + " lanes per row" +
                               (lanes == 32 ? " (one row per warp)" : "") + ", " +
                               std::to_string(words) + " words in flight",
                           cuda::CountsPath::Swar, lanes, words});
      cases.push_back({"counts, word path", cuda::CountsPath::Word, 0, 0});
      std::printf("| (default: %d lanes per row, %d words in flight) | %d | %d | | | |\n",
                  cuda::swar_row_lanes(a), cuda::swar_words_in_flight(a, cuda::swar_row_lanes(a)),
                  alleles, pops);
      for (const Case& c : cases) {
        const double ms = median_ms(st, reps, [&] {
          VCZ_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, count_bytes, st));
          if (c.row_lanes > 0)
            cuda::launch_swar(a, st, c.row_lanes, c.words);
          else
            cuda::launch_allele_counts(a, st, c.path);
        });
        fetch(got);
        if (got != want) {
          std::fprintf(stderr, "MISMATCH: %s, %d alleles, %d pops\n", c.name.c_str(), alleles,
                       pops);
          all_same = false;
        }
        row(c.name.c_str(), ms);
      }
      row("seed-style baseline (thread per variant)", base_ms);
    }
  std::printf("\ncounts of every kernel equal the baseline's: %s\n", all_same ? "yes" : "NO");
  return all_same;
}

/// run_allele_counts end to end on @p path: CPU, GPU pipeline, seed-style baseline.
int counts_e2e(const std::string& path, int pops, int reps) {
  const auto store = vcz::VczStore::open(path);
  const auto samples = store.all_samples();
  const auto plan = store.plan({}, vcz::RegionOverlap::Record);
  std::vector<std::int32_t> pop_of;
  for (std::int64_t i = 0; i < samples.size(); ++i)
    pop_of.push_back(static_cast<std::int32_t>(i * pops / samples.size()));
  stats::AlleleCountsPass pass;
  pass.init({4, pops}, pop_of);
  std::printf(
      "# allele counts end to end: %s, %lld samples x %lld variants, %d population(s), "
      "4 allele columns, %u CPU threads\n\n",
      path.c_str(), static_cast<long long>(samples.size()),
      static_cast<long long>(store.num_variants()), pops, hardware_threads());
  std::printf(
      "| mode | run | wall s | calls/s | read+decode s | h2d s | compute s | d2h s | "
      "consume s | device |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
  std::vector<std::int32_t> reference;
  bool same = true;
  std::map<std::string, std::pair<RunStats, double>> last;
  for (const char* mode : {"cpu", "gpu", "gpu-seed-baseline"}) {
    RunOptions run;
    run.device.kind = std::string(mode) == "cpu" ? DeviceKind::Cpu : DeviceKind::Gpu;
    hooks::set_gpu_seed_baseline(std::string(mode) == "gpu-seed-baseline");
    backend::SitePassSpec spec;
    spec.store = &store;
    spec.plan = &plan;
    spec.samples = &samples;
    spec.run = &run;
    spec.counts = &pass;
    for (int r = 0; r <= reps; ++r) {  // run 0 warms the page cache and the device
      std::vector<std::int32_t> all;
      RunStats rs;
      const auto t0 = std::chrono::steady_clock::now();
      const backend::Deliver deliver = [&](const backend::UnitOutput& out) {
        all.insert(all.end(), out.counts.begin(), out.counts.end());
      };
      if (run.device.kind == DeviceKind::Cpu)
        backend::run_site_pass_cpu(spec, deliver, nullptr, &rs);
      else
        backend::run_site_pass_gpu(spec, deliver, nullptr, &rs);
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (reference.empty()) reference = all;
      same = same && all == reference;
      if (r == 0) continue;
      std::printf("| %s | %d | %.3f | %.3g | %.3f | %.3f | %.3f | %.3f | %.3f | %s |\n", mode, r,
                  wall, static_cast<double>(rs.calls) / wall, rs.read_decode_seconds,
                  rs.h2d_seconds, rs.compute_seconds, rs.d2h_seconds, rs.reduce_seconds,
                  rs.device.c_str());
      if (r == reps) last[mode] = {rs, wall};
    }
  }
  // Which stage bounds the pipeline: each stage's time if it ran alone at full overlap (decode
  // spread over the producer threads; copies and kernels summed over streams; consume on the
  // calling thread), against the wall time.
  const auto& [gs, gwall] = last["gpu"];
  const double decode = (gs.read_decode_seconds + gs.gather_seconds) / hardware_threads();
  const std::pair<const char*, double> stages[] = {{"read+decode (per producer thread)", decode},
                                                   {"host->device copies", gs.h2d_seconds},
                                                   {"kernels", gs.compute_seconds},
                                                   {"device->host copies", gs.d2h_seconds},
                                                   {"consumer", gs.reduce_seconds}};
  const auto* bound = &stages[0];
  for (const auto& st : stages)
    if (st.second > bound->second) bound = &st;
  std::printf("\nGPU pipeline (last run, wall %.3f s): ", gwall);
  for (const auto& st : stages) std::printf("%s %.3f s; ", st.first, st.second);
  std::printf("\nbound by: %s (%.0f%% of wall)\n", bound->first, 100.0 * bound->second / gwall);
  std::printf("\ncounts identical across modes: %s\n", same ? "yes" : "NO");
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t samples = 10000, variants = 100000;
  int reps = 15, pops = 1;
  std::string e2e_store;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--samples")
      samples = std::atoll(argv[i + 1]);
    else if (k == "--variants")
      variants = std::atoll(argv[i + 1]);
    else if (k == "--reps")
      reps = std::max(1, std::atoi(argv[i + 1]));
    else if (k == "--counts-e2e")
      e2e_store = argv[i + 1];
    else if (k == "--pops")
      pops = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr,
                   "usage: %s [--samples N] [--variants N] [--reps N]\n"
                   "       %s --counts-e2e STORE [--pops N] [--reps N]\n",
                   argv[0], argv[0]);
      return 2;
    }
  }
  try {
    if (!e2e_store.empty()) return counts_e2e(e2e_store, pops, reps);
    reps = std::max(reps, 10);
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
    const bool counts_same = bench_counts(pool, st, data, variants, samples, reps, copy_gbs);
    return all_same && counts_same ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_afdist_bench: %s\n", e.what());
    return 1;
  }
}
