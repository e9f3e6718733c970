// Array-to-bytes codecs (raw bytes, vlen strings, fixed-width strings, sharding) and
// array-to-array codecs (transpose, byte order, delta, packbits).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vczstats/error.hpp"
#include "zarr/pipeline.hpp"
#include "zarr/stores.hpp"

namespace vczstats::zarr::detail {

std::vector<std::string> ArrayToArrayCodec::decode_strings(std::vector<std::string>) const {
  throw FormatError(fmt::format("codec {} cannot decode strings", describe()));
}

void ArrayToBytesCodec::decode(ByteSpan, MutableByteSpan) const {
  throw FormatError(fmt::format("codec {} cannot decode numeric data", describe()));
}

std::vector<std::string> ArrayToBytesCodec::decode_strings(ByteSpan) const {
  throw FormatError(
      fmt::format("codec {} cannot decode strings", describe().empty() ? "bytes" : describe()));
}

void ArrayToBytesCodec::decode_strings_into(ByteSpan in, StringTable& out) const {
  for (const auto& s : decode_strings(in)) out.push_back(s);
}

void byteswap_elements(MutableByteSpan data, int itemsize) {
  if (itemsize <= 1) return;
  const auto size = static_cast<std::size_t>(itemsize);
  for (std::size_t i = 0; i + size <= data.size(); i += size)
    std::reverse(data.begin() + static_cast<std::ptrdiff_t>(i),
                 data.begin() + static_cast<std::ptrdiff_t>(i + size));
}

namespace {

[[noreturn]] void size_mismatch(std::string_view what, std::uint64_t got, std::uint64_t expected) {
  throw FormatError(fmt::format("{} holds {} bytes, expected {}", what, got, expected));
}

// ---- raw bytes ----------------------------------------------------------------------------------

class RawBytesCodec final : public ArrayToBytesCodec {
 public:
  RawBytesCodec(ElementLayout layout, bool big_endian)
      : ArrayToBytesCodec(std::move(layout)), swap_(big_endian && this->layout().itemsize > 1) {}
  std::string describe() const override { return swap_ ? "bytes(big)" : ""; }
  std::optional<std::uint64_t> encoded_size() const override { return layout().nbytes(); }
  bool passthrough() const override { return !swap_; }
  void describe_encoding(ChunkEncoding& encoding) const override {
    encoding.layout = ChunkEncoding::Layout::Bytes;
    encoding.big_endian = swap_;
  }
  void decode(ByteSpan in, MutableByteSpan out) const override {
    if (in.size() != out.size()) size_mismatch("chunk", in.size(), out.size());
    std::copy(in.begin(), in.end(), out.begin());
    if (swap_) byteswap_elements(out, layout().itemsize);
  }

 private:
  bool swap_;
};

// ---- strings ------------------------------------------------------------------------------------

class VlenCodec final : public ArrayToBytesCodec {
 public:
  VlenCodec(ElementLayout layout, std::string name)
      : ArrayToBytesCodec(std::move(layout)), name_(std::move(name)) {}
  std::string describe() const override { return name_; }
  std::vector<std::string> decode_strings(ByteSpan in) const override {
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(layout().elements()));
    for_each_item(in, [&](std::string_view s) { out.emplace_back(s); });
    return out;
  }
  void decode_strings_into(ByteSpan in, StringTable& out) const override {
    for_each_item(in, [&](std::string_view s) { out.push_back(s); });
  }

 private:
  // Call fn(item) for every item of a chunk: a little-endian u32 count, then per item a u32
  // length and its bytes.
  template <class Fn>
  void for_each_item(ByteSpan in, Fn&& fn) const {
    const std::uint64_t n = layout().elements();
    if (in.size() < 4) throw FormatError(fmt::format("{}: chunk shorter than its header", name_));
    const std::uint32_t count = load_le<std::uint32_t>(in.data());
    if (count != n)
      throw FormatError(fmt::format("{}: chunk holds {} items, expected {}", name_, count, n));
    std::size_t pos = 4;
    for (std::uint64_t i = 0; i < n; ++i) {
      if (in.size() - pos < 4)
        throw FormatError(fmt::format("{}: chunk truncated at item {}", name_, i));
      const std::uint32_t len = load_le<std::uint32_t>(in.data() + pos);
      pos += 4;
      if (in.size() - pos < len)
        throw FormatError(fmt::format("{}: chunk truncated at item {}", name_, i));
      fn(std::string_view(reinterpret_cast<const char*>(in.data() + pos), len));
      pos += len;
    }
    if (pos != in.size())
      throw FormatError(
          fmt::format("{}: {} unexpected bytes after the last item", name_, in.size() - pos));
  }

