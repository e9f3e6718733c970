// Bytes-to-bytes codecs: blosc, zstd, lz4 (numcodecs framing), zlib, gzip, bz2, crc32c.
// Decompression contexts are thread-local so that chunks decode in parallel without locks.

#include "zarr/codecs.hpp"

#include <blosc.h>
#include <bzlib.h>
#include <isa-l/crc.h>
#include <lz4.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "vczstats/error.hpp"
#include "zarr/stores.hpp"

namespace vczstats::zarr::detail {
namespace {

using nlohmann::json;

/// Largest buffer a streaming decoder may grow to before the data is deemed corrupt: what one
/// chunk may decode to.
constexpr std::uint64_t kMaxClaimedSize = static_cast<std::uint64_t>(kMaxChunkBytes);

/// Compression ratios no real stream reaches (zstd's is about 32768:1, LZ4's 255:1, blosc's that
/// of its inner codec): a header claiming more is corrupt, and is refused before the buffer it
/// asks for is allocated.
constexpr std::uint64_t kMaxZstdRatio = 32768;
constexpr std::uint64_t kMaxLz4Ratio = 256;

/// Whether @p claimed decoded bytes are plausible for @p compressed stored bytes.
bool plausible(std::uint64_t claimed, std::size_t compressed, std::uint64_t ratio) {
  return claimed / ratio <= compressed + 1024 && claimed <= kMaxClaimedSize;
}

[[noreturn]] void corrupt(std::string_view codec) {
  throw FormatError(fmt::format("{} decompression failed (corrupt or truncated data)", codec));
}

[[noreturn]] void wrong_size(std::string_view codec, std::uint64_t got, std::uint64_t expected) {
  throw FormatError(fmt::format("{} data decodes to {} bytes, expected {}", codec, got, expected));
}

/// Grow a buffer geometrically while a streaming decoder fills it.
void grow(std::vector<std::byte>& out, std::string_view codec) {
  const std::size_t next = std::max<std::size_t>(out.size() * 2, 1 << 16);
  if (next > kMaxClaimedSize) corrupt(codec);
  out.resize(next);
}

// ---- zlib / gzip / raw deflate ----------------------------------------------------------------

/// One z_stream per thread and format, reset between uses.
class Inflater {
 public:
  explicit Inflater(int window_bits) {
    if (inflateInit2(&stream_, window_bits) != Z_OK)
      throw FormatError("cannot initialise zlib inflate");
  }
  ~Inflater() { inflateEnd(&stream_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  static Inflater& for_format(DeflateFormat format) {
    thread_local Inflater zlib_or_gzip(15 + 32);
    thread_local Inflater raw(-15);
    Inflater& z = format == DeflateFormat::Raw ? raw : zlib_or_gzip;
    inflateReset(&z.stream_);
    return z;
  }

  /// Inflate into out[pos...]; returns the zlib status and advances pos and the input.
  int step(ByteSpan& in, std::vector<std::byte>& out, std::size_t& pos) {
    constexpr std::size_t kMax = std::numeric_limits<uInt>::max();
    const std::size_t in_n = std::min(in.size(), kMax);
    const std::size_t out_n = std::min(out.size() - pos, kMax);
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
    stream_.avail_in = static_cast<uInt>(in_n);
    stream_.next_out = reinterpret_cast<Bytef*>(out.data() + pos);
    stream_.avail_out = static_cast<uInt>(out_n);
    const int rc = inflate(&stream_, Z_NO_FLUSH);
    in = in.subspan(in_n - stream_.avail_in);
    pos += out_n - stream_.avail_out;
    return rc;
  }

  int step_into(ByteSpan& in, MutableByteSpan& out) {
    constexpr std::size_t kMax = std::numeric_limits<uInt>::max();
    const std::size_t in_n = std::min(in.size(), kMax);
    const std::size_t out_n = std::min(out.size(), kMax);
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
    stream_.avail_in = static_cast<uInt>(in_n);
    stream_.next_out = reinterpret_cast<Bytef*>(out.data());
    stream_.avail_out = static_cast<uInt>(out_n);
    const int rc = inflate(&stream_, Z_NO_FLUSH);
    in = in.subspan(in_n - stream_.avail_in);
    out = out.subspan(out_n - stream_.avail_out);
    return rc;
  }

 private:
  z_stream stream_{};
};

}  // namespace

void inflate_exact(ByteSpan in, MutableByteSpan out, DeflateFormat format, std::string_view codec) {
  Inflater& z = Inflater::for_format(format);
  const std::size_t expected = out.size();
  MutableByteSpan rest = out;
  for (;;) {
    const std::size_t before_in = in.size();
    const std::size_t before_out = rest.size();
    const int rc = z.step_into(in, rest);
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) corrupt(codec);
    if (rest.empty()) {
      // Full: the stream must end here. Probe with a one-byte buffer.
      std::byte probe{};
      MutableByteSpan p(&probe, 1);
      const int end_rc = z.step_into(in, p);
      if (end_rc == Z_STREAM_END && p.size() == 1) return;
      if (p.empty()) wrong_size(codec, expected + 1, expected);  // at least one more byte
      corrupt(codec);
    }
    if (in.size() == before_in && rest.size() == before_out) corrupt(codec);  // truncated
  }
  if (!rest.empty()) wrong_size(codec, expected - rest.size(), expected);
}

std::vector<std::byte> inflate_all(ByteSpan in, DeflateFormat format, std::string_view codec) {
  Inflater& z = Inflater::for_format(format);
  std::vector<std::byte> out(std::max<std::size_t>(in.size() * 4, 1 << 12));
  std::size_t pos = 0;
  for (;;) {
    if (pos == out.size()) grow(out, codec);
    const std::size_t before_in = in.size();
    const std::size_t before_pos = pos;
    const int rc = z.step(in, out, pos);
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR) corrupt(codec);
    if (in.size() == before_in && pos == before_pos && pos < out.size()) corrupt(codec);
  }
  out.resize(pos);
  return out;
}

std::uint32_t crc32c(ByteSpan data) {
  // isa-l computes the raw register; CRC-32C starts from and ends with all bits inverted.
  unsigned int state = 0xFFFFFFFFu;
  while (!data.empty()) {
    const std::size_t n = std::min<std::size_t>(data.size(), 1u << 30);
    state = crc32_iscsi(reinterpret_cast<unsigned char*>(const_cast<std::byte*>(data.data())),
                        static_cast<int>(n), state);
    data = data.subspan(n);
  }
  return ~state;
}

namespace {

// ---- codecs -------------------------------------------------------------------------------------

class BloscCodec final : public BytesToBytesCodec {
 public:
  BloscCodec(std::string description, BytesCodecSpec spec)
      : description_(std::move(description)), spec_(std::move(spec)) {}
  std::string describe() const override { return description_; }
  BytesCodecSpec spec() const override { return spec_; }

