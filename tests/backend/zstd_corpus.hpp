#pragma once
// Test corpora of the zstd decoder (tests/backend/zstd_decode_test.cpp on the host,
// cuda_zstd_decode_test.cpp on the GPU): data of every kind compressed by libzstd, the reference
// encoder, with the parameters real encoders use. The decoder's output is compared with the data
// libzstd was given, byte for byte.

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_compressSequences, ZSTD_writeSkippableFrame
#include <zstd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/decode/zstd_decode.hpp"

namespace zstdtest {

using Bytes = std::vector<std::uint8_t>;

/// One input of the decoder and what it must decode to.
struct Case {
  std::string name;
  Bytes plain;  ///< what libzstd compressed
  Bytes frame;  ///< libzstd's output (possibly several frames)
};

// ---- decoding on the host ----------------------------------------------------------------------

/// What zstd_decode_host made of an input.
struct Decoded {
  vczstats::cuda::decode::DecodeStatus status;
  Bytes out;
  vczstats::cuda::decode::DecodeError error() const {
    return static_cast<vczstats::cuda::decode::DecodeError>(status.error);
  }
};

/// zstd_decode_host on @p frame into exactly @p dst_size bytes (both buffers sized exactly, so
/// that address sanitizers see any access beyond them).
inline Decoded host_decode(const Bytes& frame, std::size_t dst_size,
                           vczstats::cuda::decode::ZstdDecodeStats* stats = nullptr,
                           bool verify = true) {
  namespace dec = vczstats::cuda::decode;
  const auto src = std::make_unique<std::uint8_t[]>(frame.size() + 1);  // +1: never 0 bytes
  if (!frame.empty()) std::memcpy(src.get(), frame.data(), frame.size());
  const auto dst = std::make_unique<std::uint8_t[]>(dst_size + 1);
  dec::DecodeTask task;
  task.src = src.get();
  task.src_size = frame.size();
  task.dst = dst.get();
  task.dst_size = dst_size;
  task.codec = dec::TaskCodec::Zstd;
  dec::ZstdHostOptions options;
  options.verify_checksum = verify;
  Decoded d;
  d.status = dec::zstd_decode_host(task, options, stats);
  d.out.assign(dst.get(), dst.get() + dst_size);
  return d;
}

// ---- data -----------------------------------------------------------------------------------

inline Bytes random_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

/// Bytes drawn from a geometric distribution over @p alphabet symbols (literal-heavy data with
/// few matches: exercises the Huffman coder).
inline Bytes skewed_bytes(std::mt19937_64& rng, std::size_t n, int alphabet, double p) {
  Bytes b(n);
  std::geometric_distribution<int> g(p);
  for (auto& x : b) x = static_cast<std::uint8_t>(std::min(g(rng), alphabet - 1) * 7 + 3);
  return b;
}

/// Words of a fixed vocabulary with spaces and punctuation.
inline Bytes text_bytes(std::mt19937_64& rng, std::size_t n) {
  static const char* words[] = {
      "the",    "of",       "and",        "a",       "to",         "in",        "is",
      "allele", "genotype", "variant",    "sample",  "chromosome", "frequency", "zarr",
      "chunk",  "decode",   "population", "missing", "phased",     "haplotype", "GPU",
      "warp",   "literal",  "sequence",   "offset",  "match",      "Huffman",   "entropy",
      "1000",   "Genomes",  "Anopheles",  "gambiae", "coluzzii",   "X",         "2L"};
  std::uniform_int_distribution<std::size_t> wd(0, std::size(words) - 1);
  std::uniform_int_distribution<int> punct(0, 15);
  Bytes b;
  b.reserve(n + 16);
  while (b.size() < n) {
    const char* w = words[wd(rng)];
    b.insert(b.end(), w, w + std::strlen(w));
    const int c = punct(rng);
    b.push_back(c == 0 ? '.' : (c == 1 ? ',' : (c == 2 ? '\n' : ' ')));
  }
  b.resize(n);
  return b;
}

/// An int8 genotype matrix (variants x samples x ploidy): 0/1 with a neutral-like 1/k spectrum
/// of ALT frequencies, -1 (missing) with probability @p missing.
inline Bytes genotype_bytes(std::mt19937_64& rng, std::size_t variants, std::size_t samples,
                            int ploidy, double missing) {
  Bytes b(variants * samples * ploidy);
  std::uniform_real_distribution<double> u(0, 1);
  const double h = 2.0 * static_cast<double>(samples);
  std::size_t i = 0;
  for (std::size_t v = 0; v < variants; ++v) {
    const double af = std::exp(u(rng) * std::log(h)) / h;
    for (std::size_t s = 0; s < samples * ploidy; ++s, ++i) {
      const double x = u(rng);
      b[i] = x < missing ? 0xFF : (u(rng) < af ? 1 : 0);
    }
  }
  return b;
}

/// Bit-shuffle of 1-byte elements as blosc does it inside a block: 8 bit planes of n/8 bytes
/// (plane k holds bit k of every element); the n % 8 trailing elements are copied.
inline Bytes bitshuffle(const Bytes& in) {
  const std::size_t n8 = in.size() / 8 * 8;
  Bytes out(in.size());
  const std::size_t plane = n8 / 8;
  for (std::size_t k = 0; k < 8; ++k)
    for (std::size_t j = 0; j < plane; ++j) {
      std::uint8_t byte = 0;
      for (std::size_t e = 0; e < 8; ++e) byte |= ((in[8 * j + e] >> k) & 1u) << e;
      out[k * plane + j] = byte;
    }
  std::copy(in.begin() + static_cast<std::ptrdiff_t>(n8), in.end(),
            out.begin() + static_cast<std::ptrdiff_t>(n8));
  return out;
}

/// Segments of every kind after one another.
inline Bytes mixed_bytes(std::mt19937_64& rng, std::size_t n) {
  Bytes b;
  while (b.size() < n) {
    const std::size_t len = 1000 + rng() % 40000;
    Bytes part;
    switch (rng() % 5) {
      case 0:
        part = random_bytes(rng, len);
        break;
      case 1:
        part.assign(len, static_cast<std::uint8_t>(rng()));
        break;
      case 2:
        part = text_bytes(rng, len);
        break;
      case 3:
        part = skewed_bytes(rng, len, 20, 0.3);
        break;
      default:
        part = bitshuffle(genotype_bytes(rng, len / 200 + 1, 100, 2, 0.01));
    }
    b.insert(b.end(), part.begin(), part.end());
  }
  b.resize(n);
  return b;
}

// ---- compression ------------------------------------------------------------------------------

inline void check_zstd(std::size_t r, const char* what) {
  if (ZSTD_isError(r)) throw std::runtime_error(std::string(what) + ": " + ZSTD_getErrorName(r));
}

/// Encoder parameters beyond the level.
struct Params {
  int level = 3;
  bool content_size = true;
  bool checksum = false;
  int window_log = 0;  ///< 0: the level's
  bool long_distance = false;
  bool streaming = false;  ///< ZSTD_compressStream2 without a size: no content size, windowed
  int target_block = 0;    ///< ZSTD_c_targetCBlockSize (0: off): more, smaller blocks
};

inline Bytes compress(const Bytes& plain, const Params& p) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  check_zstd(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, p.level), "level");
  check_zstd(ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, p.content_size), "size");
  check_zstd(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, p.checksum), "checksum");
  if (p.window_log) check_zstd(ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, p.window_log), "wl");
  if (p.long_distance)
    check_zstd(ZSTD_CCtx_setParameter(cctx, ZSTD_c_enableLongDistanceMatching, 1), "ldm");
  if (p.target_block)
    check_zstd(ZSTD_CCtx_setParameter(cctx, ZSTD_c_targetCBlockSize, p.target_block), "tcbs");
  Bytes out(ZSTD_compressBound(plain.size()) + 64);
  std::size_t n = 0;
  if (p.streaming) {
    ZSTD_inBuffer in{plain.data(), plain.size(), 0};
    ZSTD_outBuffer o{out.data(), out.size(), 0};
    // Feed in pieces, so the encoder never learns the size.
    std::size_t remaining = 0;
    do {
      const std::size_t piece = std::min<std::size_t>(plain.size() - in.pos, 100000);
      ZSTD_inBuffer part{plain.data() + in.pos, piece, 0};
      const bool last = in.pos + piece == plain.size();
      remaining = ZSTD_compressStream2(cctx, &o, &part, last ? ZSTD_e_end : ZSTD_e_continue);
      check_zstd(remaining, "stream");
      in.pos += part.pos;
    } while (in.pos < plain.size() || remaining != 0);
    n = o.pos;
  } else {
    n = ZSTD_compress2(cctx, out.data(), out.size(), plain.data(), plain.size());
    check_zstd(n, "compress");
  }
  ZSTD_freeCCtx(cctx);
  out.resize(n);
  return out;
}

