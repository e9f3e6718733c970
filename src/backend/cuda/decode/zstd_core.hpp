#pragma once
// zstd (RFC 8878) decoding of one task by one warp, written once for the device (DeviceWarp:
// zstd_decoder.cu) and the host (HostLane: zstd_decode.cpp; emulated warps in the tests). See
// warp.hpp for the rules every function here follows.
//
// How the work is split across the lanes of a warp:
//  - frame, block, literals and sequences headers, FSE table descriptions, Huffman weights and
//    the sequences bit stream are parsed by every lane redundantly (the same loads, broadcast by
//    the hardware; no divergence, no exchange of results);
//  - decoding tables are built by all lanes (FSE symbol spread with ballots, state numbering
//    with match_any; Huffman table fill by weight class) into the per-warp WarpShared;
//  - the 1 or 4 Huffman streams of a literals section are decoded by lanes 0..3, into the task's
//    literal buffer (global workspace);
//  - every sequence is executed by the whole warp: literals and match bytes split across lanes,
//    as aligned 4-byte words (128 bytes per round of the warp) when long enough; a match whose
//    offset is below its length is periodic: its first bytes are copied from before it (byte j
//    from j mod offset), the rest in word rounds from a multiple of the offset at least one
//    round back, so no lane reads bytes another lane is writing.
//
// Safety: every read is inside [src, src + src_size) and every write inside [dst, dst +
// dst_size) or the literal buffer (kLiteralBufferBytes); every loop is bounded by the input or
// output size; any inconsistency stops the task with a DecodeError.

#include <cstdint>
#include <cstring>

#if !defined(__CUDA_ARCH__)
#include <bit>
#endif

#include "backend/cuda/decode/decode_task.hpp"
#include "backend/cuda/decode/warp.hpp"
#include "backend/cuda/decode/zstd_decode.hpp"

// Constant tables: a host copy and, under nvcc, a __constant__ copy for the device pass.
#if defined(__CUDACC__)
#define VCZ_ZSTD_TABLE(type, name, n, ...)            \
  inline constexpr type name##_host[n] = __VA_ARGS__; \
  static __constant__ type name##_dev[n] = __VA_ARGS__;
#else
#define VCZ_ZSTD_TABLE(type, name, n, ...) inline constexpr type name##_host[n] = __VA_ARGS__;
#endif
#if defined(__CUDA_ARCH__)
#define VCZ_ZSTD_T(name) name##_dev
#else
#define VCZ_ZSTD_T(name) name##_host
#endif

