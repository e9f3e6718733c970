// Allele-counts kernels (the heavy pass of the population statistics).
//
// One warp per variant row (grid-stride over rows, 8 warps per block). The warp walks the row's
// population segments in turn; for each, every lane runs the per-lane code of counts_lanes.hpp
// (aligned 16-byte loads coalesced across the warp, counts in registers), the warp sums the 32
// lane results with a reduce-scatter of xor shuffles (lane 2j or 4j ends with the total of value
// j), and those lanes add their value into the row's counts: one coalesced read-modify-write per
// segment. No global atomics:
// a row belongs to one warp, and the sample blocks of a row are queued one after the other on
// one stream. Alleles beyond the register columns (kRegisterAlleles, word and generic paths) go
// to per-warp shared-memory counters with shared atomics and are added to the row at the end of
// the segment; only when those would not fit in shared memory (more than ~1500 alleles) do they
// go to the row with global atomics.
//
// Instantiations: SWAR for 2 and 4 alleles with 4 (default) or 2 words in flight, the word path
// for the 14 (element, ploidy) layouts whose calls do not straddle 16-byte words, one generic
// kernel per element type, and the seed-style baseline per element type. The SWAR kernels read
// up to the end of the block's last 16-byte word (DeviceBuffer sizes are rounded up to 256).

#include <algorithm>
#include <cstdint>
#include <string>

#include "backend/cuda/counts_kernels.cuh"
#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/dispatch.hpp"

