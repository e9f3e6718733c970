// The codec pipeline: runs an array's codecs backwards over one chunk.

#include "zarr/pipeline.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "vczstats/error.hpp"

namespace vczstats::zarr {
namespace detail {

std::uint64_t ElementLayout::elements() const {
  std::uint64_t n = 1;
  for (auto s : shape) n *= static_cast<std::uint64_t>(s);
  return n;
}

void fill_elements(MutableByteSpan out, std::span<const std::byte> fill) {
  if (fill.empty() ||
      std::all_of(fill.begin(), fill.end(), [](std::byte b) { return b == std::byte{0}; })) {
    std::memset(out.data(), 0, out.size());
    return;
  }
  const std::size_t size = fill.size();
  if (out.size() < size) return;
  std::memcpy(out.data(), fill.data(), size);
  // Double the filled prefix until the buffer is full.
  std::size_t done = size;
  while (done < out.size()) {
    const std::size_t n = std::min(done, out.size() - done);
    std::memcpy(out.data() + done, out.data(), n);
    done += n;
  }
}

std::optional<std::int64_t> contiguous_box_offset(std::span<const std::int64_t> shape,
                                                  std::span<const std::int64_t> start,
                                                  std::span<const std::int64_t> count) {
  const std::size_t n = shape.size();
  // Trailing dimensions are whole, then one partial dimension, then dimensions of extent 1.
  std::size_t d = n;
  while (d > 0 && count[d - 1] == shape[d - 1]) --d;
  if (d > 0) --d;  // the partial (or first) dimension may have any extent
  for (std::size_t k = 0; k < d; ++k)
    if (count[k] != 1) return std::nullopt;
  std::int64_t offset = 0;
  for (std::size_t k = 0; k < n; ++k) offset = offset * shape[k] + start[k];
  return offset;
}

}  // namespace detail

using detail::ByteSpan;
using detail::MutableByteSpan;

CodecPipeline::CodecPipeline(
    detail::ElementLayout layout,
    std::vector<std::unique_ptr<const detail::ArrayToArrayCodec>> array_codecs,
    std::unique_ptr<const detail::ArrayToBytesCodec> array_to_bytes,
    std::vector<std::unique_ptr<const detail::BytesToBytesCodec>> bytes_codecs)
    : layout_(std::move(layout)),
      array_codecs_(std::move(array_codecs)),
      array_to_bytes_(std::move(array_to_bytes)),
      bytes_codecs_(std::move(bytes_codecs)) {
  std::optional<std::uint64_t> size = array_to_bytes_->encoded_size();
  for (const auto& codec : bytes_codecs_) {
    bytes_sizes_.push_back(size);
    size = codec->encoded_size(size);
  }
}

CodecPipeline::~CodecPipeline() = default;

std::optional<std::uint64_t> CodecPipeline::encoded_size() const {
  std::optional<std::uint64_t> size = array_to_bytes_->encoded_size();
  for (const auto& codec : bytes_codecs_) size = codec->encoded_size(size);
  return size;
}

std::string CodecPipeline::describe() const {
  std::string out;
  auto add = [&](const std::string& part) {
    if (part.empty()) return;
    if (!out.empty()) out += " | ";
    out += part;
  };
  for (const auto& c : array_codecs_) add(c->describe());
  add(array_to_bytes_->describe());
  for (const auto& c : bytes_codecs_) add(c->describe());
  return out.empty() ? "none" : out;
}

ChunkEncoding CodecPipeline::encoding(const std::vector<std::byte>& fill) const {
  ChunkEncoding e;
  e.shape = layout_.shape;
  e.itemsize = layout_.itemsize;
  for (const auto& c : array_codecs_) e.array_filters.push_back(c->filter_name());
  array_to_bytes_->describe_encoding(e);
  for (const auto& c : bytes_codecs_) e.bytes_codecs.push_back(c->spec());
  e.fill_value = fill;
  return e;
}

ByteSpan CodecPipeline::decode_bytes(ByteSpan encoded, std::vector<std::byte>& a,
                                     std::vector<std::byte>& b, MutableByteSpan direct) const {
  ByteSpan current = encoded;
  for (std::size_t i = bytes_codecs_.size(); i-- > 0;) {
    const auto& codec = *bytes_codecs_[i];
    if (i == 0 && direct.data() != nullptr) {
      codec.decode_into(current, direct);
      return {};
    }
    // Alternate buffers so the input of this step is never its output.
    std::vector<std::byte>& target = i % 2 == 0 ? a : b;
    if (const auto& size = bytes_sizes_[i]) {
      target.resize(static_cast<std::size_t>(*size));
      codec.decode_into(current, target);
    } else {
      target = codec.decode(current);
    }
    current = target;
  }
  return current;
}

void CodecPipeline::decode(ByteSpan encoded, MutableByteSpan out) const {
  if (out.size() != layout_.nbytes())
    throw UsageError(
        fmt::format("chunk buffer holds {} bytes, expected {}", out.size(), layout_.nbytes()));
  std::vector<std::byte> a, b;
  // Hot path: the last compressor writes the caller's buffer, no intermediate copy.
  if (array_codecs_.empty() && array_to_bytes_->passthrough() && !bytes_codecs_.empty()) {
    decode_bytes(encoded, a, b, out);
    return;
  }
  const ByteSpan bytes = decode_bytes(encoded, a, b, MutableByteSpan{});
  if (array_codecs_.empty()) {
    array_to_bytes_->decode(bytes, out);
    return;
  }
  std::vector<std::byte> current(static_cast<std::size_t>(array_to_bytes_->layout().nbytes()));
  array_to_bytes_->decode(bytes, current);
  for (std::size_t k = array_codecs_.size(); k-- > 0;) {
    const auto& codec = *array_codecs_[k];
    if (k == 0) {
      codec.decode(current, out);
      return;
    }
    std::vector<std::byte> next(static_cast<std::size_t>(codec.decoded().nbytes()));
    codec.decode(current, next);
    current.swap(next);
  }
}

std::vector<std::string> CodecPipeline::decode_strings(ByteSpan encoded) const {
  std::vector<std::byte> a, b;
  const ByteSpan bytes = decode_bytes(encoded, a, b, MutableByteSpan{});
  std::vector<std::string> strings = array_to_bytes_->decode_strings(bytes);
  for (std::size_t k = array_codecs_.size(); k-- > 0;)
    strings = array_codecs_[k]->decode_strings(std::move(strings));
  return strings;
}

void CodecPipeline::decode_strings_into(ByteSpan encoded, StringTable& out) const {
  if (!array_codecs_.empty()) {  // elements move around: decode them as strings first
    for (const auto& s : decode_strings(encoded)) out.push_back(s);
    return;
  }
  std::vector<std::byte> a, b;
  array_to_bytes_->decode_strings_into(decode_bytes(encoded, a, b, MutableByteSpan{}), out);
}

}  // namespace vczstats::zarr
