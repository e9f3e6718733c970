#pragma once
// The work one lane of a warp does in the afdist heavy-pass kernels, written as host/device
// functions: the kernels (afdist_kernels.cu) add only the warp shuffle that merges the 32 lane
// results, and the CPU tests run these very functions lane by lane, so every line of kernel
// logic below is checked without a GPU. No CUDA headers here: plain C++ under g++.
//
// A genotype block is a flat byte array (rows = variants, row_bytes = samples × ploidy × elem,
// rows NOT 16-byte aligned in general). One warp owns one row:
//  - the aligned 16-byte words lying wholly inside the row are read by the lanes in turn (lane l
//    reads words l, l+32, ...: one coalesced 512-byte transaction per warp load), U per lane in
//    flight; when call_bytes = ploidy × elem divides 16 (and the block starts 16-byte aligned)
//    no call straddles a word;
//  - the calls before the first and after the last whole word (< 16 bytes each) are read as
//    plain elements, one call per lane;
//  - for int8 diploid (the common VCZ layout) a word is counted as 8 calls with byte-wise
//    (SWAR) arithmetic instead of call by call; its results equal the per-call functions of
//    stats/afdist_math.hpp exactly (tests/backend/cuda_afdist_test.cpp checks every byte value
//    class);
//  - other layouts whose calls straddle words (ploidy 3, 5...) take the generic path: one call
//    per lane with element loads (still contiguous across the warp).

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "stats/afdist_math.hpp"
#include "stats/hd.hpp"
#include "vczstats/afdist.hpp"

#if defined(__CUDA_ARCH__)  // device pass of nvcc only: g++ (host pass too) would warn
#define VCZ_UNROLL _Pragma("unroll")
#else
#define VCZ_UNROLL
#endif