  void decode_into(ByteSpan in, MutableByteSpan out) const override {
    const std::size_t n = decoded_size(in);
    if (n != out.size()) wrong_size("blosc", n, out.size());
    run(in, out);
  }
  std::vector<std::byte> decode(ByteSpan in) const override {
    const std::size_t n = decoded_size(in);
    if (!plausible(n, in.size(), kMaxZstdRatio))
      throw FormatError(
          fmt::format("blosc header claims {} bytes from {} stored bytes: corrupt", n, in.size()));
    std::vector<std::byte> out(n);
    run(in, out);
    return out;
  }

 private:
  static std::size_t decoded_size(ByteSpan in) {
    std::size_t nbytes = 0;
    if (in.size() < BLOSC_MIN_HEADER_LENGTH ||
        blosc_cbuffer_validate(in.data(), in.size(), &nbytes) != 0)
      corrupt("blosc");
    return nbytes;
  }
  static void run(ByteSpan in, MutableByteSpan out) {
    if (out.empty()) return;
    const int n = blosc_decompress_ctx(in.data(), out.data(), out.size(), 1);
    if (n < 0 || static_cast<std::size_t>(n) != out.size()) corrupt("blosc");
  }
  std::string description_;
  BytesCodecSpec spec_;
};

/// A ZSTD_DCtx per thread.
ZSTD_DCtx* zstd_context() {
  struct Deleter {
    void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
  };
  thread_local std::unique_ptr<ZSTD_DCtx, Deleter> ctx(ZSTD_createDCtx());
  if (!ctx) throw FormatError("cannot create a zstd decompression context");
  ZSTD_DCtx_reset(ctx.get(), ZSTD_reset_session_only);
  return ctx.get();
}

class ZstdCodec final : public BytesToBytesCodec {
 public:
  ZstdCodec(std::string description, BytesCodecSpec spec)
      : description_(std::move(description)), spec_(std::move(spec)) {}
  std::string describe() const override { return description_; }
  BytesCodecSpec spec() const override { return spec_; }

  void decode_into(ByteSpan in, MutableByteSpan out) const override {
    const unsigned long long claimed = ZSTD_getFrameContentSize(in.data(), in.size());
    if (claimed == ZSTD_CONTENTSIZE_ERROR) corrupt("zstd");
    if (claimed != ZSTD_CONTENTSIZE_UNKNOWN && claimed > out.size())
      wrong_size("zstd", claimed, out.size());
    const std::size_t n =
        ZSTD_decompressDCtx(zstd_context(), out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) corrupt("zstd");
    if (n != out.size()) wrong_size("zstd", n, out.size());
  }

