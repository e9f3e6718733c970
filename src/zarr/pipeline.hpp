#pragma once
/// @file pipeline.hpp
/// @brief Private: the codec pipeline of an array, in Zarr v3 terms: array-to-array codecs
/// (transpose; and v2's filters delta, packbits and byte order), one array-to-bytes codec
/// (raw bytes, vlen-utf8, fixed-width strings, sharding) and bytes-to-bytes codecs
/// (compressors, crc32c). Zarr v2 metadata is mapped onto the same model.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vczstats/zarr.hpp"
#include "zarr/codecs.hpp"

namespace vczstats::zarr {

namespace detail {

/// @brief Shape and bytes per element of an array as one codec sees it (itemsize 0: strings).
struct ElementLayout {
  std::vector<std::int64_t> shape;
  int itemsize = 1;
  /// @brief Number of elements.
  std::uint64_t elements() const;
  /// @brief Bytes of the whole array (0 for strings).
  std::uint64_t nbytes() const { return elements() * static_cast<std::uint64_t>(itemsize); }
};

/// @brief An array-to-array codec: decodes an array of layout encoded() into one of decoded().
class ArrayToArrayCodec {
 public:
  ArrayToArrayCodec(ElementLayout decoded, ElementLayout encoded)
      : decoded_(std::move(decoded)), encoded_(std::move(encoded)) {}
  virtual ~ArrayToArrayCodec() = default;
  /// @brief Short description, e.g. "transpose(1,0)".
  virtual std::string describe() const = 0;
  /// @brief Name in ChunkEncoding::array_filters (describe(), unless that is empty).
  virtual std::string filter_name() const { return describe(); }
  /// @brief Decode numeric data: in holds encoded().nbytes(), out decoded().nbytes().
  virtual void decode(ByteSpan in, MutableByteSpan out) const = 0;
  /// @brief Decode string data; only codecs that move elements around support it.
  virtual std::vector<std::string> decode_strings(std::vector<std::string> in) const;
  /// @brief Layout on the decoded side.
  const ElementLayout& decoded() const { return decoded_; }
  /// @brief Layout on the encoded side.
  const ElementLayout& encoded() const { return encoded_; }

 private:
  ElementLayout decoded_;
  ElementLayout encoded_;
};

/// @brief An array-to-bytes codec: turns bytes into an array of layout().
class ArrayToBytesCodec {
 public:
  explicit ArrayToBytesCodec(ElementLayout layout) : layout_(std::move(layout)) {}
  virtual ~ArrayToBytesCodec() = default;
  /// @brief Short description; empty when not worth showing (plain little-endian bytes).
  virtual std::string describe() const = 0;
  /// @brief Size of the encoded bytes when it follows from the layout alone.
  virtual std::optional<std::uint64_t> encoded_size() const { return std::nullopt; }
  /// @brief Whether the encoded bytes are the array itself (no byte swapping).
  virtual bool passthrough() const { return false; }
  /// @brief Set the layout fields of @p encoding (layout, big_endian, sharding); the default
  /// is a string layout.
  virtual void describe_encoding(ChunkEncoding& encoding) const {
    encoding.layout = ChunkEncoding::Layout::Strings;
  }
  /// @brief Decode numeric data into @p out (layout().nbytes() bytes).
  virtual void decode(ByteSpan in, MutableByteSpan out) const;
  /// @brief Decode string data (layout().elements() strings).
  virtual std::vector<std::string> decode_strings(ByteSpan in) const;
  /// @brief Decode string data, appending layout().elements() strings to @p out. The default
  /// goes through decode_strings; vlen-utf8 appends straight from the bytes.
  virtual void decode_strings_into(ByteSpan in, StringTable& out) const;
  /// @brief The decoded layout.
  const ElementLayout& layout() const { return layout_; }

 private:
  ElementLayout layout_;
};

}  // namespace detail

/// @brief The decoding pipeline of one array's chunks. Immutable, shared between threads.
class CodecPipeline {
 public:
  CodecPipeline(detail::ElementLayout layout,
                std::vector<std::unique_ptr<const detail::ArrayToArrayCodec>> array_codecs,
                std::unique_ptr<const detail::ArrayToBytesCodec> array_to_bytes,
                std::vector<std::unique_ptr<const detail::BytesToBytesCodec>> bytes_codecs);
  ~CodecPipeline();
  CodecPipeline(const CodecPipeline&) = delete;
  CodecPipeline& operator=(const CodecPipeline&) = delete;