namespace vczstats::cuda {

using stats::AfdistMethod;
using stats::AfdistSite;

/// @brief Lanes of a warp.
inline constexpr int kWarpLanes = 32;
/// @brief Words a lane loads before it counts them (loads in flight per lane).
inline constexpr int kWordsInFlight = 4;

/// @brief Which heavy-pass code runs a layout: Auto picks the fastest that fits; the others exist
/// so tests can run every path on any layout it supports.
enum class HeavyPath {
  Auto,     ///< int8 diploid: Swar; call_bytes divides 16: Word; else Generic
  Swar,     ///< int8 diploid only
  Word,     ///< call_bytes = ploidy × elem divides 16
  Generic,  ///< any layout
};

/// @brief The path Auto takes for a layout.
constexpr HeavyPath auto_heavy_path(int elem_bytes, int ploidy) {
  if (elem_bytes == 1 && ploidy == 2) return HeavyPath::Swar;
  const int call_bytes = elem_bytes * ploidy;
  if (call_bytes > 0 && call_bytes <= 16 && 16 % call_bytes == 0) return HeavyPath::Word;
  return HeavyPath::Generic;
}

/// @brief Whether @p path can run a layout.
constexpr bool heavy_path_fits(HeavyPath path, int elem_bytes, int ploidy) {
  switch (path) {
    case HeavyPath::Swar:
      return elem_bytes == 1 && ploidy == 2;
    case HeavyPath::Word:
      return auto_heavy_path(elem_bytes, ploidy) != HeavyPath::Generic;
    default:
      return true;
  }
}

/// @brief 16 bytes of a genotype block as four little-endian 32-bit words.
struct alignas(16) Word16 {
  std::uint32_t w[4];
};

/// @brief A word that adds nothing to any count of either method: four calls (fill, missing).
/// bcftools: a call whose first slot is a fill has length 0; zarr-afdist: neither slot is 0 and
/// the slots differ (het is counted as calls − equal pairs, over real words only).
inline constexpr std::uint32_t kNeutralWord = 0xFFFEFFFEu;

/// @brief Load an aligned 16-byte word; on the GPU with the streaming cache hint (read once).
VCZ_HD inline Word16 load_word16(const std::byte* p) {
#if defined(__CUDA_ARCH__)
  const uint4 v = __ldcs(reinterpret_cast<const uint4*>(p));
  return Word16{{v.x, v.y, v.z, v.w}};
#else
  Word16 r;
  std::memcpy(&r, p, sizeof r);
  return r;
#endif
}

/// @brief Whether @p p is true in any lane of the warp (on the host: in this lane). Only an
/// optimisation (a warp-uniform branch); results do not depend on it.
VCZ_HD inline bool warp_any(bool p) {
#if defined(__CUDA_ARCH__)
  return __any_sync(0xFFFFFFFFu, p) != 0;
#else
  return p;
#endif
}

/// @brief The least (kMax: the greatest) of @p x over the warp's lanes (on the host: this
/// lane's). For loop counts that must be warp-uniform (the loop calls warp_any) when the lanes
/// of one warp work on rows of different lengths; 0 <= x < 2^32.
template <bool kMax>
VCZ_HD inline std::int64_t warp_bound_count(std::int64_t x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const auto u = static_cast<unsigned>(x);
  return kMax ? __reduce_max_sync(0xFFFFFFFFu, u) : __reduce_min_sync(0xFFFFFFFFu, u);
#elif defined(__CUDA_ARCH__)
  for (int o = 16; o > 0; o /= 2) {
    const std::int64_t y = __shfl_xor_sync(0xFFFFFFFFu, x, o);
    x = kMax ? max(x, y) : min(x, y);
  }
  return x;
#else
  return x;
#endif
}
VCZ_HD inline std::int64_t warp_min_count(std::int64_t x) {
  return warp_bound_count<false>(x);
}
VCZ_HD inline std::int64_t warp_max_count(std::int64_t x) {
  return warp_bound_count<true>(x);
}

/// @brief Element @p i of a word read as an array of T (little endian).
template <class T>
VCZ_HD inline T word_element(const Word16& w, int i) {
  if constexpr (sizeof(T) == 8) {
    return static_cast<T>((static_cast<std::uint64_t>(w.w[2 * i + 1]) << 32) | w.w[2 * i]);
  } else {
    constexpr int kPer = 4 / static_cast<int>(sizeof(T));
    constexpr int kBits = 8 * static_cast<int>(sizeof(T));
    return static_cast<T>(w.w[i / kPer] >> (kBits * (i % kPer)));
  }
}

/// @brief How a row splits into leading calls, whole aligned words and trailing calls.
struct RowSegments {
  std::int64_t head_calls = 0;  ///< calls before the first whole word
  std::int64_t words = 0;       ///< whole aligned 16-byte words
  std::int64_t tail_calls = 0;  ///< calls after the last whole word
  const std::byte* words_begin = nullptr;
  const std::byte* tail_begin = nullptr;
};

/// @brief Split the row at @p row (@p row_bytes long) into segments. Requires @p call_bytes to
/// divide 16 and the row to start at a multiple of call_bytes from a 16-byte boundary, which
/// holds for every row of a block whose start is 16-byte aligned.
VCZ_HD inline RowSegments row_segments(const std::byte* row, std::int64_t row_bytes,
                                       int call_bytes) {
  RowSegments s;
  const auto a = reinterpret_cast<std::uintptr_t>(row);
  const std::uintptr_t first = (a + 15u) & ~std::uintptr_t{15};
  const std::uintptr_t last = (a + static_cast<std::uintptr_t>(row_bytes)) & ~std::uintptr_t{15};
  if (first >= last) {  // no whole word: every call is a "head" call
    s.head_calls = row_bytes / call_bytes;
    s.words_begin = s.tail_begin = row + row_bytes;
    return s;
  }
  s.head_calls = static_cast<std::int64_t>(first - a) / call_bytes;
  s.words = static_cast<std::int64_t>(last - first) / 16;
  s.tail_calls =
      static_cast<std::int64_t>(a + static_cast<std::uintptr_t>(row_bytes) - last) / call_bytes;
  s.words_begin = row + (first - a);
  s.tail_begin = row + (last - a);
  return s;
}

/// @brief One call (P slots of type T at @p g) with method M.
template <class T, int P, AfdistMethod M>
VCZ_HD inline void add_call(AfdistSite& s, const T* g) {
  if constexpr (M == AfdistMethod::Bcftools)
    stats::afdist::bcftools_add_sample(s, g, P);
  else
    stats::afdist::zarr_add_sample(s, g);
}

/// @brief Calls [0, n) starting at @p p, one per lane in turn, read as plain elements.
template <class T, int P, AfdistMethod M>
VCZ_HD inline void add_calls_strided(AfdistSite& s, const std::byte* p, std::int64_t n, int lane,
                                     int lanes) {
  const T* g = reinterpret_cast<const T*>(p);
  for (std::int64_t c = lane; c < n; c += lanes) add_call<T, P, M>(s, g + c * P);
}

/// @brief Load the U words of one step of a lane (word base + lane + u × lanes); words past the
/// end read as kNeutralWord. Returns how many were real.
template <int U>
VCZ_HD inline int load_step(const std::byte* words, std::int64_t nwords, std::int64_t base,
                            int lane, int lanes, Word16 (&w)[U], bool (&valid)[U]) {
  int real = 0;
  VCZ_UNROLL
  for (int u = 0; u < U; ++u) {
    const std::int64_t k = base + lane + static_cast<std::int64_t>(u) * lanes;
    valid[u] = k < nwords;
    if (valid[u]) {
      w[u] = load_word16(words + 16 * k);
      ++real;
    } else {
      w[u] = Word16{{kNeutralWord, kNeutralWord, kNeutralWord, kNeutralWord}};
    }
  }
  return real;
}

// ---- generic path: any type and ploidy --------------------------------------------------------

/// @brief Lane @p lane's share of a row of any layout: calls lane, lane + lanes, ...
template <class T>
VCZ_HD inline AfdistSite lane_generic(const std::byte* row, std::int64_t samples, int ploidy,
                                      AfdistMethod method, int lane, int lanes) {
  AfdistSite s;
  const T* g = reinterpret_cast<const T*>(row);
  if (method == AfdistMethod::Bcftools) {
    for (std::int64_t c = lane; c < samples; c += lanes)
      stats::afdist::bcftools_add_sample(s, g + c * ploidy, ploidy);
  } else {  // zarr-afdist is diploid only (AfdistAccumulator::init checks)
    for (std::int64_t c = lane; c < samples; c += lanes)
      stats::afdist::zarr_add_sample(s, g + c * ploidy);
  }
  return s;
}

// ---- word path: call_bytes divides 16, per-call math on register copies ------------------------

/// @brief Lane @p lane's share of a row whose calls (P slots of T) do not straddle 16-byte words.
template <class T, int P, AfdistMethod M>
VCZ_HD inline AfdistSite lane_words(const std::byte* row, std::int64_t samples, int lane,
                                    int lanes) {
  constexpr int kElems = 16 / static_cast<int>(sizeof(T));
  constexpr int kCallBytes = P * static_cast<int>(sizeof(T));
  static_assert(16 % kCallBytes == 0, "calls must not straddle 16-byte words");
  constexpr int kCallsPerWord = 16 / kCallBytes;
  AfdistSite s;
  const RowSegments seg = row_segments(row, samples * kCallBytes, kCallBytes);
  for (std::int64_t base = 0; base < seg.words; base += std::int64_t{kWordsInFlight} * lanes) {
    Word16 w[kWordsInFlight];
    bool valid[kWordsInFlight];
    load_step(seg.words_begin, seg.words, base, lane, lanes, w, valid);
    VCZ_UNROLL
    for (int u = 0; u < kWordsInFlight; ++u) {
      if (!valid[u]) continue;
      T e[kElems];
      VCZ_UNROLL
      for (int i = 0; i < kElems; ++i) e[i] = word_element<T>(w[u], i);
      VCZ_UNROLL
      for (int c = 0; c < kCallsPerWord; ++c) add_call<T, P, M>(s, e + c * P);
    }
  }
  add_calls_strided<T, P, M>(s, row, seg.head_calls, lane, lanes);
  add_calls_strided<T, P, M>(s, seg.tail_begin, seg.tail_calls, lane, lanes);
  return s;
}

// ---- int8 diploid: 8 calls per word with byte-wise arithmetic -----------------------------------
//
// A 32-bit word holds two calls: bytes a0 b0 a1 b1 (a = first slot). Per-byte predicates come
// out as the top bit of each byte (exact tests, no carries between bytes):
//   N  = byte < 0                    : w & 0x80808080
//   E1 = byte == 1                   : t1 = (w ^ 0x01..) & 0x7F..; ~((t1 + 0x7F..) | w) & 0x80..
//   EF = byte == -2 (fill)           : (t1 + 0x01..) & w & 0x80..   (low 7 bits of w are 0x7E)
//   E0 = byte == 0                   : ~(((w & 0x7F..) + 0x7F..) | w) & 0x80..
// Predicates of a call sit at the a byte (bits 7 and 23); (x >> 8) brings b's to them. A lane
// adds (mask >> 7), i.e. 1 per byte, into packed byte counters and folds them into 32-bit totals
// every few steps (at most 56 per byte in between: no overflow, and the fold's byte sum fits).
//
// bcftools rules for a diploid call (see bcftools_add_sample), with len = slots before a fill:
//   an  += called slots among the first len     ac1 += slots equal to 1 among the first len
//   len 2, both called: n_dosage1 += exactly one 1, n_dosage2 += both 1
//   len 1, a called:    n_dosage1 (of ploidy 1) += a == 1
//   record ploidy = the largest len seen; only the counts of that length survive.
// zarr-afdist: ref_count += slots equal to 0, het += a != b, hom_alt += a == b && a != 0.

namespace swar {
inline constexpr std::uint32_t kHigh = 0x80808080u;  ///< top bit of every byte
inline constexpr std::uint32_t kLow7 = 0x7F7F7F7Fu;
inline constexpr std::uint32_t kOnes = 0x01010101u;
inline constexpr std::uint32_t kSlotA = 0x00800080u;  ///< top bits of the a bytes

/// @brief Sum of the four bytes of @p packed (their sum at most 255).
VCZ_HD inline std::int32_t byte_sum(std::uint32_t packed) {
  return static_cast<std::int32_t>((packed * kOnes) >> 24);
}

/// @brief Lane state of the bcftools method: packed byte counters and their totals.
struct Bcftools {
  std::uint32_t an = 0, ac1 = 0, d1 = 0, d2 = 0, d1_hap = 0;  ///< packed, since the last fold
  std::int32_t t_an = 0, t_ac1 = 0, t_d1 = 0, t_d2 = 0, t_d1_hap = 0;
  std::uint32_t seen2 = 0;  ///< nonzero: a call of length 2 was seen
  std::uint32_t seen1 = 0;  ///< nonzero: a call of length >= 1 was seen

