// A zip store: the archive is read through a ByteSource (a local memory map, or HTTP range
// requests) and its central directory parsed here (zip64 included). Stored entries are returned
// as views of what the source read (the mapping, for a local file); deflated ones are inflated.

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "vczstats/error.hpp"
#include "zarr/codecs.hpp"
#include "zarr/stores.hpp"

namespace vczstats::zarr::detail {

MappedFile::MappedFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw IoError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw IoError(fmt::format("{}: cannot stat: {}", path.string(), std::strerror(err)));
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw IoError(fmt::format("{}: cannot map: {}", path.string(), std::strerror(err)));
    }
    data_ = static_cast<const std::byte*>(p);
  }
  ::close(fd);  // the mapping stays valid
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

namespace {

constexpr std::uint32_t kLocalHeaderSig = 0x04034b50;
constexpr std::uint32_t kCentralHeaderSig = 0x02014b50;
constexpr std::uint32_t kEndSig = 0x06054b50;
constexpr std::uint32_t kZip64EndSig = 0x06064b50;
constexpr std::uint32_t kZip64LocatorSig = 0x07064b50;
constexpr std::size_t kEndSize = 22;
constexpr std::size_t kZip64LocatorSize = 20;
constexpr std::size_t kZip64EndSize = 56;
constexpr std::size_t kCentralHeaderSize = 46;
constexpr std::size_t kLocalHeaderSize = 30;
constexpr std::uint16_t kMethodStored = 0;
constexpr std::uint16_t kMethodDeflated = 8;

/// One file of the archive, as the central directory describes it.
struct ZipEntry {
  std::string name;
  std::uint64_t local_header_offset = 0;  // absolute, in the archive
  std::uint64_t extent = 0;  // bytes from the local header to the next record: header + data
  std::uint64_t compressed_size = 0;
  std::uint64_t size = 0;
  std::uint32_t crc = 0;
  std::uint16_t method = 0;
  std::uint16_t flags = 0;
};

/// Bounds-checked little-endian reads at absolute offsets of the archive, from a window the
/// source read once (the whole mapping, or a range fetched over HTTP). Reads outside the window
/// but inside the file go to the source (rare: a zip64 record far from the end).
class Reader {
 public:
  Reader(const ByteSource& source, std::uint64_t offset, std::uint64_t length)
      : source_(source), window_(source.read(offset, length)), origin_(offset) {}

  template <class T>
  T at(std::uint64_t offset) const {
    require(offset, sizeof(T), "truncated record");
    if (offset >= origin_ && offset - origin_ + sizeof(T) <= window_.size())
      return load_le<T>(window_.data() + (offset - origin_));
    const Bytes b = source_.read(offset, sizeof(T));
    return load_le<T>(b.data());
  }
  void require(std::uint64_t offset, std::uint64_t length, std::string_view what) const {
    if (offset > size() || length > size() - offset) fail(what);
  }
  [[noreturn]] void fail(std::string_view what) const {
    throw FormatError(fmt::format("{}: corrupt zip file: {}", source_.name(), what));
  }
  /// Bytes [offset, offset + length): a view of the window when it holds them.
  Bytes span(std::uint64_t offset, std::uint64_t length) const {
    require(offset, length, "entry extends past the end of the file");
    if (offset >= origin_ && offset - origin_ + length <= window_.size())
      return window_.slice(static_cast<std::size_t>(offset - origin_),
                           static_cast<std::size_t>(length));
    return source_.read(offset, length);
  }
  std::uint64_t size() const { return source_.size(); }

