#pragma once
/// @file zarr.hpp
/// @brief The Zarr layer: stores (directory, zip), array metadata (v2 and v3), codecs, and
/// reading chunks or regions into typed buffers. It knows nothing about genetics.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace vczstats::zarr {

/// @brief Runs independent tasks, possibly in parallel (a thread pool implements it). The zarr
/// layer starts no threads of its own: callers that want parallel decoding pass one.
class Executor {
 public:
  virtual ~Executor() = default;
  /// @brief Run fn(i) for every i in [0, n) and return when all have run; the first exception
  /// of a task is rethrown.
  virtual void parallel_for(std::int64_t n, const std::function<void(std::int64_t)>& fn) = 0;
};

/// @brief The most bytes one chunk may decode to (2 GiB, blosc's own limit). A larger chunk is
/// refused when the array is opened, before anything is allocated for it: one decoded chunk per
/// thread is what reading holds in memory. String chunks count 32 bytes per element (a
/// std::string) plus the fixed width, if any.
inline constexpr std::int64_t kMaxChunkBytes = std::int64_t{1} << 31;

/// @brief Read-only bytes from a store: a view plus whatever keeps its memory alive (an owned
/// buffer, or the memory map of a zip file). Cheap to copy.
class Bytes {
 public:
  Bytes() = default;
  /// @brief Take ownership of a buffer.
  explicit Bytes(std::vector<std::byte> owned);
  /// @brief View memory kept alive by @p keep_alive (e.g. a mapped file).
  Bytes(std::span<const std::byte> view, std::shared_ptr<const void> keep_alive);

  std::span<const std::byte> span() const { return view_; }
  const std::byte* data() const { return view_.data(); }
  std::size_t size() const { return view_.size(); }

 private:
  std::shared_ptr<const void> owner_;
  std::span<const std::byte> view_;
};

/// @brief One key of a store with its stored (compressed) size in bytes.
struct StoreEntry {
  std::string key;
  std::uint64_t stored_size = 0;
};

/// @brief A key-value store of Zarr objects. Keys use '/' separators, no leading '/'.
/// All methods are thread-safe.
class Store {
 public:
  virtual ~Store() = default;
  /// @brief The bytes under @p key, or nullopt when the key is absent.
  virtual std::optional<Bytes> get(std::string_view key) const = 0;
  /// @brief Whether @p key exists.
  virtual bool contains(std::string_view key) const = 0;
  /// @brief Every key below @p prefix (recursively; "" lists everything), sorted.
  virtual std::vector<StoreEntry> list(std::string_view prefix) const = 0;
  /// @brief Names of the keys and folders directly below the folder @p prefix ("" = root),
  /// sorted. The default derives them from list(); stores override it when they can do better.
  virtual std::vector<std::string> children(std::string_view prefix) const;
  /// @brief The path the store was opened from, for messages.
  virtual const std::string& path() const = 0;
};

/// @brief Open a directory store or a zip store (detected from the file's content), read-only.
/// A directory store reads regular files only: a key that is a FIFO, socket or device is an
/// IoError, never opened (it could block or never end).
/// @throws IoError when the path cannot be opened, FormatError for a corrupt zip.
std::shared_ptr<const Store> open_store(const std::filesystem::path& path);

/// @brief Kinds of element a Zarr array can hold once decoded.
enum class DataKind { Bool, Int, UInt, Float, String };

/// @brief The decoded element type: kind and size in bytes (native byte order). Strings are
/// decoded to std::string and have size 0.
struct DataType {
  DataKind kind = DataKind::Int;
  int size = 1;
  /// @brief Canonical name: bool, int8..int64, uint8..uint64, float32, float64, string.
  std::string name() const;
  bool operator==(const DataType&) const = default;
};

/// @brief Everything the metadata document of an array says, normalised across v2 and v3.
struct ArrayMetadata {
  int zarr_format = 2;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> chunks;  ///< outer chunk (shard, for sharded v3 arrays) shape
  DataType dtype;
  std::string dtype_spec;             ///< as written: "|i1", "<i4", "int8", "string"...
  std::vector<std::byte> fill_value;  ///< one decoded element; empty for strings
  std::string fill_string;            ///< fill of string arrays ("" for null)
  std::string codecs;                 ///< human-readable pipeline, e.g. "blosc(zstd:7,bitshuffle)"
  nlohmann::json attributes;          ///< .zattrs (v2) or "attributes" (v3)
  std::vector<std::string> dimension_names;  ///< _ARRAY_DIMENSIONS or dimension_names
};