  /// @brief t1 = (w ^ 0x01..) & 0x7F.., shared by the fill test and both paths.
  static VCZ_HD std::uint32_t t1_of(std::uint32_t w) { return (w ^ kOnes) & kLow7; }
  /// @brief Top bits of the fill (-2) bytes of @p w (the lane ORs (t1 + 0x01..) & w over a
  /// step and masks once: the same test, sharing t1 with the counting that follows).
  static VCZ_HD std::uint32_t fills(std::uint32_t w, std::uint32_t t1) {
    return (t1 + kOnes) & w & kHigh;
  }

  /// @brief Two calls of which none has a fill slot (caller also sets seen2).
  VCZ_HD void add_no_fill(std::uint32_t w, std::uint32_t t1) {
    const std::uint32_t e1 = ~((t1 + kLow7) | w) & kHigh;
    const std::uint32_t ws = w >> 8, e1s = e1 >> 8;
    an += (~w & kHigh) >> 7;
    ac1 += e1 >> 7;
    d1 += (~w & ~ws & (e1 ^ e1s) & kSlotA) >> 7;
    d2 += (e1 & e1s & kSlotA) >> 7;
  }

  /// @brief Two calls of any content.
  VCZ_HD void add_any(std::uint32_t w, std::uint32_t t1) {
    const std::uint32_t e1 = ~((t1 + kLow7) | w) & kHigh;
    const std::uint32_t ef = fills(w, t1);
    const std::uint32_t a_fill_at_b = (ef & kSlotA) << 8;  // b slot after a fill is not read
    const std::uint32_t ws = w >> 8, e1s = e1 >> 8, efs = ef >> 8;
    an += (~w & kHigh & ~a_fill_at_b) >> 7;
    ac1 += (e1 & ~a_fill_at_b) >> 7;
    d1 += (~w & ~ws & (e1 ^ e1s) & kSlotA) >> 7;
    d2 += (e1 & e1s & kSlotA) >> 7;
    // a == 1 with b not a fill is a length-2 call, which makes seen2 and so drops d1_hap:
    // counting every a == 1 gives the same site as counting only those with b a fill.
    d1_hap += (e1 & kSlotA) >> 7;
    seen2 |= ~(ef | efs) & kSlotA;
    seen1 |= ~ef & kSlotA;
  }

