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

#include "vczstats/string_table.hpp"

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
  /// @brief Bytes [offset, offset + length) of these, sharing their owner (no copy).
  Bytes slice(std::size_t offset, std::size_t length) const {
    return Bytes(view_.subspan(offset, length), owner_);
  }

 private:
  std::shared_ptr<const void> owner_;
  std::span<const std::byte> view_;
};

/// @brief One key of a store with its stored (compressed) size in bytes.
struct StoreEntry {
  std::string key;
  std::uint64_t stored_size = 0;
};

/// @brief What a store fetched over the network (remote stores; local stores report zeros).
struct IoStats {
  std::int64_t bytes_fetched = 0;  ///< response body bytes received (failed attempts included)
  std::int64_t requests = 0;       ///< HTTP requests completed (retries included)
  std::int64_t retries = 0;        ///< requests repeated after a 5xx, a timeout or a cut body
  std::int64_t cache_hits = 0;     ///< objects served from the local chunk cache
  std::int64_t cache_bytes = 0;    ///< bytes served from the local chunk cache
  double seconds = 0;              ///< wall time with at least one request in flight
};

/// @brief How to open remote stores (http://, https://, s3://, gs://); local stores ignore it.
/// Fields left empty fall back, when @ref use_environment is set, to the usual environment:
/// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL, AWS_REGION / AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID /
/// AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, AWS_PROFILE with ~/.aws/credentials and
/// ~/.aws/config (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE), and STORAGE_EMULATOR_HOST for
/// gs://.
struct StoreOptions {
  std::string s3_endpoint;   ///< S3-compatible server, e.g. http://127.0.0.1:9000 (path-style)
  std::string s3_region;     ///< signing region (default us-east-1, or the bucket's on AWS)
  std::string gcs_endpoint;  ///< gs:// server (default https://storage.googleapis.com)
  bool anonymous = false;    ///< send unsigned requests (public buckets), even with credentials
  std::string access_key_id, secret_access_key, session_token;  ///< explicit S3 credentials
  std::string cache_dir;      ///< local chunk cache keyed by URL, ETag and size ("" = none)
  unsigned max_requests = 0;  ///< HTTP requests in flight (0: 256)
  int max_retries = 5;        ///< retries of a request after 5xx, timeouts, cut bodies
  double retry_backoff_seconds = 0.1;  ///< first retry's delay; doubles, capped at 5 s
  double stall_seconds = 30;           ///< a transfer that receives nothing this long is retried
  double connect_seconds = 10;         ///< connection timeout
  /// Slowest transfer accepted (bytes a second) once stall_seconds have passed below it; 0:
  /// only silence for stall_seconds cuts a transfer.
  double min_bytes_per_second = 64 * 1024;
  /// Largest object fetched whole (a chunk of a directory store, metadata, a listing page), and
  /// the most such bodies in flight may hold together (0: no limit).
  std::uint64_t max_object_bytes = std::uint64_t{256} << 20;
  std::int64_t readahead_bytes = std::int64_t{256} << 20;  ///< fetched ahead, not yet read
  bool use_environment = true;  ///< read the AWS_* variables and ~/.aws files
  /// @brief Receives notes (retries, credentials used); may be empty.
  std::function<void(const std::string&)> log;
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
  /// @brief The path or URL the store was opened from, for messages.
  virtual const std::string& path() const = 0;
  /// @brief Read-ahead hint: these keys will be read soon, roughly in this order. Remote stores
  /// start fetching them (many requests in flight, within StoreOptions::readahead_bytes) so that
  /// a later get() finds them arrived; local stores ignore it. Keys may be absent.
  virtual void prefetch(std::span<const std::string> keys) const;
  /// @brief Drop read-ahead hints not yet started (e.g. when a run stops early).
  virtual void cancel_prefetch() const;
  /// @brief Whether prefetch() does anything (a remote store), so callers can skip building keys.
  virtual bool reads_ahead() const { return false; }
  /// @brief Network counters so far (zeros for local stores).
  virtual IoStats io_stats() const { return {}; }
};

/// @brief Whether @p path is a URL open_store reads remotely: http://, https://, s3://, gs://.
bool is_remote_url(std::string_view path);

/// @brief Open a store read-only: a directory, a zip file (detected from its content), or a URL
/// (http:// or https:// of a directory-style store or of a .zip read with range requests;
/// s3://bucket/prefix; gs://bucket/prefix). A directory store reads regular files only: a key
/// that is a FIFO, socket or device is an IoError, never opened (it could block or never end).
/// @throws IoError when the path cannot be opened or fetched, FormatError for a corrupt zip,
/// UsageError for a URL when the library was built without remote support.
std::shared_ptr<const Store> open_store(const std::string& path, const StoreOptions& options = {});

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

