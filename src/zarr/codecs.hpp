#pragma once
/// @file codecs.hpp
/// @brief Private: bytes-to-bytes codecs (compressors and checksums) and the deflate helpers
/// the zip store shares with them. Codecs throw FormatError with a short message ("zstd
/// decompression failed ..."); the array that called them prefixes store, array and chunk.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "vczstats/zarr.hpp"

namespace vczstats::zarr::detail {

using ByteSpan = std::span<const std::byte>;
using MutableByteSpan = std::span<std::byte>;

/// @brief Which deflate container a stream uses.
enum class DeflateFormat {
  ZlibOrGzip,  ///< zlib or gzip header, detected from the data
  Raw,         ///< bare deflate (zip entries)
};

/// @brief Inflate @p in into exactly out.size() bytes.
/// @throws FormatError naming @p codec when the stream is corrupt or decodes to another size.
void inflate_exact(ByteSpan in, MutableByteSpan out, DeflateFormat format, std::string_view codec);

/// @brief Inflate @p in when the decoded size is not known in advance.
std::vector<std::byte> inflate_all(ByteSpan in, DeflateFormat format, std::string_view codec);

/// @brief CRC-32C (Castagnoli) of @p data, as the crc32c codec and python's crc32c compute it.
std::uint32_t crc32c(ByteSpan data);

/// @brief A bytes-to-bytes codec (compressor or checksum). Immutable and thread-safe; the
/// decompression contexts live in thread-local storage.
class BytesToBytesCodec {
 public:
  virtual ~BytesToBytesCodec() = default;
  /// @brief Short description for `info`, e.g. "zstd(5)".
  virtual std::string describe() const = 0;
  /// @brief The codec and its parameters, for ChunkEncoding.
  virtual BytesCodecSpec spec() const = 0;
  /// @brief The encoded size for a decoded size when it follows from the size alone
  /// (checksums); nullopt for compressors.
  virtual std::optional<std::uint64_t> encoded_size(std::optional<std::uint64_t> decoded) const {
    (void)decoded;
    return std::nullopt;
  }
  /// @brief Decode into @p out, which must come out exactly full.
  virtual void decode_into(ByteSpan in, MutableByteSpan out) const = 0;
  /// @brief Decode when the decoded size is unknown (variable-length strings).
  virtual std::vector<std::byte> decode(ByteSpan in) const = 0;
};

/// @brief A codec from a numcodecs configuration ({"id": "zstd", "level": 5}); nullptr when
/// the id is not a bytes-to-bytes codec we know.
std::unique_ptr<const BytesToBytesCodec> make_numcodecs_codec(const nlohmann::json& config);

/// @brief A codec from a Zarr v3 codec name and configuration; nullptr when the name is not a
/// bytes-to-bytes codec we know.
std::unique_ptr<const BytesToBytesCodec> make_v3_bytes_codec(const std::string& name,
                                                             const nlohmann::json& configuration);

/// @brief Append code point @p cp as UTF-8 (U+FFFD for what is not a character).
void append_utf8(std::string& s, std::uint32_t cp);

}  // namespace vczstats::zarr::detail