  VCZ_HD void fold() {
    t_an += byte_sum(an);
    t_ac1 += byte_sum(ac1);
    t_d1 += byte_sum(d1);
    t_d2 += byte_sum(d2);
    t_d1_hap += byte_sum(d1_hap);
    an = ac1 = d1 = d2 = d1_hap = 0;
  }

  /// @brief The lane's counts as an AfdistSite (call fold() first).
  VCZ_HD AfdistSite site() const {
    return stats::afdist::diploid_site(t_an, t_ac1, t_d1, t_d2, t_d1_hap, seen2 != 0, seen1 != 0);
  }
};

/// @brief Lane state of the zarr-afdist method.
struct Zarr {
  std::uint32_t ref = 0, eq = 0, hom = 0;  ///< packed, since the last fold
  std::int32_t t_ref = 0, t_eq = 0, t_hom = 0;
  std::int32_t calls = 0;  ///< real calls counted (het = calls - equal pairs)

  /// @brief Two calls of any content (neutral words add nothing).
  VCZ_HD void add(std::uint32_t w) {
    const std::uint32_t e0 = ~(((w & kLow7) + kLow7) | w) & kHigh;
    const std::uint32_t d = w ^ (w >> 8);  // a ^ b at the a bytes
    const std::uint32_t eq_pair = ~(((d & kLow7) + kLow7) | d) & kSlotA;
    ref += e0 >> 7;
    eq += eq_pair >> 7;
    hom += (eq_pair & ~e0) >> 7;
  }

