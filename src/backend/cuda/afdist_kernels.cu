// afdist kernels.
//
// Heavy pass: one warp per variant row (grid-stride over rows, 8 warps per block). Each lane runs
// the per-lane code of afdist_lanes.hpp (aligned 16-byte loads coalesced across the warp,
// counts in registers), then the warp merges its 32 partial AfdistSites with shuffles and
// stats::afdist::merge_site, and lane 0 merges the result into the row's site in global memory.
// No atomics: a row belongs to one warp, and the sample blocks of a row are queued one after the
// other on one stream.
//
// The unit's finished sites go back to the host, where the afdist statistic bins them with the
// CPU's own functions (one definition of the binning for both backends).
//
// Instantiations are kept few: the word path for the 14 (elem, ploidy) layouts whose calls do not
// straddle 16-byte words (bcftools) and the 4 diploid ones (zarr-afdist), the int8-diploid SWAR
// path twice, and one generic kernel per element type.

#include <algorithm>
#include <cstdint>
#include <string>

#include "backend/cuda/afdist_kernels.cuh"
#include "backend/cuda/afdist_lanes.hpp"
#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/dispatch.hpp"

namespace vczstats::cuda {
namespace {

constexpr int kThreads = 256;  // 8 warps = 8 rows per block
constexpr int kWarpsPerBlock = kThreads / kWarpLanes;
// At most 64 registers per thread: 32 warps per SM, 32 KiB of loads in flight per SM.
constexpr int kMinBlocksPerSm = 4;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;  // grid-stride beyond this

/// Merge the 32 lanes' partial sites into lane 0 (shuffling only the fields a method fills).
template <bool kBcftools, bool kZarr>
__device__ void warp_merge(AfdistSite& s) {
  VCZ_UNROLL
  for (int off = kWarpLanes / 2; off > 0; off /= 2) {
    AfdistSite o;
    if constexpr (kBcftools) {
      o.an = __shfl_down_sync(kFullMask, s.an, off);
      o.ac1 = __shfl_down_sync(kFullMask, s.ac1, off);
      o.n_dosage1 = __shfl_down_sync(kFullMask, s.n_dosage1, off);
      o.n_dosage2 = __shfl_down_sync(kFullMask, s.n_dosage2, off);
      o.ploidy = __shfl_down_sync(kFullMask, s.ploidy, off);
    }
    if constexpr (kZarr) {
      o.ref_count = __shfl_down_sync(kFullMask, s.ref_count, off);
      o.het = __shfl_down_sync(kFullMask, s.het, off);
      o.hom_alt = __shfl_down_sync(kFullMask, s.hom_alt, off);
    }
    stats::afdist::merge_site(s, o);
  }
}

template <AfdistMethod M>
struct SwarRows {
  static constexpr bool kBcftools = M == AfdistMethod::Bcftools;
  static constexpr bool kZarr = !kBcftools;
  __device__ static AfdistSite lane(const HeavyArgs& a, const std::byte* row, int lane) {
    return lane_int8_diploid<M>(row, a.samples, lane, kWarpLanes);
  }
};

template <class T, int P, AfdistMethod M>
struct WordRows {
  static constexpr bool kBcftools = M == AfdistMethod::Bcftools;
  static constexpr bool kZarr = !kBcftools;
  __device__ static AfdistSite lane(const HeavyArgs& a, const std::byte* row, int lane) {
    return lane_words<T, P, M>(row, a.samples, lane, kWarpLanes);
  }
};

template <class T>
struct GenericRows {
  static constexpr bool kBcftools = true;
  static constexpr bool kZarr = true;
  __device__ static AfdistSite lane(const HeavyArgs& a, const std::byte* row, int lane) {
    return lane_generic<T>(row, a.samples, a.ploidy, a.method, lane, kWarpLanes);
  }
};

template <class Rows>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    afdist_heavy_kernel(const HeavyArgs a) {
  const int lane = static_cast<int>(threadIdx.x) % kWarpLanes;
  const std::int64_t row_bytes = a.samples * a.ploidy * a.elem_bytes;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  // Warp-uniform loop: every lane of a warp takes the same rows (the lanes' code uses
  // __any_sync and the merge uses shuffles over the full warp).
  for (std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock +
                        static_cast<std::int64_t>(threadIdx.x) / kWarpLanes;
       v < a.rows; v += stride) {
    AfdistSite s = Rows::lane(a, a.data + v * row_bytes, lane);
    warp_merge<Rows::kBcftools, Rows::kZarr>(s);
    if (lane == 0) {
      AfdistSite g = a.sites[v];
      stats::afdist::merge_site(g, s);
      a.sites[v] = g;
    }
  }
}

template <class Rows>
void launch_rows(const HeavyArgs& a, cudaStream_t stream) {
  const std::int64_t blocks =
      std::min<std::int64_t>((a.rows + kWarpsPerBlock - 1) / kWarpsPerBlock, kMaxBlocks);
  afdist_heavy_kernel<Rows><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
  VCZ_CUDA_CHECK_LAUNCH("afdist_heavy_kernel");
}

template <class T, int P>
void launch_word_ploidy(const HeavyArgs& a, cudaStream_t stream) {
  if (a.method == AfdistMethod::Bcftools)
    return launch_rows<WordRows<T, P, AfdistMethod::Bcftools>>(a, stream);
  if constexpr (P == 2) return launch_rows<WordRows<T, 2, AfdistMethod::ZarrAfdist>>(a, stream);
  throw UsageError("afdist: --method zarr-afdist needs diploid genotypes");
}

template <class T>
void launch_word(const HeavyArgs& a, cudaStream_t stream) {
  if (!with_word_ploidy<T>(a.ploidy,
                           [&](auto p) { launch_word_ploidy<T, decltype(p)::value>(a, stream); }))
    throw UsageError("afdist: the word kernel needs ploidy × element bytes to divide 16 (ploidy " +
                     std::to_string(a.ploidy) + ", " + std::to_string(sizeof(T)) +
                     "-byte alleles)");
}

// ---- seed-style baseline -----------------------------------------------------------------------

template <class T>
__global__ void afdist_baseline_kernel(const HeavyArgs a) {
  const std::int64_t v = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (v >= a.rows) return;
  const T* row = reinterpret_cast<const T*>(a.data) + v * a.samples * a.ploidy;
  AfdistSite s;
  for (std::int64_t i = 0; i < a.samples; ++i) {
    if (a.method == AfdistMethod::Bcftools)
      stats::afdist::bcftools_add_sample(s, row + i * a.ploidy, a.ploidy);
    else
      stats::afdist::zarr_add_sample(s, row + i * a.ploidy);
  }
  AfdistSite g = a.sites[v];
  stats::afdist::merge_site(g, s);
  a.sites[v] = g;
}

}  // namespace

void launch_afdist_baseline(const HeavyArgs& a, cudaStream_t stream) {
  if (a.rows <= 0 || a.samples <= 0) return;
  if (a.method == AfdistMethod::ZarrAfdist && a.ploidy != 2)
    throw UsageError("afdist: --method zarr-afdist needs diploid genotypes");
  const auto blocks = static_cast<unsigned>((a.rows + 127) / 128);
  if (!with_element_type(a.elem_bytes, [&](auto t) {
        afdist_baseline_kernel<decltype(t)><<<blocks, 128, 0, stream>>>(a);
      }))
    throw UsageError("afdist: unsupported genotype element size " + std::to_string(a.elem_bytes));
  VCZ_CUDA_CHECK_LAUNCH("afdist_baseline_kernel");
}

void launch_afdist_heavy(const HeavyArgs& a, cudaStream_t stream, HeavyPath path) {
  if (a.rows <= 0 || a.samples <= 0) return;
  if (reinterpret_cast<std::uintptr_t>(a.data) % 16 != 0)
    throw UsageError("afdist: device genotype block is not 16-byte aligned");
  if (a.method == AfdistMethod::ZarrAfdist && a.ploidy != 2)
    throw UsageError("afdist: --method zarr-afdist needs diploid genotypes");
  if (path == HeavyPath::Auto) path = auto_heavy_path(a.elem_bytes, a.ploidy);
  switch (path) {
    case HeavyPath::Swar:
      if (a.elem_bytes != 1 || a.ploidy != 2)
        throw UsageError("afdist: the SWAR kernel needs int8 diploid genotypes");
      if (a.method == AfdistMethod::Bcftools)
        return launch_rows<SwarRows<AfdistMethod::Bcftools>>(a, stream);
      return launch_rows<SwarRows<AfdistMethod::ZarrAfdist>>(a, stream);
    case HeavyPath::Word:
      if (with_element_type(a.elem_bytes, [&](auto t) { launch_word<decltype(t)>(a, stream); }))
        return;
      break;
    case HeavyPath::Generic:
    case HeavyPath::Auto:
      if (with_element_type(a.elem_bytes,
                            [&](auto t) { launch_rows<GenericRows<decltype(t)>>(a, stream); }))
        return;
      break;
  }
  throw UsageError("afdist: unsupported genotype element size " + std::to_string(a.elem_bytes));
}

}  // namespace vczstats::cuda
