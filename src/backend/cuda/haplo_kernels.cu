// Haplotype kernels (haplo_kernels.cuh). The per-call packing is stats/haplo_pack.hpp and the
// segment algorithm stats/haplo_kernel.hpp, both shared with the CPU.

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/haplo_kernels.cuh"
#include "stats/element_type.hpp"
#include "stats/haplo_pack.hpp"

namespace vczstats::cuda {
namespace {

/// One thread per (row, destination word): every plane's word of 64 haplotypes.
template <class T>
__global__ void pack_haplotypes_kernel(const T* data, std::int64_t rows, std::int64_t haps,
                                       int planes, int shift, std::int64_t block_words,
                                       std::int64_t word0, std::int64_t words_per_plane,
                                       unsigned long long* words) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= rows * block_words) return;
  const std::int64_t v = i / block_words, w = i % block_words;
  constexpr int kMaxPlanes = 64;
  std::uint64_t out[kMaxPlanes];
  const int np = planes < kMaxPlanes ? planes : kMaxPlanes;
  for (int p = 0; p < np; ++p) out[p] = 0;
  stats::haplo::pack_planes(data + v * haps, haps, np, w, shift, out);
  for (int p = 0; p < np; ++p)
    if (out[p])
      atomicOr(&words[(v * planes + p) * words_per_plane + word0 + w],
               static_cast<unsigned long long>(out[p]));
}

__global__ void __launch_bounds__(256)
    segments_kernel(stats::haplo::BatchView batch, std::byte* scratch, std::int64_t bytes) {
  using namespace stats::haplo;
  const DeviceBlock block{static_cast<int>(blockDim.x)};
  const Scratch s = scratch_at(scratch + blockIdx.x * bytes, batch.n, blockDim.x, batch.max_steps);
  for (std::int64_t g = blockIdx.x; g < batch.nsegments; g += gridDim.x)
    run_segment(block, batch, batch.segments[g], s);
}

}  // namespace

void launch_pack_haplotypes(const GenotypeChunkView& b, int planes, std::uint64_t* words,
                            std::int64_t words_per_plane, cudaStream_t stream) {
  if (b.variants <= 0 || b.samples <= 0) return;
  if (planes > 64) throw UsageError("packed haplotypes: more than 64 alleles per site");
  const std::int64_t haps = b.samples * b.ploidy;
  const int shift = static_cast<int>(b.sample_offset * b.ploidy % 64);
  const std::int64_t block_words = (shift + haps + 63) / 64;
  const std::int64_t n = b.variants * block_words;
  const auto grid = static_cast<unsigned>((n + 255) / 256);
  const bool known = with_element_type(b.elem_bytes, [&](auto t) {
    using T = decltype(t);
    pack_haplotypes_kernel<T>
        <<<grid, 256, 0, stream>>>(reinterpret_cast<const T*>(b.data), b.variants, haps, planes,
                                   shift, block_words, b.sample_offset * b.ploidy / 64,
                                   words_per_plane, reinterpret_cast<unsigned long long*>(words));
  });
  if (!known) throw UsageError("packed haplotypes: unsupported genotype width");
  VCZ_CUDA_CHECK_LAUNCH("pack_haplotypes_kernel");
}

void launch_segments(const stats::haplo::BatchView& batch, int lanes, int grid, std::byte* scratch,
                     std::int64_t scratch_bytes, cudaStream_t stream) {
  if (batch.nsegments <= 0) return;
  segments_kernel<<<grid, lanes, 0, stream>>>(batch, scratch, scratch_bytes);
  VCZ_CUDA_CHECK_LAUNCH("segments_kernel");
}

}  // namespace vczstats::cuda