 private:
  const ByteSource& source_;
  Bytes window_;
  std::uint64_t origin_ = 0;
};

/// Where the central directory lies and how many entries it holds.
struct CentralDirectory {
  std::uint64_t offset = 0;  // absolute
  std::uint64_t size = 0;
  std::uint64_t entries = 0;
  std::uint64_t base = 0;  // bytes prepended to the archive (self-extractors, concatenation)
};

CentralDirectory find_central_directory(const Reader& r) {
  if (r.size() < kEndSize) r.fail("too short for an end of central directory record");
  // The end record sits at the end, followed by a comment of at most 65535 bytes.
  std::uint64_t end = 0;
  bool found = false;
  const std::uint64_t lowest = r.size() >= kEndSize + 0xFFFF ? r.size() - kEndSize - 0xFFFF : 0;
  for (std::uint64_t pos = r.size() - kEndSize + 1; pos-- > lowest;) {
    if (r.at<std::uint32_t>(pos) != kEndSig) continue;
    const std::uint16_t comment = r.at<std::uint16_t>(pos + 20);
    if (pos + kEndSize + comment <= r.size()) {
      end = pos;
      found = true;
      break;
    }
  }
  if (!found) r.fail("no end of central directory record");
  if (r.at<std::uint16_t>(end + 4) != 0 || r.at<std::uint16_t>(end + 6) != 0)
    r.fail("multi-disk archives are not supported");

  CentralDirectory cd;
  cd.entries = r.at<std::uint16_t>(end + 10);
  cd.size = r.at<std::uint32_t>(end + 12);
  std::uint64_t offset = r.at<std::uint32_t>(end + 16);
  std::uint64_t records_start = end;  // the central directory ends where these records start

  // A zip64 locator right before the end record points at the zip64 end record.
  if (end >= kZip64LocatorSize &&
      r.at<std::uint32_t>(end - kZip64LocatorSize) == kZip64LocatorSig) {
    const std::uint64_t locator = end - kZip64LocatorSize;
    std::uint64_t rec = r.at<std::uint64_t>(locator + 8);
    const bool at_pointer =
        rec + kZip64EndSize <= r.size() && r.at<std::uint32_t>(rec) == kZip64EndSig;
    if (!at_pointer) {
      // Archives with prepended data: the record then sits right before the locator.
      if (locator < kZip64EndSize) r.fail("zip64 end of central directory record not found");
      rec = locator - kZip64EndSize;
      if (r.at<std::uint32_t>(rec) != kZip64EndSig)
        r.fail("zip64 end of central directory record not found");
    }
    if (r.at<std::uint32_t>(rec + 16) != 0 || r.at<std::uint32_t>(rec + 20) != 0)
      r.fail("multi-disk archives are not supported");
    cd.entries = r.at<std::uint64_t>(rec + 32);
    cd.size = r.at<std::uint64_t>(rec + 40);
    offset = r.at<std::uint64_t>(rec + 48);
    records_start = rec;
  }
  if (cd.size > records_start || offset > records_start - cd.size)
    r.fail("central directory offset out of range");
  cd.base = records_start - cd.size - offset;
  cd.offset = cd.base + offset;
  return cd;
}

/// Replace the 32-bit values saturated at 0xFFFFFFFF by those of the zip64 extra field.
void apply_zip64_extra(const Reader& r, std::span<const std::byte> extra, ZipEntry& e,
                       bool size_saturated, bool compressed_saturated, bool offset_saturated) {
  std::size_t pos = 0;
  while (pos + 4 <= extra.size()) {
    const auto id = load_le<std::uint16_t>(extra.data() + pos);
    const auto len = load_le<std::uint16_t>(extra.data() + pos + 2);
    pos += 4;
    if (pos + len > extra.size()) r.fail("extra field extends past its record");
    if (id == 0x0001) {
      std::size_t field = pos;
      const std::size_t field_end = pos + len;
      auto take = [&](std::uint64_t& value) {
        if (field + 8 > field_end) r.fail("zip64 extra field too short");
        value = load_le<std::uint64_t>(extra.data() + field);
        field += 8;
      };
      if (size_saturated) take(e.size);
      if (compressed_saturated) take(e.compressed_size);
      if (offset_saturated) take(e.local_header_offset);
      return;
    }
    pos += len;
  }
  if (size_saturated || compressed_saturated || offset_saturated)
    r.fail(fmt::format("entry {} lacks its zip64 extra field", e.name));
}

std::vector<ZipEntry> read_entries(const Reader& r, const CentralDirectory& cd) {
  std::vector<ZipEntry> entries;
  entries.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(cd.entries, 1u << 20)));
  r.require(cd.offset, cd.size, "central directory extends past the end of the file");
  const std::uint64_t end = cd.offset + cd.size;
  std::uint64_t pos = cd.offset;
  constexpr std::uint32_t saturated = 0xFFFFFFFF;
  while (pos < end) {
    if (end - pos < kCentralHeaderSize || r.at<std::uint32_t>(pos) != kCentralHeaderSig)
      r.fail("bad central directory entry");
    ZipEntry e;
    e.flags = r.at<std::uint16_t>(pos + 8);
    e.method = r.at<std::uint16_t>(pos + 10);
    e.crc = r.at<std::uint32_t>(pos + 16);
    const std::uint32_t compressed = r.at<std::uint32_t>(pos + 20);
    const std::uint32_t size = r.at<std::uint32_t>(pos + 24);
    const std::uint16_t name_len = r.at<std::uint16_t>(pos + 28);
    const std::uint16_t extra_len = r.at<std::uint16_t>(pos + 30);
    const std::uint16_t comment_len = r.at<std::uint16_t>(pos + 32);
    const std::uint32_t local = r.at<std::uint32_t>(pos + 42);
    const std::uint64_t record = kCentralHeaderSize + name_len + extra_len + comment_len;
    if (record > end - pos) r.fail("central directory entry extends past the directory");
    const Bytes name = r.span(pos + kCentralHeaderSize, name_len);
    e.name.assign(reinterpret_cast<const char*>(name.data()), name.size());
    e.compressed_size = compressed;
    e.size = size;
    e.local_header_offset = local;
    apply_zip64_extra(r, r.span(pos + kCentralHeaderSize + name_len, extra_len).span(), e,
                      size == saturated, compressed == saturated, local == saturated);
    e.local_header_offset += cd.base;
    pos += record;
    if (!e.name.empty() && e.name.back() != '/') entries.push_back(std::move(e));
  }
  // Sorted for binary search and prefix scans; of duplicate names the later one wins.
  std::stable_sort(entries.begin(), entries.end(),
                   [](const ZipEntry& a, const ZipEntry& b) { return a.name < b.name; });
  std::vector<ZipEntry> unique;
  unique.reserve(entries.size());
  for (auto& e : entries) {
    if (!unique.empty() && unique.back().name == e.name)
      unique.back() = std::move(e);
    else
      unique.push_back(std::move(e));
  }
  return unique;
}