  std::string name_;
};

}  // namespace

void append_utf8(std::string& s, std::uint32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;  // not a character
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else if (cp < 0x800) {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    s += static_cast<char>(0xE0 | (cp >> 12));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    s += static_cast<char>(0xF0 | (cp >> 18));
    s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

namespace {

class FixedStringCodec final : public ArrayToBytesCodec {
 public:
  FixedStringCodec(ElementLayout layout, std::int64_t chars, bool ucs4, bool big_endian)
      : ArrayToBytesCodec(std::move(layout)), chars_(chars), ucs4_(ucs4), big_(big_endian) {}
  std::string describe() const override { return ""; }
  std::optional<std::uint64_t> encoded_size() const override {
    return layout().elements() * element_bytes();
  }
  std::vector<std::string> decode_strings(ByteSpan in) const override {
    const std::uint64_t n = layout().elements();
    const std::uint64_t width = element_bytes();
    if (in.size() != n * width) size_mismatch("chunk", in.size(), n * width);
    std::vector<std::string> out(static_cast<std::size_t>(n));
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::byte* p = in.data() + i * width;
      std::string& s = out[static_cast<std::size_t>(i)];
      if (!ucs4_) {
        std::size_t len = static_cast<std::size_t>(width);
        while (len > 0 && p[len - 1] == std::byte{0}) --len;
        s.assign(reinterpret_cast<const char*>(p), len);
        continue;
      }
      std::int64_t len = chars_;
      auto code_point = [&](std::int64_t c) {
        const std::byte* q = p + 4 * c;
        if (!big_) return load_le<std::uint32_t>(q);
        const std::array<std::byte, 4> le{q[3], q[2], q[1], q[0]};
        return load_le<std::uint32_t>(le.data());
      };
      while (len > 0 && code_point(len - 1) == 0) --len;
      for (std::int64_t c = 0; c < len; ++c) append_utf8(s, code_point(c));
    }
    return out;
  }

 private:
  std::uint64_t element_bytes() const {
    return static_cast<std::uint64_t>(chars_) * (ucs4_ ? 4u : 1u);
  }
  std::int64_t chars_;
  bool ucs4_;
  bool big_;
};

// ---- sharding -----------------------------------------------------------------------------------

class ShardingCodec final : public ArrayToBytesCodec {
 public:
  ShardingCodec(ElementLayout shard, std::vector<std::int64_t> inner_shape,
                std::shared_ptr<const CodecPipeline> inner,
                std::shared_ptr<const CodecPipeline> index, bool index_at_end,
                std::vector<std::byte> fill, std::string fill_string)
      : ArrayToBytesCodec(std::move(shard)),
        inner_shape_(std::move(inner_shape)),
        inner_(std::move(inner)),
        index_(std::move(index)),
        index_at_end_(index_at_end),
        fill_(std::move(fill)),
        fill_string_(std::move(fill_string)) {
    const auto& shape = layout().shape;
    if (inner_shape_.size() != shape.size())
      throw FormatError("sharding_indexed: chunk_shape has the wrong number of dimensions");
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (inner_shape_[d] <= 0 || shape[d] % inner_shape_[d] != 0)
        throw FormatError(
            fmt::format("sharding_indexed: inner chunk shape [{}] does not divide shard shape [{}]",
                        fmt::join(inner_shape_, ", "), fmt::join(shape, ", ")));
      grid_.push_back(shape[d] / inner_shape_[d]);
    }
    auto size = index_->encoded_size();
    if (!size) throw FormatError("sharding_indexed: index_codecs must produce a fixed-size index");
    index_bytes_ = *size;
  }

  std::string describe() const override {
    return fmt::format("sharding([{}]: {})", fmt::join(inner_shape_, ","), inner_->describe());
  }

  void describe_encoding(ChunkEncoding& encoding) const override {
    encoding.layout = ChunkEncoding::Layout::Sharding;
    auto spec = std::make_shared<ShardingSpec>();
    spec->inner_shape = inner_shape_;
    spec->index_at_end = index_at_end_;
    spec->inner = inner_->encoding(fill_);
    spec->index = index_->encoding(std::vector<std::byte>(8, std::byte{0}));
    encoding.sharding = std::move(spec);
  }

  void decode(ByteSpan in, MutableByteSpan out) const override {
    std::vector<std::byte> scratch;
    const int itemsize = layout().itemsize;
    for_each_inner(in, [&](std::span<const std::int64_t> start, std::optional<ByteSpan> data) {
      const auto box = contiguous_box_offset(layout().shape, start, inner_shape_);
      const auto inner_bytes = static_cast<std::size_t>(inner_->layout().nbytes());
      MutableByteSpan target;
      if (box) {
        target = out.subspan(static_cast<std::size_t>(*box) * static_cast<std::size_t>(itemsize),
                             inner_bytes);
      } else {
        scratch.resize(inner_bytes);
        target = scratch;
      }
      if (data)
        inner_->decode(*data, target);
      else
        fill_elements(target, fill_);
      if (box) return;
      const std::vector<std::int64_t> zero(start.size(), 0);
      for_each_run(inner_shape_, zero, layout().shape, start, inner_shape_,
                   [&](std::int64_t s, std::int64_t d, std::int64_t run) {
                     std::memcpy(out.data() + d * itemsize, target.data() + s * itemsize,
                                 static_cast<std::size_t>(run * itemsize));
                   });
    });
  }

  std::vector<std::string> decode_strings(ByteSpan in) const override {
    std::vector<std::string> out(static_cast<std::size_t>(layout().elements()));
    for_each_inner(in, [&](std::span<const std::int64_t> start, std::optional<ByteSpan> data) {
      std::vector<std::string> inner;
      if (data)
        inner = inner_->decode_strings(*data);
      else
        inner.assign(static_cast<std::size_t>(inner_->layout().elements()), fill_string_);
      const std::vector<std::int64_t> zero(start.size(), 0);
      for_each_run(inner_shape_, zero, layout().shape, start, inner_shape_,
                   [&](std::int64_t s, std::int64_t d, std::int64_t run) {
                     for (std::int64_t i = 0; i < run; ++i)
                       out[static_cast<std::size_t>(d + i)] =
                           std::move(inner[static_cast<std::size_t>(s + i)]);
                   });
    });
    return out;
  }

 private:
  using InnerFn = std::function<void(std::span<const std::int64_t>, std::optional<ByteSpan>)>;

  /// Call fn(start, bytes) for each inner chunk (bytes nullopt when it is empty).
  void for_each_inner(ByteSpan shard, const InnerFn& fn) const {
    if (shard.size() < index_bytes_)
      throw FormatError(
          fmt::format("sharding_indexed: shard holds {} bytes, less than its {}-byte index",
                      shard.size(), index_bytes_));
    const auto index_span = index_at_end_ ? shard.last(static_cast<std::size_t>(index_bytes_))
                                          : shard.first(static_cast<std::size_t>(index_bytes_));
    std::vector<std::uint64_t> index(static_cast<std::size_t>(index_->layout().elements()));
    try {
      index_->decode(index_span, std::as_writable_bytes(std::span(index)));
    } catch (const FormatError& e) {
      throw FormatError(fmt::format("sharding_indexed: shard index: {}", e.what()));
    }
    constexpr std::uint64_t kEmpty = std::numeric_limits<std::uint64_t>::max();
    const std::size_t n = grid_.size();
    std::vector<std::int64_t> cell(n, 0), start(n, 0);
    const std::size_t cells = index.size() / 2;
    for (std::size_t i = 0; i < cells; ++i) {
      // cell = the C-order multi-index of inner chunk i
      std::size_t rest = i;
      for (std::size_t d = n; d-- > 0;) {
        const auto g = static_cast<std::size_t>(grid_[d]);
        cell[d] = static_cast<std::int64_t>(rest % g);
        rest /= g;
        start[d] = cell[d] * inner_shape_[d];
      }
      const std::uint64_t offset = index[2 * i];
      const std::uint64_t nbytes = index[2 * i + 1];
      try {
        if (offset == kEmpty && nbytes == kEmpty) {
          fn(std::span<const std::int64_t>(start), std::nullopt);
          continue;
        }
        if (offset > shard.size() || nbytes > shard.size() - offset)
          throw FormatError(fmt::format("range [{}, {}) lies outside the {}-byte shard", offset,
                                        offset + nbytes, shard.size()));
        fn(std::span<const std::int64_t>(start),
           std::optional<ByteSpan>(
               shard.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(nbytes))));
      } catch (const FormatError& e) {
        throw FormatError(fmt::format("inner chunk ({}): {}", fmt::join(cell, ","), e.what()));
      }
    }
  }

  std::vector<std::int64_t> inner_shape_;
  std::vector<std::int64_t> grid_;
  std::shared_ptr<const CodecPipeline> inner_;
  std::shared_ptr<const CodecPipeline> index_;
  bool index_at_end_;
  std::uint64_t index_bytes_ = 0;
  std::vector<std::byte> fill_;
  std::string fill_string_;
};

