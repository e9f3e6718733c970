// The variant-pair band's kernels (pair_band_kernels.cuh). CMakeLists.txt compiles this file with
// -fmad=false: the values of a pair must be the CPU band's to the bit (stats/ld_math.hpp).

#include <algorithm>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/pair_band_kernels.cuh"
#include "stats/element_type.hpp"
#include "stats/haplotype_planes.hpp"

namespace vczstats::cuda {
namespace {

namespace ld = stats::ld;

constexpr int kRowThreads = 128;
constexpr int kPairThreads = 256;
constexpr std::int64_t kMaxReduceBlocks = 1024;  // the reduction's grid (it strides over pairs)

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
  unsigned long long n = 0, alt = 0, masked[3] = {0, 0, 0};
  for (std::int64_t w = threadIdx.x; w < a.words; w += blockDim.x) {
    const std::uint64_t m = a.mask ? a.mask[w] : ~std::uint64_t{0};
    const std::uint64_t x = row[w] & m, c = row[words_per_plane + w] & m;
    out[w] = x;
    out[a.words + w] = c;
    alt += static_cast<unsigned long long>(__popcll(x));
    n += static_cast<unsigned long long>(__popcll(c));
    for (int q = 0; q < a.nmasks; ++q)
      masked[q] += static_cast<unsigned long long>(__popcll(x & a.count_masks[q * a.words + w]));
  }
  add_totals(a.totals + 3 * k, n, 0, alt);
  if (a.nmasks > 0) add_totals(a.masked + 3 * k, masked[0], masked[1], masked[2]);
}

/// Pair @p q of a band numbered by its rows (PairListArgs: row row0 + k pairs with first[k] ..
/// row0 + k - 1, from offsets[k]): its rows @p i and @p j, found as the row whose pairs hold q
/// (the last k with offsets[k] <= q).
__device__ __forceinline__ void band_pair(const std::int32_t* first, const std::int64_t* offsets,
                                          std::int64_t rows, std::int64_t row0, std::int64_t q,
                                          std::int64_t& i, std::int64_t& j) {
  std::int64_t lo = 0, hi = rows - 1;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi + 1) / 2;
    if (offsets[mid] <= q)
      lo = mid;
    else
      hi = mid - 1;
  }
  j = row0 + lo;
  i = first[lo] + (q - offsets[lo]);
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
  } else if (live) {
    band_pair(a.first, a.offsets, a.rows, a.row0, a.pair0 + p, i, j);
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

/// Add the 128-bit two's-complement integer (@p lo, @p hi) to the one at @p at (low word
/// first): the low words' sum, the carry it makes (from the old value) and the high words'
/// added apart, so any order of additions leaves the exact sum.
__device__ __forceinline__ void add128(unsigned long long* at, unsigned long long lo,
                                       unsigned long long hi) {
  if (lo) {
    const unsigned long long old = atomicAdd(at, lo);
    if (old + lo < old) ++hi;  // the carry out of the low word
  }
  if (hi) atomicAdd(at + 1, hi);
}

/// Add @p v (sign-extended to 128 bits) to the sum at @p at.
__device__ __forceinline__ void add128(unsigned long long* at, std::int64_t v) {
  add128(at, static_cast<unsigned long long>(v), v < 0 ? ~0ull : 0ull);
}

/// Four counts of a pair, summed over a group's lanes (group_sum).
struct ReduceCounts {
  std::int64_t x[4];
};

/// Groups of a.lanes threads per pair, striding over the pairs (grid-stride): the lanes count
/// the pair's haplotypes non-REF at both (and within each count mask), the group's first lane
/// sums its numerators into the block's bins (shared memory when @p shared_bins, else a.sums),
/// which the block adds to a.sums at the end.
template <int P>
__global__ void __launch_bounds__(kPairThreads)
    pair_reduce_kernel(PairReduceArgs a, const __grid_constant__ stats::moments::DeviceReduction r,
                       bool shared_bins) {
  extern __shared__ unsigned long long block_sums[];
  const std::int64_t slots = r.slots(), entries = r.edges.bins * slots;
  unsigned long long* sums = shared_bins ? block_sums : a.sums;
  if (shared_bins) {
    for (std::int64_t k = threadIdx.x; k < 2 * entries; k += blockDim.x) block_sums[k] = 0;
    __syncthreads();
  }
  const int lane = static_cast<int>(threadIdx.x) & (a.lanes - 1);
  const std::int64_t group =
      (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / a.lanes;
  const std::int64_t groups = gridDim.x * static_cast<std::int64_t>(blockDim.x) / a.lanes;
  for (std::int64_t p0 = 0; p0 < a.count; p0 += groups) {  // the same trips for every thread
    const std::int64_t p = p0 + group;
    const bool live = p < a.count;
    std::int64_t i = 0, j = 0;
    if (live) band_pair(a.first, a.offsets, a.rows, a.row0, a.pair0 + p, i, j);
    const std::uint64_t* pi = a.planes + i * a.row_words;
    const std::uint64_t* pj = a.planes + j * a.row_words;
    ReduceCounts c{{0, 0, 0, 0}};
    for (std::int64_t w = lane; live && w < a.words; w += a.lanes) {
      const std::uint64_t both = pi[w] & pj[w];
      c.x[0] += __popcll(both);
      for (int q = 0; q < a.nmasks; ++q)
        c.x[1 + q] += __popcll(both & a.count_masks[q * a.words + w]);
    }
    group_sum(c, a.lanes);
    if (lane != 0 || !live) continue;
    const std::int64_t ni = static_cast<std::int64_t>(a.totals[3 * i]);
    const std::int64_t ai = static_cast<std::int64_t>(a.totals[3 * i + 2]);
    const std::int64_t nj = static_cast<std::int64_t>(a.totals[3 * j]);
    const std::int64_t aj = static_cast<std::int64_t>(a.totals[3 * j + 2]);
    if (!stats::moments::row_used(ni, ai, r.width) || !stats::moments::row_used(nj, aj, r.width))
      continue;
    const std::int64_t bin = stats::moments::pair_bin(r.edges, a.places[i].pos, a.places[j].pos,
                                                      a.places[i].coord, a.places[j].coord);
    if (bin < 0) continue;
    std::int64_t mi[3], mj[3];
    for (int q = 0; q < 3; ++q) {
      mi[q] = static_cast<std::int64_t>(a.masked[3 * i + q]);
      mj[q] = static_cast<std::int64_t>(a.masked[3 * j + q]);
    }
    unsigned long long* out = sums + 2 * bin * slots;
    add128(out, std::int64_t{1});
    stats::moments::reduce_pair<P, std::int64_t>(r, r.basis, ai, mi, aj, mj, c.x[0], c.x + 1,
                                                 [out](int s, std::int64_t v) {
                                                   if (v) add128(out + 2 * (1 + s), v);
                                                 });
  }
  if (!shared_bins) return;
  __syncthreads();
  for (std::int64_t k = threadIdx.x; k < entries; k += blockDim.x)
    add128(a.sums + 2 * k, block_sums[2 * k], block_sums[2 * k + 1]);
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

void launch_pair_reduce(const PairReduceArgs& a, const stats::moments::DeviceReduction& r,
                        cudaStream_t stream) {
  if (a.count <= 0) return;
  // A block's bins in shared memory where they fit in a quarter of the default 48 KB (two to
  // four populations, a few dozen bins), else added to the global sums directly.
  const auto bytes = static_cast<std::size_t>(r.edges.bins * r.slots() * 16);
  const bool shared_bins = bytes <= 12 * 1024;
  const std::int64_t threads = a.count * a.lanes;
  const auto grid = static_cast<unsigned>(
      std::min<std::int64_t>((threads + kPairThreads - 1) / kPairThreads, kMaxReduceBlocks));
  const std::size_t shared = shared_bins ? bytes : 0;
  switch (r.basis.pops) {
    case 2:
      pair_reduce_kernel<2><<<grid, kPairThreads, shared, stream>>>(a, r, shared_bins);
      break;
    case 3:
      pair_reduce_kernel<3><<<grid, kPairThreads, shared, stream>>>(a, r, shared_bins);
      break;
    case 4:
      pair_reduce_kernel<4><<<grid, kPairThreads, shared, stream>>>(a, r, shared_bins);
      break;
    default:
      throw Error("variant pairs: a device reduction of two to four populations");
  }
  VCZ_CUDA_CHECK_LAUNCH("pair_reduce_kernel");
}

void launch_pair_list(const PairListArgs& a, cudaStream_t stream) {
  if (a.count <= 0) return;
  const std::int64_t threads = a.count * a.lanes;
  const auto grid = static_cast<unsigned>((threads + kPairThreads - 1) / kPairThreads);
  pair_list_kernel<<<grid, kPairThreads, 0, stream>>>(a);
  VCZ_CUDA_CHECK_LAUNCH("pair_list_kernel");
}

}  // namespace vczstats::cuda
