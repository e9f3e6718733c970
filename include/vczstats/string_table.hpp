#pragma once
/// @file string_table.hpp
/// @brief A compact table of strings: one character buffer and one offset per string, read as
/// std::string_view. A million sample names take one allocation of characters and one of
/// offsets instead of a million std::string objects.

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace vczstats {

/// @brief Strings stored back to back in one buffer; string i is chars[offsets[i], offsets[i+1]).
class StringTable {
 public:
  StringTable() = default;
  /// @brief A table of @p items, in order.
  StringTable(std::initializer_list<std::string_view> items) {
    for (auto s : items) push_back(s);
  }
  /// @brief A table of the strings of @p items, in order.
  template <class Range>
  static StringTable from(const Range& items) {
    StringTable t;
    for (const auto& s : items) t.push_back(std::string_view(s));
    return t;
  }

  /// @brief The table owning @p chars whose string i is chars[offsets[i], offsets[i+1]):
  /// offsets start at 0, do not decrease and end at chars.size() (a parser that moved its
  /// tokens to the front of its text builds one without a second buffer).
  /// @throws std::invalid_argument when the first or last offset is wrong.
  static StringTable adopt(std::string chars, std::vector<std::int64_t> offsets) {
    if (offsets.empty() || offsets.front() != 0 ||
        offsets.back() != static_cast<std::int64_t>(chars.size()))
      throw std::invalid_argument("StringTable::adopt: offsets do not span the characters");
    StringTable t;
    t.chars_ = std::move(chars);
    t.offsets_ = std::move(offsets);
    return t;
  }

  /// @brief Reserve room for @p count strings of @p chars characters in all.
  void reserve(std::int64_t count, std::int64_t chars) {
    offsets_.reserve(static_cast<std::size_t>(count) + 1);
    chars_.reserve(static_cast<std::size_t>(chars));
  }
  /// @brief Append a string.
  void push_back(std::string_view s) {
    chars_.append(s);
    offsets_.push_back(static_cast<std::int64_t>(chars_.size()));
  }
  /// @brief Append strings [first, last) of @p other.
  void append(const StringTable& other, std::int64_t first, std::int64_t last) {
    const auto base = static_cast<std::int64_t>(chars_.size()) - other.offset(first);
    chars_.append(other.chars_, static_cast<std::size_t>(other.offset(first)),
                  static_cast<std::size_t>(other.offset(last) - other.offset(first)));
    for (std::int64_t i = first + 1; i <= last; ++i) offsets_.push_back(base + other.offset(i));
  }
  /// @brief Remove every string (keeps the capacity).
  void clear() {
    chars_.clear();
    offsets_.assign(1, 0);
  }

  /// @brief Number of strings.
  std::int64_t size() const { return static_cast<std::int64_t>(offsets_.size()) - 1; }
  bool empty() const { return size() == 0; }
  /// @brief Characters of all strings together.
  std::int64_t chars() const { return static_cast<std::int64_t>(chars_.size()); }
  /// @brief String @p i (valid while the table is unchanged).
  std::string_view operator[](std::int64_t i) const {
    const auto b = offset(i);
    return std::string_view(chars_).substr(static_cast<std::size_t>(b),
                                           static_cast<std::size_t>(offset(i + 1) - b));
  }
  /// @brief Hint the processor to fetch the offsets of string @p i (batched random lookups).
  void prefetch(std::int64_t i) const {
    __builtin_prefetch(&offsets_[static_cast<std::size_t>(i)]);
  }
  /// @brief Bytes held (characters and offsets), for memory accounting.
  std::int64_t memory_bytes() const {
    return static_cast<std::int64_t>(chars_.capacity() +
                                     offsets_.capacity() * sizeof(std::int64_t));
  }

  /// @brief Iterates the strings as std::string_view.
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::string_view;
    using difference_type = std::int64_t;
    using pointer = void;
    using reference = std::string_view;
    const_iterator() = default;
    const_iterator(const StringTable* t, std::int64_t i) : t_(t), i_(i) {}
    std::string_view operator*() const { return (*t_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      auto old = *this;
      ++i_;
      return old;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }

   private:
    const StringTable* t_ = nullptr;
    std::int64_t i_ = 0;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

  bool operator==(const StringTable& o) const {
    return chars_ == o.chars_ && offsets_ == o.offsets_;
  }

 private:
  std::int64_t offset(std::int64_t i) const { return offsets_[static_cast<std::size_t>(i)]; }
  std::string chars_;
  std::vector<std::int64_t> offsets_{0};
};

}  // namespace vczstats
