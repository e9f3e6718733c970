// Fuzz targets of the GPU decoders' host side (src/backend/cuda/decode/, plain C++: built without
// nvcc), differential against the reference libraries. VCZ_FUZZ_GPU names the target:
//  - "framing": one selector byte (an array layout the device decodes: blosc1 with lz4 or zstd
//    and every shuffle, numcodecs zstd and lz4, v3 sharding_indexed with crc32c), then a stored
//    chunk. The chunk goes through the device path's framing and host decoders
//    (decode_chunk_host: lz4_decode_host and zstd_decode_host, the kernels' code) and through
//    Array::read_chunk (libblosc, libzstd, liblz4).
//  - "zstd": one zstd stream (frames and skippable frames), decoded by zstd_decode_host and by
//    libzstd.
//  - "lz4": one raw LZ4 block, decoded by lz4_decode_host and by liblz4.
// A finding: a crash or sanitizer report on any input; on input the reference decodes, a failure
// of the device path or different bytes, except where the reference accepts what the format
// calls corrupt (lz4_zero_offset, zstd_unchecked below). Input only the device path accepts
// is not one either: it skips zstd checksums unless asked, and trailing bytes after a chunk.

#include <lz4.h>
#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "backend/cuda/decode/framing.hpp"
#include "backend/cuda/decode/lz4_decode.hpp"
#include "backend/cuda/decode/zstd_decode.hpp"
#include "fuzz_support.hpp"

namespace {

namespace dec = vczstats::cuda::decode;

/// VCZ_FUZZ_VERBOSE=1: say which inputs both decoders accepted (to check that seeds reach the
/// comparisons).
const bool kVerbose = std::getenv("VCZ_FUZZ_VERBOSE") != nullptr;

/// Largest decoded size tried for raw streams (the reference's output buffer).
constexpr std::size_t kMaxRaw = std::size_t{1} << 20;

/// A finding: say what differs, then stop as a crash does.
[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "gpu_decode finding: %s\n", what.c_str());
  __builtin_trap();
}

std::string describe(const std::vector<std::uint8_t>& out, const dec::DecodeStatus& s) {
  return dec::decode_error_name(s.error) + " at input byte " + std::to_string(s.detail) + ", " +
         std::to_string(s.produced) + " of " + std::to_string(out.size()) + " bytes written";
}

std::string v2(const std::string& dtype, const std::string& shape, const std::string& compressor) {
  return R"({"zarr_format": 2, "shape": )" + shape + R"(, "chunks": )" + shape + R"(, "dtype": ")" +
         dtype + R"(", "compressor": )" + compressor +
         R"(, "fill_value": 0, "order": "C", "filters": null})";
}

std::string v3(const std::string& type, const std::string& shape, const std::string& chunk,
               const std::string& codecs) {
  return R"({"zarr_format": 3, "node_type": "array", "shape": )" + shape + R"(, "data_type": ")" +
         type + R"(", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": )" +
         chunk + R"(}}, "chunk_key_encoding": {"name": "default"}, "fill_value": 7, "codecs": )" +
         codecs + "}";
}

std::string sharded(const std::string& inner, const std::string& index, const char* location) {
  return R"([{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 3], "codecs": )" +
         inner + R"(, "index_codecs": )" + index + R"(, "index_location": ")" + location +
         R"("}}])";
}

const char* kBytes = R"({"name": "bytes", "configuration": {"endian": "little"}})";