/// Bytes at the end of the archive read first: the end record, a zip64 locator and record, and
/// an archive comment of at most 65535 bytes (one request for a remote archive).
constexpr std::uint64_t kTailBytes = kEndSize + 0xFFFF + kZip64LocatorSize + kZip64EndSize;

/// Each entry's extent: up to the next local header or the central directory, whichever comes
/// first, so one read of it holds the local header and the data.
void set_extents(std::vector<ZipEntry>& entries, const CentralDirectory& cd, std::uint64_t size) {
  std::vector<std::uint64_t> starts;
  starts.reserve(entries.size() + 2);
  for (const auto& e : entries) starts.push_back(e.local_header_offset);
  starts.push_back(cd.offset);
  starts.push_back(size);
  std::sort(starts.begin(), starts.end());
  for (auto& e : entries) {
    const auto next = std::upper_bound(starts.begin(), starts.end(), e.local_header_offset);
    // Offsets past the end of the file (a damaged directory) bound nothing: an entry's extent
    // ends at the file's end at most (found by fuzz_zip_ranges).
    const std::uint64_t end = next == starts.end() ? size : std::min(*next, size);
    e.extent = end - std::min(end, e.local_header_offset);
  }
}

class ZipStore final : public Store {
 public:
  explicit ZipStore(std::shared_ptr<const ByteSource> source)
      : source_(std::move(source)), path_(source_->name()) {
    const std::uint64_t size = source_->size();
    const std::uint64_t tail = std::min(size, kTailBytes);
    const CentralDirectory cd = find_central_directory(Reader(*source_, size - tail, tail));
    if (cd.offset > size || cd.size > size - cd.offset)
      throw FormatError(fmt::format(
          "{}: corrupt zip file: central directory extends past the end of the file", path_));
    entries_ = read_entries(Reader(*source_, cd.offset, cd.size), cd);
    set_extents(entries_, cd, size);
    root_ = find_root();
  }

