// The variant-pair band's kernels (pair_band_kernels.cuh). CMakeLists.txt compiles this file with
// -fmad=false: the values of a pair must be the CPU band's to the bit (stats/ld_math.hpp).

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/pair_band_kernels.cuh"
#include "stats/element_type.hpp"
#include "stats/haplotype_planes.hpp"

namespace vczstats::cuda {
namespace {

namespace ld = stats::ld;

constexpr int kRowThreads = 128;
constexpr int kPairThreads = 256;

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}

/// Sum each count of @p c (a struct of int64 counts) over the @p width lanes of a group: lane 0
/// of the group has the totals.
template <class Counts>
__device__ __forceinline__ void group_sum(Counts& c, int width) {
  static_assert(sizeof(Counts) % sizeof(std::int64_t) == 0);
  auto* f = reinterpret_cast<std::int64_t*>(&c);
#pragma unroll
  for (std::size_t k = 0; k < sizeof(Counts) / sizeof(std::int64_t); ++k)
    for (int off = width / 2; off > 0; off >>= 1)
      f[k] += __shfl_down_sync(0xffffffffu, f[k], off, width);
}

/// Add a row's three totals (lane sums) into @p totals, once per warp.
__device__ __forceinline__ void add_totals(unsigned long long* totals, unsigned long long n,
                                           unsigned long long het, unsigned long long alt) {
  n = warp_sum(n);
  het = warp_sum(het);
  alt = warp_sum(alt);
  if ((threadIdx.x & 31) == 0) {
    if (n) atomicAdd(&totals[0], n);
    if (het) atomicAdd(&totals[1], het);
    if (alt) atomicAdd(&totals[2], alt);
  }
}

/// One thread per (row, destination word): the two plane words of 64 haplotype slots.
template <class T>
__global__ void pack_haplotype_planes_kernel(const T* data, std::int64_t rows, std::int64_t samples,
                                             int ploidy, int shift, std::int64_t block_words,
                                             std::int64_t word0, std::int64_t words_per_plane,
                                             unsigned long long* words) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= rows * block_words) return;
  const std::int64_t v = i / block_words, w = i % block_words;
  std::uint64_t alt, called;
  stats::packed::haplotype_words(data + v * samples * ploidy, samples, ploidy, w, shift, alt,
                                 called);
  unsigned long long* row = words + v * 2 * words_per_plane + word0 + w;
  if (alt) atomicOr(row, static_cast<unsigned long long>(alt));
  if (called) atomicOr(row + words_per_plane, static_cast<unsigned long long>(called));
}

/// One block per new row: its planes and totals.
__global__ void __launch_bounds__(kRowThreads)
    genotype_rows_kernel(PairRowsArgs a, const std::uint64_t* codes, std::int64_t code_words,
                         std::int64_t samples) {
  const std::int64_t k = blockIdx.x;
  const std::uint64_t* row = codes + static_cast<std::int64_t>(a.unit_rows[k]) * code_words;
  std::uint64_t* out = a.planes + k * a.row_words;
  unsigned long long n = 0, het = 0, alt = 0;
  for (std::int64_t w = threadIdx.x; w < a.words; w += blockDim.x) {
    std::uint64_t h, t, c;
    ld::genotype_plane_word(row, code_words, samples, w, h, t, c);
    const std::uint64_t m = a.mask ? a.mask[w] : ~std::uint64_t{0};
    h &= m;
    t &= m;
    c &= m;
    out[w] = h;
    out[a.words + w] = t;
    out[2 * a.words + w] = c;
    het += static_cast<unsigned long long>(__popcll(h));
    alt += static_cast<unsigned long long>(__popcll(t));
    n += static_cast<unsigned long long>(__popcll(c));
  }
  add_totals(a.totals + 3 * k, n, het, alt);
}

__global__ void __launch_bounds__(kRowThreads)
    haplotype_rows_kernel(PairRowsArgs a, const std::uint64_t* planes,
                          std::int64_t words_per_plane) {
  const std::int64_t k = blockIdx.x;
  const std::uint64_t* row =
      planes + static_cast<std::int64_t>(a.unit_rows[k]) * 2 * words_per_plane;
  std::uint64_t* out = a.planes + k * a.row_words;
  unsigned long long n = 0, alt = 0;
  for (std::int64_t w = threadIdx.x; w < a.words; w += blockDim.x) {
    const std::uint64_t m = a.mask ? a.mask[w] : ~std::uint64_t{0};
    const std::uint64_t x = row[w] & m, c = row[words_per_plane + w] & m;
    out[w] = x;
    out[a.words + w] = c;
    alt += static_cast<unsigned long long>(__popcll(x));
    n += static_cast<unsigned long long>(__popcll(c));
  }
  add_totals(a.totals + 3 * k, n, 0, alt);
}

