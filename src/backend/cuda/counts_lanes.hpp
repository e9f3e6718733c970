#pragma once
// The work one lane of a warp does in the allele-counts kernels (counts_kernels.cu), written as
// host/device functions like afdist_lanes.hpp: the kernels add only the warp shuffles that sum
// the lane results of a row and the write into the row's counts, and
// tests/backend/cuda_counts_test.cpp runs these very functions lane by lane on the CPU against
// AlleleCountsPass::count_sites.
//
// A group of `lanes` lanes (a whole warp, or for SWAR 4 to 16 lanes: several rows per warp) owns
// one variant row and walks the row's population segments (runs of columns of one population,
// AlleleCountsPass::segments) in turn. For each segment a lane returns LaneCounts:
// KR allele columns (alleles 0..KR-1, compile-time indices so they stay in registers) and the
// CountColumn extras. Alleles in [KR, alleles) are rare (multi-allelic sites beyond KR): they go
// to a callback (the kernel adds them to per-warp shared-memory counters).
//
// Three ways to read a segment, as in afdist:
//  - SWAR, int8 diploid with alleles <= 4 (the common VCZ layout): the segment's aligned 16-byte
//    words (row_segments) are read coalesced across the group, U per lane in flight, and counted
//    two calls per 32-bit word with byte-wise predicates into counters on the FMA pipe;
//  - words, any layout whose call (ploidy × element bytes) divides 16: the same loads, per-call
//    math on the register copy;
//  - generic, any layout: one call per lane in turn with element loads.
// Calls before the first and after the last whole word of a segment take the per-call math.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

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
// A 32-bit word w holds two calls, bytes a0 b0 a1 b1 (a = first slot); wa = w << 8 brings each
// call's a byte under its b byte, so a call's predicates sit at its b byte (top bits 15 and 31,
// kSlotB). Byte predicates come out as the top bit of each byte, exact (no carries between
// bytes); with t = w & 0x7F..:
//   N = byte < 0: w & 0x80..
//   Ej = byte == j: ~(((t ^ j·0x01..) + 0x7F..) | w) & 0x80..
//   F = byte == -2 (fill): ~((t ^ 0x7E..) + 0x7F..) & w & 0x80..
//   EQ = a == b: the zero test of w ^ wa at kSlotB
// With Fa, Fb = F at a, at b (a call of length 1) and C = complete (a >= 0 and b >= 0 or a fill),
// the rules of add_call for a diploid call:
//   called += bytes >= 0, except a b after a fill         Ej likewise (allele j, j < KS)
//   hom_ref = E0a & (EQ | Fb)                            het_ref = C & !Fb & (E0a ^ E0b)
//   hom_alt = C & !E0a & (EQ | Fb)                       missing = calls with a slot (!Fa) - C
//   het_alt = calls with a slot minus the other four classes.
// Without fills (Fa = Fb = 0, the usual row; the number of calls is known) the formulas shorten;
// a warp-uniform branch picks. Every mask is added as the byte sum of its top bits (a dp4a on
// the FMA pipe, 128 per predicate) into a 32-bit counter, read once at the end of the segment.
// (Until 2026-11-25 the call predicates sat at the a byte, moved there by a right shift on the
// ALU pipe, and were counted in 8-bit fields folded every few steps: more registers, spills at
// four alleles, and 2-6 points slower; bench/NOTES-gpu-counts.md step 9.) The calls before the
// first and after the last whole word of a segment are counted from those words with the bytes
// outside the segment set to fills, and each step asks L2 for the next step's words (across a
// segment's end: the next segment's). These formulas are ALU-bound on the H100 (about 18 ALU
// operations per 32-bit word, 12 more on the FMA pipe), so each operation saved shows in the
// bandwidth; bench/NOTES-gpu-counts.md has the measurements.

