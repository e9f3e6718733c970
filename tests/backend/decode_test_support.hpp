#pragma once
// What the chunk-decoder tests share (decode_host_test.cpp, cuda_decode_test.cpp): corpora of
// chunks made by the reference libraries (libblosc, liblz4, libzstd) with the bytes they decode
// to, the stores to walk (the zarr fixtures and ../shared/data), and a libzstd task decoder
// standing in for the device zstd decoder on the host.

#include <blosc.h>
#include <gtest/gtest.h>
#include <lz4.h>
#include <lz4hc.h>
#include <zstd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/decode/decode_task.hpp"
#include "backend/cuda/decode/framing.hpp"
#include "backend/cuda/decode/lz4_decode.hpp"
#include "test_util.hpp"
#include "vczstats/zarr.hpp"
#include "zarr/zarr_test_support.hpp"

namespace decodetest {

namespace fs = std::filesystem;
namespace dec = vczstats::cuda::decode;
namespace zarr = vczstats::zarr;

/// libzstd decoding one zstd task: the independent reference for zstd streams in host tests.
inline dec::DecodeStatus libzstd_task(const dec::DecodeTask& t) {
  const std::size_t n = ZSTD_decompress(t.dst, t.dst_size, t.src, t.src_size);
  if (ZSTD_isError(n)) return dec::decode_failure(dec::DecodeError::Corrupt, 0, 0);
  if (n != t.dst_size) return dec::decode_failure(dec::DecodeError::OutputShort, 0, n);
  dec::DecodeStatus ok;
  ok.produced = n;
  return ok;
}

/// Random bytes: @p kind 0 compressible (small alphabet, runs, repeats), 1 random (no
/// compression possible), 2 genotype-like int8 (-1..3, mostly 0).
inline std::vector<std::uint8_t> make_data(std::mt19937_64& rng, std::size_t n, int kind) {
  std::vector<std::uint8_t> v(n);
  if (kind == 1) {
    for (auto& b : v) b = static_cast<std::uint8_t>(rng());
    return v;
  }
  if (kind == 2) {
    for (auto& b : v) {
      const auto r = rng() % 100;
      b = static_cast<std::uint8_t>(r < 80 ? 0 : r < 95 ? 1 : r < 98 ? 0xFF : 2 + rng() % 2);
    }
    return v;
  }
  std::size_t i = 0;
  while (i < n) {
    const auto mode = rng() % 3;
    const std::size_t len = std::min<std::size_t>(n - i, 1 + rng() % 300);
    if (mode == 0) {  // run
      const auto b = static_cast<std::uint8_t>(rng() % 4);
      for (std::size_t k = 0; k < len; ++k) v[i + k] = b;
    } else if (mode == 1 && i > 0) {  // repeat from earlier (possibly overlapping)
      const std::size_t back = 1 + rng() % std::min<std::size_t>(i, 70000);
      for (std::size_t k = 0; k < len; ++k) v[i + k] = v[i + k - back];
    } else {  // small alphabet
      for (std::size_t k = 0; k < len; ++k) v[i + k] = static_cast<std::uint8_t>(rng() % 16);
    }
    i += len;
  }
  return v;
}

/// One chunk of a corpus: encoded bytes, its encoding, and what it must decode to.
struct CorpusChunk {
  std::string name;
  std::vector<std::byte> encoded;
  zarr::ChunkEncoding encoding;
  std::vector<std::byte> expected;
};

/// Whether the framing of @p c has a zstd task (the zstd stand-in cannot decode those).
inline bool has_zstd_task(const CorpusChunk& c) {
  dec::ChunkFrames frames;
  dec::frame_chunk(c.encoded, c.encoding, frames);
  for (const auto& t : frames.tasks)
    if (t.codec == dec::TaskCodec::Zstd) return true;
  return false;
}

/// The encoding of a 1-D byte chunk of @p n bytes compressed by @p codec.
inline zarr::ChunkEncoding byte_encoding(std::uint64_t n, zarr::BytesCodecSpec::Kind kind,
                                         const std::string& name, const std::string& cname = "") {
  zarr::ChunkEncoding e;
  e.shape = {static_cast<std::int64_t>(n)};
  e.itemsize = 1;
  zarr::BytesCodecSpec c;
  c.kind = kind;
  c.name = name;
  c.cname = cname;
  e.bytes_codecs.push_back(c);
  e.fill_value = {std::byte{0}};
  return e;
}

inline std::vector<std::byte> as_bytes(const std::vector<std::uint8_t>& v) {
  std::vector<std::byte> out(v.size());
  if (!v.empty()) std::memcpy(out.data(), v.data(), v.size());
  return out;
}

/// Sets libblosc's global compressor, block size and split mode for one compression and puts
/// the defaults back afterwards.
struct BloscSettings {
  BloscSettings(const char* cname, int blocksize, int splitmode) {
    blosc_init();
    blosc_set_nthreads(1);
    blosc_set_compressor(cname);
    blosc_set_blocksize(static_cast<std::size_t>(blocksize));
    blosc_set_splitmode(splitmode);
  }
  ~BloscSettings() {
    blosc_set_compressor("blosclz");
    blosc_set_blocksize(0);
    blosc_set_splitmode(BLOSC_FORWARD_COMPAT_SPLIT);
  }
};

/// Compress @p data with libblosc; the expected bytes come from libblosc's own decompression.
inline CorpusChunk blosc_chunk(const std::vector<std::uint8_t>& data, const char* cname, int clevel,
                               int shuffle, int typesize, int blocksize, int splitmode) {
  CorpusChunk c;
  c.name = std::string("blosc ") + cname + " clevel " + std::to_string(clevel) + " shuffle " +
           std::to_string(shuffle) + " typesize " + std::to_string(typesize) + " blocksize " +
           std::to_string(blocksize) + " splitmode " + std::to_string(splitmode) + " size " +
           std::to_string(data.size());
  std::vector<std::uint8_t> out(data.size() + BLOSC_MAX_OVERHEAD);
  int n;
  {
    BloscSettings settings(cname, blocksize, splitmode);
    n = blosc_compress(clevel, shuffle, static_cast<std::size_t>(typesize), data.size(),
                       data.data(), out.data(), out.size());
  }
  EXPECT_GT(n, 0) << c.name;
  out.resize(static_cast<std::size_t>(std::max(n, 0)));
  c.encoded = as_bytes(out);
  c.encoding = byte_encoding(data.size(), zarr::BytesCodecSpec::Kind::Blosc, "blosc", cname);
  std::vector<std::uint8_t> back(data.size());
  if (!data.empty()) {
    const int m = blosc_decompress_ctx(out.data(), back.data(), back.size(), 1);
    EXPECT_EQ(m, static_cast<int>(data.size())) << c.name;
  }
  EXPECT_EQ(back, data) << c.name;
  c.expected = as_bytes(back);
  return c;
}

/// The blosc corpus: typesizes 1, 2, 3, 4, 8, 16 x shuffle none/byte/bit x internal codec
/// lz4, lz4hc, zstd x sizes (empty, smaller than a block, not a multiple of the typesize,
/// several blocks with a leftover) x data kinds x split modes. @p small keeps it quick.
inline std::vector<CorpusChunk> blosc_corpus(bool small = false) {
  std::vector<CorpusChunk> out;
  std::mt19937_64 rng(42);
  const int typesizes[] = {1, 2, 3, 4, 8, 16};
  const char* cnames[] = {"lz4", "lz4hc", "zstd"};
  const int splitmodes[] = {BLOSC_FORWARD_COMPAT_SPLIT, BLOSC_ALWAYS_SPLIT, BLOSC_NEVER_SPLIT,
                            BLOSC_AUTO_SPLIT};
  for (int typesize : typesizes)
    for (int shuffle = 0; shuffle <= 2; ++shuffle)
      for (const char* cname : cnames)
        for (int split = 0; split < (small ? 2 : 4); ++split) {
          struct Size {
            std::size_t bytes;
            int blocksize;
          };
          const std::vector<Size> sizes = {
              {0, 0},
              {static_cast<std::size_t>(7 * typesize), 0},         // below blosc's 128-byte minimum
              {static_cast<std::size_t>(1000 * typesize + 1), 0},  // not a multiple
              // split blocks are at least 64 KiB: several of them with a leftover
              {static_cast<std::size_t>(70000 * typesize + 5), 4096},
              {static_cast<std::size_t>(3 * 4096 + 5 * typesize + 1), 4096},  // leftover block
              {static_cast<std::size_t>(5 * 2048 + 8 * typesize), 2048},
          };
          for (const auto& size : sizes)
            for (int kind = 0; kind < 3; ++kind) {
              if (small && kind == 2) continue;
              const auto data = make_data(rng, size.bytes, kind);
              out.push_back(blosc_chunk(data, cname, kind == 1 ? 5 : 7, shuffle, typesize,
                                        size.blocksize, splitmodes[split]));
            }
        }
  return out;
}

/// A numcodecs-lz4 chunk (4-byte little-endian size, then an LZ4 block) of @p data: @p level
/// 0 is LZ4_compress_default, > 0 LZ4_compress_HC at that level, < 0 LZ4_compress_fast with
/// acceleration -level.
inline CorpusChunk lz4_chunk(const std::vector<std::uint8_t>& data, int level) {
  CorpusChunk c;
  c.name = "lz4 level " + std::to_string(level) + " size " + std::to_string(data.size());
  const int bound = LZ4_compressBound(static_cast<int>(data.size()));
  std::vector<std::uint8_t> out(4 + static_cast<std::size_t>(bound));
  static const char empty = 0;  // liblz4 needs a real pointer even for no bytes
  const auto* src = data.empty() ? &empty : reinterpret_cast<const char*>(data.data());
  auto* dst = reinterpret_cast<char*>(out.data() + 4);
  const int size = static_cast<int>(data.size());
  const int n = level == 0  ? LZ4_compress_default(src, dst, size, bound)
                : level > 0 ? LZ4_compress_HC(src, dst, size, bound, level)
                            : LZ4_compress_fast(src, dst, size, bound, -level);
  EXPECT_GT(n, 0) << c.name;
  out.resize(4 + static_cast<std::size_t>(std::max(n, 0)));
  for (int k = 0; k < 4; ++k)
    out[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(size >> (8 * k));
  c.encoded = as_bytes(out);
  c.encoding = byte_encoding(data.size(), zarr::BytesCodecSpec::Kind::Lz4, "lz4");
  std::vector<char> back(data.size() + 1);
  const int m = LZ4_decompress_safe(dst, back.data(), n, static_cast<int>(back.size()));
  EXPECT_EQ(m, size) << c.name;
  back.resize(static_cast<std::size_t>(std::max(m, 0)));
  c.expected.resize(back.size());
  if (!back.empty()) std::memcpy(c.expected.data(), back.data(), back.size());
  return c;
}

/// LZ4 chunks of every data kind and many sizes at several levels (default, fast, HC 1-12).
inline std::vector<CorpusChunk> lz4_corpus() {
  std::vector<CorpusChunk> out;
  std::mt19937_64 rng(7);
  const std::size_t sizes[] = {0, 1, 5, 13, 64, 100, 1000, 4096, 65536 + 17, 300000, 1 << 20};
  const int levels[] = {0, -1, -8, -64, 1, 4, 9, 12};
  for (std::size_t size : sizes)
    for (int kind = 0; kind < 3; ++kind)
      for (int level : levels) out.push_back(lz4_chunk(make_data(rng, size, kind), level));
  return out;
}

/// Call fn(array, chunk index) for every chunk of every array of a store (groups included).
inline void for_each_array(const std::shared_ptr<const zarr::Store>& store,
                           const std::function<void(const zarr::Array&)>& fn,
                           const std::string& group = "") {
  for (const auto& name : zarr::list_arrays(*store, group))
    fn(zarr::Array::open(store, group.empty() ? name : group + "/" + name));
}

/// Every chunk index of @p a, C order.
inline std::vector<std::vector<std::int64_t>> chunk_indices(const zarr::Array& a) {
  std::vector<std::vector<std::int64_t>> out;
  const int n = a.ndim();
  std::vector<std::int64_t> grid(static_cast<std::size_t>(n));
  std::int64_t total = 1;
  for (int d = 0; d < n; ++d) {
    grid[static_cast<std::size_t>(d)] = std::max<std::int64_t>(a.num_chunks(d), 1);
    total *= grid[static_cast<std::size_t>(d)];
  }
  for (std::int64_t i = 0; i < total; ++i) {
    std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
    std::int64_t rest = i;
    for (int d = n; d-- > 0;) {
      idx[static_cast<std::size_t>(d)] = rest % grid[static_cast<std::size_t>(d)];
      rest /= grid[static_cast<std::size_t>(d)];
    }
    out.push_back(idx);
  }
  return out;
}

/// The stores the store tests walk: the zarr fixtures (v2 and v3 directory stores, when
/// python3-zarr is there) and every store of ../shared/data (when present).
inline std::vector<fs::path> test_stores() {
  std::vector<fs::path> out;
  if (vcztest::have_python_zarr()) {
    out.push_back(vcztest::zarr::fixtures() / "v2");
    out.push_back(vcztest::zarr::fixtures() / "v3");
  }
  const auto data = vcztest::shared_data();
  if (!data.empty())
    for (const char* sub : {"vcztools", "ag1000g"})
      if (fs::exists(data / sub))
        for (const auto& e : fs::directory_iterator(data / sub))
          if (e.path().extension() == ".zip") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace decodetest