/// @brief One array of a store. Immutable once opened, so it may be shared between threads.
class Array {
 public:
  /// @brief Open the array at @p path (e.g. "call_genotype") of @p store.
  /// @throws FormatError when the metadata is absent, malformed or unsupported.
  static Array open(std::shared_ptr<const Store> store, const std::string& path);

  Array();
  ~Array();
  Array(const Array&);
  Array& operator=(const Array&);
  Array(Array&&) noexcept;
  Array& operator=(Array&&) noexcept;

  const ArrayMetadata& metadata() const;
  const std::string& path() const;
  const Store& store() const;
  int ndim() const;
  const std::vector<std::int64_t>& shape() const;
  const std::vector<std::int64_t>& chunks() const;
  const DataType& dtype() const;
  /// @brief Number of chunks along @p dim (ceil(shape / chunks)).
  std::int64_t num_chunks(int dim) const;
  /// @brief Elements in one (full-size) chunk.
  std::int64_t chunk_elements() const;
  /// @brief Bytes of one decoded full-size chunk (0 for string arrays).
  std::int64_t chunk_bytes() const;
  /// @brief The store key of a chunk, e.g. "call_genotype/3.0.0" or "call_genotype/c/3/0/0".
  std::string chunk_key(std::span<const std::int64_t> chunk_index) const;

  /// @brief Decode one chunk into @p out, which holds chunk_bytes() bytes: full chunk shape, C
  /// order, native byte order. An absent chunk reads as the fill value.
  /// @throws FormatError naming store, array and chunk key when the chunk is corrupt.
  void read_chunk(std::span<const std::int64_t> chunk_index, std::span<std::byte> out) const;
  /// @brief Decode one chunk of a string array (full chunk shape, C order).
  std::vector<std::string> read_chunk_strings(std::span<const std::int64_t> chunk_index) const;

  /// @brief Read the region [start, stop) (one pair per dimension) into @p out, C order of the
  /// region's shape. Chunks are decoded through @p executor when given.
  void read_region(std::span<const std::int64_t> start, std::span<const std::int64_t> stop,
                   std::span<std::byte> out, Executor* executor = nullptr) const;
  /// @brief Read a region of a string array.
  std::vector<std::string> read_region_strings(std::span<const std::int64_t> start,
                                               std::span<const std::int64_t> stop) const;
  /// @brief Read a whole numeric or bool array converted to T (small arrays only).
  template <class T>
  std::vector<T> read_all_as() const;
  /// @brief Read a region of a numeric or bool array converted to T.
  template <class T>
  std::vector<T> read_region_as(std::span<const std::int64_t> start,
                                std::span<const std::int64_t> stop) const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

/// @brief Convert @p count decoded elements of @p from to T (used by read_*_as).
template <class T>
void convert_elements(const DataType& from, const std::byte* src, std::size_t count, T* dst);

extern template std::vector<std::int64_t> Array::read_all_as<std::int64_t>() const;
extern template std::vector<std::int32_t> Array::read_all_as<std::int32_t>() const;
extern template std::vector<double> Array::read_all_as<double>() const;
extern template std::vector<std::uint8_t> Array::read_all_as<std::uint8_t>() const;
extern template std::vector<std::int64_t> Array::read_region_as<std::int64_t>(
    std::span<const std::int64_t>, std::span<const std::int64_t>) const;
extern template std::vector<std::int32_t> Array::read_region_as<std::int32_t>(
    std::span<const std::int64_t>, std::span<const std::int64_t>) const;
extern template std::vector<std::uint8_t> Array::read_region_as<std::uint8_t>(
    std::span<const std::int64_t>, std::span<const std::int64_t>) const;

/// @brief Open the group metadata of a store root (.zgroup/.zattrs or zarr.json) and return its
/// attributes and format version.
struct GroupInfo {
  int zarr_format = 2;
  nlohmann::json attributes;
};
/// @throws FormatError when the root is not a Zarr group.
GroupInfo open_group(const Store& store, const std::string& path = "");

/// @brief Names of the arrays directly below a group path of a store (sorted).
std::vector<std::string> list_arrays(const Store& store, const std::string& path = "");

}  // namespace vczstats::zarr
