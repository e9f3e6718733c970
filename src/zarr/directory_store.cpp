// A directory store: one file per key, keys with '/' map to subdirectories.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "vczstats/error.hpp"
#include "zarr/stores.hpp"

namespace vczstats::zarr::detail {
namespace {

namespace fs = std::filesystem;

/// Closes a file descriptor when it goes out of scope.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

/// Keys are relative paths below the root; anything that could escape it is not a key.
bool is_safe_key(std::string_view key) {
  if (key.empty() || key.front() == '/') return false;
  std::size_t start = 0;
  while (start <= key.size()) {
    const std::size_t end = std::min(key.find('/', start), key.size());
    if (key.substr(start, end - start) == "..") return false;
    start = end + 1;
  }
  return true;
}

class DirectoryStore final : public Store {
 public:
  explicit DirectoryStore(const fs::path& root) : root_(root), path_(root.string()) {}

  std::optional<Bytes> get(std::string_view key) const override {
    if (!is_safe_key(key)) return std::nullopt;
    const fs::path file = root_ / fs::path(std::string(key));
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever. It
    // changes nothing for regular files, the only kind read.
    FileDescriptor fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
    if (fd.get() < 0) {
      if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
      throw IoError(fmt::format("{}: cannot open: {}", file.string(), std::strerror(errno)));
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
      throw IoError(fmt::format("{}: cannot stat: {}", file.string(), std::strerror(errno)));
    if (S_ISDIR(st.st_mode)) return std::nullopt;  // a folder of keys, not a key
    if (!S_ISREG(st.st_mode))
      throw IoError(fmt::format(
          "{}: not a regular file (a FIFO, socket or device): a store's keys must be files",
          file.string()));
    std::vector<std::byte> data(static_cast<std::size_t>(st.st_size));
    std::size_t done = 0;
    while (done < data.size()) {
      const ssize_t n =
          ::pread(fd.get(), data.data() + done, data.size() - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0)
        throw IoError(fmt::format("{}: read failed: {}", file.string(), std::strerror(errno)));
      if (n == 0)
        throw IoError(fmt::format("{}: file shrank while being read ({} of {} bytes)",
                                  file.string(), done, data.size()));
      done += static_cast<std::size_t>(n);
    }
    return Bytes(std::move(data));
  }

  bool contains(std::string_view key) const override {
    if (!is_safe_key(key)) return false;
    struct stat st {};
    const fs::path file = root_ / fs::path(std::string(key));
    // Anything but a folder is a key; get() refuses what is not a regular file.
    return ::stat(file.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
  }

  std::vector<StoreEntry> list(std::string_view prefix) const override {
    prefix = trim_prefix(prefix);
    std::vector<StoreEntry> entries;
    if (!prefix.empty() && !is_safe_key(prefix)) return entries;
    const fs::path start = prefix.empty() ? root_ : root_ / fs::path(std::string(prefix));
    try {
      std::error_code ec;
      if (fs::is_regular_file(start, ec)) {
        entries.push_back({std::string(prefix), fs::file_size(start)});
        return entries;
      }
      if (!fs::is_directory(start, ec)) return entries;
      for (const auto& item : fs::recursive_directory_iterator(start)) {
        if (!item.is_regular_file()) continue;
        entries.push_back({item.path().lexically_relative(root_).generic_string(),
                           static_cast<std::uint64_t>(item.file_size())});
      }
    } catch (const fs::filesystem_error& e) {
      throw IoError(fmt::format("{}: cannot list: {}", start.string(), e.what()));
    }
    std::sort(entries.begin(), entries.end(),
              [](const StoreEntry& a, const StoreEntry& b) { return a.key < b.key; });
    return entries;
  }

  std::vector<std::string> children(std::string_view prefix) const override {
    prefix = trim_prefix(prefix);
    std::vector<std::string> names;
    if (!prefix.empty() && !is_safe_key(prefix)) return names;
    const fs::path start = prefix.empty() ? root_ : root_ / fs::path(std::string(prefix));
    std::error_code ec;
    if (!fs::is_directory(start, ec)) return names;
    try {
      for (const auto& item : fs::directory_iterator(start))
        names.push_back(item.path().filename().string());
    } catch (const fs::filesystem_error& e) {
      throw IoError(fmt::format("{}: cannot list: {}", start.string(), e.what()));
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  const std::string& path() const override { return path_; }

 private:
  fs::path root_;
  std::string path_;
};

}  // namespace

std::shared_ptr<const Store> open_directory_store(const std::filesystem::path& root) {
  return std::make_shared<const DirectoryStore>(root);
}

}  // namespace vczstats::zarr::detail