  std::optional<Bytes> get(std::string_view key) const override {
    const ZipEntry* e = find(key);
    if (e == nullptr) return std::nullopt;
    auto fail = [&](std::string_view what) -> FormatError {
      return FormatError(fmt::format("{}: corrupt zip file: {}", path_, what));
    };
    if ((e->flags & 1u) != 0) throw fail(fmt::format("entry {} is encrypted", e->name));
    const std::uint64_t h = e->local_header_offset;
    if (e->extent < kLocalHeaderSize) throw fail("local header extends past the end of the file");
    // One read for the local header and the data (a view of the mapping for a local file).
    const Bytes extent = source_->read(h, e->extent);
    if (load_le<std::uint32_t>(extent.data()) != kLocalHeaderSig)
      throw fail(fmt::format("bad local header for entry {}", e->name));
    const std::uint64_t skip = kLocalHeaderSize + load_le<std::uint16_t>(extent.data() + 26) +
                               load_le<std::uint16_t>(extent.data() + 28);
    Bytes data;
    if (skip <= extent.size() && e->compressed_size <= extent.size() - skip) {
      data = extent.slice(static_cast<std::size_t>(skip),
                          static_cast<std::size_t>(e->compressed_size));
    } else {
      // Data overlapping the next record: a damaged archive, unless the reads say otherwise.
      if (h + skip > source_->size() || e->compressed_size > source_->size() - h - skip)
        throw fail("entry extends past the end of the file");
      data = source_->read(h + skip, e->compressed_size);
    }
    if (e->method == kMethodStored) {
      if (e->compressed_size != e->size)
        throw fail(fmt::format("stored entry {} has different sizes", e->name));
      return data;
    }
    if (e->method == kMethodDeflated) {
      // Deflate cannot expand more than 1032:1; a larger claim is a damaged directory.
      if (e->size / 1032 > e->compressed_size + 64)
        throw fail(fmt::format("entry {} claims an impossible size", e->name));
      std::vector<std::byte> out(static_cast<std::size_t>(e->size));
      try {
        inflate_exact(data.span(), out, DeflateFormat::Raw, "deflate");
      } catch (const FormatError& err) {
        throw fail(fmt::format("entry {}: {}", e->name, err.what()));
      }
      std::uint64_t crc = ::crc32(0L, Z_NULL, 0);
      for (std::size_t done = 0; done < out.size();) {
        const std::size_t n = std::min<std::size_t>(out.size() - done, 1u << 30);
        crc = ::crc32(crc, reinterpret_cast<const Bytef*>(out.data() + done), static_cast<uInt>(n));
        done += n;
      }
      if (crc != e->crc) throw fail(fmt::format("entry {}: CRC-32 mismatch", e->name));
      return Bytes(std::move(out));
    }
    throw FormatError(fmt::format("{}: zip entry {} uses unsupported compression method {}", path_,
                                  e->name, e->method));
  }

  bool contains(std::string_view key) const override { return find(key) != nullptr; }

  std::vector<StoreEntry> list(std::string_view prefix) const override {
    prefix = trim_prefix(prefix);
    const std::string full = root_ + std::string(prefix);
    std::vector<StoreEntry> out;
    auto it = std::lower_bound(entries_.begin(), entries_.end(), full,
                               [](const ZipEntry& e, const std::string& k) { return e.name < k; });
    for (; it != entries_.end() && it->name.starts_with(full); ++it) {
      const bool below =
          prefix.empty() || it->name.size() == full.size() || it->name[full.size()] == '/';
      if (below) out.push_back({it->name.substr(root_.size()), it->compressed_size});
    }
    return out;
  }

  const std::string& path() const override { return path_; }

  void prefetch(std::span<const std::string> keys) const override {
    if (!source_->remote()) return;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    ranges.reserve(keys.size());
    // Only entries that get() can read: an entry whose local header lies past the end of the
    // archive (a damaged directory) has no extent, and its offset is no range of the file.
    for (const auto& k : keys)
      if (const ZipEntry* e = find(k); e != nullptr && e->extent >= kLocalHeaderSize)
        ranges.emplace_back(e->local_header_offset, e->extent);
    source_->prefetch(ranges);
  }
  void cancel_prefetch() const override { source_->cancel_prefetch(); }
  bool reads_ahead() const override { return source_->remote(); }
  IoStats io_stats() const override { return source_->io_stats(); }

