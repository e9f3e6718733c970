// Hostile input found by the fuzz targets of issue 16's second campaign (fuzz/zip.cpp as
// zip_ranges, fuzz/gpu_decode.cpp): a zip read through byte ranges, and inputs on which the GPU
// decoders' host code and the reference libraries disagree because the reference accepts what
// the format calls corrupt (the device decoders must keep refusing it).

#include <gtest/gtest.h>
#include <lz4.h>
#include <zstd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "backend/cuda/decode/lz4_decode.hpp"
#include "backend/cuda/decode/zstd_decode.hpp"
#include "test_util.hpp"
#include "vczstats/error.hpp"
#include "zarr/stores.hpp"

using namespace vcztest;
namespace dec = vczstats::cuda::decode;
namespace zd = vczstats::zarr::detail;

namespace {

/// A task decoding @p src into @p dst with @p codec.
dec::DecodeTask task_of(const std::vector<std::uint8_t>& src, std::vector<std::uint8_t>& dst,
                        dec::TaskCodec codec) {
  dec::DecodeTask t;
  t.src = src.data();
  t.src_size = src.size();
  t.dst = dst.data();
  t.dst_size = dst.size();
  t.codec = codec;
  return t;
}

/// A remote-like byte source over bytes in memory that records the prefetch hints it gets.
class RecordingSource final : public zd::ByteSource {
 public:
  explicit RecordingSource(std::vector<std::byte> bytes) : bytes_(std::move(bytes)) {}
  const std::string& name() const override { return name_; }
  std::uint64_t size() const override { return bytes_.size(); }
  bool remote() const override { return true; }
  vczstats::zarr::Bytes read(std::uint64_t offset, std::uint64_t length) const override {
    if (offset > size() || length > size() - offset)
      throw vczstats::FormatError("read past the end");
    const auto first = bytes_.begin() + static_cast<std::ptrdiff_t>(offset);
    return vczstats::zarr::Bytes(
        std::vector<std::byte>(first, first + static_cast<std::ptrdiff_t>(length)));
  }
  void prefetch(std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges) const override {
    hints.insert(hints.end(), ranges.begin(), ranges.end());
  }
  mutable std::vector<std::pair<std::uint64_t, std::uint64_t>> hints;

 private:
  std::vector<std::byte> bytes_;
  std::string name_ = "ranges.zip";
};

std::vector<std::byte> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

std::uint32_t le32(const std::vector<std::byte>& b, std::size_t at) {
  std::uint32_t v = 0;
  for (int k = 0; k < 4; ++k) v |= std::to_integer<std::uint32_t>(b[at + k]) << (8 * k);
  return v;
}

}  // namespace