namespace vczstats::cuda {
namespace {

constexpr int kThreads = 256;  // 8 warps = 8 rows per block
constexpr int kWarpsPerBlock = kThreads / kWarpLanes;
// Blocks per SM the register cap allows: 3 (85 registers, 24 warps per SM: 48 KiB of loads in
// flight per SM, ample) for the word-reading paths, whose words and packed counters need more
// than 64; 4 for the generic path.
constexpr int kWordBlocksPerSm = 3;
constexpr int kGenericBlocksPerSm = 4;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;  // grid-stride beyond this
constexpr std::int64_t kMaxSharedBytes = 48 * 1024;         // without opting in to more

/// Alleles in [KR, alleles): shared-memory counters of the warp when it has them, else the row.
template <int KR>
struct BigAlleles {
  std::int32_t* shared;  // alleles - KR counters of this warp, or null
  std::int32_t* row;     // the population's columns of the row
  __device__ void operator()(int a) const {
    if (shared)
      atomicAdd(shared + (a - KR), 1);
    else
      atomicAdd(row + a, 1);
  }
};

/// Halve the values a lane holds: lanes with bit @p Offset set keep the upper half, the others
/// the lower, each adding its partner's (lane ^ Offset) share of what it keeps.
template <int N, int Offset>
__device__ void halve(const std::int32_t (&in)[N], std::int32_t (&out)[N / 2], int lane) {
  const bool upper = (lane & Offset) != 0;
  VCZ_UNROLL
  for (int i = 0; i < N / 2; ++i) {
    const std::int32_t send = upper ? in[i] : in[i + N / 2];
    const std::int32_t keep = upper ? in[i + N / 2] : in[i];
    out[i] = keep + __shfl_xor_sync(kFullMask, send, Offset);
  }
}

/// Sum each of the V values over the warp's 32 lanes (a reduce-scatter by recursive halving:
/// 9 shuffles for V <= 8, 16 for V <= 16, instead of 5 per value). Lane l returns the total of
/// value l >> shift (shift: kScatterShift<V>).
template <int V>
inline constexpr int kScatterShift = V <= 8 ? 2 : 1;
template <int V>
__device__ std::int32_t warp_reduce_scatter(const std::int32_t (&v)[V], int lane) {
  static_assert(V <= 16, "at most 16 values");
  constexpr int N = V <= 8 ? 8 : 16;
  std::int32_t a[N];
  VCZ_UNROLL
  for (int i = 0; i < N; ++i) a[i] = i < V ? v[i] : 0;
  std::int32_t one[1];
  if constexpr (N == 16) {
    std::int32_t b[8], c[4], d[2];
    halve<16, 16>(a, b, lane);
    halve<8, 8>(b, c, lane);
    halve<4, 4>(c, d, lane);
    halve<2, 2>(d, one, lane);
  } else {
    std::int32_t b[4], c[2];
    halve<8, 16>(a, b, lane);
    halve<4, 8>(b, c, lane);
    halve<2, 4>(c, one, lane);
    one[0] += __shfl_xor_sync(kFullMask, one[0], 2);
  }
  return one[0] + __shfl_xor_sync(kFullMask, one[0], 1);
}

/// SWAR with U words in flight per lane (4 by default; the benchmark also times 2). Measured on
/// the H100 (bench/NOTES-gpu-counts.md): 3 blocks per SM (80 registers, 24 warps) beat 2 (128
/// registers) even where ptxas spills a little for four alleles.
template <int KS, int U>
struct SwarPath {
  static constexpr int KR = KS;
  static constexpr bool kBig = false;
  static constexpr int kBlocksPerSm = kWordBlocksPerSm;
  template <class Big>
  __device__ static LaneCounts<KR> lane(const CountsArgs& a, const std::byte* seg,
                                        std::int64_t calls, int lane, Big&) {
    return lane_counts_int8_diploid<KS, U>(seg, calls, a.alleles, lane, kWarpLanes,
                                           a.data + a.rows * a.samples * 2);
  }
};

template <class T, int P>
struct WordPath {
  static constexpr int KR = kRegisterAlleles;
  static constexpr bool kBig = true;
  static constexpr int kBlocksPerSm = kWordBlocksPerSm;
  template <class Big>
  __device__ static LaneCounts<KR> lane(const CountsArgs& a, const std::byte* seg,
                                        std::int64_t calls, int lane, Big& big) {
    return lane_counts_words<KR, T, P>(seg, calls, a.alleles, lane, kWarpLanes, big);
  }
};

template <class T>
struct GenericPath {
  static constexpr int KR = kGenericAlleles;
  static constexpr bool kBig = true;
  static constexpr int kBlocksPerSm = kGenericBlocksPerSm;
  template <class Big>
  __device__ static LaneCounts<KR> lane(const CountsArgs& a, const std::byte* seg,
                                        std::int64_t calls, int lane, Big& big) {
    return lane_counts_generic<KR, T>(seg, calls, a.ploidy, a.alleles, lane, kWarpLanes, big);
  }
};

template <class Path>
__global__ void __launch_bounds__(kThreads, Path::kBlocksPerSm)
    allele_counts_kernel(const CountsArgs a, bool shared_big) {
  extern __shared__ std::int32_t big_shared[];
  constexpr int KR = Path::KR;
  constexpr int kValues = LaneCounts<KR>::kValues;
  static_assert(kValues <= kWarpLanes, "one value per lane");
  const int lane = static_cast<int>(threadIdx.x) % kWarpLanes;
  const int warp = static_cast<int>(threadIdx.x) / kWarpLanes;
  const int width = a.alleles + CountsLayout::kExtra;
  const std::int64_t site_width = std::int64_t{a.pops} * width;
  const int nbig = Path::kBig ? std::max(a.alleles - KR, 0) : 0;
  std::int32_t* shared = shared_big && nbig > 0 ? big_shared + warp * nbig : nullptr;
  if (shared) {
    for (int c = lane; c < nbig; c += kWarpLanes) shared[c] = 0;
    __syncwarp();
  }
  const std::int64_t call_bytes = std::int64_t{a.ploidy} * a.elem_bytes;
  const std::int64_t row_bytes = a.samples * call_bytes;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  // Warp-uniform loops: every lane of a warp takes the same rows and segments (the lanes' code
  // uses __any_sync, the sums shuffle over the full warp).
  for (std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + warp; v < a.rows;
       v += stride) {
    const std::byte* row = a.data + v * row_bytes;
    std::int32_t* out_row = a.counts + v * site_width;
    for (std::int64_t s = 0; s < a.num_segments; ++s) {
      const CountSegment seg = a.segments[s];
      std::int32_t* out = out_row + std::int64_t{seg.pop} * width;
      BigAlleles<KR> big{shared, out};
      LaneCounts<KR> c =
          Path::lane(a, row + seg.begin * call_bytes, seg.end - seg.begin, lane, big);
      const std::int32_t total = warp_reduce_scatter(c.v, lane);
      constexpr int kShift = kScatterShift<kValues>;
      const int j = lane >> kShift;
      const int col = lane_value_column(j, KR, a.alleles);
      if ((lane & ((1 << kShift) - 1)) == 0 && j < kValues && col >= 0) out[col] += total;
      if (shared) {  // the segment's alleles beyond KR, then clear them for the next
        __syncwarp();
        for (int k = lane; k < nbig; k += kWarpLanes) {
          const std::int32_t n = shared[k];
          if (n != 0) {
            out[KR + k] += n;
            shared[k] = 0;
          }
        }
        __syncwarp();
      }
    }
  }
}

template <class Path>
void launch_path(const CountsArgs& a, cudaStream_t stream) {
  const std::int64_t blocks =
      std::min<std::int64_t>((a.rows + kWarpsPerBlock - 1) / kWarpsPerBlock, kMaxBlocks);
  const std::int64_t nbig = Path::kBig ? std::max(a.alleles - Path::KR, 0) : 0;
  const std::int64_t shared_bytes =
      nbig * kWarpsPerBlock * static_cast<std::int64_t>(sizeof(std::int32_t));
  const bool shared_big = nbig > 0 && shared_bytes <= kMaxSharedBytes;
  allele_counts_kernel<Path>
      <<<static_cast<unsigned>(blocks), kThreads,
         shared_big ? static_cast<std::size_t>(shared_bytes) : 0u, stream>>>(a, shared_big);
  VCZ_CUDA_CHECK_LAUNCH("allele_counts_kernel");
}

template <class T>
void launch_word(const CountsArgs& a, cudaStream_t stream) {
  if (!with_word_ploidy<T>(
          a.ploidy, [&](auto p) { launch_path<WordPath<T, decltype(p)::value>>(a, stream); }))
    throw UsageError("allele counts: the word kernel needs ploidy × element bytes to divide 16 " +
                     std::string("(ploidy ") + std::to_string(a.ploidy) + ", " +
                     std::to_string(sizeof(T)) + "-byte alleles)");
}

// ---- seed-style baseline
// -------------------------------------------------------------------------

template <class T>
__global__ void allele_counts_baseline_kernel(const CountsArgs a) {
  const std::int64_t v = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (v >= a.rows) return;
  const int width = a.alleles + CountsLayout::kExtra;
  const T* row = reinterpret_cast<const T*>(a.data) + v * a.samples * a.ploidy;
  std::int32_t* out_row = a.counts + v * std::int64_t{a.pops} * width;
  for (std::int64_t s = 0; s < a.num_segments; ++s) {
    const CountSegment seg = a.segments[s];
    for (std::int64_t i = seg.begin; i < seg.end; ++i)
      stats::counts::add_call(out_row + std::int64_t{seg.pop} * width, row + i * a.ploidy, a.ploidy,
                              a.alleles);
  }
}

void check_args(const CountsArgs& a) {
  if (reinterpret_cast<std::uintptr_t>(a.data) % 16 != 0)
    throw UsageError("allele counts: device genotype block is not 16-byte aligned");
  if (a.alleles < 1 || a.pops < 1 || a.ploidy < 1)
    throw UsageError("allele counts: need at least one allele, population and slot");
}

}  // namespace

void launch_swar(const CountsArgs& a, cudaStream_t stream, int words_in_flight) {
  if (!counts_path_fits(CountsPath::Swar, a.elem_bytes, a.ploidy, a.alleles))
    throw UsageError("allele counts: the SWAR kernel needs int8 diploid, at most 4 alleles");
  if (a.rows <= 0 || a.samples <= 0 || a.num_segments <= 0) return;
  check_args(a);
  const bool two = a.alleles <= 2;
  if (words_in_flight >= 4)
    return two ? launch_path<SwarPath<2, 4>>(a, stream) : launch_path<SwarPath<4, 4>>(a, stream);
  return two ? launch_path<SwarPath<2, 2>>(a, stream) : launch_path<SwarPath<4, 2>>(a, stream);
}

void launch_allele_counts(const CountsArgs& a, cudaStream_t stream, CountsPath path) {
  if (a.rows <= 0 || a.samples <= 0 || a.num_segments <= 0) return;
  check_args(a);
  if (path == CountsPath::Auto) path = auto_counts_path(a.elem_bytes, a.ploidy, a.alleles);
  if (!counts_path_fits(path, a.elem_bytes, a.ploidy, a.alleles))
    throw UsageError("allele counts: the requested kernel does not fit the layout");
  switch (path) {
    case CountsPath::Swar:
      return launch_swar(a, stream, kSwarWordsInFlight);
    case CountsPath::Word:
      if (with_element_type(a.elem_bytes, [&](auto t) { launch_word<decltype(t)>(a, stream); }))
        return;
      break;
    case CountsPath::Generic:
    case CountsPath::Auto:
      if (with_element_type(a.elem_bytes,
                            [&](auto t) { launch_path<GenericPath<decltype(t)>>(a, stream); }))
        return;
      break;
  }
  throw UsageError("allele counts: unsupported genotype element size " +
                   std::to_string(a.elem_bytes));
}

void launch_allele_counts_baseline(const CountsArgs& a, cudaStream_t stream) {
  if (a.rows <= 0 || a.samples <= 0 || a.num_segments <= 0) return;
  check_args(a);
  const auto blocks = static_cast<unsigned>((a.rows + 127) / 128);
  if (!with_element_type(a.elem_bytes, [&](auto t) {
        allele_counts_baseline_kernel<decltype(t)><<<blocks, 128, 0, stream>>>(a);
      }))
    throw UsageError("allele counts: unsupported genotype element size " +
                     std::to_string(a.elem_bytes));
  VCZ_CUDA_CHECK_LAUNCH("allele_counts_baseline_kernel");
}

}  // namespace vczstats::cuda