// ---- array-to-array -----------------------------------------------------------------------------

class TransposeCodec final : public ArrayToArrayCodec {
 public:
  TransposeCodec(ElementLayout decoded, ElementLayout encoded, std::vector<int> order)
      : ArrayToArrayCodec(std::move(decoded), std::move(encoded)), order_(std::move(order)) {}

  std::string describe() const override {
    return fmt::format("transpose({})", fmt::join(order_, ","));
  }

  void decode(ByteSpan in, MutableByteSpan out) const override {
    switch (decoded().itemsize) {
      case 1:
        permute<std::uint8_t>(in, out);
        break;
      case 2:
        permute<std::uint16_t>(in, out);
        break;
      case 4:
        permute<std::uint32_t>(in, out);
        break;
      case 8:
        permute<std::uint64_t>(in, out);
        break;
      default:
        throw FormatError("transpose: unsupported element size");
    }
  }

  std::vector<std::string> decode_strings(std::vector<std::string> in) const override {
    std::vector<std::string> out(in.size());
    for_each_row([&](std::int64_t dst, std::int64_t src, std::int64_t stride, std::int64_t len) {
      for (std::int64_t i = 0; i < len; ++i)
        out[static_cast<std::size_t>(dst + i)] =
            std::move(in[static_cast<std::size_t>(src + i * stride)]);
    });
    return out;
  }

