#pragma once
/// @file archive.hpp
/// @brief Byte streams of statistic states: a partition's state saved on one MPI rank is
/// loaded on another and merged there. Native byte order (ranks of one run share it).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "vczstats/error.hpp"

namespace vczstats {

/// @brief Appends values to a byte buffer.
class ByteWriter {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    bytes_.insert(bytes_.end(), p, p + sizeof(T));
  }
  template <class T>
  void put_vector(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<std::uint64_t>(v.size());
    const auto* p = reinterpret_cast<const std::byte*>(v.data());
    bytes_.insert(bytes_.end(), p, p + v.size() * sizeof(T));
  }
  void put_string(const std::string& s) {
    put<std::uint64_t>(s.size());
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    bytes_.insert(bytes_.end(), p, p + s.size());
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  std::vector<std::byte> bytes_;
};

/// @brief Reads what a ByteWriter wrote. @throws FormatError on reading past the end.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    std::memcpy(&v, take(sizeof(T)), sizeof(T));
    return v;
  }
  template <class T>
  std::vector<T> get_vector() {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto n = get<std::uint64_t>();
    if (n > (bytes_.size() - pos_) / sizeof(T)) fail();
    std::vector<T> v(static_cast<std::size_t>(n));
    if (n)
      std::memcpy(v.data(), take(static_cast<std::size_t>(n) * sizeof(T)), v.size() * sizeof(T));
    return v;
  }
  std::string get_string() {
    const auto n = get<std::uint64_t>();
    if (n > bytes_.size() - pos_) fail();
    const auto* p = take(static_cast<std::size_t>(n));
    return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
  }
  /// @brief Check a tag written with put_string. @throws FormatError naming both.
  void expect(const std::string& tag) {
    const std::string got = get_string();
    if (got != tag)
      throw FormatError("statistic state: expected a saved '" + tag + "', found '" + got + "'");
  }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  const std::byte* take(std::size_t n) {
    if (n > bytes_.size() - pos_) fail();
    const std::byte* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  [[noreturn]] static void fail() { throw FormatError("statistic state: truncated"); }
  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
};

}  // namespace vczstats
