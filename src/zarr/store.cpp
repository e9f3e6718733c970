// Bytes, the store factory and what every store shares.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <system_error>

#include <fmt/format.h>

#include "vczstats/error.hpp"
#include "zarr/stores.hpp"

namespace vczstats::zarr {

Bytes::Bytes(std::vector<std::byte> owned) {
  auto buffer = std::make_shared<const std::vector<std::byte>>(std::move(owned));
  view_ = std::span<const std::byte>(buffer->data(), buffer->size());
  owner_ = std::move(buffer);
}

Bytes::Bytes(std::span<const std::byte> view, std::shared_ptr<const void> keep_alive)
    : owner_(std::move(keep_alive)), view_(view) {}

std::vector<std::string> Store::children(std::string_view prefix) const {
  return detail::children_from_keys(list(prefix), prefix);
}

void Store::prefetch(std::span<const std::string>) const {}
void Store::cancel_prefetch() const {}

bool is_remote_url(std::string_view path) {
  for (std::string_view scheme : {"http://", "https://", "s3://", "gs://"}) {
    if (path.size() < scheme.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < scheme.size() && same; ++i)
      same = std::tolower(static_cast<unsigned char>(path[i])) == scheme[i];
    if (same) return true;
  }
  return false;
}

namespace detail {

std::string_view trim_prefix(std::string_view prefix) {
  while (!prefix.empty() && prefix.back() == '/') prefix.remove_suffix(1);
  return prefix;
}

std::vector<std::string> children_from_keys(const std::vector<StoreEntry>& entries,
                                            std::string_view prefix) {
  prefix = trim_prefix(prefix);
  const std::size_t skip = prefix.empty() ? 0 : prefix.size() + 1;
  std::vector<std::string> names;
  for (const auto& e : entries) {
    if (e.key.size() <= skip) continue;
    std::string_view rest = std::string_view(e.key).substr(skip);
    names.emplace_back(rest.substr(0, rest.find('/')));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

namespace {

/// Whether the first bytes of a file are a zip signature: a local file header, or the end of
/// central directory record that is all an empty archive holds.
bool looks_like_zip(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw IoError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  std::array<unsigned char, 4> magic{};
  const ssize_t n = ::pread(fd, magic.data(), magic.size(), 0);
  ::close(fd);
  if (n != 4) return false;
  return magic[0] == 'P' && magic[1] == 'K' &&
         ((magic[2] == 3 && magic[3] == 4) || (magic[2] == 5 && magic[3] == 6));
}

}  // namespace
}  // namespace detail

std::shared_ptr<const Store> open_store(const std::string& url_or_path,
                                        const StoreOptions& options) {
  if (is_remote_url(url_or_path)) return detail::open_remote_store(url_or_path, options);
  const std::filesystem::path path(url_or_path);
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw IoError(fmt::format("{}: no such file or directory", path.string()));
  if (std::filesystem::is_directory(status)) return detail::open_directory_store(path);
  if (std::filesystem::is_regular_file(status) && detail::looks_like_zip(path))
    return detail::open_zip_store(path);
  throw FormatError(
      fmt::format("{}: not a Zarr store (expected a directory or a zip file)", path.string()));
}

}  // namespace vczstats::zarr