  std::vector<std::byte> decode(ByteSpan in) const override {
    const unsigned long long claimed = ZSTD_getFrameContentSize(in.data(), in.size());
    if (claimed == ZSTD_CONTENTSIZE_ERROR) corrupt("zstd");
    // Trust the frame's size only when it is plausible (zstd expands at most ~32768:1);
    // otherwise the streaming path lets the data itself show how much there is.
    if (claimed != ZSTD_CONTENTSIZE_UNKNOWN && plausible(claimed, in.size(), kMaxZstdRatio) &&
        ZSTD_findFrameCompressedSize(in.data(), in.size()) == in.size()) {
      std::vector<std::byte> out(static_cast<std::size_t>(claimed));
      decode_into(in, out);
      return out;
    }
    // Unknown size or several frames: stream into a growing buffer.
    ZSTD_DCtx* ctx = zstd_context();
    std::vector<std::byte> out(std::max<std::size_t>(in.size() * 4, 1 << 12));
    ZSTD_inBuffer src{in.data(), in.size(), 0};
    std::size_t pos = 0;
    for (;;) {
      if (pos == out.size()) grow(out, "zstd");
      ZSTD_outBuffer dst{out.data(), out.size(), pos};
      const std::size_t rc = ZSTD_decompressStream(ctx, &dst, &src);
      if (ZSTD_isError(rc)) corrupt("zstd");
      const bool progressed = dst.pos != pos;
      pos = dst.pos;
      if (src.pos == src.size && rc == 0) break;
      if (src.pos == src.size && !progressed && pos < out.size()) corrupt("zstd");  // truncated
    }
    out.resize(pos);
    return out;
  }

 private:
  std::string description_;
  BytesCodecSpec spec_;
};

/// numcodecs' LZ4: a 4-byte little-endian decoded size, then one LZ4 block.
class Lz4Codec final : public BytesToBytesCodec {
 public:
  Lz4Codec(std::string description, BytesCodecSpec spec)
      : description_(std::move(description)), spec_(std::move(spec)) {}
  std::string describe() const override { return description_; }
  BytesCodecSpec spec() const override { return spec_; }

  void decode_into(ByteSpan in, MutableByteSpan out) const override {
    const std::size_t n = decoded_size(in);
    if (n != out.size()) wrong_size("lz4", n, out.size());
    run(in, out);
  }
  std::vector<std::byte> decode(ByteSpan in) const override {
    const std::size_t n = decoded_size(in);
    if (!plausible(n, in.size(), kMaxLz4Ratio))
      throw FormatError(
          fmt::format("lz4 header claims {} bytes from {} stored bytes: corrupt", n, in.size()));
    std::vector<std::byte> out(n);
    run(in, out);
    return out;
  }

 private:
  static std::size_t decoded_size(ByteSpan in) {
    if (in.size() < 4) corrupt("lz4");
    const auto n = static_cast<std::int32_t>(load_le<std::uint32_t>(in.data()));
    if (n < 0) corrupt("lz4");
    return static_cast<std::size_t>(n);
  }
  static void run(ByteSpan in, MutableByteSpan out) {
    if (in.size() - 4 > static_cast<std::size_t>(INT_MAX)) corrupt("lz4");
    const int n = LZ4_decompress_safe(
        reinterpret_cast<const char*>(in.data() + 4), reinterpret_cast<char*>(out.data()),
        static_cast<int>(in.size() - 4), static_cast<int>(out.size()));
    if (n < 0 || static_cast<std::size_t>(n) != out.size()) corrupt("lz4");
  }
  std::string description_;
  BytesCodecSpec spec_;
};

/// zlib and gzip: the container is recognised from the data.
class DeflateCodec final : public BytesToBytesCodec {
 public:
  DeflateCodec(std::string name, std::string description, BytesCodecSpec spec)
      : name_(std::move(name)), description_(std::move(description)), spec_(std::move(spec)) {}
  std::string describe() const override { return description_; }
  BytesCodecSpec spec() const override { return spec_; }
  void decode_into(ByteSpan in, MutableByteSpan out) const override {
    inflate_exact(in, out, DeflateFormat::ZlibOrGzip, name_);
  }
  std::vector<std::byte> decode(ByteSpan in) const override {
    return inflate_all(in, DeflateFormat::ZlibOrGzip, name_);
  }

