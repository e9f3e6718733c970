// Allele-counts kernels (the heavy pass of the population statistics).
//
// A group of L lanes counts one variant row (grid-stride over groups of rows, 8 warps per block;
// 4 for SWAR with four allele columns and 4 words in flight): L = 32 (one row per warp) for the
// word and generic paths; for SWAR, 4 to 32 lanes so that each lane has at least
// kSwarWordsPerLane words of a population segment (swar_row_lanes): 32 for rows of 10^4 samples
// in one population, 16 or 32 for two, 8 or 16 for four, 8 for the 1,000-sample chunks of a
// bio2zarr store. The group walks the row's population segments in turn; for each, every lane
// runs the per-lane code of counts_lanes.hpp (aligned 16-byte loads coalesced across the group,
// counts in registers), the warp sums each group's lane results with a reduce-scatter of xor
// shuffles (all the warp's rows at once), and the lanes holding a total add it into the row's
// counts with a global reduction (atomicAdd whose result is unused: the warp does not wait for
// a load of the counts, as a read-modify-write made it; 1-2 points of the D2D copy). Several
// rows per warp pay each segment's sums, partial words and remainder steps once for several
// rows. The sums do not depend on timing: a row belongs to one group, integer additions
// commute, and the sample blocks of a row are queued one after the other on one stream.
// Alleles beyond the register columns (kRegisterAlleles, word and generic paths) go to per-warp
// shared-memory counters with shared atomics and are added to the row at the end of the
// segment; only when those would not fit in shared memory (more than ~1500 alleles) do they go
// to the row with global atomics.
//
// Instantiations: SWAR for 2 and 4 alleles with 2 or 4 words in flight and 4, 8, 16 or 32 lanes
// per row (launch_allele_counts picks; the benchmark and the tests run each), the word path for
// the 14 (element, ploidy) layouts whose calls do not straddle 16-byte words, one generic kernel
// per element type, and the seed-style baseline per element type. The SWAR kernels read up to the
// end of the block's last 16-byte word (DeviceBuffer sizes are rounded up to 256).

#include <algorithm>
#include <cstdint>
#include <string>

#include "backend/cuda/counts_kernels.cuh"
#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/dispatch.hpp"

