// The tallies and per-sample-sums kernels (sample_kernels.cuh). Sample-stats is not the benchmark
// path: these kernels are simple (shared-memory counters per row; one thread per sample) and exact.

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/sample_kernels.cuh"
#include "stats/element_type.hpp"
#include "stats/sample_math.hpp"

namespace vczstats::cuda {
namespace {

constexpr int kThreads = 256;

// One thread block per row: per-population tallies in shared memory, added to global memory
// once (integer atomics: the result does not depend on the order).
template <class T>
__global__ void tallies_kernel(const T* data, std::int64_t samples, int ploidy,
                               const std::int32_t* population_of, std::int64_t offset, int pops,
                               int alleles, std::int32_t* tallies) {
  extern __shared__ std::int32_t counters[];
  const int width = stats::tallies::width(alleles);
  const std::int64_t row = blockIdx.x;
  for (int i = threadIdx.x; i < pops * width; i += blockDim.x) counters[i] = 0;
  __syncthreads();
  const T* g = data + row * samples * ploidy;
  for (std::int64_t i = threadIdx.x; i < samples; i += blockDim.x) {
    T two[2] = {};
    int n;
    const int cls = stats::tallies::scan_two(g + i * ploidy, ploidy, two, n);
    if (cls < 0 || cls == stats::kMissing || n != 2) continue;  // not a complete diploid call
    std::int32_t* t = counters + population_of[offset + i] * width;
    const bool in0 = static_cast<std::int64_t>(two[0]) < alleles;
    const bool in1 = static_cast<std::int64_t>(two[1]) < alleles;
    if (in0) atomicAdd(&t[two[0]], 1);
    if (in1) atomicAdd(&t[two[1]], 1);
    if (two[0] != two[1]) {
      if (in0) atomicAdd(&t[stats::tallies::het(alleles) + two[0]], 1);
      if (in1) atomicAdd(&t[stats::tallies::het(alleles) + two[1]], 1);
    }
    atomicAdd(&t[stats::tallies::calls(alleles)], 1);
  }
  __syncthreads();
  std::int32_t* out = tallies + row * pops * width;
  for (int i = threadIdx.x; i < pops * width; i += blockDim.x)
    if (counters[i]) atomicAdd(&out[i], counters[i]);
}

__global__ void site_weights_kernel(const std::int32_t* tallies, std::int64_t n, int alleles,
                                    double* weights) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i < n)
    weights[i] = stats::sample::site_weight(tallies + i * stats::tallies::width(alleles), alleles);
}

// One thread per sample, rows in order (the CPU's order of additions).
template <class T>
__global__ void sample_sums_kernel(const T* data, std::int64_t rows, std::int64_t samples,
                                   int ploidy, const std::int32_t* population_of,
                                   std::int64_t offset, int pops, const double* weights,
                                   const std::uint8_t* mask, DeviceSampleSums* partial) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= samples) return;
  const int pop = population_of[offset + i];
  stats::sample::CallSums s;
  for (std::int64_t v = 0; v < rows; ++v) {
    if (mask && !mask[v]) continue;
    stats::sample::add_sample(s, data + (v * samples + i) * ploidy, ploidy,
                              weights[v * pops + pop]);
  }
  partial[offset + i] = {s.obs, s.missing, s.het_sites, s.o_hom, s.e_hom};
}

__global__ void add_sums_kernel(const DeviceSampleSums* partial, std::int64_t n,
                                DeviceSampleSums* totals) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  DeviceSampleSums t = totals[i];
  const DeviceSampleSums p = partial[i];
  t.obs += p.obs;
  t.missing += p.missing;
  t.het_sites += p.het_sites;
  t.o_hom += p.o_hom;
  t.e_hom += p.e_hom;
  totals[i] = t;
}

unsigned grid(std::int64_t n) {
  return static_cast<unsigned>((n + kThreads - 1) / kThreads);
}

}  // namespace

void launch_tallies(const GenotypeChunkView& b, const std::int32_t* population_of, int pops,
                    int alleles, std::int32_t* tallies, cudaStream_t stream) {
  if (b.variants <= 0 || b.samples <= 0) return;
  const std::size_t shared = static_cast<std::size_t>(pops) *
                             static_cast<std::size_t>(stats::tallies::width(alleles)) *
                             sizeof(std::int32_t);
  if (shared > 48 * 1024)
    throw UsageError("tallies on the GPU: too many populations x alleles (" + std::to_string(pops) +
                     " x " + std::to_string(alleles) + ")");
  const bool known = with_element_type(b.elem_bytes, [&](auto t) {
    using T = decltype(t);
    tallies_kernel<T><<<static_cast<unsigned>(b.variants), kThreads, shared, stream>>>(
        reinterpret_cast<const T*>(b.data), b.samples, static_cast<int>(b.ploidy), population_of,
        b.sample_offset, pops, alleles, tallies);
  });
  if (!known) throw UsageError("tallies: unsupported genotype width");
  VCZ_CUDA_CHECK_LAUNCH("tallies_kernel");
}

void launch_site_weights(const std::int32_t* tallies, std::int64_t rows, int pops, int alleles,
                         double* weights, cudaStream_t stream) {
  const std::int64_t n = rows * pops;
  if (n <= 0) return;
  site_weights_kernel<<<grid(n), kThreads, 0, stream>>>(tallies, n, alleles, weights);
  VCZ_CUDA_CHECK_LAUNCH("site_weights_kernel");
}

void launch_sample_sums(const GenotypeChunkView& b, const std::int32_t* population_of, int pops,
                        const double* weights, const std::uint8_t* mask, DeviceSampleSums* partial,
                        cudaStream_t stream) {
  if (b.samples <= 0) return;
  const bool known = with_element_type(b.elem_bytes, [&](auto t) {
    using T = decltype(t);
    sample_sums_kernel<T><<<grid(b.samples), kThreads, 0, stream>>>(
        reinterpret_cast<const T*>(b.data), b.variants, b.samples, static_cast<int>(b.ploidy),
        population_of, b.sample_offset, pops, weights, mask, partial);
  });
  if (!known) throw UsageError("sample-stats: unsupported genotype width");
  VCZ_CUDA_CHECK_LAUNCH("sample_sums_kernel");
}

void launch_add_sample_sums(const DeviceSampleSums* partial, std::int64_t n,
                            DeviceSampleSums* totals, cudaStream_t stream) {
  if (n <= 0) return;
  add_sums_kernel<<<grid(n), kThreads, 0, stream>>>(partial, n, totals);
  VCZ_CUDA_CHECK_LAUNCH("add_sums_kernel");
}

}  // namespace vczstats::cuda
