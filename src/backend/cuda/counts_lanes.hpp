#pragma once
// The work one lane of a warp does in the allele-counts kernels (counts_kernels.cu), written as
// host/device functions like afdist_lanes.hpp: the kernels add only the warp shuffles that sum
// the 32 lane results and the write into the row's counts, and tests/backend/cuda_counts_test.cpp
// runs these very functions lane by lane on the CPU against AlleleCountsPass::count_sites.
//
// A warp owns one variant row and walks the row's population segments (runs of columns of one
// population, AlleleCountsPass::segments) in turn. For each segment a lane returns LaneCounts:
// KR allele columns (alleles 0..KR-1, compile-time indices so they stay in registers) and the
// CountColumn extras. Alleles in [KR, alleles) are rare (multi-allelic sites beyond KR): they go
// to a callback (the kernel adds them to per-warp shared-memory counters).
//
// Three ways to read a segment, as in afdist:
//  - SWAR, int8 diploid with alleles <= 4 (the common VCZ layout): the segment's aligned 16-byte
//    words (row_segments) are read coalesced across the warp, U per lane in flight, and counted
//    two calls per 32-bit word with byte-wise predicates into packed byte counters;
//  - words, any layout whose call (ploidy × element bytes) divides 16: the same loads, per-call
//    math on the register copy;
//  - generic, any layout: one call per lane in turn with element loads.
// Calls before the first and after the last whole word of a segment take the per-call math.

#include <cstddef>
#include <cstdint>

#include "backend/cuda/afdist_lanes.hpp"  // Word16, load_word16, load_step, row_segments, warp_any
#include "stats/counts_math.hpp"
#include "stats/hd.hpp"
#include "vczstats/counts.hpp"