namespace vczstats::cuda::decode::zstd {

using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using i16 = std::int16_t;
using i64 = std::int64_t;

#if !defined(__CUDA_ARCH__)
static_assert(std::endian::native == std::endian::little, "the host decoder assumes little-endian");
#endif

inline constexpr u32 kFrameMagic = 0xFD2FB528u;
inline constexpr u32 kSkippableMagic = 0x184D2A50u;  ///< low 4 bits free
inline constexpr i64 kBlockMax = 128 * 1024;         ///< largest block (decoded or not)
/// @brief Bytes of the literal buffer each task (warp) needs: a literals section regenerates at
/// most one block.
inline constexpr i64 kLiteralBufferBytes = kBlockMax;
inline constexpr int kHufMaxBits = 11;
inline constexpr int kLLMaxLog = 9, kOFMaxLog = 8, kMLMaxLog = 9, kWeightsMaxLog = 6;
inline constexpr int kLLMaxSymbol = 35, kOFMaxSymbol = 31, kMLMaxSymbol = 52;
inline constexpr int kWeightsMaxSymbol = 12;

// clang-format off
// Literal length and match length codes: baseline | extra bits << 24 (RFC 8878 3.1.1.3.2.1.1).
VCZ_ZSTD_TABLE(u32, kLLCode, 36, {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    16 | 1u << 24, 18 | 1u << 24, 20 | 1u << 24, 22 | 1u << 24, 24 | 2u << 24, 28 | 2u << 24,
    32 | 3u << 24, 40 | 3u << 24, 48 | 4u << 24, 64 | 6u << 24, 128 | 7u << 24, 256 | 8u << 24,
    512 | 9u << 24, 1024 | 10u << 24, 2048 | 11u << 24, 4096 | 12u << 24, 8192 | 13u << 24,
    16384 | 14u << 24, 32768 | 15u << 24, 65536 | 16u << 24})
VCZ_ZSTD_TABLE(u32, kMLCode, 53, {
    3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
    19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
    35 | 1u << 24, 37 | 1u << 24, 39 | 1u << 24, 41 | 1u << 24, 43 | 2u << 24, 47 | 2u << 24,
    51 | 3u << 24, 59 | 3u << 24, 67 | 4u << 24, 83 | 4u << 24, 99 | 5u << 24, 131 | 7u << 24,
    259 | 8u << 24, 515 | 9u << 24, 1027 | 10u << 24, 2051 | 11u << 24, 4099 | 12u << 24,
    8195 | 13u << 24, 16387 | 14u << 24, 32771 | 15u << 24, 65539 | 16u << 24})
// Predefined distributions (RFC 8878 3.1.1.3.2.2).
VCZ_ZSTD_TABLE(i16, kLLDefaultNorm, 36, {
    4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
    -1, -1, -1, -1})
VCZ_ZSTD_TABLE(i16, kMLDefaultNorm, 53, {
    1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1,
    -1, -1, -1, -1, -1})
VCZ_ZSTD_TABLE(i16, kOFDefaultNorm, 29, {
    1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1})
// clang-format on

/// @brief One row of an FSE decoding table (one 32-bit load).
struct alignas(4) FseEntry {
  u16 base;  ///< next state = base + the next nbits bits
  u8 nbits;
  u8 symbol;
};

/// @brief The three sequence tables, in the order of the sequences section header.
enum SeqTable : int { kLL = 0, kOF = 1, kML = 2 };
/// @brief Compression modes of a sequence table (and the kind of table a slot holds).
enum TableMode : int { kPredefined = 0, kRle = 1, kFseCompressed = 2, kRepeat = 3 };

/// @brief What one warp keeps in shared memory (about 10.5 KiB): the decoding tables, which
/// persist across the blocks of a frame (treeless literals, repeat mode), and scratch space.
struct WarpShared {
  u16 huf[1 << kHufMaxBits];  ///< Huffman: symbol | bits << 8, indexed by the next max_bits bits
  FseEntry ll[1 << kLLMaxLog];
  FseEntry ml[1 << kMLMaxLog];
  FseEntry of[1 << kOFMaxLog];
  FseEntry weights_table[1 << kWeightsMaxLog];
  i16 norm[64];       ///< normalized counts of the table being built
  u16 cum[65];        ///< cumulative positive counts
  u16 next[64];       ///< per symbol: the next state number
  u8 weights[256];    ///< Huffman weights by symbol
  u8 sorted[256];     ///< symbols sorted by weight, then value
  u16 huf_rank[16];   ///< symbols per weight
  u16 huf_start[16];  ///< first table row of each weight
  u16 huf_first[16];  ///< first index in sorted of each weight
  u32 result;         ///< a value the leader hands to the other lanes
};

// ---- loads ------------------------------------------------------------------------------------

VCZ_HD inline std::uintptr_t addr(const u8* p) {
  return reinterpret_cast<std::uintptr_t>(p);
}

/// @brief The 8 bytes at the 8-aligned @p p (one aligned load on the device).
VCZ_HD inline u64 load_aligned64(const u8* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const u64*>(p);
#else
  u64 v;
  std::memcpy(&v, p, 8);
  return v;
#endif
}

/// @brief 8 bytes at @p p, little-endian; [p, p + 8) must lie in [@p lo, @p hi). Read as the
/// two aligned words around p when both lie in [lo, hi), else byte by byte: no load leaves the
/// range. (The host runs the same code; only the aligned load itself differs.)
VCZ_HD inline u64 load_le64(const u8* p, const u8* lo, const u8* hi) {
  const std::uintptr_t a = addr(p), base = a & ~std::uintptr_t{7};
  const unsigned shift = static_cast<unsigned>(a - base) * 8u;
  if (shift == 0) return load_aligned64(p);
  if (base >= addr(lo) && base + 16 <= addr(hi)) {
    const u8* q = p - (a - base);
    return (load_aligned64(q) >> shift) | (load_aligned64(q + 8) << (64u - shift));
  }
  u64 v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/// @brief Store @p v at the 4-aligned @p p.
VCZ_HD inline void store_word(u8* p, u32 v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<u32*>(p) = v;
#else
  std::memcpy(p, &v, 4);
#endif
}

VCZ_HD inline u32 le16(const u8* p) {
  return u32(p[0]) | u32(p[1]) << 8;
}
VCZ_HD inline u32 le24(const u8* p) {
  return le16(p) | u32(p[2]) << 16;
}
VCZ_HD inline u32 le32(const u8* p) {
  return le24(p) | u32(p[3]) << 24;
}
/// @brief @p n (0..8) bytes at @p p, little-endian.
VCZ_HD inline u64 le_n(const u8* p, int n) {
  u64 v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

VCZ_HD inline u32 ll_code(u32 c) {
  return VCZ_ZSTD_T(kLLCode)[c];
}
VCZ_HD inline u32 ml_code(u32 c) {
  return VCZ_ZSTD_T(kMLCode)[c];
}
VCZ_HD inline const i16* default_norm(int table) {
  return table == kLL ? VCZ_ZSTD_T(kLLDefaultNorm)
                      : (table == kOF ? VCZ_ZSTD_T(kOFDefaultNorm) : VCZ_ZSTD_T(kMLDefaultNorm));
}

// ---- bit streams ------------------------------------------------------------------------------

/// @brief A bit stream read backwards (FSE and Huffman streams): the last byte holds the end mark
/// (its highest set bit), bits are taken from the end towards the start. Reading past the start
/// yields zeros and makes nbits negative.
struct BackwardBits {
  const u8* base = nullptr;  ///< first byte of the stream
  const u8* end = nullptr;   ///< one past its last byte
  i64 left = 0;              ///< bytes not loaded yet: base[0, left)
  u64 acc = 0;               ///< unread bits, the next one at bit 63, zeros below the valid ones
  int nbits = 0;             ///< valid bits in acc
};

/// @brief Load bytes until at least 57 bits are valid or the stream is exhausted.
VCZ_HD inline void bits_refill(BackwardBits& b) {
  if (b.nbits > 56) return;
  if (b.left >= 8) {
    const int k = (64 - b.nbits) >> 3;  // whole bytes that fit: 1..8
    const u64 v = load_le64(b.base + b.left - 8, b.base, b.end) >> (64 - 8 * k);
    b.acc |= v << (64 - b.nbits - 8 * k);
    b.nbits += 8 * k;
    b.left -= k;
    return;
  }
  while (b.left > 0 && b.nbits <= 56) {
    --b.left;
    b.acc |= u64(b.base[b.left]) << (56 - b.nbits);
    b.nbits += 8;
  }
}

VCZ_HD inline void bits_ensure(BackwardBits& b, int n) {
  if (b.nbits < n) bits_refill(b);
}
/// @brief The next @p n (0..32) bits, not consumed.
VCZ_HD inline u32 bits_peek(const BackwardBits& b, int n) {
  return static_cast<u32>((b.acc >> 1) >> (63 - n));
}
VCZ_HD inline void bits_skip(BackwardBits& b, int n) {
  b.acc <<= n;
  b.nbits -= n;
}
/// @brief Read @p n (0..32) bits; bits_ensure(n) must have been called.
VCZ_HD inline u32 bits_read(BackwardBits& b, int n) {
  const u32 v = bits_peek(b, n);
  bits_skip(b, n);
  return v;
}
/// @brief Every bit read, none beyond.
VCZ_HD inline bool bits_done(const BackwardBits& b) {
  return b.left == 0 && b.nbits == 0;
}
/// @brief More bits read than the stream holds.
VCZ_HD inline bool bits_overrun(const BackwardBits& b) {
  return b.nbits < 0;
}

/// @brief Start reading the stream [p, p + len) backwards; false if it is empty or its last byte
/// has no end mark.
VCZ_HD inline bool bits_init(BackwardBits& b, const u8* p, i64 len) {
  if (len < 1) return false;
  const u32 last = p[len - 1];
  if (last == 0) return false;
  b.base = p;
  b.end = p + len;
  b.left = len;
  b.acc = 0;
  b.nbits = 0;
  bits_refill(b);
  bits_skip(b, 8 - highbit32(last));  // the padding zeros and the end mark
  return true;
}

/// @brief A bit stream read forwards, little-endian (FSE table descriptions). Bits beyond the
/// end read as zeros; the caller checks pos against the size.
struct ForwardBits {
  const u8* p;
  i64 size;
  i64 pos;  ///< in bits
};

/// @brief The next @p n (1..16) bits.
VCZ_HD inline u32 fwd_peek(const ForwardBits& f, int n) {
  const i64 byte = f.pos >> 3;
  u32 v = 0;
  for (int i = 0; i < 4; ++i)
    if (byte + i < f.size) v |= u32(f.p[byte + i]) << (8 * i);
  return (v >> (f.pos & 7)) & ((1u << n) - 1u);
}

// ---- FSE tables -------------------------------------------------------------------------------

/// @brief A parsed FSE table description.
struct FseDescription {
  int log = 0;    ///< accuracy log
  int nsym = 0;   ///< symbols described (0 .. nsym - 1)
  i64 bytes = 0;  ///< bytes it took
};

/// @brief Read an FSE table description (RFC 8878 4.1.1) from [p, p + avail) into @p norm
/// (leader writes; the caller syncs before reading it).
template <class W>
VCZ_HD DecodeError fse_read_description(const W& w, const u8* p, i64 avail, int max_symbol,
                                        int max_log, i16* norm, FseDescription& d) {
  if (avail < 1) return DecodeError::Corrupt;
  ForwardBits f{p, avail, 0};
  const int log = static_cast<int>(fwd_peek(f, 4)) + 5;
  f.pos = 4;
  if (log > max_log) return DecodeError::Corrupt;
  int remaining = 1 << log;
  int s = 0;
  while (remaining > 0) {
    if (s > max_symbol) return DecodeError::Corrupt;
    const int nb = highbit32(static_cast<u32>(remaining + 1)) + 1;
    const u32 raw = fwd_peek(f, nb);
    const u32 low_mask = (1u << (nb - 1)) - 1u;
    const u32 threshold = (1u << nb) - 1u - static_cast<u32>(remaining + 1);
    u32 value;
    if ((raw & low_mask) < threshold) {
      value = raw & low_mask;
      f.pos += nb - 1;
    } else {
      value = raw > low_mask ? raw - threshold : raw;
      f.pos += nb;
    }
    const int proba = static_cast<int>(value) - 1;
    remaining -= proba < 0 ? 1 : proba;
    if (w.leader()) norm[s] = static_cast<i16>(proba);
    ++s;
    if (proba == 0) {
      for (;;) {  // runs of zero probabilities: 2-bit repeat counts, 3 = more follow
        const int rep = static_cast<int>(fwd_peek(f, 2));
        f.pos += 2;
        if (s + rep > max_symbol + 1 || f.pos > 8 * avail) return DecodeError::Corrupt;
        for (int j = 0; j < rep; ++j, ++s)
          if (w.leader()) norm[s] = 0;
        if (rep != 3) break;
      }
    }
    if (f.pos > 8 * avail) return DecodeError::Corrupt;
  }
  d.log = log;
  d.nsym = s;
  d.bytes = (f.pos + 7) >> 3;
  return DecodeError::Ok;
}

/// @brief Build the decoding table of @p nsym normalized counts (in sh.norm, summing to 1 <<
/// log, visible to all lanes) into @p table (RFC 8878 4.1.1). Syncs before returning.
template <class W>
VCZ_HD void fse_build(const W& w, WarpShared& sh, int nsym, int log, FseEntry* table) {
  const int size = 1 << log;
  if (w.leader()) {
    // Cumulative counts of the positive symbols; "less than 1" symbols take the last rows.
    int high = size;
    int c = 0;
    for (int s = 0; s < nsym; ++s) {
      sh.cum[s] = static_cast<u16>(c);
      const int n = sh.norm[s];
      if (n < 0) {
        --high;
        table[high] = FseEntry{0, static_cast<u8>(log), static_cast<u8>(s)};
        sh.next[s] = 1;
      } else {
        c += n;
        sh.next[s] = static_cast<u16>(n);
      }
    }
    sh.cum[nsym] = static_cast<u16>(c);  // == high
  }
  w.sync();
  const int high = sh.cum[nsym];
  const int step = (size >> 1) + (size >> 3) + 3;
  const int mask = size - 1;
  // Spread: the k-th cell handed out (symbols in order, each as many cells as its count) goes to
  // the k-th position of the walk i * step (mod size) that is below high.
  int handed = 0;
  for (int i0 = 0; i0 < size; i0 += W::kWidth) {
    const int i = i0 + w.lane();
    const int pos = (i * step) & mask;
    const bool valid = i < size && pos < high;
    const u32 votes = w.ballot(valid);
    if (valid) {
      const int k = handed + popcount32(votes & w.lanemask_lt());
      int lo = 0, hi = nsym - 1;  // the largest symbol whose cells start at or before k
      while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (sh.cum[mid] <= k)
          lo = mid;
        else
          hi = mid - 1;
      }
      table[pos].symbol = static_cast<u8>(lo);
    }
    handed += popcount32(votes);
  }
  w.sync();
  // Number each symbol's cells in state order: the r-th of a symbol with count n gets x = n + r,
  // reads log - highbit(x) bits and has base (x << bits) - size.
  for (int u0 = 0; u0 < high; u0 += W::kWidth) {
    const int u = u0 + w.lane();
    const bool in = u < high;
    const u32 s = in ? table[u].symbol : 0xFFFFFFFFu;
    const u32 peers = w.match_any(s);
    int x = 0;
    if (in) x = sh.next[s] + popcount32(peers & w.lanemask_lt());
    w.sync();
    if (in) {
      if ((peers >> w.lane()) == 1u)  // the last of its symbol in this round
        sh.next[s] = static_cast<u16>(sh.next[s] + popcount32(peers));
      const int nb = log - highbit32(static_cast<u32>(x));
      table[u].nbits = static_cast<u8>(nb);
      table[u].base = static_cast<u16>((x << nb) - size);
    }
    w.sync();
  }
  w.sync();  // (high may be 0: then the loop above did not sync)
}

// ---- Huffman ----------------------------------------------------------------------------------

/// @brief Read a Huffman tree description (RFC 8878 4.2.1) at [p, p + avail) and build sh.huf.
/// Returns the table's max_bits in @p max_bits and the bytes used in @p used.
template <class W>
VCZ_HD DecodeError huf_read_table(const W& w, WarpShared& sh, const u8* p, i64 avail, int& max_bits,
                                  i64& used, ZstdDecodeStats* stats) {
  if (avail < 1) return DecodeError::Corrupt;
  const u32 head = p[0];
  int nweights = 0;
  if (head >= 128) {  // direct: 4 bits per weight
    nweights = static_cast<int>(head) - 127;
    const i64 bytes = (nweights + 1) / 2;
    if (bytes > avail - 1) return DecodeError::Corrupt;
    for (int i = w.lane(); i < nweights; i += W::kWidth) {
      const u32 b = p[1 + i / 2];
      sh.weights[i] = static_cast<u8>(i & 1 ? b & 15u : b >> 4);
    }
    used = 1 + bytes;
    if (stats && w.leader()) ++stats->huffman_weights[1];
  } else {  // FSE-compressed weights, two interleaved states
    const i64 size = head;
    if (size > avail - 1) return DecodeError::Corrupt;
    FseDescription d;
    const DecodeError e =
        fse_read_description(w, p + 1, size, kWeightsMaxSymbol, kWeightsMaxLog, sh.norm, d);
    if (e != DecodeError::Ok) return e;
    w.sync();
    fse_build(w, sh, d.nsym, d.log, sh.weights_table);
    BackwardBits b;
    if (!bits_init(b, p + 1 + d.bytes, size - d.bytes)) return DecodeError::Corrupt;
    bits_ensure(b, 2 * kWeightsMaxLog);
    u32 state = bits_read(b, d.log);  // the state whose turn it is
    u32 other = bits_read(b, d.log);
    if (bits_overrun(b)) return DecodeError::Corrupt;
    // Alternate the two states; when an update reads past the stream's start, the other
    // state's symbol is the last weight.
    for (;;) {
      if (nweights >= 255) return DecodeError::Corrupt;
      const FseEntry cell = sh.weights_table[state];
      if (w.leader()) sh.weights[nweights] = cell.symbol;
      ++nweights;
      bits_ensure(b, cell.nbits);
      const u32 next = cell.base + bits_read(b, cell.nbits);
      state = other;
      other = next;
      if (bits_overrun(b)) {
        if (nweights >= 255) return DecodeError::Corrupt;
        if (w.leader()) sh.weights[nweights] = sh.weights_table[state].symbol;
        ++nweights;
        break;
      }
    }
    used = 1 + size;
    if (stats && w.leader()) ++stats->huffman_weights[0];
  }
  w.sync();
  // The leader completes the weights (the last one is implied) and sorts the symbols.
  if (w.leader()) {
    u32 result = 0;
    for (int i = 0; i < 16; ++i) sh.huf_rank[i] = 0;
    u32 sum = 0;
    bool bad = false;
    for (int i = 0; i < nweights; ++i) {
      const u32 wt = sh.weights[i];
      if (wt > kHufMaxBits) {
        bad = true;
        break;
      }
      ++sh.huf_rank[wt];
      if (wt) sum += 1u << (wt - 1);
    }
    if (!bad && sum > 0) {
      const int maxb = highbit32(sum) + 1;
      const u32 rest = (1u << maxb) - sum;
      if (maxb <= kHufMaxBits && (rest & (rest - 1)) == 0) {
        const int last = highbit32(rest) + 1;
        sh.weights[nweights] = static_cast<u8>(last);
        ++sh.huf_rank[last];
        if (sh.huf_rank[1] >= 2) {
          u32 pos = 0, idx = 0;
          for (int wt = 1; wt <= maxb; ++wt) {
            sh.huf_start[wt] = static_cast<u16>(pos);
            sh.huf_first[wt] = static_cast<u16>(idx);
            pos += u32(sh.huf_rank[wt]) << (wt - 1);
            idx += sh.huf_rank[wt];
          }
          u16* cursor = sh.next;  // free scratch here
          for (int wt = 1; wt <= maxb; ++wt) cursor[wt] = sh.huf_first[wt];
          for (int s = 0; s <= nweights; ++s) {
            const int wt = sh.weights[s];
            if (wt) sh.sorted[cursor[wt]++] = static_cast<u8>(s);
          }
          result = static_cast<u32>(maxb);
        }
      }
    }
    sh.result = result;
  }
  w.sync();
  max_bits = static_cast<int>(sh.result);
  if (max_bits == 0) return DecodeError::Corrupt;
  // Fill: weight wt takes 2^(wt-1) rows per symbol, lightest weights first.
  for (int wt = 1; wt <= max_bits; ++wt) {
    const int start = sh.huf_start[wt];
    const int first = sh.huf_first[wt];
    const int rows = sh.huf_rank[wt] << (wt - 1);
    const u32 bits = static_cast<u32>(max_bits + 1 - wt) << 8;
    for (int j = w.lane(); j < rows; j += W::kWidth)
      sh.huf[start + j] = static_cast<u16>(sh.sorted[first + (j >> (wt - 1))] | bits);
  }
  w.sync();
  return DecodeError::Ok;
}

/// @brief Decode one symbol of a Huffman stream (bits_refill before).
VCZ_HD inline u32 huf_symbol(BackwardBits& b, const u16* table, int max_bits) {
  const u32 e = table[bits_peek(b, max_bits)];
  bits_skip(b, static_cast<int>(e >> 8));
  return e & 0xFFu;
}

/// @brief Decode one Huffman stream [p, p + len) into @p n bytes at @p out (one lane); false if
/// the stream is malformed or not consumed exactly. Whole 4-byte words are stored where the
/// output is aligned. After a refill, 4 symbols (44 bits at most) are in the container unless
/// the stream is exhausted, when zeros are read past its start (and the end check fails).
VCZ_HD inline bool huf_decode_stream(const u16* table, int max_bits, const u8* p, i64 len, u8* out,
                                     i64 n) {
  BackwardBits b;
  if (!bits_init(b, p, len)) return false;
  i64 i = 0;
  for (; i < n && (reinterpret_cast<std::uintptr_t>(out + i) & 3u) != 0; ++i) {
    bits_refill(b);
    out[i] = static_cast<u8>(huf_symbol(b, table, max_bits));
  }
  for (; i + 4 <= n; i += 4) {
    bits_refill(b);
    u32 v = huf_symbol(b, table, max_bits);
    v |= huf_symbol(b, table, max_bits) << 8;
    v |= huf_symbol(b, table, max_bits) << 16;
    v |= huf_symbol(b, table, max_bits) << 24;
    store_word(out + i, v);
  }
  for (; i < n; ++i) {
    bits_refill(b);
    out[i] = static_cast<u8>(huf_symbol(b, table, max_bits));
  }
  return bits_done(b);
}

// ---- copies -----------------------------------------------------------------------------------

/// @brief Bytes a warp's round of word copies spans (32 lanes x 4 bytes). Overlapping matches
/// with at least this offset are copied in word rounds; the same threshold is used for every
/// warp width, so the host runs the device's branches.
inline constexpr i64 kWordSpan = 128;
/// @brief Copies shorter than this go byte by byte.
inline constexpr i64 kWordCopyMin = 64;

/// @brief The 4 bytes at the 4-aligned @p p, little-endian; bytes outside [lo, hi) are not read
/// (they read as 0).
VCZ_HD inline u32 load_word(const u8* p, const u8* lo, const u8* hi) {
  const std::uintptr_t a = addr(p), l = addr(lo), h = addr(hi);
  if (a >= l && a + 4 <= h) {
#if defined(__CUDA_ARCH__)
    return *reinterpret_cast<const u32*>(p);
#else
    u32 v;
    std::memcpy(&v, p, 4);
    return v;
#endif
  }
  u32 v = 0;
  for (unsigned k = 0; k < 4; ++k)
    if (a + k >= l && a + k < h) v |= u32(*reinterpret_cast<const u8*>(a + k)) << (8 * k);
  return v;
}

/// @brief Bytes @p shift / 8 .. of the 8 bytes lo_word, hi_word (shift 0, 8, 16 or 24).
VCZ_HD inline u32 funnel(u32 lo_word, u32 hi_word, unsigned shift) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(lo_word, hi_word, shift);
#else
  return shift ? (lo_word >> shift) | (hi_word << (32 - shift)) : lo_word;
#endif
}

template <class W>
VCZ_HD inline void copy_bytes(const W& w, u8* d, const u8* s, i64 n) {
  for (i64 j = w.lane(); j < n; j += W::kWidth) d[j] = s[j];
}

/// @brief Copy @p n bytes from @p s to @p d, whole aligned 4-byte words stored, read as aligned
/// words too (two per stored word when the alignments differ); the source bytes lie in [lo, hi)
/// and no load leaves that range. Either the source does not overlap the destination, or
/// (@p rounds) it lies at least kWordSpan bytes before it: then the warp syncs after each round
/// of W::kWidth words, and a round reads only bytes before its own start.
template <class W>
VCZ_HD inline void copy_words(const W& w, u8* d, const u8* s, i64 n, const u8* lo, const u8* hi,
                              bool rounds) {
  if (n < kWordCopyMin) {
    copy_bytes(w, d, s, n);
    return;
  }
  const i64 head = static_cast<i64>((0u - addr(d)) & 3u);
  for (i64 j = w.lane(); j < head; j += W::kWidth) d[j] = s[j];
  if (rounds) w.sync();  // the first round may read the head
  const i64 words = (n - head) >> 2;
  u8* dw = d + head;
  const u8* sw = s + head;
  const unsigned shift = static_cast<unsigned>(addr(sw) & 3u) * 8u;
  const u8* sa = sw - (addr(sw) & 3u);
  for (i64 k0 = 0; k0 < words; k0 += W::kWidth) {
    const u8* bound = rounds ? dw + 4 * k0 : hi;
    const i64 k = k0 + w.lane();
    if (k < words) {
      const u8* q = sa + 4 * k;
      const u32 x = load_word(q, lo, bound);
      const u32 y = shift ? load_word(q + 4, lo, bound) : 0u;
      store_word(dw + 4 * k, funnel(x, y, shift));
    }
    if (rounds) w.sync();
  }
  for (i64 j = head + 4 * words + w.lane(); j < n; j += W::kWidth) d[j] = s[j];
}

template <class W>
VCZ_HD inline void fill_bytes(const W& w, u8* d, u8 v, i64 n) {
  if (n < kWordCopyMin) {
    for (i64 j = w.lane(); j < n; j += W::kWidth) d[j] = v;
    return;
  }
  const i64 head = static_cast<i64>((0u - addr(d)) & 3u);
  for (i64 j = w.lane(); j < head; j += W::kWidth) d[j] = v;
  const i64 words = (n - head) >> 2;
  const u32 v4 = v * 0x01010101u;
  for (i64 k = w.lane(); k < words; k += W::kWidth) store_word(d + head + 4 * k, v4);
  for (i64 j = head + 4 * words + w.lane(); j < n; j += W::kWidth) d[j] = v;
}

/// @brief Copy a match of @p n bytes from @p off bytes back; the bytes before @p d from
/// @p lo on are the output so far. When off < n the output is periodic with period off: byte j
/// is read from d - off + (j mod off), before d, never from bytes the copy itself writes. Once
/// the first m * off >= kWordSpan bytes are written, the rest repeats with period m * off, far
/// enough back for word rounds.
template <class W>
VCZ_HD inline void copy_match(const W& w, u8* d, i64 off, i64 n, const u8* lo) {
  const u8* s = d - off;
  if (off >= n) {
    copy_words(w, d, s, n, lo, d, false);
    return;
  }
  if (off == 1) {
    fill_bytes(w, d, s[0], n);
    return;
  }
  if (off >= kWordSpan) {
    copy_words(w, d, s, n, lo, d, true);
    return;
  }
  const i64 period = off * ((kWordSpan + off - 1) / off);  // >= kWordSpan
  const i64 first = n < period ? n : period;
  const u32 o = static_cast<u32>(off);
  u32 r = static_cast<u32>(w.lane()) % o;
  const u32 step = static_cast<u32>(W::kWidth) % o;
  for (i64 j = w.lane(); j < first; j += W::kWidth) {
    d[j] = s[r];
    r += step;
    if (r >= o) r -= o;
  }
  if (n > period) {
    w.sync();
    copy_words(w, d + period, d, n - period, lo, d + period, true);
  }
}

// ---- frames and blocks ------------------------------------------------------------------------

/// @brief One task as the decoder sees it.
struct TaskView {
  const u8* src;
  i64 src_size;
  u8* dst;
  i64 dst_size;
  u8* lit;  ///< literal buffer, kLiteralBufferBytes
};

/// @brief State carried across the blocks of a frame (identical in every lane).
struct FrameState {
  i64 start = 0;                                     ///< output offset of the frame's first byte
  i64 limit = 0;                                     ///< output may not pass this offset...
  DecodeError exceed = DecodeError::OutputOverflow;  ///< ...or this is the error
  i64 block_max = 0;                                 ///< largest block
  u64 rep0 = 1, rep1 = 4, rep2 = 8;                  ///< recent offsets, most recent first
  int huf_bits = 0;                                  ///< 0: no Huffman table yet
  int table_log[3] = {-1, -1, -1};                   ///< -1: no table yet
  int table_kind[3] = {-1, -1, -1};                  ///< TableMode the table was made from
};

/// @brief Whether @p size passes the frame's block limit (Corrupt); counted for the stats when
/// libzstd 1.5.4 does not check it: a size that passes only a window below 128 KiB, or any size
/// of a raw or RLE block or of a block's decoded output (@p any_size).
VCZ_HD inline bool over_block_max(const FrameState& fs, i64 size, ZstdDecodeStats* stats,
                                  bool any_size = false) {
  if (size <= fs.block_max) return false;
  if (stats && (any_size || size <= kBlockMax)) ++stats->libzstd_unchecked;
  return true;
}

/// @brief The error for output that would reach @p end, or Ok.
VCZ_HD inline DecodeError output_check(const FrameState& fs, i64 block_start, i64 end,
                                       ZstdDecodeStats* stats) {
  if (end > fs.limit) return fs.exceed;
  if (over_block_max(fs, end - block_start, stats, true)) return DecodeError::Corrupt;
  return DecodeError::Ok;
}

/// @brief Set up sequence table @p t for @p mode from [p, p + avail); @p used gets the bytes
/// read.
template <int t, class W>
VCZ_HD DecodeError seq_table(const W& w, WarpShared& sh, FrameState& fs, int mode, const u8* p,
                             i64 avail, i64& used) {
  FseEntry* table = t == kLL ? sh.ll : (t == kOF ? sh.of : sh.ml);
  const int max_symbol = t == kLL ? kLLMaxSymbol : (t == kOF ? kOFMaxSymbol : kMLMaxSymbol);
  used = 0;
  switch (mode) {
    case kPredefined: {
      if (fs.table_kind[t] == kPredefined) return DecodeError::Ok;  // already built
      const int nsym = t == kLL ? 36 : (t == kOF ? 29 : 53);
      const int log = t == kOF ? 5 : 6;
      const i16* norm = default_norm(t);
      if (w.leader())
        for (int s = 0; s < nsym; ++s) sh.norm[s] = norm[s];
      w.sync();
      fse_build(w, sh, nsym, log, table);
      fs.table_log[t] = log;
      break;
    }
    case kRle: {
      if (avail < 1) return DecodeError::Corrupt;
      const int s = p[0];
      if (s > max_symbol) return DecodeError::Corrupt;
      if (w.leader()) table[0] = FseEntry{0, 0, static_cast<u8>(s)};
      w.sync();
      fs.table_log[t] = 0;
      used = 1;
      break;
    }
    case kFseCompressed: {
      FseDescription d;
      const int max_log = t == kOF ? kOFMaxLog : kLLMaxLog;
      const DecodeError e = fse_read_description(w, p, avail, max_symbol, max_log, sh.norm, d);
      if (e != DecodeError::Ok) return e;
      w.sync();
      fse_build(w, sh, d.nsym, d.log, table);
      fs.table_log[t] = d.log;
      used = d.bytes;
      break;
    }
    default:  // repeat
      if (fs.table_log[t] < 0) return DecodeError::Corrupt;
      return DecodeError::Ok;
  }
  fs.table_kind[t] = mode;
  return DecodeError::Ok;
}

/// @brief Read the literals section at [p, p + avail): @p lits / @p nlits get the literals
/// (in the source for raw literals, else in the literal buffer), @p used the section's size.
template <class W>
VCZ_HD DecodeError read_literals(const W& w, WarpShared& sh, FrameState& fs, const TaskView& t,
                                 const u8* p, i64 avail, const u8*& lits, i64& nlits, i64& used,
                                 ZstdDecodeStats* stats) {
  if (avail < 1) return DecodeError::Corrupt;
  const u32 b0 = p[0];
  const int type = static_cast<int>(b0 & 3u);
  const int format = static_cast<int>((b0 >> 2) & 3u);
  if (type < 2) {  // raw or RLE
    i64 head, size;
    if (format == 0 || format == 2) {
      head = 1;
      size = b0 >> 3;
    } else if (format == 1) {
      head = 2;
      if (avail < 2) return DecodeError::Corrupt;
      size = (b0 >> 4) + (u32(p[1]) << 4);
    } else {
      head = 3;
      if (avail < 3) return DecodeError::Corrupt;
      size = (b0 >> 4) + (u32(p[1]) << 4) + (u32(p[2]) << 12);
    }
    if (over_block_max(fs, size, stats)) return DecodeError::Corrupt;
    if (type == 0) {
      if (size > avail - head) return DecodeError::Corrupt;
      lits = p + head;
      used = head + size;
    } else {
      if (avail < head + 1) return DecodeError::Corrupt;
      fill_bytes(w, t.lit, p[head], size);
      lits = t.lit;
      used = head + 1;
    }
    nlits = size;
    if (stats && w.leader()) ++stats->literals[type];
    return DecodeError::Ok;
  }
  // Huffman-coded, with a tree (2) or the previous one (3).
  const int head = format < 2 ? 3 : format + 2;
  if (avail < head) return DecodeError::Corrupt;
  const u64 h = le_n(p, head);
  const int size_bits = format < 2 ? 10 : (format == 2 ? 14 : 18);
  const u64 size_mask = (u64{1} << size_bits) - 1;
  const i64 regen = static_cast<i64>((h >> 4) & size_mask);
  const i64 comp = static_cast<i64>((h >> (4 + size_bits)) & size_mask);
  const int streams = format == 0 ? 1 : 4;
  if (over_block_max(fs, regen, stats) || comp > avail - head) return DecodeError::Corrupt;
  const u8* q = p + head;
  i64 qn = comp;
  if (type == 2) {
    int max_bits = 0;
    i64 tree = 0;
    const DecodeError e = huf_read_table(w, sh, q, qn, max_bits, tree, stats);
    if (e != DecodeError::Ok) return e;
    fs.huf_bits = max_bits;
    q += tree;
    qn -= tree;
  } else if (fs.huf_bits == 0) {
    return DecodeError::Corrupt;  // treeless without a previous table
  }
  // 4 streams: a jump table of 3 sizes, then the streams; each regenerates seg bytes but the
  // last, which regenerates what remains.
  i64 len0 = qn, len1 = 0, len2 = 0, seg = regen;
  if (streams == 4) {
    if (qn < 10 || regen < 6) return DecodeError::Corrupt;
    len0 = le16(q);
    len1 = le16(q + 2);
    len2 = le16(q + 4);
    if (qn - 6 - len0 - len1 - len2 < 1) return DecodeError::Corrupt;
    seg = (regen + 3) / 4;
  }
  bool bad = false;
  for (int s = w.lane(); s < streams; s += W::kWidth) {
    i64 in_off = 0, in_len = len0;
    if (streams == 4) {
      in_off = 6 + (s > 0 ? len0 : 0) + (s > 1 ? len1 : 0) + (s > 2 ? len2 : 0);
      in_len = s == 0 ? len0 : (s == 1 ? len1 : (s == 2 ? len2 : qn - in_off));
    }
    const i64 out_len = s == 3 ? regen - 3 * seg : seg;
    bad |= !huf_decode_stream(sh.huf, fs.huf_bits, q + in_off, in_len, t.lit + s * seg, out_len);
  }
  if (w.any(bad)) {
    if (stats && w.leader() && streams == 4) ++stats->libzstd_unchecked;
    return DecodeError::Corrupt;
  }
  lits = t.lit;
  nlits = regen;
  used = head + comp;
  if (stats && w.leader()) ++stats->literals[2 + (type == 3 ? 2 : 0) + (streams == 4 ? 1 : 0)];
  return DecodeError::Ok;
}

/// @brief Decode and execute the sequences of a block: the bit stream is [p, p + len).
template <class W>
VCZ_HD DecodeError run_sequences(const W& w, const WarpShared& sh, FrameState& fs,
                                 const TaskView& t, const u8* p, i64 len, i64 nseq, const u8* lits,
                                 i64 nlits, i64 block_start, i64& out, ZstdDecodeStats* stats) {
  BackwardBits b;
  if (!bits_init(b, p, len)) return DecodeError::Corrupt;
  bits_ensure(b, kLLMaxLog + kOFMaxLog + kMLMaxLog);
  u32 ls = bits_read(b, fs.table_log[kLL]);
  u32 os = bits_read(b, fs.table_log[kOF]);
  u32 ms = bits_read(b, fs.table_log[kML]);
  i64 lit_pos = 0;
  const u8* const lits_end = lits + nlits;
  int last_update = 0;  // bits the last sequence's state update would read (counted for stats)
  for (i64 i = 0; i < nseq; ++i) {
    const FseEntry le = sh.ll[ls], oe = sh.of[os], me = sh.ml[ms];
    // Extra bits: offset, match length, literal length.
    const int ofc = oe.symbol;
    bits_ensure(b, ofc);
    const u64 offset_value = (u64{1} << ofc) + bits_read(b, ofc);
    const u32 mlx = ml_code(me.symbol);
    bits_ensure(b, static_cast<int>(mlx >> 24));
    const i64 ml = (mlx & 0xFFFFFFu) + bits_read(b, static_cast<int>(mlx >> 24));
    const u32 llx = ll_code(le.symbol);
    bits_ensure(b, static_cast<int>(llx >> 24));
    const i64 ll = (llx & 0xFFFFFFu) + bits_read(b, static_cast<int>(llx >> 24));
    if (stats && i + 1 == nseq) last_update = le.nbits + me.nbits + oe.nbits;
    if (i + 1 < nseq) {  // state updates: literal length, match length, offset
      bits_ensure(b, le.nbits + me.nbits + oe.nbits);
      ls = le.base + bits_read(b, le.nbits);
      ms = me.base + bits_read(b, me.nbits);
      os = oe.base + bits_read(b, oe.nbits);
    }
    // Read past the stream's start (RFC 8878 3.1.1.3.2.1.2: it is consumed exactly): stop before
    // the sequence runs, whatever the output buffer's size (else bits that are not in the input
    // could run sequences until the output overflows, and the error would say so instead).
    if (bits_overrun(b)) {
      if (stats && w.leader()) {
        stats->unread_sequence_bits = 0;
        stats->last_update_bits = static_cast<u64>(last_update);
        ++stats->libzstd_unchecked;
      }
      return DecodeError::Corrupt;
    }
    // Offset: a new one, or a repeat code (shifted by one when the literal length is 0).
    u64 off;
    if (offset_value > 3) {
      off = offset_value - 3;
      fs.rep2 = fs.rep1;
      fs.rep1 = fs.rep0;
      fs.rep0 = off;
    } else {
      const int idx = static_cast<int>(offset_value) - (ll != 0 ? 1 : 0);  // 0..3
      if (stats && w.leader()) ++stats->repeat_offsets[ll == 0][offset_value - 1];
      if (idx == 0) {
        off = fs.rep0;
      } else {
        off = idx == 1 ? fs.rep1 : (idx == 2 ? fs.rep2 : fs.rep0 - 1);
        if (idx != 1) fs.rep2 = fs.rep1;
        fs.rep1 = fs.rep0;
        fs.rep0 = off;
      }
    }
    if (ll > nlits - lit_pos) return DecodeError::Corrupt;
    const DecodeError e = output_check(fs, block_start, out + ll + ml, stats);
    if (e != DecodeError::Ok) return e;
    if (off == 0 || off > static_cast<u64>(out + ll - fs.start)) return DecodeError::Corrupt;
    if (stats && w.leader()) {
      ++stats->sequences;
      if (static_cast<i64>(off) < ml) ++stats->overlapping_matches;
      if (off > stats->max_offset) stats->max_offset = off;
    }
    copy_words(w, t.dst + out, lits + lit_pos, ll, lits, lits_end, false);
    out += ll;
    lit_pos += ll;
    w.sync();  // the match may read the literals just written, by other lanes
    copy_match(w, t.dst + out, static_cast<i64>(off), ml, t.dst + fs.start);
    out += ml;
  }
  if (!bits_done(b)) {  // bits left unread (an overrun stopped the loop above)
    if (stats && w.leader()) {
      stats->unread_sequence_bits = static_cast<u64>(b.left * 8 + b.nbits);
      stats->last_update_bits = static_cast<u64>(last_update);
      if (stats->unread_sequence_bits <= stats->last_update_bits) ++stats->libzstd_unchecked;
    }
    return DecodeError::Corrupt;
  }
  const i64 rest = nlits - lit_pos;
  const DecodeError e = output_check(fs, block_start, out + rest, stats);
  if (e != DecodeError::Ok) return e;
  copy_words(w, t.dst + out, lits + lit_pos, rest, lits, lits_end, false);
  out += rest;
  return DecodeError::Ok;
}

/// @brief Decode the compressed block [t.src + in, + size).
template <class W>
VCZ_HD DecodeError compressed_block(const W& w, WarpShared& sh, FrameState& fs, const TaskView& t,
                                    i64 in, i64 size, i64& out, ZstdDecodeStats* stats) {
  const u8* p = t.src + in;
  const u8* lits = nullptr;
  i64 nlits = 0, used = 0;
  DecodeError e = read_literals(w, sh, fs, t, p, size, lits, nlits, used, stats);
  if (e != DecodeError::Ok) return e;
  w.sync();  // the literal buffer is complete
  p += used;
  i64 avail = size - used;
  const i64 block_start = out;
  // Sequences section header.
  if (avail < 1) return DecodeError::Corrupt;
  i64 nseq = p[0];
  i64 head = 1;
  if (nseq >= 255) {
    if (avail < 3) return DecodeError::Corrupt;
    nseq = p[1] + (i64{p[2]} << 8) + 0x7F00;
    head = 3;
  } else if (nseq >= 128) {
    if (avail < 2) return DecodeError::Corrupt;
    nseq = ((nseq - 128) << 8) + p[1];
    head = 2;
  }
  p += head;
  avail -= head;
  if (nseq == 0) {  // literals only; nothing else may follow
    if (avail != 0) return DecodeError::Corrupt;
    e = output_check(fs, block_start, out + nlits, stats);
    if (e != DecodeError::Ok) return e;
    copy_words(w, t.dst + out, lits, nlits, lits, lits + nlits, false);
    out += nlits;
    if (stats && w.leader()) ++stats->blocks_without_sequences;
    return DecodeError::Ok;
  }
  if (avail < 1) return DecodeError::Corrupt;
  const u32 modes = p[0];
  if (modes & 3u) {  // reserved bits
    if (stats && w.leader()) ++stats->libzstd_unchecked;
    return DecodeError::Corrupt;
  }
  ++p;
  --avail;
  i64 n = 0;
  e = seq_table<kLL>(w, sh, fs, static_cast<int>(modes >> 6), p, avail, n);
  if (e != DecodeError::Ok) return e;
  p += n;
  avail -= n;
  e = seq_table<kOF>(w, sh, fs, static_cast<int>(modes >> 4) & 3, p, avail, n);
  if (e != DecodeError::Ok) return e;
  p += n;
  avail -= n;
  e = seq_table<kML>(w, sh, fs, static_cast<int>(modes >> 2) & 3, p, avail, n);
  if (e != DecodeError::Ok) return e;
  p += n;
  avail -= n;
  if (stats && w.leader())
    for (int tb = kLL; tb <= kML; ++tb) ++stats->table_modes[tb][(modes >> (6 - 2 * tb)) & 3];
  return run_sequences(w, sh, fs, t, p, avail, nseq, lits, nlits, block_start, out, stats);
}

/// @brief XXH64 (the hash of the content checksum), host and device.
VCZ_HD inline u64 xxh64_hash(const u8* p, u64 len, u64 seed) {
  constexpr u64 P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full, P3 = 0x165667B19E3779F9ull,
                P4 = 0x85EBCA77C2B2AE63ull, P5 = 0x27D4EB2F165667C5ull;
  auto rotl = [](u64 x, int r) { return (x << r) | (x >> (64 - r)); };
  auto mix = [&](u64 acc, u64 in) { return rotl(acc + in * P2, 31) * P1; };
  auto merge = [&](u64 acc, u64 v) { return (acc ^ mix(0, v)) * P1 + P4; };
  auto ld64 = [](const u8* q) { return le_n(q, 8); };
  const u8* end = p + len;
  u64 h;
  if (len >= 32) {
    u64 v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
    while (end - p >= 32) {
      v1 = mix(v1, ld64(p));
      v2 = mix(v2, ld64(p + 8));
      v3 = mix(v3, ld64(p + 16));
      v4 = mix(v4, ld64(p + 24));
      p += 32;
    }
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    h = merge(merge(merge(merge(h, v1), v2), v3), v4);
  } else {
    h = seed + P5;
  }
  h += len;
  while (end - p >= 8) {
    h = rotl(h ^ mix(0, ld64(p)), 27) * P1 + P4;
    p += 8;
  }
  if (end - p >= 4) {
    h = rotl(h ^ (le_n(p, 4) * P1), 23) * P2 + P3;
    p += 4;
  }
  while (p < end) h = rotl(h ^ (*p++ * P5), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

/// @brief Decode the zstd frame whose header starts at t.src + in (after the magic number).
template <class W>
VCZ_HD DecodeError frame(const W& w, WarpShared& sh, const TaskView& t, i64& in, i64& out,
                         bool verify_checksum, ZstdDecodeStats* stats) {
  if (t.src_size - in < 1) return DecodeError::Truncated;
  const u32 fhd = t.src[in];
  const int fcs_flag = static_cast<int>(fhd >> 6);
  const bool single = (fhd >> 5) & 1u;
  const bool checksum = (fhd >> 2) & 1u;
  const int did_flag = static_cast<int>(fhd & 3u);
  if (fhd & 8u) return DecodeError::Corrupt;  // reserved bit
  const int did_size = did_flag == 3 ? 4 : did_flag;
  const int fcs_size = fcs_flag == 0 ? (single ? 1 : 0) : (1 << fcs_flag);
  const i64 head = 1 + (single ? 0 : 1) + did_size + fcs_size;
  if (t.src_size - in < head) return DecodeError::Truncated;
  const u8* p = t.src + in + 1;
  u64 window = 0;
  if (!single) {
    const int exponent = p[0] >> 3, mantissa = p[0] & 7;
    const u64 base = u64{1} << (10 + exponent);
    window = base + (base >> 3) * static_cast<u64>(mantissa);
    ++p;
  }
  if (le_n(p, did_size) != 0) return DecodeError::Unsupported;  // needs a dictionary
  p += did_size;
  u64 fcs = le_n(p, fcs_size);
  if (fcs_size == 2) fcs += 256;
  if (single) window = fcs;
  in += head;
  FrameState fs;
  fs.start = out;
  fs.block_max = window < static_cast<u64>(kBlockMax) ? static_cast<i64>(window) : kBlockMax;
  if (fcs_size > 0) {
    if (fcs > static_cast<u64>(t.dst_size - out)) return DecodeError::OutputOverflow;
    fs.limit = out + static_cast<i64>(fcs);
    fs.exceed = DecodeError::Corrupt;
  } else {
    fs.limit = t.dst_size;
    fs.exceed = DecodeError::OutputOverflow;
  }
  for (;;) {  // blocks: each takes at least 3 bytes of input
    if (t.src_size - in < 3) return DecodeError::Truncated;
    const u32 bh = le24(t.src + in);
    in += 3;
    const bool last = bh & 1u;
    const u32 type = (bh >> 1) & 3u;
    const i64 size = bh >> 3;
    if (type == 3) return DecodeError::Corrupt;
    if (over_block_max(fs, size, stats, type != 2)) return DecodeError::Corrupt;
    const i64 content = type == 1 ? 1 : size;
    if (t.src_size - in < content) return DecodeError::Truncated;
    if (type == 2) {
      const DecodeError e = compressed_block(w, sh, fs, t, in, size, out, stats);
      if (e != DecodeError::Ok) return e;
    } else {
      const DecodeError e = output_check(fs, out, out + size, stats);
      if (e != DecodeError::Ok) return e;
      if (type == 0)
        copy_words(w, t.dst + out, t.src + in, size, t.src + in, t.src + in + size, false);
      else
        fill_bytes(w, t.dst + out, t.src[in], size);
      out += size;
    }
    if (stats && w.leader()) ++stats->blocks[type];
    in += content;
    w.sync();  // later matches read this block's output
    if (last) break;
  }
  if (fcs_size > 0 && out != fs.limit) return DecodeError::Corrupt;
  if (checksum) {
    if (t.src_size - in < 4) return DecodeError::Truncated;
    if constexpr (!W::kDevice) {
      if (verify_checksum &&
          static_cast<u32>(xxh64_hash(t.dst + fs.start, static_cast<u64>(out - fs.start), 0)) !=
              le32(t.src + in))
        return DecodeError::Corrupt;
    }
    in += 4;
    if (stats && w.leader()) ++stats->checksums;
  }
  if (stats && w.leader()) ++stats->frames;
  return DecodeError::Ok;
}

/// @brief Decode one task: frames and skippable frames until the input ends (none at all is an
/// empty output, as for libzstd); the output must fill dst exactly.
template <class W>
VCZ_HD DecodeStatus decode_task(const W& w, const DecodeTask& task, WarpShared& sh, u8* lit,
                                bool verify_checksum, ZstdDecodeStats* stats) {
  DecodeStatus st;
  constexpr u64 kHuge = u64{1} << 62;
  if (task.src_size >= kHuge || task.dst_size >= kHuge) {
    st.error = static_cast<std::int32_t>(DecodeError::Unsupported);
    return st;
  }
  const TaskView t{task.src, static_cast<i64>(task.src_size), task.dst,
                   static_cast<i64>(task.dst_size), lit};
  i64 in = 0, out = 0, unit = 0;
  DecodeError e = DecodeError::Ok;
  while (e == DecodeError::Ok && in < t.src_size) {  // each frame takes at least 8 bytes
    unit = in;
    if (t.src_size - in < 4) {
      e = DecodeError::Truncated;
      break;
    }
    const u32 magic = le32(t.src + in);
    in += 4;
    if ((magic & 0xFFFFFFF0u) == kSkippableMagic) {
      if (t.src_size - in < 4) {
        e = DecodeError::Truncated;
        break;
      }
      const i64 size = le32(t.src + in);
      in += 4;
      if (size > t.src_size - in) {
        e = DecodeError::Truncated;
        break;
      }
      in += size;
      if (stats && w.leader()) ++stats->skippable_frames;
    } else if (magic != kFrameMagic) {
      e = DecodeError::Corrupt;
    } else {
      e = frame(w, sh, t, in, out, verify_checksum, stats);
    }
  }
  if (e == DecodeError::Ok && out != t.dst_size) e = DecodeError::OutputShort;
  st.error = static_cast<std::int32_t>(e);
  st.detail = e == DecodeError::Ok ? 0u : static_cast<u32>(unit < 0xFFFFFFFF ? unit : 0xFFFFFFFF);
  st.produced = static_cast<u64>(out);
  return st;
}

}  // namespace vczstats::cuda::decode::zstd