namespace swar {  // kHigh, kLow7, kOnes: afdist_lanes.hpp

/// @brief @p acc + the sum of the four bytes of @p mask, for a mask with bits only at 7, 15, 23,
/// 31: 128 per byte predicate that holds. On the GPU one byte dot product with 1,1,1,1 (dp4a),
/// which runs on the FMA pipe beside the integer ALU, where a shift and an add would take two
/// ALU operations. (hi32(mask × (2^25 + 1)) + acc on the FMA pipe was slower on the H100: the
/// 64-bit addend of IMAD.HI costs registers and moves.)
VCZ_HD inline std::uint32_t add_top_bits(std::uint32_t acc, std::uint32_t mask) {
#if defined(__CUDA_ARCH__)
  return __dp4a(mask, kOnes, acc);
#else
  return acc + (mask & 0xFFu) + ((mask >> 8) & 0xFFu) + ((mask >> 16) & 0xFFu) + (mask >> 24);
#endif
}

/// @brief Count held by a counter of add_top_bits (128 per predicate).
VCZ_HD inline std::int32_t sum_top_bits(std::uint32_t c) {
  return static_cast<std::int32_t>(c >> 7);
}

/// @brief 4 bytes at @p p (4-byte aligned), on the GPU with the streaming cache hint.
VCZ_HD inline std::uint32_t load_word4(const std::byte* p) {
#if defined(__CUDA_ARCH__)
  return __ldcs(reinterpret_cast<const unsigned int*>(p));
#else
  std::uint32_t r;
  std::memcpy(&r, p, sizeof r);
  return r;
#endif
}

/// @brief Ask for the 16 bytes at @p p to be brought into L2 (no-op on the host).
VCZ_HD inline void prefetch_l2(const std::byte* p) {
#if defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}

/// @brief Ones in the bytes [lo, hi) of a 32-bit word (clamped to 0..4).
VCZ_HD inline std::uint32_t byte_range_mask(int lo, int hi) {
  auto ones = [](int n) -> std::uint32_t {
    return n <= 0 ? 0u : n >= 4 ? 0xFFFFFFFFu : (1u << (8 * n)) - 1u;
  };
  return ones(hi) & ~ones(lo);
}

/// @brief Most bytes of a row per lane of the SWAR kernel (rows up to kMaxLaneBytes × lanes
/// per row): its add_top_bits counters add at most 512 per 32-bit word and are never folded, so
/// a lane's share must stay under 2^32 / 512 words, with room for the two partial words (2^22
/// words: half that). launch_allele_counts takes the word path for longer rows.
inline constexpr std::int64_t kMaxLaneBytes = std::int64_t{1} << 24;

/// @brief Top bits of the b bytes of a word's two calls (bits 15 and 31), where the call
/// predicates sit.
inline constexpr std::uint32_t kSlotB = 0x80008000u;

/// @brief Counters of one lane, all add_top_bits counters (32 bits, 128 per predicate that holds,
/// read at the end: no folds).
template <int KS>
struct Counts {
  std::uint32_t ac[KS] = {};  ///< bytes equal to each allele
  std::uint32_t called = 0;   ///< bytes >= 0 (not after a fill)
  std::uint32_t hom_ref = 0, het_ref = 0, hom_alt = 0, complete = 0;  ///< call masks
  std::uint32_t slots = 0;  ///< calls with a slot (full formulas only)
  std::int32_t calls = 0;   ///< calls with a slot counted by the caller (no-fill formulas)

  /// @brief Top bits of the fill bytes of @p w.
  static VCZ_HD std::uint32_t fills(std::uint32_t w) {
    return ~(((w & kLow7) ^ 0x7E7E7E7Eu) + kLow7) & w & kHigh;
  }

  /// @brief Two calls; kFills false: @p f (the fills of w) is 0 (the caller counts the calls).
  template <bool kFills>
  VCZ_HD void add(std::uint32_t w, std::uint32_t f) {
    // Allele predicates Ej (byte == j). Four alleles: from "byte in 0..3" and the byte's low two
    // bits moved to bit 7 (shifts, which can run off the ALU pipe), one logic operation each;
    // two alleles: the zero tests of w and w ^ 0x01.. (as cheap, fewer registers).
    std::uint32_t e[KS];
    if constexpr (KS == 4) {
      const std::uint32_t small = ~(((w & 0x7C7C7C7Cu) + 0x7C7C7C7Cu) | w) & kHigh;
      const std::uint32_t b0 = w << 7, b1 = w << 6;
      e[0] = small & ~b0 & ~b1;
      e[1] = small & b0 & ~b1;
      e[2] = small & ~b0 & b1;
      e[3] = small & b0 & b1;
    } else {
      static_assert(KS == 2, "allele columns: 2 or 4");
      const std::uint32_t t = w & kLow7;
      e[0] = ~((t + kLow7) | w) & kHigh;
      e[1] = ~(((t ^ kOnes) + kLow7) | w) & kHigh;
    }
    // wa: each call's a byte moved under its b byte, where the call predicates sit (kSlotB); a
    // left shift, which can run on the FMA pipe (a right shift cannot). ea: a == 0 at kSlotB.
    const std::uint32_t wa = w << 8, d = w ^ wa;
    const std::uint32_t e0 = e[0], ea = e0 << 8;
    const std::uint32_t eq = ~(((d & kLow7) + kLow7) | d) & kSlotB;
    std::uint32_t keep = kHigh, c, hom;
    if constexpr (kFills) {
      const std::uint32_t fa = (f << 8) & kSlotB, fb = f & kSlotB;  // a, b is a fill
      keep = ~fa & kHigh;  // a b byte after a fill is no slot
      slots = add_top_bits(slots, ~fa & kSlotB);
      c = ~wa & (~w | fb) & kSlotB;
      hom = eq | fb;
      het_ref = add_top_bits(het_ref, (e0 ^ ea) & c & ~fb);
    } else {
      c = ~(w | wa) & kSlotB;
      hom = eq;
      het_ref = add_top_bits(het_ref, (e0 ^ ea) & c);
    }
    complete = add_top_bits(complete, c);
    hom_ref = add_top_bits(hom_ref, ea & hom);
    hom_alt = add_top_bits(hom_alt, c & ~ea & hom);
    called = add_top_bits(called, ~w & keep);
    VCZ_UNROLL
    for (int j = 0; j < KS; ++j) ac[j] = add_top_bits(ac[j], e[j] & keep);
  }

  /// @brief The counts: missing = calls with a slot that are not complete, het_alt = complete
  /// calls minus the other classes.
  VCZ_HD LaneCounts<KS> result() const {
    LaneCounts<KS> r;
    VCZ_UNROLL
    for (int j = 0; j < KS; ++j) r.v[j] = sum_top_bits(ac[j]);
    const std::int32_t hr = sum_top_bits(hom_ref), he = sum_top_bits(het_ref),
                       ha = sum_top_bits(hom_alt), co = sum_top_bits(complete);
    r.v[KS + stats::kCalled] = sum_top_bits(called);
    r.v[KS + stats::kHomRef] = hr;
    r.v[KS + stats::kHetRef] = he;
    r.v[KS + stats::kHomAlt] = ha;
    r.v[KS + stats::kMissing] = calls + sum_top_bits(slots) - co;
    r.v[KS + stats::kHetAlt] = co - hr - he - ha;
    return r;
  }
};

/// @brief Top bits of the bytes of @p w that may be fills: negative and even (-2, -4, ...,
/// -128; not the usual missing -1). A superset of the fills, two operations: enough to choose
/// the formulas (the full ones are exact for any byte).
VCZ_HD inline std::uint32_t maybe_fills(std::uint32_t w) {
  return w & ~(w << 7) & kHigh;
}

/// @brief Count the U words of one step (valid[u]: word u is real), warp-uniformly choosing
/// the no-fill formulas when no lane's words may hold a fill.
/// kMasked: words may be invalid (the last step of a segment); valid[u] holds for no lane once
/// it fails for one u (words base + lane + u × lanes), so the warp stops at the first word no
/// lane has instead of issuing its formulas for nothing.
template <int KS, int U, bool kMasked = false>
VCZ_HD inline void add_step(Counts<KS>& acc, const Word16 (&w)[U], const bool (&valid)[U]) {
  std::uint32_t any_fill = 0;
  int real = 0;
  VCZ_UNROLL
  for (int u = 0; u < U; ++u) {
    if (!valid[u]) continue;
    ++real;
    VCZ_UNROLL
    for (int j = 0; j < 4; ++j) any_fill |= w[u].w[j] & ~(w[u].w[j] << 7);  // maybe_fills
  }
  if (warp_any((any_fill & kHigh) != 0)) {  // mixed ploidy, odd values: the full formulas
    VCZ_UNROLL
    for (int u = 0; u < U; ++u) {
      if constexpr (kMasked)
        if (!warp_any(valid[u])) break;
      if (!valid[u]) continue;
      VCZ_UNROLL
      for (int j = 0; j < 4; ++j) acc.template add<true>(w[u].w[j], Counts<KS>::fills(w[u].w[j]));
    }
  } else {
    VCZ_UNROLL
    for (int u = 0; u < U; ++u) {
      if constexpr (kMasked)
        if (!warp_any(valid[u])) break;
      if (!valid[u]) continue;
      VCZ_UNROLL
      for (int j = 0; j < 4; ++j) acc.template add<false>(w[u].w[j], 0u);
    }
    acc.calls += 8 * real;
  }
}
}  // namespace swar

/// @brief Lane @p lane's share of an int8 diploid segment, 8 calls per 16-byte word: full steps
/// of U words per lane (loads in flight), then the remaining words in one masked step (until
/// 2026-11-25 one word per lane at a time: up to U more steps, each waiting for its loads; 0-4
/// points of the D2D copy in bench/NOTES-gpu-counts.md step 10); alleles >= KS
/// are counted only as called (use with alleles <= KS).
template <int KS, int U = kWordsInFlight>
VCZ_HD inline LaneCounts<KS> lane_counts_int8_diploid(const std::byte* seg, std::int64_t calls,
                                                      int alleles, int lane, int lanes,
                                                      const std::byte* prefetch_end = nullptr) {
  const RowSegments rs = row_segments(seg, calls * 2, 2);
  const std::int64_t per_step = std::int64_t{U} * lanes;
  // The lanes of a warp may count several rows at once (groups of `lanes` lanes), whose
  // segments can differ by a word (their alignment): the loops run the warp's common counts
  // (add_step asks the whole warp), words past a row's own end load as invalid.
  const std::int64_t full = warp_min_count(rs.words / per_step) * per_step;
  swar::Counts<KS> acc;
  for (std::int64_t base = 0; base < full; base += per_step) {
    Word16 w[U];
    bool valid[U];
    VCZ_UNROLL
    for (int u = 0; u < U; ++u) {
      w[u] = load_word16(rs.words_begin + 16 * (base + lane + std::int64_t{u} * lanes));
      valid[u] = true;
    }
    // The next step's words into L2 while this one is counted: past the segment's end they are
    // the next segment's first words, so its first loads do not wait for DRAM.
    VCZ_UNROLL
    for (int u = 0; u < U; ++u) {
      const std::byte* next =
          rs.words_begin + 16 * (base + per_step + lane + std::int64_t{u} * lanes);
      if (next < prefetch_end) swar::prefetch_l2(next);
    }
    swar::add_step<KS, U>(acc, w, valid);
  }
  // The rest (at most a step's words per row, as the rows of a warp differ by a word at most;
  // the loop is a guard): one masked step, so its loads are in flight together.
  const std::int64_t words = warp_max_count(rs.words);
  for (std::int64_t base = full; base < words; base += per_step) {
    Word16 w[U];
    bool valid[U];
    load_step(rs.words_begin, rs.words, base, lane, lanes, w, valid);
    swar::add_step<KS, U, true>(acc, w, valid);
  }
  // The calls before the first and after the last whole word: the 16-byte words holding them
  // (inside the buffer, which is readable up to its rounded end) with the bytes outside the
  // segment replaced by fills (-2, -2 is a call with no slot: it counts nowhere).
  const auto begin = reinterpret_cast<std::uintptr_t>(seg);
  const std::uintptr_t end = begin + static_cast<std::uintptr_t>(calls * 2);
  const std::uintptr_t head_word = begin & ~std::uintptr_t{15};
  const std::uintptr_t tail_word = end & ~std::uintptr_t{15};
  for (int q = lane; q < 8; q += lanes) {  // 8 lanes, one 32-bit word each
    // q / 4 = 0: the word holding the segment's start, if it starts inside a word; 1: the word
    // holding its end, if it ends inside another word. q % 4: which 32 bits of it.
    const int p = q / 4, j = q % 4;
    const std::uintptr_t word = p == 0 ? head_word : tail_word;
    const bool partial = p == 0
                             ? begin != head_word && calls > 0
                             : end != tail_word && (tail_word != head_word || begin == head_word);
    if (!partial) continue;
    const int lo = static_cast<int>(std::max(begin, word) - word) - 4 * j;
    const int hi = static_cast<int>(std::min(end, word + 16) - word) - 4 * j;
    const std::uint32_t keep = swar::byte_range_mask(lo, hi);
    if (keep == 0) continue;
    const std::uint32_t raw = swar::load_word4(
        seg + (static_cast<std::ptrdiff_t>(word) - static_cast<std::ptrdiff_t>(begin)) + 4 * j);
    const std::uint32_t x = (raw & keep) | (0xFEFEFEFEu & ~keep);
    acc.template add<true>(x, swar::Counts<KS>::fills(x));
  }
  (void)alleles;
  return acc.result();
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
