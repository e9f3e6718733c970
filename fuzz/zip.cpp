// Fuzz targets: a zip store (end of central directory, zip64 records and extra fields, local
// headers, stored and deflated entries), then the Zarr group and arrays it holds. Input: the zip
// file.
//  - zip: the archive in memory (reads are views of the whole input, as for a mapped file).
//  - zip_ranges (VCZ_FUZZ_ZIP_RANGES): the archive read as a remote zip is, through byte ranges
//    (zarr/remote/fetch.cpp's HttpRangeSource without the network): the last bytes are fetched
//    first and kept, every other read is its own buffer of exactly the bytes asked for (so a
//    read past a range is an ASan finding, not a read of the next bytes), and the store's
//    prefetch hints are checked against the archive before the reads.

#include <algorithm>
#include <cstdio>

#include "fuzz_support.hpp"
#include "zarr/stores.hpp"

namespace {

using namespace vczstats;

#ifdef VCZ_FUZZ_ZIP_RANGES
/// What a remote zip fetches first: its last 65 KiB + 512 (kZipTail in remote_store.cpp).
constexpr std::uint64_t kTail = 65 * 1024 + 512;

class RangeSource final : public zarr::detail::ByteSource {
 public:
  explicit RangeSource(std::span<const std::byte> archive) : archive_(archive) {
    const std::uint64_t tail = std::min<std::uint64_t>(kTail, archive.size());
    tail_offset_ = archive.size() - tail;
    tail_ = zarr::Bytes(
        std::vector<std::byte>(archive.end() - static_cast<std::ptrdiff_t>(tail), archive.end()));
  }
  const std::string& name() const override { return name_; }
  std::uint64_t size() const override { return archive_.size(); }
  bool remote() const override { return true; }
  zarr::Bytes read(std::uint64_t offset, std::uint64_t length) const override {
    if (offset > size() || length > size() - offset)
      throw FormatError("fuzz.zip: bytes " + std::to_string(offset) + "+" + std::to_string(length) +
                        " pass the end of the file");
    if (offset >= tail_offset_ && offset + length <= tail_offset_ + tail_.size())
      return tail_.slice(static_cast<std::size_t>(offset - tail_offset_),
                         static_cast<std::size_t>(length));
    const auto first = archive_.begin() + static_cast<std::ptrdiff_t>(offset);
    return zarr::Bytes(std::vector<std::byte>(first, first + static_cast<std::ptrdiff_t>(length)));
  }
  void prefetch(std::span<const std::pair<std::uint64_t, std::uint64_t>> ranges) const override {
    // The store hints the extents of entries it found in the central directory: each must lie
    // in the archive (HttpRangeSource drops others, but a wrong hint is a bug of the reader).
    for (const auto& [offset, length] : ranges)
      if (offset > size() || length > size() - offset) {
        std::fprintf(stderr, "zip_ranges finding: prefetch hint %llu+%llu outside %llu bytes\n",
                     static_cast<unsigned long long>(offset),
                     static_cast<unsigned long long>(length),
                     static_cast<unsigned long long>(size()));
        __builtin_trap();
      }
  }

 private:
  std::span<const std::byte> archive_;
  std::string name_ = "fuzz.zip";
  std::uint64_t tail_offset_ = 0;
  zarr::Bytes tail_;
};
#endif

std::shared_ptr<const zarr::Store> open(const std::uint8_t* data, std::size_t size) {
#ifdef VCZ_FUZZ_ZIP_RANGES
  return zarr::detail::open_zip_store(
      std::make_shared<const RangeSource>(fuzz::as_bytes(data, size)));
#else
  return zarr::detail::open_zip_store_bytes(fuzz::as_bytes(data, size), nullptr, "fuzz.zip");
#endif
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto store = open(data, size);
    std::vector<std::string> keys;
    for (const auto& entry : store->list("")) keys.push_back(entry.key);
    store->prefetch(keys);
    for (const auto& key : keys) {
      try {
        (void)store->get(key);
      } catch (const Error&) {
      }
    }
    (void)store->children("");
    (void)zarr::open_group(*store);
    // The first few arrays: each one's metadata and chunk codecs have their own targets, and
    // opening the thirty arrays of a whole store made an input cost 20 ms under ASan.
    int arrays = 0;
    for (const auto& name : zarr::list_arrays(*store)) {
      if (++arrays > 4) break;
      try {
        fuzz::read_first_chunk(zarr::Array::open(store, name));
      } catch (const Error&) {
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