  /// @brief Layout of a decoded chunk.
  const detail::ElementLayout& layout() const { return layout_; }
  /// @brief Encoded size of a chunk when every codec's output size follows from its input
  /// size (bytes and crc32c only, as shard indexes require).
  std::optional<std::uint64_t> encoded_size() const;
  /// @brief The codecs in encoding order, e.g. "delta(<i4) | blosc(zstd:7,shuffle)".
  std::string describe() const;
  /// @brief The normalised description of the pipeline; @p fill is one decoded element.
  ChunkEncoding encoding(const std::vector<std::byte>& fill) const;
  /// @brief Decode one numeric chunk into @p out (layout().nbytes() bytes). When the
  /// pipeline is a single compressor over native bytes, it decompresses straight into out.
  void decode(detail::ByteSpan encoded, detail::MutableByteSpan out) const;
  /// @brief Decode one chunk of strings.
  std::vector<std::string> decode_strings(detail::ByteSpan encoded) const;
  /// @brief Decode one chunk of strings, appending them to @p out.
  void decode_strings_into(detail::ByteSpan encoded, StringTable& out) const;

 private:
  /// Run the bytes-to-bytes codecs backwards. When @p direct is non-empty the last one writes
  /// there and an empty span is returned.
  detail::ByteSpan decode_bytes(detail::ByteSpan encoded, std::vector<std::byte>& a,
                                std::vector<std::byte>& b, detail::MutableByteSpan direct) const;

  detail::ElementLayout layout_;
  std::vector<std::unique_ptr<const detail::ArrayToArrayCodec>> array_codecs_;
  std::unique_ptr<const detail::ArrayToBytesCodec> array_to_bytes_;
  std::vector<std::unique_ptr<const detail::BytesToBytesCodec>> bytes_codecs_;
  /// Decoded size produced by each bytes codec, when known.
  std::vector<std::optional<std::uint64_t>> bytes_sizes_;
};

namespace detail {

/// @brief Swap the bytes of every @p itemsize-byte element of @p data in place.
void byteswap_elements(MutableByteSpan data, int itemsize);

/// @brief Call fn(src_offset, dst_offset, run) (in elements) for each contiguous run of the box
/// of extent @p count at @p src_start of an array shaped @p src_shape, which goes to
/// @p dst_start of an array shaped @p dst_shape (both C order).
template <class Fn>
void for_each_run(std::span<const std::int64_t> src_shape, std::span<const std::int64_t> src_start,
                  std::span<const std::int64_t> dst_shape, std::span<const std::int64_t> dst_start,
                  std::span<const std::int64_t> count, Fn&& fn) {
  const std::size_t n = count.size();
  if (n == 0) {
    fn(std::int64_t{0}, std::int64_t{0}, std::int64_t{1});
    return;
  }
  for (auto c : count)
    if (c <= 0) return;
  std::vector<std::int64_t> src_stride(n), dst_stride(n);
  src_stride[n - 1] = dst_stride[n - 1] = 1;
  for (std::size_t d = n - 1; d > 0; --d) {
    src_stride[d - 1] = src_stride[d] * src_shape[d];
    dst_stride[d - 1] = dst_stride[d] * dst_shape[d];
  }
  // Trailing dimensions that are whole on both sides merge into one contiguous run.
  std::size_t k = n - 1;
  std::int64_t run = count[k];
  while (k > 0 && count[k] == src_shape[k] && count[k] == dst_shape[k]) {
    --k;
    run *= count[k];
  }
  std::int64_t src = 0, dst = 0;
  for (std::size_t d = 0; d < n; ++d) {
    src += src_start[d] * src_stride[d];
    dst += dst_start[d] * dst_stride[d];
  }
  std::vector<std::int64_t> index(k, 0);
  for (;;) {
    fn(src, dst, run);
    std::size_t j = k;
    for (;;) {
      if (j == 0) return;
      --j;
      src += src_stride[j];
      dst += dst_stride[j];
      if (++index[j] < count[j]) break;
      src -= src_stride[j] * count[j];
      dst -= dst_stride[j] * count[j];
      index[j] = 0;
    }
  }
}

/// @brief The chunks that overlap a region [start, stop): index ranges per dimension, and the
/// i-th of them (C order of chunk indices).
struct RegionChunks {
  std::vector<std::int64_t> first, count;  // chunk index range per dimension
  std::int64_t total = 1;