  VCZ_HD void fold() {
    t_ref += byte_sum(ref);
    t_eq += byte_sum(eq);
    t_hom += byte_sum(hom);
    ref = eq = hom = 0;
  }

  VCZ_HD AfdistSite site() const {
    AfdistSite s;
    s.ref_count = t_ref;
    s.het = calls - t_eq;
    s.hom_alt = t_hom;
    return s;
  }
};
}  // namespace swar

/// @brief Lane @p lane's share of an int8 diploid row, 8 calls per word, U words in flight.
template <AfdistMethod M, int U = (M == AfdistMethod::Bcftools ? 2 : kWordsInFlight)>
VCZ_HD inline AfdistSite lane_int8_diploid(const std::byte* row, std::int64_t samples, int lane,
                                           int lanes) {
  const RowSegments seg = row_segments(row, samples * 2, 2);
  // Fold the packed byte counters every kFoldSteps steps: at most 56 per byte, 224 per word.
  constexpr int kFoldSteps = 56 / (4 * U);
  static_assert(kFoldSteps >= 1, "too many words per step for byte counters");
  int steps = 0;
  AfdistSite s;
  if constexpr (M == AfdistMethod::Bcftools) {
    swar::Bcftools acc;
    for (std::int64_t base = 0; base < seg.words; base += std::int64_t{U} * lanes) {
      Word16 w[U];
      bool valid[U];
      const int real = load_step(seg.words_begin, seg.words, base, lane, lanes, w, valid);
      std::uint32_t t1[U][4];
      std::uint32_t fill = 0;
      VCZ_UNROLL
      for (int u = 0; u < U; ++u) {
        VCZ_UNROLL
        for (int j = 0; j < 4; ++j) {
          t1[u][j] = swar::Bcftools::t1_of(w[u].w[j]);
          if (valid[u]) fill |= (t1[u][j] + swar::kOnes) & w[u].w[j];  // fills(), unmasked
        }
      }
      // Mixed-ploidy rows carry fills; others take the shorter formulas. Warp-uniform branch.
      if (warp_any((fill & swar::kHigh) != 0)) {
        VCZ_UNROLL
        for (int u = 0; u < U; ++u) {
          VCZ_UNROLL
          for (int j = 0; j < 4; ++j) acc.add_any(w[u].w[j], t1[u][j]);
        }
      } else {
        VCZ_UNROLL
        for (int u = 0; u < U; ++u) {
          VCZ_UNROLL
          for (int j = 0; j < 4; ++j) acc.add_no_fill(w[u].w[j], t1[u][j]);
        }
        acc.seen2 |= real > 0 ? 1u : 0u;
      }
      if (++steps == kFoldSteps) {
        acc.fold();
        steps = 0;
      }
    }
    acc.fold();
    s = acc.site();
  } else {
    swar::Zarr acc;
    for (std::int64_t base = 0; base < seg.words; base += std::int64_t{U} * lanes) {
      Word16 w[U];
      bool valid[U];
      acc.calls += 8 * load_step(seg.words_begin, seg.words, base, lane, lanes, w, valid);
      VCZ_UNROLL
      for (int u = 0; u < U; ++u) {
        VCZ_UNROLL
        for (int j = 0; j < 4; ++j) acc.add(w[u].w[j]);
      }
      if (++steps == kFoldSteps) {
        acc.fold();
        steps = 0;
      }
    }
    acc.fold();
    s = acc.site();
  }
  AfdistSite edges;
  add_calls_strided<std::int8_t, 2, M>(edges, row, seg.head_calls, lane, lanes);
  add_calls_strided<std::int8_t, 2, M>(edges, seg.tail_begin, seg.tail_calls, lane, lanes);
  stats::afdist::merge_site(s, edges);
  return s;
}

}  // namespace vczstats::cuda
