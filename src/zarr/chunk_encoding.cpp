// ChunkEncoding: which chunk encodings a device can decode (backend/cuda/decode), and why not.

#include <fmt/format.h>

#include "vczstats/zarr.hpp"

namespace vczstats::zarr {

std::uint64_t ChunkEncoding::decoded_bytes() const {
  std::uint64_t n = static_cast<std::uint64_t>(itemsize);
  for (auto s : shape) n *= static_cast<std::uint64_t>(s);
  return n;
}

namespace {

/// Array dimensions a shard's inner-chunk copy handles (backend/cuda/decode/ScatterJob).
constexpr std::size_t kMaxShardDims = 8;

bool fail(std::string* why_not, std::string reason) {
  if (why_not) *why_not = std::move(reason);
  return false;
}

/// The bytes-to-bytes codecs: crc32c checksums (verified on the host) outermost, below them at
/// most one compressor with a device decoder.
bool bytes_codecs_decodable(const std::vector<BytesCodecSpec>& codecs, std::string* why_not) {
  using Kind = BytesCodecSpec::Kind;
  std::size_t n = codecs.size();
  while (n > 0 && codecs[n - 1].kind == Kind::Crc32c) --n;
  if (n > 1) return fail(why_not, "more than one compressor (only one is decoded on the device)");
  if (n == 0) return true;
  const BytesCodecSpec& c = codecs[0];
  switch (c.kind) {
    case Kind::Zstd:
    case Kind::Lz4:
      return true;
    case Kind::Blosc:
      if (c.cname == "lz4" || c.cname == "lz4hc" || c.cname == "zstd") return true;
      return fail(why_not, fmt::format("blosc's internal codec {} has no device decoder", c.cname));
    case Kind::Crc32c:
      return fail(why_not, "crc32c below a compressor (only outermost checksums are checked)");
    default:
      return fail(why_not, fmt::format("codec {} has no device decoder", c.name));
  }
}

}  // namespace

bool device_decodable(const ChunkEncoding& encoding, std::string* why_not) {
  if (!encoding.array_filters.empty())
    return fail(why_not, fmt::format("array-to-array codec {} has no device decoder",
                                     encoding.array_filters.front()));
  switch (encoding.layout) {
    case ChunkEncoding::Layout::Strings:
      return fail(why_not, "string data is decoded on the host");
    case ChunkEncoding::Layout::Bytes:
      if (encoding.big_endian && encoding.itemsize > 1)
        return fail(why_not, "big-endian multi-byte elements have no device decoder");
      return bytes_codecs_decodable(encoding.bytes_codecs, why_not);
    case ChunkEncoding::Layout::Sharding: {
      const ShardingSpec& s = *encoding.sharding;
      if (encoding.shape.size() > kMaxShardDims)
        return fail(why_not,
                    fmt::format("sharded arrays of more than {} dimensions", kMaxShardDims));
      for (const auto& c : encoding.bytes_codecs)
        if (c.kind != BytesCodecSpec::Kind::Crc32c)
          return fail(why_not, fmt::format("codec {} over whole shards", c.name));
      if (s.inner.layout == ChunkEncoding::Layout::Sharding)
        return fail(why_not, "nested sharding");
      // The index is read on the host: little-endian uint64 pairs, optionally checksummed.
      const ChunkEncoding& index = s.index;
      bool index_ok = index.array_filters.empty() && index.layout == ChunkEncoding::Layout::Bytes &&
                      !index.big_endian;
      for (const auto& c : index.bytes_codecs)
        index_ok = index_ok && c.kind == BytesCodecSpec::Kind::Crc32c;
      if (!index_ok) return fail(why_not, "shard index codecs other than bytes(little) and crc32c");
      std::string inner_why;
      if (!device_decodable(s.inner, &inner_why))
        return fail(why_not, "sharding inner chunks: " + inner_why);
      return true;
    }
  }
  return fail(why_not, "unknown layout");
}

}  // namespace vczstats::zarr