namespace vczstats::cuda {

using stats::CountsLayout;

/// @brief One lane's counts of a segment: allele columns 0..KR-1 (alleles >= KR are not here),
/// then the CountColumn extras (v[KR + kCalled] ...).
template <int KR>
struct LaneCounts {
  static constexpr int kValues = KR + CountsLayout::kExtra;
  std::int32_t v[kValues] = {};
  VCZ_HD void add(const LaneCounts& o) {
    VCZ_UNROLL
    for (int j = 0; j < kValues; ++j) v[j] += o.v[j];
  }
};

/// @brief The column (within a population's group of alleles + kExtra) of value @p j of a
/// LaneCounts<KR>, or -1 when it is an allele column >= @p alleles (counted, not reported).
VCZ_HD constexpr int lane_value_column(int j, int kr, int alleles) {
  if (j < kr) return j < alleles ? j : -1;
  return alleles + (j - kr);
}

/// @brief Ignores alleles >= KR (for KR >= alleles, where there are none to report).
struct NoBigAlleles {
  VCZ_HD void operator()(int) const {}
};

/// @brief One call (ploidy slots of T at @p g; P > 0: the ploidy as a compile-time constant,
/// else @p ploidy) added to @p c, with exactly the rules of stats::counts::add_call. Alleles in
/// [KR, alleles) go to @p big.
template <int KR, int P, class T, class Big>
VCZ_HD inline void add_call_lane(LaneCounts<KR>& c, const T* g, int ploidy, int alleles, Big& big) {
  const int cls = stats::counts::scan_call(g, P > 0 ? P : ploidy, [&](T a) {
    ++c.v[KR + stats::kCalled];
    VCZ_UNROLL
    for (int k = 0; k < KR; ++k) c.v[k] += a == T(k) ? 1 : 0;
    if (a >= T(KR) && static_cast<std::int64_t>(a) < alleles) big(static_cast<int>(a));
  });
  VCZ_UNROLL
  for (int k = stats::kHomRef; k <= stats::kMissing; ++k) c.v[KR + k] += cls == k ? 1 : 0;
}

/// @brief Calls [0, n) of a segment at @p p, one per lane in turn, read as plain elements.
template <int KR, int P, class T, class Big>
VCZ_HD inline void add_calls_strided(LaneCounts<KR>& c, const std::byte* p, std::int64_t n,
                                     int ploidy, int alleles, int lane, int lanes, Big& big) {
  const T* g = reinterpret_cast<const T*>(p);
  const int step = P > 0 ? P : ploidy;
  for (std::int64_t i = lane; i < n; i += lanes)
    add_call_lane<KR, P>(c, g + i * step, ploidy, alleles, big);
}

// ---- generic path: any type and ploidy --------------------------------------------------------

/// @brief Lane @p lane's share of a segment of @p calls calls (any layout) starting at @p seg.
template <int KR, class T, class Big>
VCZ_HD inline LaneCounts<KR> lane_counts_generic(const std::byte* seg, std::int64_t calls,
                                                 int ploidy, int alleles, int lane, int lanes,
                                                 Big& big) {
  LaneCounts<KR> c;
  add_calls_strided<KR, 0, T>(c, seg, calls, ploidy, alleles, lane, lanes, big);
  return c;
}

// ---- word path: call bytes divide 16 -----------------------------------------------------------

/// @brief Lane @p lane's share of a segment whose calls (P slots of T) do not straddle 16-byte
/// words: whole words with U loads in flight, per-call math on the register copy.
template <int KR, class T, int P, int U = 2, class Big>
VCZ_HD inline LaneCounts<KR> lane_counts_words(const std::byte* seg, std::int64_t calls,
                                               int alleles, int lane, int lanes, Big& big) {
  constexpr int kElems = 16 / static_cast<int>(sizeof(T));
  constexpr int kCallBytes = P * static_cast<int>(sizeof(T));
  static_assert(16 % kCallBytes == 0, "calls must not straddle 16-byte words");
  constexpr int kCallsPerWord = 16 / kCallBytes;
  LaneCounts<KR> c;
  const RowSegments rs = row_segments(seg, calls * kCallBytes, kCallBytes);
  for (std::int64_t base = 0; base < rs.words; base += std::int64_t{U} * lanes) {
    Word16 w[U];
    bool valid[U];
    load_step(rs.words_begin, rs.words, base, lane, lanes, w, valid);
    VCZ_UNROLL
    for (int u = 0; u < U; ++u) {
      if (!valid[u]) continue;
      T e[kElems];
      VCZ_UNROLL
      for (int i = 0; i < kElems; ++i) e[i] = word_element<T>(w[u], i);
      VCZ_UNROLL
      for (int k = 0; k < kCallsPerWord; ++k) add_call_lane<KR, P>(c, e + k * P, P, alleles, big);
    }
  }
  add_calls_strided<KR, P, T>(c, seg, rs.head_calls, P, alleles, lane, lanes, big);
  add_calls_strided<KR, P, T>(c, rs.tail_begin, rs.tail_calls, P, alleles, lane, lanes, big);
  return c;
}

// ---- int8 diploid: two calls per 32-bit word with byte-wise arithmetic
// ---------------------------
//
// A 32-bit word holds two calls, bytes a0 b0 a1 b1 (a = first slot). Byte predicates come out as
// the top bit of each byte, exact (no carries between bytes):
//   N  = byte < 0:  w & 0x80..          Z(x) = byte == 0: ~(((x & 0x7F..) + 0x7F..) | x) & 0x80..
//   Ej = byte == j: Z(w ^ j·0x01..)     F = byte == -2 (fill): Z(w ^ 0xFE..)
// A call's predicates sit at its a byte (bits 7 and 23, kSlotA); (x >> 8) brings b's there.
// With Fa = F at a, Fb = F at b (a call of length 1), the rules of add_call for a diploid call:
//   called  += bytes >= 0, except a b after a fill      Ej likewise (allele j, j < KS)
//   missing  = !Fa & (Na | (Nb & !Fb))                 hom_ref = E0a & (E0b | Fb)
//   het_ref  = !Na & !Nb & (E0a ^ E0b)                 hom_alt = !Na & !E0a & (a == b | Fb)
//   het_alt  = calls with a slot (!Fa) minus the other four classes.
// Without fills (Fa = Fb = 0, the usual row) the formulas shorten; a warp-uniform branch picks.
// Lanes add (mask >> 7), one per byte, into packed byte counters and fold them into 32-bit
// totals every kFoldSteps steps (each byte gains at most 4 per 16-byte word).

namespace swar {  // kHigh, kLow7, kOnes, kSlotA: afdist_lanes.hpp

/// @brief Top bit of every zero byte of @p x.
VCZ_HD inline std::uint32_t zero_bytes(std::uint32_t x) {
  return ~(((x & kLow7) + kLow7) | x) & kHigh;
}

/// @brief Sum of the four bytes of @p packed (any byte values).
VCZ_HD inline std::int32_t sum_bytes(std::uint32_t packed) {
  const std::uint32_t pairs = (packed & 0x00FF00FFu) + ((packed >> 8) & 0x00FF00FFu);
  return static_cast<std::int32_t>((pairs & 0xFFFFu) + (pairs >> 16));
}

/// @brief Packed byte counters of one lane since the last fold, and their totals.
template <int KS>
struct Counts {
  std::uint32_t ac[KS] = {};
  std::uint32_t called = 0, missing = 0, hom_ref = 0, het_ref = 0, hom_alt = 0, slots = 0;
  LaneCounts<KS> total;
  std::int32_t calls = 0;  ///< calls with a slot, counted apart on the no-fill path

