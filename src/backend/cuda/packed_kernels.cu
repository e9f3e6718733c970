// The packing kernel (packed_kernels.cuh): one thread per output word; the per-call code is
// stats/packed_math.hpp, shared with the CPU.

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/packed_kernels.cuh"
#include "stats/element_type.hpp"
#include "stats/packed_math.hpp"

namespace vczstats::cuda {
namespace {

template <class T>
__global__ void pack_kernel(const T* data, std::int64_t rows, std::int64_t samples, int ploidy,
                            int shift, std::int64_t block_words, std::int64_t word0,
                            std::int64_t words_per_row, unsigned long long* words) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= rows * block_words) return;
  const std::int64_t v = i / block_words, w = i % block_words;
  const std::uint64_t word =
      stats::packed::pack_word(data + v * samples * ploidy, samples, ploidy, w, shift);
  if (word) atomicOr(&words[v * words_per_row + word0 + w], static_cast<unsigned long long>(word));
}

}  // namespace

void launch_pack(const GenotypeChunkView& b, std::uint64_t* words, std::int64_t words_per_row,
                 cudaStream_t stream) {
  if (b.variants <= 0 || b.samples <= 0) return;
  const int shift = static_cast<int>(b.sample_offset % 32);
  const std::int64_t block_words = (shift + b.samples + 31) / 32;
  const std::int64_t n = b.variants * block_words;
  const auto grid = static_cast<unsigned>((n + 255) / 256);
  const bool known = with_element_type(b.elem_bytes, [&](auto t) {
    using T = decltype(t);
    pack_kernel<T><<<grid, 256, 0, stream>>>(reinterpret_cast<const T*>(b.data), b.variants,
                                             b.samples, static_cast<int>(b.ploidy), shift,
                                             block_words, b.sample_offset / 32, words_per_row,
                                             reinterpret_cast<unsigned long long*>(words));
  });
  if (!known) throw UsageError("packed genotypes: unsupported genotype width");
  VCZ_CUDA_CHECK_LAUNCH("pack_kernel");
}

}  // namespace vczstats::cuda