/// The layouts of the framing target, in selector order (fuzz/make_seeds.py mirrors them).
std::vector<std::string> framing_layouts() {
  const std::string bytes = kBytes;
  const std::string zstd = R"({"name": "zstd", "configuration": {"level": 3, "checksum": false}})";
  const std::string blosc =
      R"({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}})";
  const std::string crc = R"({"name": "crc32c"})";
  return {
      v2("<i4", "[300]", R"({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1})"),
      v2("<i8", "[500]", R"({"id": "blosc", "cname": "zstd", "clevel": 5, "shuffle": 2})"),
      v2("|u1", "[4, 7]", R"({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 0})"),
      v2("<i2", "[1000]", R"({"id": "zstd", "level": 3})"),
      v2("<i4", "[300]", R"({"id": "lz4", "acceleration": 1})"),
      v3("int16", "[16, 12]", "[8, 12]",
         sharded("[" + bytes + ", " + zstd + "]", "[" + bytes + ", " + crc + "]", "end")),
      v3("int16", "[16, 12]", "[8, 12]",
         sharded("[" + bytes + ", " + blosc + "]", "[" + bytes + "]", "start")),
      v3("uint8", "[64]", "[64]", "[" + bytes + ", " + crc + "]"),
  };
}

/// Where the reference libraries accept input the format calls corrupt (the device decoders
/// refuse it; that is no finding):
///  - liblz4 1.9 takes a match offset of 0 (the LZ4 block format: "an invalid offset") and
///    copies bytes it has not written;
///  - libzstd 1.5.4 skips some checks of the format (ZstdDecodeStats::libzstd_unchecked).
bool lz4_zero_offset(const dec::DecodeTask& t, const dec::DecodeStatus& s) {
  return s.error == static_cast<std::int32_t>(dec::DecodeError::Corrupt) &&
         s.detail + 1 < t.src_size && t.src[s.detail] == 0 && t.src[s.detail + 1] == 0;
}
bool zstd_unchecked(const dec::DecodeStatus& s, const dec::ZstdDecodeStats& stats) {
  return s.error == static_cast<std::int32_t>(dec::DecodeError::Corrupt) &&
         stats.libzstd_unchecked > 0;
}

/// The last failed task of the framing target's decoders, and whether the reference accepts it
/// by one of the leniencies above.
bool last_failure_lenient = false;

dec::DecodeStatus lz4_recording(const dec::DecodeTask& t) {
  const auto s = dec::lz4_decode_host(t);
  if (s.error != 0) last_failure_lenient = lz4_zero_offset(t, s);
  return s;
}
dec::DecodeStatus zstd_recording(const dec::DecodeTask& t) {
  dec::ZstdDecodeStats stats;
  const auto s = dec::zstd_decode_host(t, {}, &stats);
  if (s.error != 0) last_failure_lenient = zstd_unchecked(s, stats);
  return s;
}

void framing(const std::uint8_t* data, std::size_t size) {
  using namespace vczstats;
  static const std::vector<std::string> kLayouts = framing_layouts();
  if (size == 0) return;
  const std::string& doc = kLayouts[data[0] % kLayouts.size()];
  auto store = std::make_shared<fuzz::MemoryStore>();
  store->put(doc.starts_with(R"({"zarr_format": 2)") ? "a/.zarray" : "a/zarr.json", doc);
  const auto array = zarr::Array::open(store, "a");  // the layouts are valid: no catch
  std::string why;
  if (!zarr::device_decodable(array.chunk_encoding(), &why)) __builtin_trap();  // a bad layout
  const std::vector<std::int64_t> index(static_cast<std::size_t>(array.ndim()), 0);
  const auto chunk = fuzz::as_bytes(data + 1, size - 1);
  store->put(array.chunk_key(index), chunk);
  const auto n = static_cast<std::size_t>(array.chunk_bytes());
  std::vector<std::byte> expected(n), got(n);
  bool reference_ok = true;
  try {
    array.read_chunk(index, expected);
  } catch (const Error&) {
    reference_ok = false;
  }
  // The chunk copied to a buffer of its exact size, so that a read past it is seen.
  const std::vector<std::byte> encoded(chunk.begin(), chunk.end());
  dec::HostDecoders decoders;
  decoders.lz4 = lz4_recording;
  decoders.zstd = zstd_recording;
  last_failure_lenient = false;
  try {
    dec::decode_chunk_host(std::span<const std::byte>(encoded), array.chunk_encoding(), got,
                           decoders);
  } catch (const FormatError& e) {
    if (reference_ok && !last_failure_lenient)
      fail("layout " + std::to_string(data[0] % kLayouts.size()) +
           ": the reference decodes the chunk, the device path fails: " + e.what());
    return;
  }
  if (reference_ok && got != expected)
    fail("layout " + std::to_string(data[0] % kLayouts.size()) + ": different bytes");
  if (kVerbose)
    std::fprintf(stderr, "layout %d: reference %s, device path ok\n", data[0] % 8,
                 reference_ok ? "ok" : "failed");
}

