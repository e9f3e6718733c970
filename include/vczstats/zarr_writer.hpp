#pragma once
/// @file zarr_writer.hpp
/// @brief Writing Zarr v2 and v3: a directory store, group and array metadata, and chunks
/// encoded (blosc, zstd or none; vlen-utf8 for strings) and written from any thread. A zip
/// store is made by zipping a finished directory store (zip_directory).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "vczstats/zarr.hpp"

namespace vczstats::zarr {

/// @brief A store that can be written: one file per key below a root directory. set() and
/// erase() are thread-safe for distinct keys.
class DirectoryStoreWriter {
 public:
  /// @brief Use @p root, creating it when absent.
  /// @throws IoError when it cannot be created.
  explicit DirectoryStoreWriter(std::filesystem::path root);
  /// @brief Write @p data under @p key, replacing any previous value.
  void set(std::string_view key, std::span<const std::byte> data) const;
  /// @brief Write a text document (metadata) under @p key.
  void set_text(std::string_view key, std::string_view text) const;
  /// @brief Remove @p key when present.
  void erase(std::string_view key) const;
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

/// @brief Blosc's shuffle filters.
enum class Shuffle { None = 0, Byte = 1, Bit = 2 };

/// @brief The compressor of an array's chunks.
struct Compression {
  enum class Kind { None, Blosc, Zstd };
  Kind kind = Kind::Blosc;
  std::string blosc_cname = "zstd";  ///< blosc's inner compressor: zstd, lz4, lz4hc, zlib, blosclz
  int level = 7;
  Shuffle shuffle = Shuffle::Byte;
};

/// @brief What an array holds and how it is chunked and encoded.
struct ArrayDefinition {
  DataType dtype;  ///< bool, int8..int64, uint8..uint64, float32, float64 or string
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> chunks;
  std::vector<std::string> dimension_names;  ///< _ARRAY_DIMENSIONS (v2), dimension_names (v3)
  Compression compression;
  /// @brief The fill value, one decoded element (native byte order); empty means zero/false.
  /// A float fill that is a NaN is written as "NaN" (v2) or its exact bits (v3).
  std::vector<std::byte> fill_value;
  std::string fill_string;                               ///< fill value of string arrays
  nlohmann::json attributes = nlohmann::json::object();  ///< extra attributes (description...)
};

/// @brief Make a one-element fill value from a number.
template <class T>
std::vector<std::byte> fill_of(T value) {
  std::vector<std::byte> out(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

/// @brief One array being written. Chunk writes are thread-safe; metadata changes
/// (resize) are not and must not run concurrently with chunk writes.
class ArrayWriter {
 public:
  /// @brief Create the array at @p path (e.g. "call_genotype") and write its metadata.
  /// @throws UsageError for an unsupported dtype or a chunk shape that does not fit the shape.
  ArrayWriter(std::shared_ptr<const DirectoryStoreWriter> store, std::string path, int zarr_format,
              ArrayDefinition definition);

  const ArrayDefinition& definition() const { return def_; }
  const std::string& path() const { return path_; }
  int zarr_format() const { return zarr_format_; }
  /// @brief Elements of one full chunk.
  std::int64_t chunk_elements() const;

  /// @brief Change the shape (the chunk grid stays) and rewrite the metadata.
  void resize(std::vector<std::int64_t> shape);
  /// @brief (Re)write the metadata document(s).
  void write_metadata() const;

  /// @brief Encode and write one numeric or bool chunk: @p data holds a full chunk (chunk
  /// shape, C order, native byte order) even at the edges. A chunk that is entirely the fill
  /// value is not stored (and removed if it was). Returns whether it was stored.
  bool write_chunk(std::span<const std::int64_t> chunk_index,
                   std::span<const std::byte> data) const;
  /// @brief Record that a chunk is entirely the fill value (it is not stored; removed if it
  /// was), without passing its data.
  void write_fill_chunk(std::span<const std::int64_t> chunk_index) const;
  /// @brief The same for a string array: chunk_elements() strings.
  bool write_chunk_strings(std::span<const std::int64_t> chunk_index,
                           std::span<const std::string> values) const;
  /// @brief The store key of a chunk.
  std::string chunk_key(std::span<const std::int64_t> chunk_index) const;

  /// @brief Bytes stored so far by write_chunk* (for reports).
  std::uint64_t stored_bytes() const { return stored_bytes_->load(); }

 private:
  void store_encoded(std::span<const std::int64_t> chunk_index,
                     std::span<const std::byte> raw) const;

  std::shared_ptr<const DirectoryStoreWriter> store_;
  std::string path_;
  int zarr_format_ = 2;
  ArrayDefinition def_;
  std::shared_ptr<std::atomic<std::uint64_t>> stored_bytes_;
};

/// @brief Write the metadata of a group at the root of @p store: .zgroup and .zattrs (v2) or
/// zarr.json (v3).
void write_group(const DirectoryStoreWriter& store, int zarr_format,
                 const nlohmann::json& attributes);

/// @brief Zip the directory store @p dir into @p zip_file with stored (uncompressed) entries,
/// zip64 where sizes or offsets need it, entries in sorted key order, as bio2zarr does.
/// @p cancelled, when given, is polled between entries; a cancelled zip throws IoError.
/// @throws IoError on any read or write failure.
void zip_directory(const std::filesystem::path& dir, const std::filesystem::path& zip_file,
                   const std::atomic<bool>* cancelled = nullptr);

}  // namespace vczstats::zarr