inline Bytes skippable(std::size_t n, unsigned variant, std::mt19937_64& rng) {
  const Bytes user = random_bytes(rng, n);
  Bytes out(n + 8);
  const std::size_t r = ZSTD_writeSkippableFrame(out.data(), out.size(), user.data(), n, variant);
  check_zstd(r, "skippable");
  out.resize(r);
  return out;
}

/// Compress with explicit sequences (ZSTD_compressSequences): the encoder turns offsets equal to
/// a recent one into repeat codes, including the literal-length-0 cases.
enum class SeqShape {
  Mixed,    ///< random literal and match lengths, offsets near, far and repeated
  RleLike,  ///< long matches at tiny offsets
  Fixed,    ///< one literal length, one match length, one literal byte (RLE tables, RLE literals)
};

inline Case sequences_case(std::mt19937_64& rng, const std::string& name, SeqShape shape) {
  const bool rle_like = shape == SeqShape::RleLike;
  const bool fixed = shape == SeqShape::Fixed;
  // Build the data from sequences drawn so that repeat offsets of every kind occur.
  std::vector<ZSTD_Sequence> seqs;
  Bytes plain;
  std::vector<std::uint32_t> recent = {1, 4, 8};
  const std::size_t target = 200000;
  plain = random_bytes(rng, 64);  // something to match against: the first sequence's literals
  {
    const std::uint32_t off = static_cast<std::uint32_t>(1 + rng() % 64);
    for (int j = 0; j < 20; ++j) plain.push_back(plain[plain.size() - off]);
    seqs.push_back(ZSTD_Sequence{off, 64, 20, 0});
  }
  while (plain.size() < target) {
    const std::uint32_t ll =
        fixed ? 4 : (rng() % 3 == 0 ? 0 : static_cast<std::uint32_t>(rng() % 20));
    const std::uint32_t ml =
        fixed ? 10 : static_cast<std::uint32_t>(3 + rng() % (rle_like ? 300 : 40));
    const Bytes lit = fixed ? Bytes(ll, 'x') : random_bytes(rng, ll);
    plain.insert(plain.end(), lit.begin(), lit.end());
    std::uint32_t off;
    const int kind = static_cast<int>(rng() % 6);
    if (kind < 3)
      off = recent[kind];
    else if (kind == 3 && recent[0] > 1)
      off = recent[0] - 1;
    else
      off = static_cast<std::uint32_t>(1 + rng() % std::min<std::size_t>(plain.size(), 5000));
    if (rle_like && rng() % 2) off = 1 + static_cast<std::uint32_t>(rng() % 4);
    if (off > plain.size()) off = static_cast<std::uint32_t>(plain.size());
    for (std::uint32_t j = 0; j < ml; ++j) plain.push_back(plain[plain.size() - off]);
    seqs.push_back(ZSTD_Sequence{off, ll, ml, 0});
    // The recent offsets as the format keeps them.
    if (ll == 0 && off == recent[0] - 1 && recent[0] > 1) {
      recent = {off, recent[0], recent[1]};
    } else {
      auto it = std::find(recent.begin(), recent.end(), off);
      if (it == recent.end()) {
        recent = {off, recent[0], recent[1]};
      } else {
        recent.erase(it);
        recent.insert(recent.begin(), off);
      }
    }
  }
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  check_zstd(ZSTD_CCtx_setParameter(cctx, ZSTD_c_blockDelimiters, ZSTD_sf_noBlockDelimiters),
             "delimiters");
  check_zstd(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1), "checksum");
  Bytes out(ZSTD_compressBound(plain.size()) + 64);
  const std::size_t n = ZSTD_compressSequences(cctx, out.data(), out.size(), seqs.data(),
                                               seqs.size(), plain.data(), plain.size());
  ZSTD_freeCCtx(cctx);
  check_zstd(n, "compressSequences");
  out.resize(n);
  return Case{name, std::move(plain), std::move(out)};
}

