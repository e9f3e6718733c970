// The host side of the device chunk decoder (src/backend/cuda/decode): framing of blosc1,
// numcodecs lz4/zstd and v3 sharding into tasks, the LZ4 decoder and the unshuffles run on the
// host, checked against the reference libraries:
//  - LZ4 blocks made by liblz4 (default, fast, HC levels) decode to liblz4's output;
//  - blosc chunks made by libblosc (typesizes 1-16, every shuffle, lz4/lz4hc/zstd, split modes,
//    empty/small/odd/leftover sizes, incompressible data) decode byte for byte to libblosc's
//    output (zstd streams through libzstd, standing in for the device zstd decoder);
//  - every chunk of every decodable array of the zarr fixtures and ../shared/data decodes to
//    what zarr::Array::read_chunk (libblosc, libzstd, liblz4) gives;
//  - truncated, corrupt and lying headers give FormatError or a failed status, never a crash.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/decode/framing.hpp"
#include "backend/cuda/decode/lz4_decode.hpp"
#include "backend/decode_test_support.hpp"
#include "vczstats/error.hpp"
#include "vczstats/zarr.hpp"

using namespace decodetest;
using vczstats::FormatError;

namespace {

dec::HostDecoders with_libzstd() {
  dec::HostDecoders d;
  d.zstd = libzstd_task;
  return d;
}

/// Decode @p c on the host; returns the bytes, or throws.
std::vector<std::byte> host_decode(const CorpusChunk& c,
                                   const dec::HostDecoders& d = with_libzstd()) {
  std::vector<std::byte> out(c.encoding.decoded_bytes());
  dec::decode_chunk_host(std::span<const std::byte>(c.encoded), c.encoding, out, d);
  return out;
}

/// Decode a corrupted variant of a chunk: it may fail (FormatError) or produce some bytes;
/// anything else (a crash, another exception) fails the test.
void decode_damaged(const CorpusChunk& c, std::vector<std::byte> bytes) {
  std::vector<std::byte> out(c.encoding.decoded_bytes());
  try {
    dec::decode_chunk_host(std::span<const std::byte>(bytes), c.encoding, out, with_libzstd());
  } catch (const FormatError&) {
  }
}

}  // namespace

TEST(Lz4HostDecoder, MatchesLiblz4) {
  const auto corpus = lz4_corpus();
  ASSERT_GT(corpus.size(), 200u);
  for (const auto& c : corpus) {
    // The raw block, straight through lz4_decode_host.
    std::vector<std::byte> out(c.expected.size());
    dec::DecodeTask t;
    t.src = reinterpret_cast<const std::uint8_t*>(c.encoded.data()) + 4;
    t.src_size = c.encoded.size() - 4;
    t.dst = reinterpret_cast<std::uint8_t*>(out.data());
    t.dst_size = out.size();
    t.codec = dec::TaskCodec::Lz4;
    const auto s = dec::lz4_decode_host(t);
    ASSERT_EQ(s.error, 0) << c.name << ": " << dec::describe_failure(t, s);
    EXPECT_EQ(s.produced, out.size()) << c.name;
    ASSERT_EQ(out, c.expected) << c.name;
    // And as a numcodecs lz4 chunk through the framing.
    ASSERT_EQ(host_decode(c), c.expected) << c.name;
  }
}