  /// @brief Top bits of the fill bytes of @p w.
  static VCZ_HD std::uint32_t fills(std::uint32_t w) { return zero_bytes(w ^ 0xFEFEFEFEu); }

  /// @brief Two calls; kFills false: @p f (the fills of w) is 0 (caller adds 2 to calls).
  template <bool kFills>
  VCZ_HD void add(std::uint32_t w, std::uint32_t f) {
    const std::uint32_t n = w & kHigh, ns = n >> 8;
    const std::uint32_t e0 = zero_bytes(w), e0s = e0 >> 8;
    const std::uint32_t eq = zero_bytes(w ^ (w >> 8));  // a == b at the a bytes
    std::uint32_t keep = kHigh;                         // bytes that are slots
    std::uint32_t fb = 0;
    if constexpr (kFills) {
      const std::uint32_t fa = f & kSlotA;
      fb = (f >> 8) & kSlotA;
      keep = ~(fa << 8) & kHigh;  // a b byte after a fill is no slot
      slots += (~fa & kSlotA) >> 7;
      missing += (~fa & (n | (ns & ~fb)) & kSlotA) >> 7;
    } else {
      missing += ((n | ns) & kSlotA) >> 7;
    }
    called += (~w & keep) >> 7;
    ac[0] += (e0 & keep) >> 7;
    VCZ_UNROLL
    for (int j = 1; j < KS; ++j)
      ac[j] += (zero_bytes(w ^ (static_cast<std::uint32_t>(j) * kOnes)) & keep) >> 7;
    hom_ref += (e0 & (e0s | fb) & kSlotA) >> 7;
    het_ref += (~(n | ns) & (e0 ^ e0s) & kSlotA) >> 7;
    hom_alt += (~(n | e0) & (eq | fb) & kSlotA) >> 7;
  }

  VCZ_HD void fold() {
    VCZ_UNROLL
    for (int j = 0; j < KS; ++j) total.v[j] += sum_bytes(ac[j]);
    total.v[KS + stats::kCalled] += sum_bytes(called);
    total.v[KS + stats::kMissing] += sum_bytes(missing);
    total.v[KS + stats::kHomRef] += sum_bytes(hom_ref);
    total.v[KS + stats::kHetRef] += sum_bytes(het_ref);
    total.v[KS + stats::kHomAlt] += sum_bytes(hom_alt);
    calls += sum_bytes(slots);
    VCZ_UNROLL
    for (int j = 0; j < KS; ++j) ac[j] = 0;
    called = missing = hom_ref = het_ref = hom_alt = slots = 0;
  }