inline std::string level_name(const Params& p) {
  std::string s = "L";
  s += std::to_string(p.level);
  if (!p.content_size) s += "-nosize";
  if (p.checksum) s += "-xxh";
  if (p.window_log) s += "-wl" + std::to_string(p.window_log);
  if (p.long_distance) s += "-ldm";
  if (p.streaming) s += "-stream";
  if (p.target_block) s += "-tb" + std::to_string(p.target_block);
  return s;
}

inline void add(std::vector<Case>& cases, const std::string& what, const Bytes& plain,
                const Params& p) {
  cases.push_back(Case{what + "/" + std::to_string(plain.size()) + "/" + level_name(p), plain,
                       compress(plain, p)});
}

/// The main corpus: every kind of data at many levels and frame parameters. @p big adds the
/// multi-megabyte cases (long windows).
inline std::vector<Case> corpus(bool big) {
  std::mt19937_64 rng(20240611);
  std::vector<Case> cases;
  auto P = [](int level) {
    Params p;
    p.level = level;
    return p;
  };
  // Tiny inputs: empty frames, one byte, a few bytes.
  for (std::size_t n : {0, 1, 2, 3, 7, 31, 100}) {
    for (int level : {1, 19}) {
      add(cases, "random", random_bytes(rng, n), P(level));
      add(cases, "text", text_bytes(rng, n), P(level));
      Params q = P(level);
      q.content_size = false;
      q.checksum = true;
      add(cases, "constant", Bytes(n, 0x5A), q);
    }
  }
  {
    Params q = P(3);
    q.streaming = true;
    add(cases, "empty", Bytes{}, q);
  }
  // Incompressible (raw blocks) and constant (RLE blocks).
  for (int level : {1, 19}) {
    add(cases, "random", random_bytes(rng, 300000), P(level));
    add(cases, "constant", Bytes(300000, 7), P(level));
  }
  // Genotype matrices, plain and bit-shuffled, at every level of interest.
  const Bytes geno = genotype_bytes(rng, 1000, 100, 2, 0.002);
  const Bytes geno_missing = genotype_bytes(rng, 1300, 100, 2, 0.05);
  const Bytes geno_shuf = bitshuffle(geno);
  for (int level : {-5, -1, 1, 2, 3, 5, 7, 9, 12, 15, 19}) {
    add(cases, "genotypes", geno, P(level));
    add(cases, "genotypes-shuffled", geno_shuf, P(level));
  }
  for (int level : {1, 7, 19}) add(cases, "genotypes-missing", bitshuffle(geno_missing), P(level));
  // Text, skewed alphabets, mixed data.
  const Bytes text = text_bytes(rng, 400000);
  for (int level : {-3, 1, 3, 5, 7, 12, 16, 19}) add(cases, "text", text, P(level));
  for (int alphabet : {2, 5, 40, 200})
    for (int level : {1, 7, 19})
      add(cases, "skewed" + std::to_string(alphabet), skewed_bytes(rng, 200000, alphabet, 0.25),
          P(level));
  const Bytes mixed = mixed_bytes(rng, 600000);
  for (int level : {3, 9, 19}) add(cases, "mixed", mixed, P(level));
  // Frame parameters: no content size, checksums, streaming (window descriptor), small blocks.
  for (int level : {1, 7, 19}) {
    Params q = P(level);
    q.content_size = false;
    q.checksum = true;
    add(cases, "mixed", mixed, q);
    q.streaming = true;
    add(cases, "genotypes-shuffled", geno_shuf, q);
    Params tb = P(level);
    tb.target_block = 1200;
    add(cases, "text", text, tb);
  }
  // Explicit sequences: repeat offsets of every kind.
  cases.push_back(sequences_case(rng, "sequences/repeat-offsets", SeqShape::Mixed));
  cases.push_back(sequences_case(rng, "sequences/rle-like", SeqShape::RleLike));
  cases.push_back(sequences_case(rng, "sequences/fixed", SeqShape::Fixed));
  // A small alphabet of low byte values: Huffman weights written directly (4 bits each).
  for (int level : {1, 7, 19}) {
    Bytes small = skewed_bytes(rng, 100000, 6, 0.35);
    for (auto& x : small) x = static_cast<std::uint8_t>((x - 3) / 7);
    add(cases, "alphabet6", small, P(level));
  }
  // Several frames and skippable frames in one input.
  {
    Case c{"concatenated", {}, {}};
    const Bytes parts[] = {text_bytes(rng, 5000), Bytes{}, bitshuffle(geno), random_bytes(rng, 1),
                           Bytes(70000, 3)};
    int i = 0;
    for (const Bytes& part : parts) {
      Params q = P(i % 2 ? 19 : 3);
      q.checksum = i % 2 == 0;
      q.content_size = i != 2;
      const Bytes f = compress(part, q);
      const Bytes s = skippable(static_cast<std::size_t>(i * 37), static_cast<unsigned>(i), rng);
      c.frame.insert(c.frame.end(), s.begin(), s.end());
      c.frame.insert(c.frame.end(), f.begin(), f.end());
      c.plain.insert(c.plain.end(), part.begin(), part.end());
      ++i;
    }
    const Bytes s = skippable(10, 15, rng);
    c.frame.insert(c.frame.end(), s.begin(), s.end());
    cases.push_back(std::move(c));
  }
  if (big) {
    // 2 MiB of genotypes at the levels blosc users pick.
    const Bytes g2 = bitshuffle(genotype_bytes(rng, 10500, 100, 2, 0.002));
    for (int level : {1, 3, 7}) add(cases, "genotypes-shuffled", g2, P(level));
    // Long distances: a 6 MiB random block and a mutated copy of it; windowLog 27 with long
    // distance matching, and the level 19 window (8 MiB).
    Bytes far = random_bytes(rng, 6 << 20);
    Bytes copy = far;
    for (int k = 0; k < 2000; ++k) copy[rng() % copy.size()] ^= 0x40;
    far.insert(far.end(), copy.begin(), copy.end());
    for (int level : {1, 3}) {
      Params q = P(level);
      q.window_log = 27;
      q.long_distance = true;
      q.checksum = true;
      add(cases, "far-repeat", far, q);
    }
    Bytes far3(6 << 20);
    std::copy(far.begin(), far.begin() + (3 << 20), far3.begin());
    std::copy(far.begin(), far.begin() + (3 << 20), far3.begin() + (3 << 20));
    add(cases, "far-repeat", far3, P(19));
  }
  return cases;
}

}  // namespace zstdtest