TEST(Lz4HostDecoder, WrongSizesAndTruncation) {
  std::mt19937_64 rng(3);
  const auto c = lz4_chunk(make_data(rng, 5000, 0), 9);
  const auto* block = reinterpret_cast<const std::uint8_t*>(c.encoded.data()) + 4;
  const std::uint64_t block_size = c.encoded.size() - 4;
  std::vector<std::uint8_t> out(c.expected.size() + 64);
  auto run = [&](std::uint64_t src_size, std::uint64_t dst_size) {
    dec::DecodeTask t;
    t.src = block;
    t.src_size = src_size;
    t.dst = out.data();
    t.dst_size = dst_size;
    t.codec = dec::TaskCodec::Lz4;
    return dec::lz4_decode_host(t);
  };
  EXPECT_EQ(run(block_size, c.expected.size()).error, 0);
  EXPECT_EQ(run(block_size, c.expected.size() - 1).error,
            static_cast<int>(dec::DecodeError::OutputOverflow));
  const auto longer = run(block_size, c.expected.size() + 1);
  EXPECT_EQ(longer.error, static_cast<int>(dec::DecodeError::OutputShort));
  EXPECT_EQ(longer.produced, c.expected.size());
  // Every proper prefix fails (the decoder never reads past src_size: ASan checks that).
  for (std::uint64_t n = 0; n < block_size; ++n) {
    std::vector<std::uint8_t> prefix(block, block + n);
    dec::DecodeTask t;
    t.src = prefix.data();
    t.src_size = n;
    t.dst = out.data();
    t.dst_size = c.expected.size();
    t.codec = dec::TaskCodec::Lz4;
    EXPECT_NE(dec::lz4_decode_host(t).error, 0) << "prefix of " << n << " bytes";
  }
  // A match reaching before the start of the output is corrupt: token 0x00 then offset 1.
  const std::uint8_t bad[] = {0x10, 'a', 0x05, 0x00, 0x00};
  dec::DecodeTask t;
  t.src = bad;
  t.src_size = sizeof bad;
  t.dst = out.data();
  t.dst_size = 10;
  t.codec = dec::TaskCodec::Lz4;
  EXPECT_EQ(dec::lz4_decode_host(t).error, static_cast<int>(dec::DecodeError::Corrupt));
}

TEST(Lz4HostDecoder, CorruptBlocksNeverCrash) {
  std::mt19937_64 rng(11);
  for (int level : {0, 9}) {
    const auto c = lz4_chunk(make_data(rng, 20000, 0), level);
    for (int trial = 0; trial < 3000; ++trial) {
      auto bytes = c.encoded;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f)
        bytes[4 + rng() % (bytes.size() - 4)] ^=
            std::byte{static_cast<unsigned char>(1 + rng() % 255)};
      std::vector<std::uint8_t> out(c.expected.size());
      dec::DecodeTask t;
      t.src = reinterpret_cast<const std::uint8_t*>(bytes.data()) + 4;
      t.src_size = bytes.size() - 4;
      t.dst = out.data();
      t.dst_size = out.size();
      t.codec = dec::TaskCodec::Lz4;
      const auto s = dec::lz4_decode_host(t);
      EXPECT_LE(s.produced, out.size());
    }
  }
}

TEST(BloscFraming, MatchesLibblosc) {
  const auto corpus = blosc_corpus();
  ASSERT_GT(corpus.size(), 1000u);
  std::size_t shuffled = 0, memcpyed = 0;
  std::size_t leftover = 0;
  for (const auto& c : corpus) {
    std::vector<std::byte> got;
    try {
      got = host_decode(c);
    } catch (const FormatError& e) {
      FAIL() << c.name << ": " << e.what();
    }
    ASSERT_EQ(got, c.expected) << c.name;
    if (c.encoded.size() >= 16) {
      const auto flags = std::to_integer<unsigned>(c.encoded[2]);
      shuffled += (flags & 0x5) != 0 && !(flags & 0x2);
      memcpyed += (flags & 0x2) != 0;
      std::int64_t nbytes = 0, blocksize = 0;
      for (int k = 0; k < 4; ++k) {
        nbytes |= std::to_integer<std::int64_t>(c.encoded[4 + k]) << (8 * k);
        blocksize |= std::to_integer<std::int64_t>(c.encoded[8 + k]) << (8 * k);
      }
      leftover += !(flags & 0x2) && blocksize > 0 && nbytes > blocksize && nbytes % blocksize;
    }
  }
  // The corpus reaches the paths it is meant to.
  EXPECT_GT(shuffled, 300u);
  EXPECT_GT(memcpyed, 50u);
  EXPECT_GT(leftover, 300u);
}