namespace vczstats::cuda {
namespace {

constexpr int kBlockThreads = 256;  // 8 warps per block
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

/// Sum N values (a power of two) over each group of L lanes (L a power of two, lane ^ Offset
/// stays in the group for Offset < L) by recursive halving at offsets Offset, Offset/2, ..., 1:
/// while a lane holds more than one value it halves them (N/2 shuffles), then it adds its
/// partners' single value (one shuffle per offset left). A lane ends with max(N / L, 1) values.
template <int N, int Offset>
inline constexpr int kValuesLeft = Offset == 0      ? N
                                   : N > 2 * Offset ? N / (2 * Offset)
                                                    : 1;
template <int N, int Offset, int M = kValuesLeft<N, Offset>>
__device__ void reduce_group(const std::int32_t (&in)[N], std::int32_t (&out)[M], int lane) {
  if constexpr (Offset == 0) {
    VCZ_UNROLL
    for (int i = 0; i < N; ++i) out[i] = in[i];
  } else if constexpr (N > 1) {
    std::int32_t half[N / 2];
    halve<N, Offset>(in, half, lane);
    reduce_group<N / 2, Offset / 2>(half, out, lane);
  } else {
    std::int32_t one[1] = {in[0] + __shfl_xor_sync(kFullMask, in[0], Offset)};
    reduce_group<1, Offset / 2>(one, out, lane);
  }
}

/// How the V values of LaneCounts are summed over a group of L lanes (reduce_scatter): padded to
/// N (8 or 16); each lane ends with kPer values, and kShare lanes hold the same ones.
template <int V, int L>
struct Scatter {
  static_assert(V <= 16, "at most 16 values");
  static constexpr int N = V <= 8 ? 8 : 16;
  static constexpr int kPer = N > L ? N / L : 1;
  static constexpr int kShare = L > N ? L / N : 1;
  /// Value i of lane @p lane (its lane in the group): the first of kShare lanes writes it.
  __device__ static int value(int lane, int i) { return lane / kShare * kPer + i; }
  __device__ static bool writes(int lane) { return lane % kShare == 0; }
};

/// Sum each of the V values over the lanes of each group of L lanes (a reduce-scatter by
/// recursive halving: for one row per warp, 9 shuffles for V <= 8, 16 for V <= 16, instead of 5
/// per value; for four rows of 8 lanes, 7 and 14 shuffles sum all four rows at once). Lane l
/// returns values Scatter<V, L>::value(l % L, i), i < kPer.
template <int V, int L>
__device__ void reduce_scatter(const std::int32_t (&v)[V], std::int32_t (&out)[Scatter<V, L>::kPer],
                               int lane) {
  constexpr int N = Scatter<V, L>::N;
  std::int32_t a[N];
  VCZ_UNROLL
  for (int i = 0; i < N; ++i) a[i] = i < V ? v[i] : 0;
  reduce_group<N, L / 2>(a, out, lane);
}

/// SWAR with U words in flight per lane and L lanes per row. Measured on the H100
/// (bench/NOTES-gpu-counts.md): 3 blocks per SM (80 registers, 24 warps) beat 2 (128 registers);
/// swar_words_in_flight and swar_row_lanes say which U and L run.
template <int KS, int U, int L>
struct SwarPath {
  static constexpr int KR = KS;
  static constexpr bool kBig = false;
  // Four allele columns with 4 words in flight need more than 80 registers (ptxas spilled 60-90
  // bytes at 3 blocks of 256 threads): they run 5 blocks of 128 threads per SM (96 registers,
  // 0-24 bytes spilled; 20 warps per SM instead of 24), 4-8% faster on the H100 (NOTES step 10).
  static constexpr bool kWide = KS == 4 && U == 4;
  static constexpr int kThreads = kWide ? 128 : kBlockThreads;
  static constexpr int kBlocksPerSm = kWide ? 5 : kWordBlocksPerSm;
  static constexpr int kRowLanes = L;
  template <class Big>
  __device__ static LaneCounts<KR> lane(const CountsArgs& a, const std::byte* seg,
                                        std::int64_t calls, int lane, Big&) {
    return lane_counts_int8_diploid<KS, U>(seg, calls, a.alleles, lane, L,
                                           a.data + a.rows * a.samples * 2);
  }
};

template <class T, int P>
struct WordPath {
  static constexpr int KR = kRegisterAlleles;
  static constexpr bool kBig = true;
  static constexpr int kThreads = kBlockThreads;
  static constexpr int kBlocksPerSm = kWordBlocksPerSm;
  static constexpr int kRowLanes = kWarpLanes;
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
  static constexpr int kThreads = kBlockThreads;
  static constexpr int kBlocksPerSm = kGenericBlocksPerSm;
  static constexpr int kRowLanes = kWarpLanes;
  template <class Big>
  __device__ static LaneCounts<KR> lane(const CountsArgs& a, const std::byte* seg,
                                        std::int64_t calls, int lane, Big& big) {
    return lane_counts_generic<KR, T>(seg, calls, a.ploidy, a.alleles, lane, kWarpLanes, big);
  }
};

template <class Path>
__global__ void __launch_bounds__(Path::kThreads, Path::kBlocksPerSm)
    allele_counts_kernel(const CountsArgs a, bool shared_big) {
  extern __shared__ std::int32_t big_shared[];
  constexpr int KR = Path::KR;
  constexpr int kValues = LaneCounts<KR>::kValues;
  constexpr int L = Path::kRowLanes;     // lanes per row
  constexpr int kRows = kWarpLanes / L;  // rows a warp counts at once
  using Sc = Scatter<kValues, L>;
  static_assert(kValues <= kWarpLanes, "one value per lane");
  static_assert(!Path::kBig || L == kWarpLanes, "shared big-allele counters are per warp");
  const int lane = static_cast<int>(threadIdx.x) % kWarpLanes;
  const int warp = static_cast<int>(threadIdx.x) / kWarpLanes;
  const int row_lane = lane % L;
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
  constexpr int kWarps = Path::kThreads / kWarpLanes;  // per block
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kWarps * kRows;
  // Warp-uniform loops: every lane of a warp takes the same row groups and segments (the lanes'
  // code uses __any_sync and warp-wide loop counts, the sums shuffle over the full warp). A
  // group past the last row counts the last row again and writes nothing.
  for (std::int64_t v0 = (static_cast<std::int64_t>(blockIdx.x) * kWarps + warp) * kRows;
       v0 < a.rows; v0 += stride) {
    const std::int64_t v = v0 + lane / L;
    const bool real = v < a.rows;
    const std::int64_t r = real ? v : a.rows - 1;
    const std::byte* row = a.data + r * row_bytes;
    std::int32_t* out_row = a.counts + r * site_width;
    for (std::int64_t s = 0; s < a.num_segments; ++s) {
      const CountSegment seg = a.segments[s];
      std::int32_t* out = out_row + std::int64_t{seg.pop} * width;
      BigAlleles<KR> big{shared, out};
      LaneCounts<KR> c =
          Path::lane(a, row + seg.begin * call_bytes, seg.end - seg.begin, row_lane, big);
      std::int32_t total[Sc::kPer];
      reduce_scatter<kValues, L>(c.v, total, lane);
      if (real && Sc::writes(row_lane)) {
        VCZ_UNROLL
        for (int i = 0; i < Sc::kPer; ++i) {
          const int j = Sc::value(row_lane, i);
          const int col = j < kValues ? lane_value_column(j, KR, a.alleles) : -1;
          if (col >= 0) atomicAdd(out + col, total[i]);  // a reduction: no load to wait for
        }
      }
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
  constexpr int kWarps = Path::kThreads / kWarpLanes;
  constexpr std::int64_t kRowsPerBlock = kWarps * (kWarpLanes / Path::kRowLanes);
  const std::int64_t blocks =
      std::min<std::int64_t>((a.rows + kRowsPerBlock - 1) / kRowsPerBlock, kMaxBlocks);
  const std::int64_t nbig = Path::kBig ? std::max(a.alleles - Path::KR, 0) : 0;
  const std::int64_t shared_bytes = nbig * kWarps * static_cast<std::int64_t>(sizeof(std::int32_t));
  const bool shared_big = nbig > 0 && shared_bytes <= kMaxSharedBytes;
  allele_counts_kernel<Path>
      <<<static_cast<unsigned>(blocks), Path::kThreads,
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

/// Whether rows of @p a are short enough for the SWAR kernel's unfolded byte counters.
bool swar_row_fits(const CountsArgs& a, int row_lanes) {
  return a.samples * 2 <= swar::kMaxLaneBytes * row_lanes;
}

/// 16-byte words of an average population segment of a row.
std::int64_t segment_words(const CountsArgs& a) {
  return a.samples * 2 / 16 / std::max<std::int64_t>(a.num_segments, 1);
}

}  // namespace

void launch_swar(const CountsArgs& a, cudaStream_t stream, int row_lanes, int words_in_flight) {
  if (!counts_path_fits(CountsPath::Swar, a.elem_bytes, a.ploidy, a.alleles))
    throw UsageError("allele counts: the SWAR kernel needs int8 diploid, at most 4 alleles");
  if (a.rows <= 0 || a.samples <= 0 || a.num_segments <= 0) return;
  check_args(a);
  if (row_lanes != 4 && row_lanes != 8 && row_lanes != 16 && row_lanes != 32)
    throw UsageError("allele counts: the SWAR kernel takes 4, 8, 16 or 32 lanes per row, not " +
                     std::to_string(row_lanes));
  if (words_in_flight != 2 && words_in_flight != 4)
    throw UsageError("allele counts: the SWAR kernel takes 2 or 4 words in flight, not " +
                     std::to_string(words_in_flight));
  if (!swar_row_fits(a, row_lanes))
    throw UsageError("allele counts: rows of " + std::to_string(a.samples) +
                     " samples are too long for the SWAR kernel's counters with " +
                     std::to_string(row_lanes) + " lanes per row");
  auto run = [&]<int U, int L>() {
    return a.alleles <= 2 ? launch_path<SwarPath<2, U, L>>(a, stream)
                          : launch_path<SwarPath<4, U, L>>(a, stream);
  };
  auto with_lanes = [&]<int U>() {
    switch (row_lanes) {
      case 32:
        return run.template operator()<U, 32>();
      case 16:
        return run.template operator()<U, 16>();
      case 8:
        return run.template operator()<U, 8>();
      default:
        return run.template operator()<U, 4>();
    }
  };
  return words_in_flight == 4 ? with_lanes.template operator()<4>()
                              : with_lanes.template operator()<2>();
}

int swar_words_in_flight(const CountsArgs&, int) {
  return 4;
}

int swar_row_lanes(const CountsArgs& a) {
  const std::int64_t words = segment_words(a);
  auto wanted = [&](int lanes) {
    return std::int64_t{a.alleles > 2 && lanes >= 16 ? kSwarWordsPerLaneWide : kSwarWordsPerLane} *
           lanes;
  };
  int lanes = 32;
  while (lanes > 4 && words < wanted(lanes)) lanes /= 2;
  while (lanes < 32 && !swar_row_fits(a, lanes)) lanes *= 2;
  return lanes;
}

void launch_allele_counts(const CountsArgs& a, cudaStream_t stream, CountsPath path) {
  if (a.rows <= 0 || a.samples <= 0 || a.num_segments <= 0) return;
  check_args(a);
  if (path == CountsPath::Auto) {
    path = auto_counts_path(a.elem_bytes, a.ploidy, a.alleles);
    if (path == CountsPath::Swar && !swar_row_fits(a, kWarpLanes)) path = CountsPath::Word;
  }
  if (!counts_path_fits(path, a.elem_bytes, a.ploidy, a.alleles))
    throw UsageError("allele counts: the requested kernel does not fit the layout");
  switch (path) {
    case CountsPath::Swar: {
      const int lanes = swar_row_lanes(a);
      return launch_swar(a, stream, lanes, swar_words_in_flight(a, lanes));
    }
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