 private:
  std::string name_;
  std::string description_;
  BytesCodecSpec spec_;
};

class Bz2Codec final : public BytesToBytesCodec {
 public:
  Bz2Codec(std::string description, BytesCodecSpec spec)
      : description_(std::move(description)), spec_(std::move(spec)) {}
  std::string describe() const override { return description_; }
  BytesCodecSpec spec() const override { return spec_; }

  void decode_into(ByteSpan in, MutableByteSpan out) const override {
    std::vector<std::byte> all = decode(in);
    if (all.size() != out.size()) wrong_size("bz2", all.size(), out.size());
    std::copy(all.begin(), all.end(), out.begin());
  }

  std::vector<std::byte> decode(ByteSpan in) const override {
    struct Stream {
      bz_stream s{};
      Stream() {
        if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK) corrupt("bz2");
      }
      ~Stream() { BZ2_bzDecompressEnd(&s); }
      Stream(const Stream&) = delete;
      Stream& operator=(const Stream&) = delete;
    } stream;
    constexpr std::size_t kMax = std::numeric_limits<unsigned>::max();
    std::vector<std::byte> out(std::max<std::size_t>(in.size() * 4, 1 << 12));
    std::size_t pos = 0;
    for (;;) {
      if (pos == out.size()) grow(out, "bz2");
      const std::size_t in_n = std::min(in.size(), kMax);
      const std::size_t out_n = std::min(out.size() - pos, kMax);
      bz_stream& s = stream.s;
      s.next_in = reinterpret_cast<char*>(const_cast<std::byte*>(in.data()));
      s.avail_in = static_cast<unsigned>(in_n);
      s.next_out = reinterpret_cast<char*>(out.data() + pos);
      s.avail_out = static_cast<unsigned>(out_n);
      const int rc = BZ2_bzDecompress(&s);
      const std::size_t used = in_n - s.avail_in;
      const std::size_t made = out_n - s.avail_out;
      in = in.subspan(used);
      pos += made;
      if (rc == BZ_STREAM_END) break;
      if (rc != BZ_OK) corrupt("bz2");
      if (used == 0 && made == 0) corrupt("bz2");  // truncated
    }
    out.resize(pos);
    return out;
  }

 private:
  std::string description_;
  BytesCodecSpec spec_;
};

/// crc32c: a 4-byte little-endian CRC-32C of the data appended to it.
class Crc32cCodec final : public BytesToBytesCodec {
 public:
  std::string describe() const override { return "crc32c"; }
  BytesCodecSpec spec() const override {
    BytesCodecSpec spec;
    spec.kind = BytesCodecSpec::Kind::Crc32c;
    spec.name = "crc32c";
    return spec;
  }
  std::optional<std::uint64_t> encoded_size(std::optional<std::uint64_t> decoded) const override {
    if (!decoded) return std::nullopt;
    return *decoded + 4;
  }
  void decode_into(ByteSpan in, MutableByteSpan out) const override {
    if (in.size() != out.size() + 4)
      throw FormatError(
          fmt::format("crc32c: data holds {} bytes, expected {}", in.size(), out.size() + 4));
    auto payload = verified(in);
    std::copy(payload.begin(), payload.end(), out.begin());
  }
  std::vector<std::byte> decode(ByteSpan in) const override {
    auto payload = verified(in);
    return {payload.begin(), payload.end()};
  }

 private:
  static ByteSpan verified(ByteSpan in) {
    if (in.size() < 4) throw FormatError("crc32c: data shorter than its 4-byte checksum");
    const ByteSpan payload = in.first(in.size() - 4);
    const std::uint32_t stored = load_le<std::uint32_t>(in.data() + payload.size());
    const std::uint32_t computed = crc32c(payload);
    if (stored != computed)
      throw FormatError(fmt::format("crc32c checksum mismatch (stored {:08x}, computed {:08x})",
                                    stored, computed));
    return payload;
  }
};

std::string shuffle_name(int shuffle) {
  switch (shuffle) {
    case 0:
      return "noshuffle";
    case 1:
      return "shuffle";
    case 2:
      return "bitshuffle";
    default:
      return "autoshuffle";
  }
}

/// An integer parameter: a JSON integer, or a float with an integral value, that fits a @p T.
/// (nlohmann's get<int>() converts 1e308 or 2^64 with undefined behaviour.)
template <class T = int>
T int_parameter(const json& value, const char* key) {
  constexpr auto lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  if (value.is_number_integer()) {
    if (value.is_number_unsigned()
            ? value.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi)
            : (value.get<std::int64_t>() >= lo && value.get<std::int64_t>() <= hi))
      return static_cast<T>(value.get<std::int64_t>());
  } else if (value.is_number_float()) {
    // hi + 1 is a power of two, exact as a double (hi itself may not be, for int64_t).
    const double d = value.get<double>();
    if (d >= static_cast<double>(lo) && d < static_cast<double>(hi) + 1.0 && d == std::trunc(d))
      return static_cast<T>(d);
  } else {
    throw FormatError(
        fmt::format("codec parameter '{}' must be an integer, not {}", key, value.dump()));
  }
  throw FormatError(fmt::format("codec parameter '{}' = {} is out of range", key, value.dump()));
}