TEST(BloscFraming, SplitStreamsAndRawSplits) {
  // A typesize-4 byte-shuffled chunk of half random, half constant data with forced splits:
  // 4 streams per block (libblosc makes split blocks at least 64 KiB), some stored raw (a
  // stream whose size equals its decoded size).
  std::mt19937_64 rng(5);
  auto data = make_data(rng, 4 * 65536 + 3 * 4096, 1);
  for (std::size_t i = 0; i < data.size(); i += 4) data[i] = data[i + 1] = 0;
  const auto c = blosc_chunk(data, "lz4", 5, 1, 4, 8192, BLOSC_ALWAYS_SPLIT);
  std::uint32_t blocksize = 0;
  for (int k = 0; k < 4; ++k)
    blocksize |= std::to_integer<std::uint32_t>(c.encoded[8 + k]) << (8 * k);
  const std::size_t full = data.size() / blocksize, leftover = data.size() % blocksize ? 1 : 0;
  ASSERT_GE(full, 2u);
  dec::ChunkFrames frames;
  dec::frame_chunk(c.encoded, c.encoding, frames);
  std::size_t copies = 0, lz4 = 0;
  for (const auto& t : frames.tasks) {
    copies += t.codec == dec::TaskCodec::Copy;
    lz4 += t.codec == dec::TaskCodec::Lz4;
  }
  EXPECT_EQ(frames.tasks.size(), 4 * full + leftover);  // the leftover block is not split
  EXPECT_GT(copies, 0u);
  EXPECT_GT(lz4, 0u);
  EXPECT_EQ(frames.shuffles.size(), full + leftover);
  EXPECT_EQ(host_decode(c), c.expected);
}

TEST(BloscFraming, ZstdStreamsDecodeWithTheProjectsDecoder) {
  // The zstd stand-in is gone (merge of the zstd branch): the project's own zstd decoder
  // (HostDecoders' default, the device kernel's code) decodes blosc-zstd as libblosc does.
  std::mt19937_64 rng(9);
  const auto c =
      blosc_chunk(make_data(rng, 100000, 2), "zstd", 7, 2, 1, 0, BLOSC_FORWARD_COMPAT_SPLIT);
  ASSERT_TRUE(has_zstd_task(c));
  EXPECT_EQ(host_decode(c, dec::HostDecoders()), c.expected);
}