 private:
  template <class T>
  void permute(ByteSpan in, MutableByteSpan out) const {
    for_each_row([&](std::int64_t dst, std::int64_t src, std::int64_t stride, std::int64_t len) {
      for (std::int64_t i = 0; i < len; ++i) {
        T v;
        std::memcpy(&v, in.data() + (src + i * stride) * std::int64_t{sizeof(T)}, sizeof(T));
        std::memcpy(out.data() + (dst + i) * std::int64_t{sizeof(T)}, &v, sizeof(T));
      }
    });
  }

  /// fn(dst, src, src_stride, len) for each row along the last decoded dimension.
  template <class Fn>
  void for_each_row(Fn&& fn) const {
    const auto& shape = decoded().shape;
    const auto& enc = encoded().shape;
    const std::size_t n = shape.size();
    if (decoded().elements() == 0) return;
    if (n == 0) {
      fn(std::int64_t{0}, std::int64_t{0}, std::int64_t{1}, std::int64_t{1});
      return;
    }
    std::vector<std::int64_t> enc_stride(n, 1), src_stride(n, 0);
    for (std::size_t k = n - 1; k > 0; --k) enc_stride[k - 1] = enc_stride[k] * enc[k];
    for (std::size_t k = 0; k < n; ++k)
      src_stride[static_cast<std::size_t>(order_[k])] = enc_stride[k];
    std::vector<std::int64_t> index(n, 0);
    std::int64_t src = 0, dst = 0;
    const std::int64_t len = shape[n - 1];
    for (;;) {
      fn(dst, src, src_stride[n - 1], len);
      dst += len;
      std::size_t j = n - 1;
      for (;;) {
        if (j == 0) return;
        --j;
        src += src_stride[j];
        if (++index[j] < shape[j]) break;
        src -= src_stride[j] * shape[j];
        index[j] = 0;
      }
    }
  }

  std::vector<int> order_;
};

class ByteSwapCodec final : public ArrayToArrayCodec {
 public:
  explicit ByteSwapCodec(ElementLayout layout) : ArrayToArrayCodec(layout, layout) {}
  std::string describe() const override { return ""; }
  std::string filter_name() const override { return "byteswap (big-endian dtype)"; }
  void decode(ByteSpan in, MutableByteSpan out) const override {
    std::copy(in.begin(), in.end(), out.begin());
    byteswap_elements(out, decoded().itemsize);
  }
};