TEST(HostileZip, PrefetchHintsOnlyRangesOfTheArchive) {
  // A zip whose entries' local header offsets point far past the end (found by
  // fuzz_zip_ranges): the store hinted (offset, 0) beyond the file to its byte source, and for
  // two such entries an extent from one to the other, gigabytes past the end.
  TempDir dir;
  std::filesystem::create_directories(dir / "d");
  for (const char* name : {"a", "b", "c"}) std::ofstream(dir / "d" / name) << "hello " << name;
  zd::zip_directory(dir / "d", dir / "d.zip", nullptr, false);
  auto bytes = read_file(dir / "d.zip");
  const std::size_t eocd = bytes.size() - 22;  // no archive comment
  ASSERT_EQ(le32(bytes, eocd), 0x06054b50u);
  std::size_t at = le32(bytes, eocd + 16);  // the central directory
  // The first two entries' local header offsets, far apart and past the end; the third intact.
  for (const std::uint32_t bad : {0x70000000u, 0x7FFFFFF0u}) {
    ASSERT_EQ(le32(bytes, at), 0x02014b50u);
    for (int k = 0; k < 4; ++k)
      bytes[at + 42 + k] = static_cast<std::byte>((bad >> (8 * k)) & 0xFF);
    const auto u16 = [&](std::size_t i) { return le32(bytes, i) & 0xFFFF; };
    at += 46 + u16(at + 28) + u16(at + 30) + u16(at + 32);
  }
  auto source = std::make_shared<const RecordingSource>(bytes);
  const auto store = zd::open_zip_store(source);
  std::vector<std::string> keys;
  for (const auto& e : store->list("")) keys.push_back(e.key);
  ASSERT_EQ(keys.size(), 3u);
  store->prefetch(keys);
  EXPECT_EQ(source->hints.size(), 1u);  // the intact entry only
  for (const auto& [offset, length] : source->hints) {
    EXPECT_LE(offset, bytes.size());
    EXPECT_LE(length, bytes.size() - std::min<std::uint64_t>(offset, bytes.size()));
    EXPECT_GT(length, 0u);
  }
  int failures = 0;
  for (const auto& k : keys) {
    try {
      (void)store->get(k);
    } catch (const vczstats::FormatError& e) {
      ++failures;
      EXPECT_NE(std::string(e.what()).find("corrupt zip file"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(failures, 2);  // the damaged entries, cleanly; the other still reads
}

TEST(HostileGpuDecode, ZstdSequenceStreamWithUnreadBitsIsCorrupt) {
  // One compressed block (2 literals, one sequence of match length 20 and repeat offset 1) whose
  // sequence bit stream ends 16 bits after what the sequence reads, then an RLE block. The
  // states are updated after every sequence but the last (RFC 8878): 16 bits stay unread, so
  // the stream is corrupt. libzstd 1.5.4 reads one more state update and
  // takes it (found by fuzz_gpu_zstd); the device decoder must not.
  const std::vector<std::uint8_t> frame = {0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x48, 0x54, 0x00,
                                           0x00, 0x10, 0x00, 0x00, 0x01, 0x00, 0xfb, 0xff,
                                           0x34, 0xc0, 0x02, 0x03, 0x17, 0x01, 0x00};
  std::vector<std::uint8_t> out(8950);
  const dec::DecodeTask t = task_of(frame, out, dec::TaskCodec::Zstd);
  dec::ZstdDecodeStats stats;
  const auto s = dec::zstd_decode_host(t, {}, &stats);
  EXPECT_EQ(s.error, static_cast<std::int32_t>(dec::DecodeError::Corrupt));
  EXPECT_EQ(s.produced, 22u);  // the block's 22 bytes were written before its end check
  EXPECT_EQ(stats.unread_sequence_bits, 16u);
  EXPECT_EQ(stats.last_update_bits, 16u);
  EXPECT_EQ(stats.libzstd_unchecked, 1u);
  // A sequence bit stream read to its end decodes: the same block as a whole frame of its own
  // from libzstd's encoder round-trips (a control: the decoder is not refusing everything).
  std::vector<std::uint8_t> raw(3000);
  for (std::size_t i = 0; i < raw.size(); ++i) raw[i] = static_cast<std::uint8_t>(i % 7 + i / 500);
  std::vector<std::uint8_t> z(ZSTD_compressBound(raw.size()));
  z.resize(ZSTD_compress(z.data(), z.size(), raw.data(), raw.size(), 3));
  std::vector<std::uint8_t> back(raw.size());
  ASSERT_EQ(dec::zstd_decode_host(task_of(z, back, dec::TaskCodec::Zstd)).error, 0);
  EXPECT_EQ(back, raw);
}

TEST(HostileGpuDecode, ZstdSequenceStreamReadPastItsStartIsCorrupt) {
  // fuzz_gpu_zstd's input dba640640a28... (fuzz/corpus/gpu_zstd): one frame, window 512 KiB, no
  // content size, two compressed blocks. The first decodes to 131072 bytes; the second has 1120
  // sequences whose bit stream runs out at sequence 1109 (0-based) and is read 113 bits past
  // its start by the end. RFC 8878 section 3.1.1.3.2.1.2 (Decoding Sequences): "At the end,
  // the bitstream shall be entirely consumed; otherwise, the bitstream is considered
  // corrupted"; bits before its start are not in it. libzstd 1.5.4 lets an
  // overflowed stream pass its end check (BIT_DStream_overflow is above _completed) and runs
  // the remaining sequences with bits that are not in the input: it decodes 140035 bytes.
  // zstd's educational decoder refuses it as we do. The device decoder must stop before the
  // first sequence that read past the start, with Corrupt, whatever the output size (it used
  // to run on, reading zeros, and fail with OutputOverflow in a buffer of libzstd's size).
  const auto file = read_file(std::filesystem::path(VCZ_SOURCE_DIR) / "fuzz" / "corpus" /
                              "gpu_zstd" / "dba640640a28419b5ce4444ffdbc12f974b8aac5");
  ASSERT_EQ(file.size(), 24043u);
  std::vector<std::uint8_t> frame(file.size());
  std::memcpy(frame.data(), file.data(), file.size());
  std::vector<std::uint8_t> ref(1 << 20);
  const std::size_t n = ZSTD_decompress(ref.data(), ref.size(), frame.data(), frame.size());
  ASSERT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  ASSERT_EQ(n, 140035u);  // the leniency this test documents
  for (const std::size_t size : {n, n + 100, std::size_t{1} << 20}) {
    std::vector<std::uint8_t> out(size);
    dec::ZstdDecodeStats stats;
    const auto s = dec::zstd_decode_host(task_of(frame, out, dec::TaskCodec::Zstd), {}, &stats);
    EXPECT_EQ(s.error, static_cast<std::int32_t>(dec::DecodeError::Corrupt)) << size;
    EXPECT_EQ(s.detail, 0u);
    // 131072 bytes of the first block and 8857 of the second: its sequences 0..1108, which read
    // only bits of the stream, and agree with libzstd.
    EXPECT_EQ(s.produced, 139929u) << size;
    EXPECT_EQ(std::memcmp(out.data(), ref.data(), 139929), 0);
    EXPECT_EQ(stats.unread_sequence_bits, 0u);
    EXPECT_EQ(stats.libzstd_unchecked, 1u);
  }
  // A control: the first block alone (marked last, the rest cut) is a valid frame that both
  // decoders take, to the same bytes.
  std::vector<std::uint8_t> first(frame.begin(), frame.begin() + 22450);
  first[6] |= 1;  // Last_Block of the first block header (frame header: 6 bytes)
  std::vector<std::uint8_t> ref1(1 << 18);
  const std::size_t n1 = ZSTD_decompress(ref1.data(), ref1.size(), first.data(), first.size());
  ASSERT_EQ(n1, 131072u);
  std::vector<std::uint8_t> out1(n1);
  ASSERT_EQ(dec::zstd_decode_host(task_of(first, out1, dec::TaskCodec::Zstd)).error, 0);
  EXPECT_EQ(std::memcmp(out1.data(), ref1.data(), n1), 0);
}

TEST(HostileGpuDecode, Lz4MatchOffsetZeroIsCorrupt) {
  // "0 is an invalid offset value" (LZ4 block format). liblz4 1.9.4 takes it and copies bytes it
  // never wrote (found by fuzz_gpu_lz4); the device decoder refuses it at the offset's bytes.
  // The block: 8 literals, a match of 4 at offset 0, then 12 last literals (the end conditions
  // of the format hold: the match starts 16 bytes before the end, the last 5 bytes are
  // literals).
  std::vector<std::uint8_t> block = {0x80, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 0x00, 0x00, 0xC0,
                                     'i',  'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r',  's',  't'};
  std::vector<std::uint8_t> out(8 + 4 + 12);
  const dec::DecodeTask t = task_of(block, out, dec::TaskCodec::Lz4);
  const auto s = dec::lz4_decode_host(t);
  EXPECT_EQ(s.error, static_cast<std::int32_t>(dec::DecodeError::Corrupt));
  EXPECT_EQ(s.detail, 9u);
  // With offset 1 the block is valid: the 'h' repeated, then the last literals, as liblz4 says.
  block[9] = 1;
  const auto ok = dec::lz4_decode_host(t);
  ASSERT_EQ(ok.error, 0);
  EXPECT_EQ(std::string(out.begin(), out.end()), "abcdefghhhhhijklmnopqrst");
  std::vector<char> ref(out.size());
  ASSERT_EQ(LZ4_decompress_safe(reinterpret_cast<const char*>(block.data()), ref.data(),
                                static_cast<int>(block.size()), static_cast<int>(ref.size())),
            static_cast<int>(ref.size()));
  EXPECT_EQ(std::memcmp(ref.data(), out.data(), out.size()), 0);
}
