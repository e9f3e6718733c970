#pragma once
// Shared by the libFuzzer targets: an in-memory Zarr store, reading every chunk of an array
// within memory bounds, and scratch files for APIs that take a path.
//
// A target catches vczstats::Error (the library's way to reject bad input) and nothing else: any
// other exception, a crash or a sanitizer report is a finding.

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vczstats/error.hpp"
#include "vczstats/zarr.hpp"

namespace vczstats::fuzz {

/// Decoded chunks larger than this are not read (the fuzzer's memory limit is 2 GiB).
inline constexpr std::int64_t kMaxFuzzChunkBytes = std::int64_t{16} << 20;
/// String chunks with more elements than this are not read.
inline constexpr std::int64_t kMaxFuzzStrings = std::int64_t{1} << 16;

/// A store held in a map; keys can be added after arrays were opened on it.
class MemoryStore final : public zarr::Store {
 public:
  void put(std::string key, std::span<const std::byte> value) {
    entries_[std::move(key)].assign(value.begin(), value.end());
  }
  void put(std::string key, std::string_view value) {
    put(std::move(key), std::as_bytes(std::span(value.data(), value.size())));
  }
  std::optional<zarr::Bytes> get(std::string_view key) const override {
    auto it = entries_.find(std::string(key));
    if (it == entries_.end()) return std::nullopt;
    return zarr::Bytes(it->second);
  }
  bool contains(std::string_view key) const override { return entries_.contains(std::string(key)); }
  std::vector<zarr::StoreEntry> list(std::string_view prefix) const override {
    std::vector<zarr::StoreEntry> out;
    for (const auto& [k, v] : entries_)
      if (k.starts_with(prefix)) out.push_back({k, v.size()});
    return out;
  }
  const std::string& path() const override { return path_; }

 private:
  std::map<std::string, std::vector<std::byte>, std::less<>> entries_;
  std::string path_ = "memory";
};

/// Bytes as a span.
inline std::span<const std::byte> as_bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

/// Decode chunk 0 (all indices zero) of @p array when its decoded size is within the fuzzing
/// bounds; library errors are expected, everything else is a finding.
inline void read_first_chunk(const zarr::Array& array) {
  const std::vector<std::int64_t> index(static_cast<std::size_t>(array.ndim()), 0);
  try {
    if (array.dtype().kind == zarr::DataKind::String) {
      if (array.chunk_elements() > kMaxFuzzStrings) return;
      const auto strings = array.read_chunk_strings(index);
      if (static_cast<std::int64_t>(strings.size()) != array.chunk_elements()) __builtin_trap();
    } else {
      if (array.chunk_bytes() > kMaxFuzzChunkBytes) return;
      std::vector<std::byte> out(static_cast<std::size_t>(array.chunk_bytes()));
      array.read_chunk(index, out);
    }
  } catch (const Error&) {
  }
}

/// A scratch file of this process in /dev/shm (else the temporary directory), removed at exit.
class ScratchFile {
 public:
  explicit ScratchFile(const std::string& suffix) {
    std::filesystem::path dir = "/dev/shm";
    if (!std::filesystem::is_directory(dir)) dir = std::filesystem::temp_directory_path();
    path_ = dir / ("vczstats-fuzz-" + std::to_string(::getpid()) + suffix);
  }
  ~ScratchFile() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::filesystem::path& path() const { return path_; }
  /// Replace the file's content.
  void write(const std::uint8_t* data, std::size_t size) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  /// Remove whatever is at the path (a file or a folder).
  void clear() const {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }

 private:
  std::filesystem::path path_;
};

}  // namespace vczstats::fuzz