TEST(BloscFraming, CorruptHeadersAreFormatErrors) {
  std::mt19937_64 rng(13);
  const auto c = blosc_chunk(make_data(rng, 50000, 0), "lz4", 5, 1, 4, 8192, BLOSC_ALWAYS_SPLIT);
  auto expect_error = [&](std::vector<std::byte> bytes, const std::string& needle) {
    std::vector<std::byte> out(c.encoding.decoded_bytes());
    try {
      dec::decode_chunk_host(std::span<const std::byte>(bytes), c.encoding, out, with_libzstd());
      ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
    } catch (const FormatError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto put32 = [](std::vector<std::byte>& b, std::size_t at, std::uint32_t v) {
    for (int k = 0; k < 4; ++k) b[at + k] = std::byte{static_cast<unsigned char>(v >> (8 * k))};
  };
  // Every truncation of the chunk.
  for (std::size_t n = 0; n < c.encoded.size(); n += (n < 200 ? 1 : 97))
    expect_error(std::vector<std::byte>(c.encoded.begin(), c.encoded.begin() + n), "blosc");
  {  // a header claiming 2 GiB decoded bytes in a small chunk
    auto b = c.encoded;
    put32(b, 4, 0x7FFFFFFFu);
    expect_error(b, "decoded bytes");
  }
  {  // compressed size larger than the chunk
    auto b = c.encoded;
    put32(b, 12, static_cast<std::uint32_t>(b.size() + 1));
    expect_error(b, "compressed bytes");
  }
  {  // a block size of 1: too many blocks for the start table
    auto b = c.encoded;
    put32(b, 8, 1);
    expect_error(b, "start table");
  }
  {  // block size 0
    auto b = c.encoded;
    put32(b, 8, 0);
    expect_error(b, "invalid header");
  }
  {  // a block start outside the chunk
    auto b = c.encoded;
    put32(b, 16, static_cast<std::uint32_t>(b.size()));
    expect_error(b, "outside");
  }
  {  // a stream claiming more bytes than remain
    auto b = c.encoded;
    std::uint32_t start = 0;
    for (int k = 0; k < 4; ++k) start |= std::to_integer<std::uint32_t>(b[16 + k]) << (8 * k);
    put32(b, start, 0x7FFFFFF0u);
    expect_error(b, "remain");
  }
  {  // version from the future, flag from the future, blosclz, zlib
    auto b = c.encoded;
    b[0] = std::byte{3};
    expect_error(b, "version");
    b = c.encoded;
    b[2] |= std::byte{0x08};
    expect_error(b, "flags");
    b = c.encoded;
    b[2] = (b[2] & std::byte{0x1F});
    expect_error(b, "blosclz");
    b = c.encoded;
    b[2] = (b[2] & std::byte{0x1F}) | std::byte{3 << 5};
    expect_error(b, "zlib");
  }
  {  // memcpyed flag with the wrong sizes
    auto b = c.encoded;
    b[2] |= std::byte{0x02};
    expect_error(b, "memcpyed");
  }
}

TEST(BloscFraming, DamagedChunksNeverCrash) {
  std::mt19937_64 rng(17);
  std::vector<CorpusChunk> chunks = {
      blosc_chunk(make_data(rng, 30000, 0), "lz4", 5, 1, 4, 4096, BLOSC_ALWAYS_SPLIT),
      blosc_chunk(make_data(rng, 30000, 2), "lz4hc", 9, 2, 1, 4096, BLOSC_NEVER_SPLIT),
      blosc_chunk(make_data(rng, 30000, 0), "zstd", 7, 2, 8, 0, BLOSC_AUTO_SPLIT),
      lz4_chunk(make_data(rng, 30000, 0), 0)};
  for (const auto& c : chunks)
    for (int trial = 0; trial < 2000; ++trial) {
      auto bytes = c.encoded;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) {
        // Mostly the header and start table, where the framing reads.
        const std::size_t limit =
            rng() % 2 ? std::min<std::size_t>(bytes.size(), 64) : bytes.size();
        bytes[rng() % limit] ^= std::byte{static_cast<unsigned char>(1 + rng() % 255)};
      }
      decode_damaged(c, std::move(bytes));
    }
}

TEST(ChunkEncoding, DeviceDecodableOnFixtures) {
  VCZ_REQUIRE_PYTHON_ZARR();
  auto v2 = zarr::open_store(vcztest::zarr::fixtures() / "v2");
  auto v3 = zarr::open_store(vcztest::zarr::fixtures() / "v3");
  auto check = [](const std::shared_ptr<const zarr::Store>& store, const std::string& name,
                  bool decodable, const std::string& reason = "") {
    const auto a = zarr::Array::open(store, name);
    std::string why;
    EXPECT_EQ(zarr::device_decodable(a.chunk_encoding(), &why), decodable) << name << ": " << why;
    if (!decodable) {
      EXPECT_NE(why.find(reason), std::string::npos) << name << ": " << why;
    }
  };
  for (const char* cname : {"zstd", "lz4", "lz4hc"})
    for (int shuffle : {0, 1, 2})
      check(v2, std::string("blosc_") + cname + "_" + std::to_string(shuffle), true);
  check(v2, "blosc_zlib_1", false, "zlib");
  check(v2, "blosc_blosclz_2", false, "blosclz");
  check(v2, "comp_zstd", true);
  check(v2, "comp_lz4", true);
  check(v2, "comp_none", true);
  check(v2, "dtype_i1", true);
  check(v2, "dtype_be_i4", false, "byteswap");
  check(v2, "dtype_be_u8", false, "byteswap");
  check(v2, "comp_zlib", false, "zlib");
  check(v2, "comp_gzip", false, "gzip");
  check(v2, "comp_bz2", false, "bz2");
  check(v2, "filter_delta", false, "delta");
  check(v2, "filter_packbits", false, "packbits");
  check(v2, "str_vlen", false, "string");
  check(v3, "bytes_blosc", true);
  check(v3, "bool_crc", true);
  check(v3, "sharded_end", true);
  check(v3, "sharded_start", true);
  check(v3, "big_gzip", false, "big-endian");
  check(v3, "transpose_zstd_crc", false, "transpose");
  check(v3, "sharded_strings", false, "string");
  check(v3, "transpose_sharded", false, "transpose");
  const auto sharded = zarr::Array::open(v3, "sharded_end").chunk_encoding();
  ASSERT_EQ(sharded.layout, zarr::ChunkEncoding::Layout::Sharding);
  EXPECT_EQ(sharded.sharding->inner_shape, (std::vector<std::int64_t>{4, 4, 2}));
  EXPECT_TRUE(sharded.sharding->index_at_end);
  ASSERT_EQ(sharded.sharding->inner.bytes_codecs.size(), 1u);
  EXPECT_EQ(sharded.sharding->inner.bytes_codecs[0].shuffle, 2);
  EXPECT_EQ(sharded.sharding->inner.bytes_codecs[0].typesize, 1);
  const auto blosc = zarr::Array::open(v2, "blosc_lz4hc_1").chunk_encoding();
  ASSERT_EQ(blosc.bytes_codecs.size(), 1u);
  EXPECT_EQ(blosc.bytes_codecs[0].kind, zarr::BytesCodecSpec::Kind::Blosc);
  EXPECT_EQ(blosc.bytes_codecs[0].cname, "lz4hc");
  EXPECT_EQ(blosc.bytes_codecs[0].level, 5);
  EXPECT_EQ(blosc.bytes_codecs[0].shuffle, 1);
  EXPECT_EQ(blosc.itemsize, 4);
}

TEST(StoreDecode, EveryDecodableChunkMatchesReadChunk) {
  const auto stores = test_stores();
  if (stores.empty()) GTEST_SKIP() << "skipped: neither python3-zarr nor ../shared/data is here";
  std::size_t arrays = 0, chunks = 0, absent = 0, skipped = 0;
  for (const auto& path : stores) {
    const auto store = zarr::open_store(path);
    for_each_array(store, [&](const zarr::Array& a) {
      std::string why;
      if (!zarr::device_decodable(a.chunk_encoding(), &why)) {
        ++skipped;
        return;
      }
      ++arrays;
      std::vector<std::byte> got(static_cast<std::size_t>(a.chunk_bytes()));
      std::vector<std::byte> want(got.size());
      for (const auto& idx : chunk_indices(a)) {
        const auto encoded = a.read_chunk_encoded(idx);
        std::optional<std::span<const std::byte>> span;
        if (encoded) span = encoded->span();
        absent += !encoded;
        try {
          dec::decode_chunk_host(span, a.chunk_encoding(), got, with_libzstd());
        } catch (const FormatError& e) {
          FAIL() << path << " " << a.chunk_key(idx) << ": " << e.what();
        }
        a.read_chunk(idx, want);
        ASSERT_EQ(got, want) << path << " " << a.chunk_key(idx);
        ++chunks;
      }
    });
  }
  std::cout << "decoded " << chunks << " chunks (" << absent << " absent) of " << arrays
            << " arrays in " << stores.size() << " stores; " << skipped
            << " arrays have no device decoder\n";
  EXPECT_GT(arrays, 20u);
}
