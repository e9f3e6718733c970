// The sample-name hash index: batched, prefetched open addressing.

#include "vcz/sample_index.hpp"

#include <algorithm>
#include <bit>
#include <functional>

#include "vczstats/error.hpp"

namespace vczstats::vcz {
namespace {

std::uint64_t hash(std::string_view s) {
  return std::hash<std::string_view>{}(s);
}

void prefetch(const void* p) {
  __builtin_prefetch(p);
}

}  // namespace

std::uint64_t SampleIndex::probe(const StringTable& ids, std::string_view name, std::uint64_t h,
                                 std::uint64_t pos) const {
  for (;; pos = (pos + 1) & mask_) {
    const std::uint64_t slot = slots_[pos];
    if (slot == 0) return pos;
    if ((slot & ((std::uint64_t{1} << kTagBits) - 1)) == tag(h) && ids[index_of(slot)] == name)
      return pos;
  }
}

SampleIndex::SampleIndex(const StringTable& ids, const std::string& what) {
  const std::int64_t n = ids.size();
  if (n >= (std::int64_t{1} << (64 - kTagBits)) - 1)
    throw FormatError(what + ": too many samples to index by name");
  slots_.assign(std::bit_ceil(static_cast<std::uint64_t>(n + n / 2 + 16)), 0);
  mask_ = slots_.size() - 1;
  std::uint64_t hashes[kBatch];
  for (std::int64_t b = 0; b < n; b += kBatch) {
    const std::int64_t e = std::min(n, b + kBatch);
    for (std::int64_t i = b; i < e; ++i) {
      hashes[i - b] = hash(ids[i]);
      prefetch(&slots_[hashes[i - b] & mask_]);
    }
    for (std::int64_t i = b; i < e; ++i) {
      const auto name = ids[i];
      if (name.empty()) continue;  // hidden
      const std::uint64_t h = hashes[i - b];
      const std::uint64_t pos = probe(ids, name, h, h & mask_);
      if (slots_[pos] != 0)
        throw FormatError(what + ": sample_id lists '" + std::string(name) + "' twice (samples " +
                          std::to_string(index_of(slots_[pos])) + " and " + std::to_string(i) +
                          "); samples cannot be selected by name");
      slots_[pos] = static_cast<std::uint64_t>(i + 1) << kTagBits | tag(h);
    }
  }
}

void SampleIndex::find(const StringTable& ids, const StringTable& names,
                       std::span<std::int64_t> out) const {
  const std::int64_t n = names.size();
  std::int64_t pending[kBatch];
  std::uint64_t hashes[kBatch], pos[kBatch];
  for (std::int64_t b = 0; b < n; b += kBatch) {
    const std::int64_t e = std::min(n, b + kBatch);
    // Names in store order: the sample after the previous match. After the first miss the
    // rest of the batch is looked up.
    std::int64_t k = b;
    for (; k < e; ++k) {
      const std::int64_t guess = k > 0 && out[k - 1] >= 0 ? out[k - 1] + 1 : -1;
      out[k] = -1;
      if (names[k].empty()) continue;
      if (guess < 0 || guess >= ids.size() || ids[guess] != names[k]) break;
      out[k] = guess;
    }
    std::int64_t m = 0;
    for (; k < e; ++k) {
      out[k] = -1;
      if (!names[k].empty()) pending[m++] = k;
    }
    // The others in stages, each prefetching what the next one reads: the slot, the sample's
    // offsets, its characters.
    for (std::int64_t j = 0; j < m; ++j) {
      hashes[j] = hash(names[pending[j]]);
      pos[j] = hashes[j] & mask_;
      prefetch(&slots_[pos[j]]);
    }
    for (std::int64_t j = 0; j < m; ++j) {
      const std::uint64_t want = tag(hashes[j]);
      while (slots_[pos[j]] != 0 && (slots_[pos[j]] & ((std::uint64_t{1} << kTagBits) - 1)) != want)
        pos[j] = (pos[j] + 1) & mask_;
      if (slots_[pos[j]] != 0) ids.prefetch(index_of(slots_[pos[j]]));
    }
    for (std::int64_t j = 0; j < m; ++j)
      if (slots_[pos[j]] != 0) prefetch(ids[index_of(slots_[pos[j]])].data());
    for (std::int64_t j = 0; j < m; ++j) {
      const auto name = names[pending[j]];
      std::uint64_t p = pos[j];
      if (slots_[p] != 0 && ids[index_of(slots_[p])] != name)  // a tag collision: probe on
        p = probe(ids, name, hashes[j], (p + 1) & mask_);
      out[pending[j]] = slots_[p] == 0 ? -1 : index_of(slots_[p]);
    }
  }
}

}  // namespace vczstats::vcz