/// Read one stored number of encoding @p e as T. A floating-point value that does not fit an
/// integer T (NaN, infinite, out of range) is a FormatError naming @p codec, not a conversion
/// with undefined behaviour.
template <class T>
T load_number(const std::byte* p, const NumericEncoding& e, std::string_view codec) {
  std::array<std::byte, 8> raw{};
  const auto size = static_cast<std::size_t>(e.type.size);
  std::memcpy(raw.data(), p, size);
  if (e.big_endian) std::reverse(raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(size));
  auto as = [&]<class S>(S) {
    S v;
    std::memcpy(&v, raw.data(), sizeof(S));
    if constexpr (std::is_floating_point_v<S> && std::is_integral_v<T>) {
      const double t = std::trunc(static_cast<double>(v));
      const double upper = std::ldexp(1.0, std::numeric_limits<T>::digits);  // max + 1
      if (!(t >= static_cast<double>(std::numeric_limits<T>::lowest()) && t < upper))
        throw FormatError(fmt::format("{}: value {} does not fit the array's {}-bit integers",
                                      codec, static_cast<double>(v), sizeof(T) * 8));
    }
    return static_cast<T>(v);
  };
  switch (e.type.kind) {
    case DataKind::Int:
      switch (size) {
        case 1:
          return as(std::int8_t{});
        case 2:
          return as(std::int16_t{});
        case 4:
          return as(std::int32_t{});
        default:
          return as(std::int64_t{});
      }
    case DataKind::UInt:
    case DataKind::Bool:
      switch (size) {
        case 1:
          return as(std::uint8_t{});
        case 2:
          return as(std::uint16_t{});
        case 4:
          return as(std::uint32_t{});
        default:
          return as(std::uint64_t{});
      }
    case DataKind::Float:
      return size == 4 ? as(float{}) : as(double{});
    case DataKind::String:
      break;
  }
  return T{};
}

class DeltaCodec final : public ArrayToArrayCodec {
 public:
  DeltaCodec(ElementLayout decoded, ElementLayout encoded, NumericEncoding dtype,
             NumericEncoding astype, std::string description)
      : ArrayToArrayCodec(std::move(decoded), std::move(encoded)),
        dtype_(dtype),
        astype_(astype),
        description_(std::move(description)) {}
  std::string describe() const override { return description_; }

  void decode(ByteSpan in, MutableByteSpan out) const override {
    const DataType& t = dtype_.type;
    switch (t.kind) {
      case DataKind::Int:
        switch (t.size) {
          case 1:
            return run<std::int8_t>(in, out);
          case 2:
            return run<std::int16_t>(in, out);
          case 4:
            return run<std::int32_t>(in, out);
          default:
            return run<std::int64_t>(in, out);
        }
      case DataKind::UInt:
        switch (t.size) {
          case 1:
            return run<std::uint8_t>(in, out);
          case 2:
            return run<std::uint16_t>(in, out);
          case 4:
            return run<std::uint32_t>(in, out);
          default:
            return run<std::uint64_t>(in, out);
        }
      case DataKind::Float:
        return t.size == 4 ? run<float>(in, out) : run<double>(in, out);
      default:
        throw FormatError("delta: unsupported dtype");
    }
  }

 private:
  /// Cumulative sum in the decoded type (integers wrap around, as numpy's do).
  template <class T>
  void run(ByteSpan in, MutableByteSpan out) const {
    const std::uint64_t n = decoded().elements();
    const auto in_size = static_cast<std::size_t>(astype_.type.size);
    T sum{};
    for (std::uint64_t i = 0; i < n; ++i) {
      const T v = load_number<T>(in.data() + i * in_size, astype_, "delta");
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        sum = static_cast<T>(static_cast<U>(static_cast<U>(sum) + static_cast<U>(v)));
      } else {
        sum = static_cast<T>(sum + v);
      }
      std::byte* dst = out.data() + i * sizeof(T);
      std::memcpy(dst, &sum, sizeof(T));
      if (dtype_.big_endian) std::reverse(dst, dst + sizeof(T));
    }
  }

  NumericEncoding dtype_;
  NumericEncoding astype_;
  std::string description_;
};