/// Groups of a.lanes threads per pair: the lanes stride over the words, the group sums the
/// counts, its first lane evaluates the pair.
__global__ void __launch_bounds__(kPairThreads) pair_list_kernel(PairListArgs a) {
  const std::int64_t t = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const int lane = static_cast<int>(threadIdx.x) & (a.lanes - 1);
  const std::int64_t p = t / a.lanes;
  const bool live = p < a.count;
  std::int64_t i = 0, j = 0;
  if (live && a.pairs) {
    i = a.pairs[2 * p];
    j = a.pairs[2 * p + 1];
  } else if (live) {  // the row whose pairs hold pair q: the last k with offsets[k] <= q
    const std::int64_t q = a.pair0 + p;
    std::int64_t lo = 0, hi = a.rows - 1;
    while (lo < hi) {
      const std::int64_t mid = (lo + hi + 1) / 2;
      if (a.offsets[mid] <= q)
        lo = mid;
      else
        hi = mid - 1;
    }
    j = a.row0 + lo;
    i = a.first[lo] + (q - a.offsets[lo]);
  }
  const std::uint64_t* pi = a.planes + i * a.row_words;
  const std::uint64_t* pj = a.planes + j * a.row_words;
  const unsigned long long* ti = a.totals + 3 * i;
  const unsigned long long* tj = a.totals + 3 * j;
  const ld::GenotypeTotals gi{live ? static_cast<std::int64_t>(ti[0]) : 0,
                              live ? static_cast<std::int64_t>(ti[1]) : 0,
                              live ? static_cast<std::int64_t>(ti[2]) : 0};
  const ld::GenotypeTotals gj{live ? static_cast<std::int64_t>(tj[0]) : 0,
                              live ? static_cast<std::int64_t>(tj[1]) : 0,
                              live ? static_cast<std::int64_t>(tj[2]) : 0};
  const bool complete = live && gi.n == a.width && gj.n == a.width;
  const std::int64_t w1 = live ? a.words : 0;
  PairValue v;
  bool pass = false;
  if (a.measure == PairMeasure::Haplotype) {
    ld::HaplotypeCounts c;
    if (complete)
      ld::add_haplotype_words_complete(c, pi, pj, lane, w1, a.lanes);
    else
      ld::add_haplotype_words(c, pi, pj, a.words, lane, w1, a.lanes);
    group_sum(c, a.lanes);
    if (lane != 0 || !live) return;
    if (complete) {
      c.n = gi.n;
      c.a = gi.alt;
      c.b = gj.alt;
    }
    pass = ld::haplotype_pair(c, a.min_r2, v);
  } else {
    ld::GenotypeCounts c;
    if (complete)
      ld::add_genotype_words_complete(c, pi, pj, a.words, lane, w1, a.lanes);
    else
      ld::add_genotype_words(c, pi, pj, a.words, lane, w1, a.lanes);
    group_sum(c, a.lanes);
    if (lane != 0 || !live) return;
    if (complete) ld::complete_margins(c, gi, gj);
    if (a.measure == PairMeasure::GenotypeEm || a.measure == PairMeasure::GenotypeTable) {
      a.counts[p] = c;
      return;
    }
    pass = ld::genotype_pair(a.measure, c, complete, a.min_r2, a.prune_thr, v);
  }
  if (!pass) return;
  v.a = i;
  v.b = j;
  a.values[atomicAdd(a.found, 1ull)] = v;
}

}  // namespace

void launch_pack_haplotype_planes(const GenotypeChunkView& b, std::uint64_t* words,
                                  std::int64_t words_per_plane, cudaStream_t stream) {
  if (b.variants <= 0 || b.samples <= 0) return;
  const int ploidy = static_cast<int>(b.ploidy);
  const int shift = static_cast<int>(b.sample_offset * ploidy % 64);
  const std::int64_t block_words = (shift + b.samples * ploidy + 63) / 64;
  const std::int64_t n = b.variants * block_words;
  const auto grid = static_cast<unsigned>((n + 255) / 256);
  const bool known = with_element_type(b.elem_bytes, [&](auto t) {
    using T = decltype(t);
    pack_haplotype_planes_kernel<T>
        <<<grid, 256, 0, stream>>>(reinterpret_cast<const T*>(b.data), b.variants, b.samples,
                                   ploidy, shift, block_words, b.sample_offset * ploidy / 64,
                                   words_per_plane, reinterpret_cast<unsigned long long*>(words));
  });
  if (!known) throw UsageError("haplotype planes: unsupported genotype width");
  VCZ_CUDA_CHECK_LAUNCH("pack_haplotype_planes_kernel");
}

void launch_genotype_rows(const PairRowsArgs& a, const std::uint64_t* codes,
                          std::int64_t code_words, std::int64_t samples, cudaStream_t stream) {
  if (a.count <= 0) return;
  genotype_rows_kernel<<<static_cast<unsigned>(a.count), kRowThreads, 0, stream>>>(
      a, codes, code_words, samples);
  VCZ_CUDA_CHECK_LAUNCH("genotype_rows_kernel");
}

void launch_haplotype_rows(const PairRowsArgs& a, const std::uint64_t* planes,
                           std::int64_t words_per_plane, cudaStream_t stream) {
  if (a.count <= 0) return;
  haplotype_rows_kernel<<<static_cast<unsigned>(a.count), kRowThreads, 0, stream>>>(
      a, planes, words_per_plane);
  VCZ_CUDA_CHECK_LAUNCH("haplotype_rows_kernel");
}

void launch_pair_list(const PairListArgs& a, cudaStream_t stream) {
  if (a.count <= 0) return;
  const std::int64_t threads = a.count * a.lanes;
  const auto grid = static_cast<unsigned>((threads + kPairThreads - 1) / kPairThreads);
  pair_list_kernel<<<grid, kPairThreads, 0, stream>>>(a);
  VCZ_CUDA_CHECK_LAUNCH("pair_list_kernel");
}

}  // namespace vczstats::cuda