dec::DecodeTask task(const std::uint8_t* src, std::size_t src_size, std::vector<std::uint8_t>& dst,
                     dec::TaskCodec codec) {
  dec::DecodeTask t;
  t.src = src;
  t.src_size = src_size;
  t.dst = dst.data();
  t.dst_size = dst.size();
  t.codec = codec;
  return t;
}

void zstd(const std::uint8_t* data, std::size_t size) {
  static std::vector<std::uint8_t> reference(kMaxRaw);
  const std::size_t n = ZSTD_decompress(reference.data(), reference.size(), data, size);
  if (!ZSTD_isError(n)) {
    // libzstd verified any checksums: so must the device path when asked.
    for (const bool verify : {false, true}) {
      std::vector<std::uint8_t> out(n);
      dec::ZstdHostOptions options;
      options.verify_checksum = verify;
      dec::ZstdDecodeStats stats;
      const auto s =
          dec::zstd_decode_host(task(data, size, out, dec::TaskCodec::Zstd), options, &stats);
      if (zstd_unchecked(s, stats)) return;
      if (s.error != 0 || s.produced != n)
        fail("libzstd decodes " + std::to_string(n) + " bytes, the device decoder (checksum " +
             (verify ? "verified" : "skipped") + "): " + describe(out, s));
      if (n > 0 && std::memcmp(out.data(), reference.data(), n) != 0) fail("different bytes");
    }
    if (kVerbose) std::fprintf(stderr, "zstd: %zu bytes, both decoders agree\n", n);
    return;
  }
  // Invalid input (or larger than kMaxRaw): the decoder must fail cleanly, into the size the
  // frame header claims when it is small, else a small buffer.
  const unsigned long long claimed = ZSTD_getFrameContentSize(data, size);
  const std::size_t want =
      claimed <= kMaxRaw ? static_cast<std::size_t>(claimed) : std::size_t{4096};
  std::vector<std::uint8_t> out(want);
  (void)dec::zstd_decode_host(task(data, size, out, dec::TaskCodec::Zstd), {});
}

void lz4(const std::uint8_t* data, std::size_t size) {
  static std::vector<char> reference(kMaxRaw);
  const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(data), reference.data(),
                                    static_cast<int>(size), static_cast<int>(reference.size()));
  if (n >= 0) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(n));
    const auto t = task(data, size, out, dec::TaskCodec::Lz4);
    const auto s = dec::lz4_decode_host(t);
    if (lz4_zero_offset(t, s)) return;
    if (s.error != 0 || s.produced != static_cast<std::uint64_t>(n))
      fail("liblz4 decodes " + std::to_string(n) +
           " bytes, the device decoder: " + describe(out, s));
    if (n > 0 && std::memcmp(out.data(), reference.data(), static_cast<std::size_t>(n)) != 0)
      fail("different bytes");
    if (kVerbose) std::fprintf(stderr, "lz4: %d bytes, both decoders agree\n", n);
    return;
  }
  // Invalid input: clean failure into a buffer of a size taken from the input's length.
  std::vector<std::uint8_t> out(size * 4 + 16);
  (void)dec::lz4_decode_host(task(data, size, out, dec::TaskCodec::Lz4));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view what = VCZ_FUZZ_GPU;
  if (what == "framing")
    framing(data, size);
  else if (what == "zstd")
    zstd(data, size);
  else if (what == "lz4")
    lz4(data, size);
  else
    __builtin_trap();
  return 0;
}