class PackBitsCodec final : public ArrayToArrayCodec {
 public:
  PackBitsCodec(ElementLayout decoded, ElementLayout encoded)
      : ArrayToArrayCodec(std::move(decoded), std::move(encoded)) {}
  std::string describe() const override { return "packbits"; }
  void decode(ByteSpan in, MutableByteSpan out) const override {
    const std::uint64_t n = decoded().elements();
    if (in.empty()) throw FormatError("packbits: empty chunk");
    const auto padding = std::to_integer<unsigned>(in[0]);
    if (padding > 7 || (in.size() - 1) * 8 < padding || (in.size() - 1) * 8 - padding != n)
      throw FormatError(fmt::format("packbits: chunk holds {} bits, expected {}",
                                    (in.size() - 1) * 8 - std::min<std::size_t>(padding, 7), n));
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto byte = std::to_integer<unsigned>(in[1 + i / 8]);
      out[i] = std::byte{static_cast<unsigned char>((byte >> (7 - i % 8)) & 1u)};
    }
  }
};

}  // namespace

// ---- factories ----------------------------------------------------------------------------------

std::unique_ptr<const ArrayToBytesCodec> make_raw_bytes_codec(ElementLayout layout,
                                                              bool big_endian) {
  return std::make_unique<RawBytesCodec>(std::move(layout), big_endian);
}

std::unique_ptr<const ArrayToBytesCodec> make_vlen_codec(ElementLayout layout, std::string name) {
  return std::make_unique<VlenCodec>(std::move(layout), std::move(name));
}

std::unique_ptr<const ArrayToBytesCodec> make_fixed_string_codec(ElementLayout layout,
                                                                 std::int64_t chars, bool ucs4,
                                                                 bool big_endian) {
  return std::make_unique<FixedStringCodec>(std::move(layout), chars, ucs4, big_endian);
}

std::unique_ptr<const ArrayToBytesCodec> make_sharding_codec(
    ElementLayout shard, std::vector<std::int64_t> inner_shape,
    std::shared_ptr<const CodecPipeline> inner, std::shared_ptr<const CodecPipeline> index,
    bool index_at_end, std::vector<std::byte> fill, std::string fill_string) {
  return std::make_unique<ShardingCodec>(std::move(shard), std::move(inner_shape), std::move(inner),
                                         std::move(index), index_at_end, std::move(fill),
                                         std::move(fill_string));
}

std::unique_ptr<const ArrayToArrayCodec> make_transpose_codec(ElementLayout decoded,
                                                              std::vector<int> order) {
  const std::size_t n = decoded.shape.size();
  std::vector<bool> seen(n, false);
  if (order.size() != n)
    throw FormatError(fmt::format("transpose: order [{}] does not match {} dimensions",
                                  fmt::join(order, ","), n));
  ElementLayout encoded = decoded;
  for (std::size_t k = 0; k < n; ++k) {
    const int o = order[k];
    if (o < 0 || static_cast<std::size_t>(o) >= n || seen[static_cast<std::size_t>(o)])
      throw FormatError(
          fmt::format("transpose: order [{}] is not a permutation", fmt::join(order, ",")));
    seen[static_cast<std::size_t>(o)] = true;
    encoded.shape[k] = decoded.shape[static_cast<std::size_t>(o)];
  }
  return std::make_unique<TransposeCodec>(std::move(decoded), std::move(encoded), std::move(order));
}

std::unique_ptr<const ArrayToArrayCodec> make_byteswap_codec(ElementLayout layout) {
  return std::make_unique<ByteSwapCodec>(std::move(layout));
}

std::unique_ptr<const ArrayToArrayCodec> make_delta_codec(ElementLayout decoded,
                                                          NumericEncoding dtype,
                                                          NumericEncoding astype,
                                                          std::string description) {
  if (dtype.type.kind == DataKind::String || dtype.type.kind == DataKind::Bool ||
      astype.type.kind == DataKind::String)
    throw FormatError("delta: needs a numeric dtype");
  if (dtype.type.size != decoded.itemsize)
    throw FormatError(
        fmt::format("delta: dtype {} does not match the array's element size", dtype.type.name()));
  ElementLayout encoded = decoded;
  encoded.itemsize = astype.type.size;
  return std::make_unique<DeltaCodec>(std::move(decoded), std::move(encoded), dtype, astype,
                                      std::move(description));
}

std::unique_ptr<const ArrayToArrayCodec> make_packbits_codec(ElementLayout decoded) {
  if (decoded.itemsize != 1) throw FormatError("packbits: needs a bool array");
  const std::uint64_t n = decoded.elements();
  ElementLayout encoded{{static_cast<std::int64_t>(1 + (n + 7) / 8)}, 1};
  return std::make_unique<PackBitsCodec>(std::move(decoded), std::move(encoded));
}

}  // namespace vczstats::zarr::detail
