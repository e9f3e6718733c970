#pragma once
// Private: the hash index from sample names to store indices behind VczStore::find_samples.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vczstats/string_table.hpp"

namespace vczstats::vcz {

/// Open addressing over one table of 64-bit slots, each holding (sample index + 1) above a
/// 24-bit tag of the name's hash, so a probe compares names only when the tags agree; at most
/// 2/3 of the slots are used (8 to 16 bytes per sample). The index holds no pointer to the names:
/// every call gets the table it was built from. Lookups run in batches whose memory accesses
/// are prefetched stage by stage (slots, then offsets, then characters), so a million names in
/// random order cost a few memory latencies per batch rather than three per name.
class SampleIndex {
 public:
  /// Index the non-empty names of @p ids. @throws FormatError naming @p what when a name
  /// appears twice.
  SampleIndex(const StringTable& ids, const std::string& what);
  /// The index in @p ids of each of @p names (-1: absent, or empty) into @p out (names.size()).
  /// A name equal to the one after the previous name's match is taken without a lookup, so
  /// names listed in store order cost one comparison each.
  void find(const StringTable& ids, const StringTable& names, std::span<std::int64_t> out) const;

 private:
  static constexpr int kTagBits = 24;
  static constexpr std::int64_t kBatch = 32;
  static std::uint64_t tag(std::uint64_t h) { return h >> (64 - kTagBits); }
  static std::int64_t index_of(std::uint64_t slot) {
    return static_cast<std::int64_t>(slot >> kTagBits) - 1;
  }
  // The position of @p name's slot from @p pos on: its entry, or the empty slot where it goes.
  std::uint64_t probe(const StringTable& ids, std::string_view name, std::uint64_t h,
                      std::uint64_t pos) const;

  std::vector<std::uint64_t> slots_;
  std::uint64_t mask_ = 0;
};

}  // namespace vczstats::vcz