  RegionChunks(std::span<const std::int64_t> start, std::span<const std::int64_t> stop,
               std::span<const std::int64_t> chunks) {
    for (std::size_t d = 0; d < chunks.size(); ++d) {
      if (stop[d] <= start[d]) {
        first.push_back(0);
        count.push_back(0);
        total = 0;
        continue;
      }
      const std::int64_t lo = start[d] / chunks[d];
      const std::int64_t hi = (stop[d] - 1) / chunks[d] + 1;
      first.push_back(lo);
      count.push_back(hi - lo);
      total *= hi - lo;
    }
  }

  std::vector<std::int64_t> index(std::int64_t i) const {
    std::vector<std::int64_t> idx(first.size());
    for (std::size_t d = first.size(); d-- > 0;) {
      idx[d] = first[d] + i % count[d];
      i /= count[d];
    }
    return idx;
  }
};

/// @brief Fill @p out with copies of the element @p fill.
void fill_elements(MutableByteSpan out, std::span<const std::byte> fill);

/// @brief The element offset of the box [start, start + count) in an array shaped @p shape
/// when the box is one contiguous run of memory; nullopt otherwise.
std::optional<std::int64_t> contiguous_box_offset(std::span<const std::int64_t> shape,
                                                  std::span<const std::int64_t> start,
                                                  std::span<const std::int64_t> count);

/// @brief How numbers are stored: decoded type plus byte order (v2 dtypes, delta).
struct NumericEncoding {
  DataType type;
  bool big_endian = false;
};

// ---- codec factories (array_codecs.cpp) -------------------------------------------------------

/// @brief Plain fixed-size elements, little- or big-endian (v3 "bytes", v2 numeric dtypes).
std::unique_ptr<const ArrayToBytesCodec> make_raw_bytes_codec(ElementLayout layout,
                                                              bool big_endian);
/// @brief numcodecs' VLenUTF8 / VLenBytes framing (count, then length-prefixed items).
std::unique_ptr<const ArrayToBytesCodec> make_vlen_codec(ElementLayout layout, std::string name);
/// @brief v2 fixed-width strings: |S n (bytes) or <U n / >U n (UCS-4), trailing NULs stripped.
std::unique_ptr<const ArrayToBytesCodec> make_fixed_string_codec(ElementLayout layout,
                                                                 std::int64_t chars, bool ucs4,
                                                                 bool big_endian);
/// @brief v3 sharding_indexed: a shard of inner chunks plus an index of (offset, nbytes).
std::unique_ptr<const ArrayToBytesCodec> make_sharding_codec(
    ElementLayout shard, std::vector<std::int64_t> inner_shape,
    std::shared_ptr<const CodecPipeline> inner, std::shared_ptr<const CodecPipeline> index,
    bool index_at_end, std::vector<std::byte> fill, std::string fill_string);
/// @brief v3 transpose with the permutation @p order.
std::unique_ptr<const ArrayToArrayCodec> make_transpose_codec(ElementLayout decoded,
                                                              std::vector<int> order);
/// @brief Big-endian to native byte order (v2 '>' dtypes).
std::unique_ptr<const ArrayToArrayCodec> make_byteswap_codec(ElementLayout layout);
/// @brief numcodecs Delta: encoded values are differences stored as @p astype.
std::unique_ptr<const ArrayToArrayCodec> make_delta_codec(ElementLayout decoded,
                                                          NumericEncoding dtype,
                                                          NumericEncoding astype,
                                                          std::string description);
/// @brief numcodecs PackBits: a padding-count byte, then bools as bits, most significant first.
std::unique_ptr<const ArrayToArrayCodec> make_packbits_codec(ElementLayout decoded);

}  // namespace detail
}  // namespace vczstats::zarr