  /// @brief The totals, with het_alt = calls with a slot minus the other classes (call fold()).
  VCZ_HD LaneCounts<KS> result() const {
    LaneCounts<KS> r = total;
    r.v[KS + stats::kHetAlt] = calls - total.v[KS + stats::kHomRef] - total.v[KS + stats::kHetRef] -
                               total.v[KS + stats::kHomAlt] - total.v[KS + stats::kMissing];
    return r;
  }
};
}  // namespace swar

/// @brief Lane @p lane's share of an int8 diploid segment, 8 calls per 16-byte word, U words
/// in flight; alleles >= KS are counted only as called (use with alleles <= KS).
template <int KS, int U = kWordsInFlight>
VCZ_HD inline LaneCounts<KS> lane_counts_int8_diploid(const std::byte* seg, std::int64_t calls,
                                                      int alleles, int lane, int lanes) {
  constexpr int kFoldSteps = 255 / (4 * U);
  static_assert(kFoldSteps >= 1, "too many words per step for byte counters");
  const RowSegments rs = row_segments(seg, calls * 2, 2);
  swar::Counts<KS> acc;
  int steps = 0;
  for (std::int64_t base = 0; base < rs.words; base += std::int64_t{U} * lanes) {
    Word16 w[U];
    bool valid[U];
    const int real = load_step(rs.words_begin, rs.words, base, lane, lanes, w, valid);
    std::uint32_t any_fill = 0;
    VCZ_UNROLL
    for (int u = 0; u < U; ++u) {
      VCZ_UNROLL
      for (int j = 0; j < 4; ++j)
        if (valid[u]) any_fill |= swar::Counts<KS>::fills(w[u].w[j]);
    }
    if (warp_any(any_fill != 0)) {  // mixed-ploidy rows: the full formulas (fills recomputed)
      VCZ_UNROLL
      for (int u = 0; u < U; ++u) {
        if (!valid[u]) continue;
        VCZ_UNROLL
        for (int j = 0; j < 4; ++j)
          acc.template add<true>(w[u].w[j], swar::Counts<KS>::fills(w[u].w[j]));
      }
    } else {
      VCZ_UNROLL
      for (int u = 0; u < U; ++u) {
        if (!valid[u]) continue;
        VCZ_UNROLL
        for (int j = 0; j < 4; ++j) acc.template add<false>(w[u].w[j], 0u);
      }
      acc.calls += 8 * real;
    }
    if (++steps == kFoldSteps) {
      acc.fold();
      steps = 0;
    }
  }
  acc.fold();
  LaneCounts<KS> c = acc.result();
  NoBigAlleles none;
  add_calls_strided<KS, 2, std::int8_t>(c, seg, rs.head_calls, 2, alleles, lane, lanes, none);
  add_calls_strided<KS, 2, std::int8_t>(c, rs.tail_begin, rs.tail_calls, 2, alleles, lane, lanes,
                                        none);
  return c;
}

// ---- path choice -----------------------------------------------------------------------------

/// @brief Which counts code runs a layout (Auto: the fastest that fits).
enum class CountsPath {
  Auto,     ///< int8 diploid with alleles <= 4: Swar; call bytes divide 16: Word; else Generic
  Swar,     ///< int8 diploid, alleles <= kSwarMaxAlleles
  Word,     ///< ploidy × element bytes divides 16
  Generic,  ///< any layout
};

/// @brief Most alleles the SWAR path counts (allele columns in packed counters).
inline constexpr int kSwarMaxAlleles = 4;
/// @brief Allele columns the word path keeps in registers (the generic path: kGenericAlleles);
/// larger alleles go to per-warp shared-memory counters.
inline constexpr int kRegisterAlleles = 4;
inline constexpr int kGenericAlleles = 8;

/// @brief Whether @p path can run a layout.
constexpr bool counts_path_fits(CountsPath path, int elem_bytes, int ploidy, int alleles) {
  const int call_bytes = elem_bytes * ploidy;
  switch (path) {
    case CountsPath::Swar:
      return elem_bytes == 1 && ploidy == 2 && alleles <= kSwarMaxAlleles;
    case CountsPath::Word:
      return call_bytes > 0 && call_bytes <= 16 && 16 % call_bytes == 0;
    default:
      return true;
  }
}

/// @brief The path Auto takes.
constexpr CountsPath auto_counts_path(int elem_bytes, int ploidy, int alleles) {
  if (counts_path_fits(CountsPath::Swar, elem_bytes, ploidy, alleles)) return CountsPath::Swar;
  if (counts_path_fits(CountsPath::Word, elem_bytes, ploidy, alleles)) return CountsPath::Word;
  return CountsPath::Generic;
}

}  // namespace vczstats::cuda