 private:
  const ZipEntry* find(std::string_view key) const {
    std::string full = root_;
    full += key;
    auto it = std::lower_bound(entries_.begin(), entries_.end(), full,
                               [](const ZipEntry& e, const std::string& k) { return e.name < k; });
    return it != entries_.end() && it->name == full ? &*it : nullptr;
  }

  bool has_metadata(const std::string& dir) const {
    for (const char* name : {".zgroup", "zarr.json", ".zarray"})
      if (find(dir + name) != nullptr) return true;
    return false;
  }

  /// Zips made by zipping a store's folder hold every key under that folder: then the one
  /// top-level folder with Zarr metadata is the root.
  std::string find_root() const {
    if (has_metadata("")) return "";
    std::vector<std::string> candidates;
    std::string last;  // entries are sorted, so each folder's entries are contiguous
    for (const auto& e : entries_) {
      const auto slash = e.name.find('/');
      if (slash == std::string::npos) continue;
      std::string_view dir = std::string_view(e.name).substr(0, slash + 1);
      if (dir == last) continue;
      last = dir;
      if (has_metadata(last)) candidates.push_back(last);
    }
    return candidates.size() == 1 ? candidates.front() : std::string();
  }

  std::shared_ptr<const ByteSource> source_;
  std::string path_;
  std::vector<ZipEntry> entries_;
  std::string root_;  // "" or "folder/"
};

/// A memory-mapped file as a byte source: reads are views of the mapping.
class MappedSource final : public ByteSource {
 public:
  explicit MappedSource(const std::filesystem::path& file)
      : name_(file.string()), map_(std::make_shared<const MappedFile>(file)) {}
  const std::string& name() const override { return name_; }
  std::uint64_t size() const override { return map_->bytes().size(); }
  Bytes read(std::uint64_t offset, std::uint64_t length) const override {
    if (offset > size() || length > size() - offset)
      throw FormatError(fmt::format("{}: corrupt zip file: bytes {}+{} pass the end of the file",
                                    name_, offset, length));
    return Bytes(
        map_->bytes().subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(length)),
        map_);
  }

 private:
  std::string name_;
  std::shared_ptr<const MappedFile> map_;
};

/// Bytes in memory as a byte source (the fuzz target's archives): reads are views of them.
class MemorySource final : public ByteSource {
 public:
  MemorySource(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
               std::string name)
      : name_(std::move(name)), bytes_(bytes), owner_(std::move(owner)) {}
  const std::string& name() const override { return name_; }
  std::uint64_t size() const override { return bytes_.size(); }
  Bytes read(std::uint64_t offset, std::uint64_t length) const override {
    if (offset > size() || length > size() - offset)
      throw FormatError(fmt::format("{}: corrupt zip file: bytes {}+{} pass the end of the file",
                                    name_, offset, length));
    return Bytes(bytes_.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(length)),
                 owner_);
  }

 private:
  std::string name_;
  std::span<const std::byte> bytes_;
  std::shared_ptr<const void> owner_;
};

}  // namespace

std::shared_ptr<const ByteSource> map_file_source(const std::filesystem::path& path) {
  return std::make_shared<const MappedSource>(path);
}

std::shared_ptr<const Store> open_zip_store(std::shared_ptr<const ByteSource> source) {
  return std::make_shared<const ZipStore>(std::move(source));
}

std::shared_ptr<const Store> open_zip_store(const std::filesystem::path& file) {
  return open_zip_store(map_file_source(file));
}

std::shared_ptr<const Store> open_zip_store_bytes(std::span<const std::byte> bytes,
                                                  std::shared_ptr<const void> owner,
                                                  std::string name) {
  return open_zip_store(
      std::make_shared<const MemorySource>(bytes, std::move(owner), std::move(name)));
}

}  // namespace vczstats::zarr::detail