template <class T>
T config_value(const json& config, const char* key, T fallback) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  if constexpr (std::is_integral_v<T>) {
    return int_parameter<T>(*it, key);
  } else {
    if (!it->is_string())
      throw FormatError(
          fmt::format("codec parameter '{}' must be a string, not {}", key, it->dump()));
    return it->get<T>();
  }
}

/// The shuffle of a blosc configuration: a number (numcodecs) or a name (v3).
int shuffle_code(const json& shuffle) {
  if (!shuffle.is_string()) return int_parameter(shuffle, "shuffle");
  const auto name = shuffle.get<std::string>();
  if (name == "noshuffle") return 0;
  if (name == "shuffle") return 1;
  if (name == "bitshuffle") return 2;
  return -1;
}

BytesCodecSpec codec_spec(BytesCodecSpec::Kind kind, std::string name, int level) {
  BytesCodecSpec spec;
  spec.kind = kind;
  spec.name = std::move(name);
  spec.level = level;
  return spec;
}

}  // namespace

std::unique_ptr<const BytesToBytesCodec> make_numcodecs_codec(const json& config) {
  using Kind = BytesCodecSpec::Kind;
  if (!config.is_object() || !config.contains("id") || !config["id"].is_string())
    throw FormatError(fmt::format("codec configuration without an id: {}", config.dump()));
  const auto id = config["id"].get<std::string>();
  if (id == "blosc") {
    const json shuffle = config.value("shuffle", json(1));
    const std::string shuffle_text = shuffle.is_string()
                                         ? shuffle.get<std::string>()
                                         : shuffle_name(int_parameter(shuffle, "shuffle"));
    BytesCodecSpec spec = codec_spec(Kind::Blosc, id, config_value<int>(config, "clevel", 5));
    spec.cname = config_value<std::string>(config, "cname", "lz4");
    spec.shuffle = shuffle_code(shuffle);
    spec.typesize = config_value<int>(config, "typesize", 0);
    spec.blocksize = config_value<std::int64_t>(config, "blocksize", 0);
    return std::make_unique<BloscCodec>(
        fmt::format("blosc({}:{},{})", spec.cname, spec.level, shuffle_text), std::move(spec));
  }
  if (id == "zstd") {
    const int level = config_value<int>(config, "level", 1);
    return std::make_unique<ZstdCodec>(fmt::format("zstd({})", level),
                                       codec_spec(Kind::Zstd, id, level));
  }
  if (id == "lz4") {
    const int acceleration = config_value<int>(config, "acceleration", 1);
    return std::make_unique<Lz4Codec>(fmt::format("lz4({})", acceleration),
                                      codec_spec(Kind::Lz4, id, acceleration));
  }
  if (id == "zlib" || id == "gzip") {
    const int level = config_value<int>(config, "level", 1);
    return std::make_unique<DeflateCodec>(
        id, fmt::format("{}({})", id, level),
        codec_spec(id == "zlib" ? Kind::Zlib : Kind::Gzip, id, level));
  }
  if (id == "bz2") {
    const int level = config_value<int>(config, "level", 1);
    return std::make_unique<Bz2Codec>(fmt::format("bz2({})", level),
                                      codec_spec(Kind::Bz2, id, level));
  }
  if (id == "crc32c") return std::make_unique<Crc32cCodec>();
  return nullptr;
}

std::unique_ptr<const BytesToBytesCodec> make_v3_bytes_codec(const std::string& name,
                                                             const json& configuration) {
  const json config = configuration.is_object() ? configuration : json::object();
  if (name == "blosc" || name == "zstd" || name == "gzip" || name == "crc32c") {
    json with_id = config;
    with_id["id"] = name;
    return make_numcodecs_codec(with_id);
  }
  // zarr-python 3 writes numcodecs' codecs as "numcodecs.<id>" with their usual parameters.
  if (name.starts_with("numcodecs.")) {
    json with_id = config;
    with_id["id"] = name.substr(std::string_view("numcodecs.").size());
    return make_numcodecs_codec(with_id);
  }
  return nullptr;
}

}  // namespace vczstats::zarr::detail
