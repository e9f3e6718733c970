#pragma once
/// @file stores.hpp
/// @brief Private: the concrete stores behind open_store, and little-endian helpers shared by
/// the zip parser and the codecs.

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vczstats/zarr.hpp"

namespace vczstats::zarr::detail {

/// @brief A read-only memory map of a whole file, unmapped on destruction.
class MappedFile {
 public:
  /// @throws IoError when the file cannot be opened or mapped.
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }

 private:
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

/// @brief Random-access bytes of one file: a local memory map (reads are views) or an object
/// read with HTTP range requests. A zip store reads its archive through one.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// @brief The file or URL, for messages.
  virtual const std::string& name() const = 0;
  virtual std::uint64_t size() const = 0;
  /// @brief Bytes [offset, offset + length). @throws FormatError when the range passes the end,
  /// IoError when it cannot be fetched.
  virtual Bytes read(std::uint64_t offset, std::uint64_t length) const = 0;
  /// @brief Whether reads cost a request (so prefetch hints are worth giving).
  virtual bool remote() const { return false; }
  /// @brief Read-ahead hint: (offset, length) pairs that will be read, in order.
  virtual void prefetch(std::span<const std::pair<std::uint64_t, std::uint64_t>>) const {}
  virtual void cancel_prefetch() const {}
  virtual IoStats io_stats() const { return {}; }
};

/// @brief A memory-mapped local file as a ByteSource.
std::shared_ptr<const ByteSource> map_file_source(const std::filesystem::path& path);

/// @brief Open a zip store whose archive is read through @p source.
std::shared_ptr<const Store> open_zip_store(std::shared_ptr<const ByteSource> source);

/// @brief Open a directory store rooted at @p root.
std::shared_ptr<const Store> open_directory_store(const std::filesystem::path& root);

/// @brief Open a zip store (read-only memory map of the file).
std::shared_ptr<const Store> open_zip_store(const std::filesystem::path& file);

/// @brief Open a zip store held in memory: @p bytes, kept alive by @p owner (may be null when
/// the caller keeps them alive longer than the store); @p name names it in messages.
std::shared_ptr<const Store> open_zip_store_bytes(std::span<const std::byte> bytes,
                                                  std::shared_ptr<const void> owner,
                                                  std::string name);
/// @brief Open an http(s)://, s3:// or gs:// store (src/zarr/remote/; a stub throws UsageError
/// when the library is built without libcurl).
std::shared_ptr<const Store> open_remote_store(const std::string& url, const StoreOptions& options);

/// @brief Write all @p n bytes to @p fd (retrying short writes).
/// @throws IoError naming @p file.
void write_all(int fd, const std::byte* data, std::size_t n, const std::filesystem::path& file);

/// @brief zip_directory, with zip64 records for every entry and the archive even when nothing
/// needs them (so tests can check the zip64 path without writing 4 GiB).
void zip_directory(const std::filesystem::path& dir, const std::filesystem::path& zip_file,
                   const std::atomic<bool>* cancelled, bool force_zip64);

/// @brief Read an unsigned little-endian integer of type T at @p p (no alignment needed).
template <class T>
T load_le(const std::byte* p) {
  T v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    v = static_cast<T>(v | (static_cast<T>(std::to_integer<unsigned>(p[i])) << (8 * i)));
  return v;
}

/// @brief Names of the immediate children of @p prefix, derived from a recursive key list.
std::vector<std::string> children_from_keys(const std::vector<StoreEntry>& entries,
                                            std::string_view prefix);

/// @brief @p prefix without trailing '/' characters.
std::string_view trim_prefix(std::string_view prefix);

}  // namespace vczstats::zarr::detail
