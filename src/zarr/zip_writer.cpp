// Zipping a finished directory store: stored (uncompressed) entries in sorted key order, zip64
// records where a size, an offset or the entry count needs them. Written here rather than with
// libzip: stored entries are a few fixed records around the data (the counterpart of the parser
// in zip_store.cpp), and libzip would add gnutls/nettle to the GPU machine's package set.

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "vczstats/error.hpp"
#include "vczstats/zarr_writer.hpp"
#include "zarr/stores.hpp"

namespace vczstats::zarr {
namespace detail {
namespace {

namespace fs = std::filesystem;

constexpr std::uint32_t kSaturated32 = 0xFFFFFFFFu;
constexpr std::uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01: reproducible archives

/// Little-endian record builder.
class Record {
 public:
  Record& u16(std::uint64_t v) { return put(v, 2); }
  Record& u32(std::uint64_t v) { return put(v, 4); }
  Record& u64(std::uint64_t v) { return put(v, 8); }
  Record& text(const std::string& s) {
    for (char c : s) bytes_.push_back(static_cast<std::byte>(c));
    return *this;
  }
  const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  Record& put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
    return *this;
  }
  std::vector<std::byte> bytes_;
};

struct Entry {
  std::string name;
  std::uint64_t size = 0;
  std::uint64_t offset = 0;
  std::uint32_t crc = 0;
  bool zip64 = false;  // sizes in a zip64 extra field
};

class ZipFile {
 public:
  explicit ZipFile(const fs::path& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0)
      throw IoError(fmt::format("{}: cannot create: {}", path.string(), std::strerror(errno)));
  }
  ~ZipFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  ZipFile(const ZipFile&) = delete;
  ZipFile& operator=(const ZipFile&) = delete;

  std::uint64_t offset() const { return offset_; }
  void write(std::span<const std::byte> data) {
    write_all(fd_, data.data(), data.size(), path_);
    offset_ += data.size();
  }
  void close() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0)
      throw IoError(fmt::format("{}: write failed: {}", path_.string(), std::strerror(errno)));
  }

 private:
  fs::path path_;
  int fd_ = -1;
  std::uint64_t offset_ = 0;
};

std::vector<std::byte> read_whole(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw IoError(fmt::format("{}: cannot open: {}", file.string(), std::strerror(errno)));
  std::vector<std::byte> data;
  std::byte buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw IoError(fmt::format("{}: read failed: {}", file.string(), std::strerror(err)));
    }
    if (n == 0) break;
    data.insert(data.end(), buffer, buffer + n);
  }
  ::close(fd);
  return data;
}

std::uint32_t crc32_of(std::span<const std::byte> data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = reinterpret_cast<const Bytef*>(data.data());
  std::size_t n = data.size();
  while (n > 0) {
    const auto step = static_cast<uInt>(std::min<std::size_t>(n, 1u << 30));
    crc = crc32(crc, p, step);
    p += step;
    n -= step;
  }
  return static_cast<std::uint32_t>(crc);
}

}  // namespace

void zip_directory(const fs::path& dir, const fs::path& zip_file,
                   const std::atomic<bool>* cancelled, bool force_zip64) {
  std::vector<Entry> entries;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file()) entries.push_back({fs::relative(it->path(), dir).generic_string()});
  }
  if (ec) throw IoError(fmt::format("{}: cannot list: {}", dir.string(), ec.message()));
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.name < b.name; });

  ZipFile out(zip_file);
  for (Entry& e : entries) {
    if (cancelled && cancelled->load()) throw IoError(zip_file.string() + ": interrupted");
    const auto data = read_whole(dir / e.name);
    e.size = data.size();
    e.crc = crc32_of(data);
    e.offset = out.offset();
    e.zip64 = force_zip64 || e.size >= kSaturated32;
    Record local;
    local.u32(0x04034b50)
        .u16(e.zip64 ? 45 : 20)
        .u16(0)  // flags
        .u16(0)  // stored
        .u16(0)
        .u16(kDosDate)
        .u32(e.crc)
        .u32(e.zip64 ? kSaturated32 : e.size)
        .u32(e.zip64 ? kSaturated32 : e.size)
        .u16(e.name.size())
        .u16(e.zip64 ? 20 : 0)
        .text(e.name);
    if (e.zip64) local.u16(0x0001).u16(16).u64(e.size).u64(e.size);
    out.write(local.bytes());
    out.write(data);
  }

  const std::uint64_t cd_offset = out.offset();
  for (const Entry& e : entries) {
    const bool big_offset = force_zip64 || e.offset >= kSaturated32;
    const int extra = (e.zip64 ? 16 : 0) + (big_offset ? 8 : 0);
    Record central;
    central.u32(0x02014b50)
        .u16((3 << 8) | 45)  // made by: Unix, zip 4.5
        .u16(e.zip64 || big_offset ? 45 : 20)
        .u16(0)
        .u16(0)
        .u16(0)
        .u16(kDosDate)
        .u32(e.crc)
        .u32(e.zip64 ? kSaturated32 : e.size)
        .u32(e.zip64 ? kSaturated32 : e.size)
        .u16(e.name.size())
        .u16(extra > 0 ? extra + 4 : 0)
        .u16(0)  // comment
        .u16(0)  // disk
        .u16(0)  // internal attributes
        .u32(std::uint64_t{0100644} << 16)
        .u32(big_offset ? kSaturated32 : e.offset)
        .text(e.name);
    if (extra > 0) {
      central.u16(0x0001).u16(extra);
      if (e.zip64) central.u64(e.size).u64(e.size);
      if (big_offset) central.u64(e.offset);
    }
    out.write(central.bytes());
  }
  const std::uint64_t cd_size = out.offset() - cd_offset;
  const std::uint64_t count = entries.size();
  const bool zip64_end =
      force_zip64 || count >= 0xFFFF || cd_size >= kSaturated32 || cd_offset >= kSaturated32;
  if (zip64_end) {
    const std::uint64_t record = out.offset();
    Record end64;
    end64.u32(0x06064b50)
        .u64(44)
        .u16(45)
        .u16(45)
        .u32(0)
        .u32(0)
        .u64(count)
        .u64(count)
        .u64(cd_size)
        .u64(cd_offset);
    end64.u32(0x07064b50).u32(0).u64(record).u32(1);  // the locator
    out.write(end64.bytes());
  }
  Record end;
  end.u32(0x06054b50)
      .u16(0)
      .u16(0)
      .u16(zip64_end ? 0xFFFF : count)
      .u16(zip64_end ? 0xFFFF : count)
      .u32(zip64_end ? kSaturated32 : cd_size)
      .u32(zip64_end ? kSaturated32 : cd_offset)
      .u16(0);
  out.write(end.bytes());
  out.close();
}

}  // namespace detail

void zip_directory(const std::filesystem::path& dir, const std::filesystem::path& zip_file,
                   const std::atomic<bool>* cancelled) {
  detail::zip_directory(dir, zip_file, cancelled, false);
}

}  // namespace vczstats::zarr