/// @brief One bytes-to-bytes codec of a chunk encoding (compressor or checksum), with the
/// parameters its metadata gives.
struct BytesCodecSpec {
  /// @brief Which codec.
  enum class Kind { Blosc, Zstd, Lz4, Zlib, Gzip, Bz2, Crc32c };
  Kind kind = Kind::Zstd;
  std::string
      name;       ///< as in the metadata: "blosc", "zstd", "lz4", "zlib", "gzip", "bz2", "crc32c"
  int level = 0;  ///< zstd/zlib/gzip/bz2 level, lz4 acceleration, blosc clevel
  std::string cname;  ///< blosc: internal codec (lz4, lz4hc, zstd, zlib, blosclz, snappy)
  int shuffle = 0;    ///< blosc: 0 none, 1 byte, 2 bit, -1 auto (bit for 1-byte items, else byte)
  int typesize = 0;   ///< blosc: element size (0: not given; every chunk header says it)
  std::int64_t blocksize = 0;  ///< blosc: 0 = automatic
};

struct ShardingSpec;

/// @brief How every chunk of an array is encoded, normalised across Zarr v2 and v3, so that a
/// device can decode a chunk's compressed bytes (Array::read_chunk_encoded) itself.
struct ChunkEncoding {
  /// @brief What turns the bytes into the array: plain fixed-size elements, strings, or shards.
  enum class Layout { Bytes, Strings, Sharding };
  std::vector<std::int64_t> shape;  ///< decoded chunk shape
  int itemsize = 1;                 ///< bytes per element (0: strings)
  /// @brief Array-to-array codecs in encoding order (transpose, delta, packbits, byteswap for
  /// big-endian v2 dtypes); a device decodes none of them.
  std::vector<std::string> array_filters;
  Layout layout = Layout::Bytes;
  bool big_endian = false;  ///< Bytes layout: elements stored big-endian (v3 bytes codec)
  std::vector<BytesCodecSpec> bytes_codecs;      ///< in encoding order (decode backwards)
  std::shared_ptr<const ShardingSpec> sharding;  ///< Sharding layout only
  std::vector<std::byte> fill_value;             ///< one decoded element (empty for strings)
  /// @brief Bytes of one decoded chunk.
  std::uint64_t decoded_bytes() const;
};

/// @brief v3 sharding_indexed: a shard holds inner chunks and an index of (offset, nbytes)
/// little-endian uint64 pairs, all-ones for an absent inner chunk.
struct ShardingSpec {
  std::vector<std::int64_t> inner_shape;
  bool index_at_end = true;
  ChunkEncoding inner;  ///< encoding of each inner chunk
  ChunkEncoding index;  ///< encoding of the index (shape: inner grid + [2], uint64)
};

/// @brief Whether every stage of @p encoding has a device decoder (backend/cuda/decode): blosc
/// with internal lz4/lz4hc/zstd and any shuffle, plain zstd, numcodecs lz4, v3 bytes of
/// single-byte or little-endian elements, crc32c (checked on the host), sharding_indexed with a
/// decodable inner pipeline. Otherwise false, and @p why_not (when given) says which stage.
bool device_decodable(const ChunkEncoding& encoding, std::string* why_not = nullptr);

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
  /// @brief The stored (still encoded) bytes of one chunk, as read_chunk would decode them;
  /// nullopt when the chunk is absent (it reads as the fill value).
  std::optional<Bytes> read_chunk_encoded(std::span<const std::int64_t> chunk_index) const;
  /// @brief How every chunk of this array is encoded.
  const ChunkEncoding& chunk_encoding() const;
  /// @brief Decode one chunk of a string array (full chunk shape, C order).
  std::vector<std::string> read_chunk_strings(std::span<const std::int64_t> chunk_index) const;

  /// @brief Read the region [start, stop) (one pair per dimension) into @p out, C order of the
  /// region's shape. Chunks are decoded through @p executor when given.
  void read_region(std::span<const std::int64_t> start, std::span<const std::int64_t> stop,
                   std::span<std::byte> out, Executor* executor = nullptr) const;
  /// @brief Read a region of a string array.
  std::vector<std::string> read_region_strings(std::span<const std::int64_t> start,
                                               std::span<const std::int64_t> stop) const;
  /// @brief Read a whole one-dimensional string array into one StringTable (no allocation per
  /// string; for sample_id of a million samples). @throws UsageError for other arrays.
  StringTable read_string_table() const;
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
