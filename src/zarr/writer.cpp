// Writing Zarr: a directory store, v2/v3 metadata documents, and chunks encoded (vlen-utf8 for
// strings, then blosc, zstd or nothing) from any thread.

#include <blosc.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vczstats/error.hpp"
#include "vczstats/zarr_writer.hpp"
#include "zarr/stores.hpp"

namespace vczstats::zarr {

namespace detail {
void write_all(int fd, const std::byte* data, std::size_t n, const std::filesystem::path& file) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0)
      throw IoError(fmt::format("{}: write failed: {}", file.string(), std::strerror(errno)));
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

}  // namespace detail

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// The text of a metadata document. Text from users' files (VCF header lines, contig and field
/// names) need not be UTF-8, which JSON requires: an invalid byte is written as U+FFFD.
std::string json_text(const json& doc) {
  return doc.dump(4, ' ', false, json::error_handler_t::replace);
}

/// mkdir -p that tolerates other threads creating the same folders.
void make_directories(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return;
  if (dir.has_parent_path() && dir.parent_path() != dir) make_directories(dir.parent_path());
  if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
    throw IoError(
        fmt::format("{}: cannot create directory: {}", dir.string(), std::strerror(errno)));
}

/// numpy's dtype string of a Zarr v2 array.
std::string v2_dtype(const DataType& t) {
  switch (t.kind) {
    case DataKind::Bool:
      return "|b1";
    case DataKind::Int:
      return fmt::format("{}i{}", t.size == 1 ? '|' : '<', t.size);
    case DataKind::UInt:
      return fmt::format("{}u{}", t.size == 1 ? '|' : '<', t.size);
    case DataKind::Float:
      return fmt::format("<f{}", t.size);
    case DataKind::String:
      return "|O";
  }
  return "";
}

void check_dtype(const DataType& t) {
  const bool ok = (t.kind == DataKind::Bool && t.size == 1) ||
                  ((t.kind == DataKind::Int || t.kind == DataKind::UInt) &&
                   (t.size == 1 || t.size == 2 || t.size == 4 || t.size == 8)) ||
                  (t.kind == DataKind::Float && (t.size == 4 || t.size == 8)) ||
                  t.kind == DataKind::String;
  if (!ok) throw UsageError(fmt::format("cannot write data type {}", t.name()));
}

/// The fill value as JSON (v2 and v3 differ only for NaNs with a payload).
json fill_json(const ArrayDefinition& d, int zarr_format) {
  const DataType& t = d.dtype;
  if (t.kind == DataKind::String) return d.fill_string;
  std::vector<std::byte> f = d.fill_value;
  f.resize(static_cast<std::size_t>(t.size), std::byte{0});
  auto load = [&](auto v) {
    std::memcpy(&v, f.data(), sizeof v);
    return v;
  };
  switch (t.kind) {
    case DataKind::Bool:
      return f[0] != std::byte{0};
    case DataKind::Int:
      switch (t.size) {
        case 1:
          return load(std::int8_t{});
        case 2:
          return load(std::int16_t{});
        case 4:
          return load(std::int32_t{});
        default:
          return load(std::int64_t{});
      }
    case DataKind::UInt:
      switch (t.size) {
        case 1:
          return load(std::uint8_t{});
        case 2:
          return load(std::uint16_t{});
        case 4:
          return load(std::uint32_t{});
        default:
          return load(std::uint64_t{});
      }
    case DataKind::Float: {
      const double v = t.size == 4 ? static_cast<double>(load(float{})) : load(double{});
      if (std::isnan(v)) {
        if (zarr_format == 3) {
          // v3 keeps the exact bits of a NaN that is not the canonical one.
          const bool canonical = t.size == 4 ? load(std::uint32_t{}) == 0x7fc00000u
                                             : load(std::uint64_t{}) == 0x7ff8000000000000ull;
          if (!canonical)
            return t.size == 4 ? fmt::format("0x{:08x}", load(std::uint32_t{}))
                               : fmt::format("0x{:016x}", load(std::uint64_t{}));
        }
        return "NaN";
      }
      if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
      return v;
    }
    case DataKind::String:
      break;
  }
  return nullptr;
}

const char* shuffle_name(Shuffle s) {
  switch (s) {
    case Shuffle::None:
      return "noshuffle";
    case Shuffle::Byte:
      return "shuffle";
    case Shuffle::Bit:
      return "bitshuffle";
  }
  return "noshuffle";
}

int itemsize(const DataType& t) {
  return t.kind == DataKind::String ? 1 : t.size;
}

/// numcodecs' VLenUTF8 framing: a little-endian u32 count, then u32 length + bytes per item.
std::vector<std::byte> vlen_encode(std::span<const std::string> values) {
  std::size_t total = 4;
  for (const auto& s : values) total += 4 + s.size();
  std::vector<std::byte> out(total);
  std::byte* p = out.data();
  auto put_u32 = [&](std::size_t v) {
    if (v > 0xFFFFFFFFu) throw UsageError("vlen-utf8: a string or chunk exceeds 4 GiB");
    const auto u = static_cast<std::uint32_t>(v);
    for (int i = 0; i < 4; ++i) *p++ = static_cast<std::byte>((u >> (8 * i)) & 0xFF);
  };
  put_u32(values.size());
  for (const auto& s : values) {
    put_u32(s.size());
    std::memcpy(p, s.data(), s.size());
    p += s.size();
  }
  return out;
}

ZSTD_CCtx* zstd_compression_context() {
  struct Deleter {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  };
  thread_local std::unique_ptr<ZSTD_CCtx, Deleter> ctx(ZSTD_createCCtx());
  if (!ctx) throw IoError("cannot create a zstd compression context");
  return ctx.get();
}

/// A per-thread output buffer of at least @p n bytes, not initialised (a zeroed vector of a
/// chunk's size per call costs as much as a fast codec).
std::byte* output_scratch(std::size_t n) {
  thread_local std::unique_ptr<std::byte[]> buffer;
  thread_local std::size_t size = 0;
  if (size < n) {
    buffer = std::make_unique_for_overwrite<std::byte[]>(n);
    size = n;
  }
  return buffer.get();
}

std::vector<std::byte> compress(const Compression& c, int typesize, std::span<const std::byte> in,
                                const std::string& where) {
  switch (c.kind) {
    case Compression::Kind::None:
      return {in.begin(), in.end()};
    case Compression::Kind::Blosc: {
      if (in.size() > static_cast<std::size_t>(BLOSC_MAX_BUFFERSIZE))  // (vlen strings)
        throw IoError(fmt::format("{}: chunk of {} bytes exceeds blosc's limit of {} bytes", where,
                                  in.size(), BLOSC_MAX_BUFFERSIZE));
      std::byte* out = output_scratch(in.size() + BLOSC_MAX_OVERHEAD);
      const int n = blosc_compress_ctx(
          c.level, static_cast<int>(c.shuffle), static_cast<std::size_t>(typesize), in.size(),
          in.data(), out, in.size() + BLOSC_MAX_OVERHEAD, c.blosc_cname.c_str(), 0, 1);
      if (n <= 0) throw IoError(fmt::format("{}: blosc compression failed", where));
      return {out, out + n};
    }
    case Compression::Kind::Zstd: {
      const std::size_t bound = ZSTD_compressBound(in.size());
      std::byte* out = output_scratch(bound);
      const std::size_t n =
          ZSTD_compressCCtx(zstd_compression_context(), out, bound, in.data(), in.size(), c.level);
      if (ZSTD_isError(n))
        throw IoError(fmt::format("{}: zstd compression failed: {}", where, ZSTD_getErrorName(n)));
      return {out, out + n};
    }
  }
  return {};
}

json compressor_v2(const Compression& c) {
  switch (c.kind) {
    case Compression::Kind::None:
      return nullptr;
    case Compression::Kind::Blosc:
      return {{"id", "blosc"},
              {"cname", c.blosc_cname},
              {"clevel", c.level},
              {"shuffle", static_cast<int>(c.shuffle)},
              {"blocksize", 0}};
    case Compression::Kind::Zstd:
      return {{"id", "zstd"}, {"level", c.level}};
  }
  return nullptr;
}

json codecs_v3(const ArrayDefinition& d) {
  json codecs = json::array();
  if (d.dtype.kind == DataKind::String)
    codecs.push_back({{"name", "vlen-utf8"}, {"configuration", json::object()}});
  else
    codecs.push_back({{"name", "bytes"}, {"configuration", {{"endian", "little"}}}});
  const Compression& c = d.compression;
  if (c.kind == Compression::Kind::Blosc)
    codecs.push_back({{"name", "blosc"},
                      {"configuration",
                       {{"cname", c.blosc_cname},
                        {"clevel", c.level},
                        {"shuffle", shuffle_name(c.shuffle)},
                        {"typesize", itemsize(d.dtype)},
                        {"blocksize", 0}}}});
  else if (c.kind == Compression::Kind::Zstd)
    codecs.push_back(
        {{"name", "zstd"}, {"configuration", {{"level", c.level}, {"checksum", false}}}});
  return codecs;
}

}  // namespace

// ---- store
// ---------------------------------------------------------------------------------------

DirectoryStoreWriter::DirectoryStoreWriter(std::filesystem::path root) : root_(std::move(root)) {
  make_directories(root_);
}

void DirectoryStoreWriter::set(std::string_view key, std::span<const std::byte> data) const {
  const fs::path file = root_ / fs::path(std::string(key));
  make_directories(file.parent_path());
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0)
    throw IoError(fmt::format("{}: cannot create: {}", file.string(), std::strerror(errno)));
  try {
    detail::write_all(fd, data.data(), data.size(), file);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0)
    throw IoError(fmt::format("{}: write failed: {}", file.string(), std::strerror(errno)));
}

void DirectoryStoreWriter::set_text(std::string_view key, std::string_view text) const {
  set(key, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

void DirectoryStoreWriter::erase(std::string_view key) const {
  const fs::path file = root_ / fs::path(std::string(key));
  if (::unlink(file.c_str()) != 0 && errno != ENOENT)
    throw IoError(fmt::format("{}: cannot remove: {}", file.string(), std::strerror(errno)));
}

void write_group(const DirectoryStoreWriter& store, int zarr_format, const json& attributes) {
  if (zarr_format == 3) {
    const json doc = {{"zarr_format", 3}, {"node_type", "group"}, {"attributes", attributes}};
    store.set_text("zarr.json", json_text(doc));
    return;
  }
  store.set_text(".zgroup", json_text(json{{"zarr_format", 2}}));
  store.set_text(".zattrs", json_text(attributes));
}

// ---- arrays
// --------------------------------------------------------------------------------------

ArrayWriter::ArrayWriter(std::shared_ptr<const DirectoryStoreWriter> store, std::string path,
                         int zarr_format, ArrayDefinition definition)
    : store_(std::move(store)),
      path_(std::move(path)),
      zarr_format_(zarr_format),
      def_(std::move(definition)),
      stored_bytes_(std::make_shared<std::atomic<std::uint64_t>>(0)) {
  if (zarr_format_ != 2 && zarr_format_ != 3)
    throw UsageError(fmt::format("zarr format {} (expected 2 or 3)", zarr_format_));
  check_dtype(def_.dtype);
  if (def_.shape.size() != def_.chunks.size())
    throw UsageError(fmt::format("array {}: shape [{}] and chunks [{}] differ in dimensions", path_,
                                 fmt::join(def_.shape, ", "), fmt::join(def_.chunks, ", ")));
  for (auto c : def_.chunks)
    if (c <= 0) throw UsageError(fmt::format("array {}: chunk sizes must be positive", path_));
  if (!def_.dimension_names.empty() && def_.dimension_names.size() != def_.shape.size())
    throw UsageError(fmt::format("array {}: {} dimension names for {} dimensions", path_,
                                 def_.dimension_names.size(), def_.shape.size()));
  if (def_.dtype.kind != DataKind::String) {
    // A chunk larger than a reader may decode (ours: kMaxChunkBytes) or than blosc can hold is
    // refused now, before any work: a data error (the chunks may be the input's), not usage.
    std::int64_t bytes = def_.dtype.size;
    bool overflow = false;
    for (auto c : def_.chunks) overflow = overflow || __builtin_mul_overflow(bytes, c, &bytes);
    const std::int64_t limit = def_.compression.kind == Compression::Kind::Blosc
                                   ? std::min<std::int64_t>(kMaxChunkBytes, BLOSC_MAX_BUFFERSIZE)
                                   : kMaxChunkBytes;
    if (overflow || bytes > limit)
      throw IoError(
          fmt::format("array {}: chunks [{}] of {} exceed the {} bytes a chunk may hold{}", path_,
                      fmt::join(def_.chunks, ", "), def_.dtype.name(), limit,
                      limit < kMaxChunkBytes ? " (blosc's limit)" : ""));
    if (def_.fill_value.empty())
      def_.fill_value.assign(static_cast<std::size_t>(def_.dtype.size), std::byte{0});
    if (def_.fill_value.size() != static_cast<std::size_t>(def_.dtype.size))
      throw UsageError(fmt::format("array {}: fill value of {} bytes for {}", path_,
                                   def_.fill_value.size(), def_.dtype.name()));
  }
  write_metadata();
}

std::int64_t ArrayWriter::chunk_elements() const {
  std::int64_t n = 1;
  for (auto c : def_.chunks) n *= c;
  return n;
}

void ArrayWriter::resize(std::vector<std::int64_t> shape) {
  if (shape.size() != def_.shape.size())
    throw UsageError(fmt::format("array {}: resize changes the number of dimensions", path_));
  def_.shape = std::move(shape);
  write_metadata();
}

void ArrayWriter::write_metadata() const {
  json attrs = def_.attributes.is_object() ? def_.attributes : json::object();
  const std::string prefix = path_.empty() ? "" : path_ + "/";
  if (zarr_format_ == 3) {
    json doc = {
        {"zarr_format", 3},
        {"node_type", "array"},
        {"shape", def_.shape},
        {"data_type", def_.dtype.name()},
        {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", def_.chunks}}}}},
        {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
        {"fill_value", fill_json(def_, 3)},
        {"codecs", codecs_v3(def_)},
        {"attributes", attrs}};
    if (!def_.dimension_names.empty()) doc["dimension_names"] = def_.dimension_names;
    store_->set_text(prefix + "zarr.json", json_text(doc));
    return;
  }
  json zarray = {{"zarr_format", 2},
                 {"shape", def_.shape},
                 {"chunks", def_.chunks},
                 {"dtype", v2_dtype(def_.dtype)},
                 {"fill_value", fill_json(def_, 2)},
                 {"order", "C"},
                 {"compressor", compressor_v2(def_.compression)},
                 {"filters", nullptr},
                 {"dimension_separator", "."}};
  if (def_.dtype.kind == DataKind::String) zarray["filters"] = json::array({{{"id", "vlen-utf8"}}});
  store_->set_text(prefix + ".zarray", json_text(zarray));
  if (!def_.dimension_names.empty()) attrs["_ARRAY_DIMENSIONS"] = def_.dimension_names;
  store_->set_text(prefix + ".zattrs", json_text(attrs));
}

std::string ArrayWriter::chunk_key(std::span<const std::int64_t> chunk_index) const {
  const std::string prefix = path_.empty() ? "" : path_ + "/";
  if (zarr_format_ == 3) {
    std::string key = prefix + "c";
    for (auto i : chunk_index) key += fmt::format("/{}", i);
    return key;
  }
  if (chunk_index.empty()) return prefix + "0";
  return prefix + fmt::format("{}", fmt::join(chunk_index, "."));
}

void ArrayWriter::store_encoded(std::span<const std::int64_t> chunk_index,
                                std::span<const std::byte> raw) const {
  const std::string key = chunk_key(chunk_index);
  const auto encoded = compress(def_.compression, itemsize(def_.dtype), raw, path_ + ": " + key);
  store_->set(key, encoded);
  stored_bytes_->fetch_add(encoded.size());
}

bool ArrayWriter::write_chunk(std::span<const std::int64_t> chunk_index,
                              std::span<const std::byte> data) const {
  if (def_.dtype.kind == DataKind::String)
    throw UsageError(fmt::format("array {}: write_chunk on a string array", path_));
  const auto size = static_cast<std::size_t>(def_.dtype.size);
  if (chunk_index.size() != def_.chunks.size() ||
      data.size() != static_cast<std::size_t>(chunk_elements()) * size)
    throw UsageError(fmt::format("array {}: chunk data of {} bytes, expected {}", path_,
                                 data.size(), static_cast<std::size_t>(chunk_elements()) * size));
  bool all_fill = true;
  const std::byte* fill = def_.fill_value.data();
  if (size == 1) {
    // Blocks of 4 KiB without an early exit inside vectorise; most chunks differ early.
    const auto f = std::to_integer<unsigned char>(fill[0]);
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    constexpr std::size_t kBlock = 4096;
    for (std::size_t i = 0; i < data.size() && all_fill; i += kBlock) {
      const std::size_t n = std::min(kBlock, data.size() - i);
      unsigned char diff = 0;
      for (std::size_t j = 0; j < n; ++j) diff |= static_cast<unsigned char>(p[i + j] ^ f);
      all_fill = diff == 0;
    }
  } else {
    for (std::size_t i = 0; i < data.size(); i += size)
      if (std::memcmp(data.data() + i, fill, size) != 0) {
        all_fill = false;
        break;
      }
  }
  if (all_fill) {
    store_->erase(chunk_key(chunk_index));
    return false;
  }
  store_encoded(chunk_index, data);
  return true;
}

void ArrayWriter::write_fill_chunk(std::span<const std::int64_t> chunk_index) const {
  if (chunk_index.size() != def_.chunks.size())
    throw UsageError(fmt::format("array {}: chunk index of {} dimensions, expected {}", path_,
                                 chunk_index.size(), def_.chunks.size()));
  store_->erase(chunk_key(chunk_index));
}

bool ArrayWriter::write_chunk_strings(std::span<const std::int64_t> chunk_index,
                                      std::span<const std::string> values) const {
  if (def_.dtype.kind != DataKind::String)
    throw UsageError(
        fmt::format("array {}: write_chunk_strings on a {} array", path_, def_.dtype.name()));
  if (chunk_index.size() != def_.chunks.size() ||
      values.size() != static_cast<std::size_t>(chunk_elements()))
    throw UsageError(fmt::format("array {}: chunk of {} strings, expected {}", path_, values.size(),
                                 chunk_elements()));
  bool all_fill = true;
  for (const auto& s : values)
    if (s != def_.fill_string) {
      all_fill = false;
      break;
    }
  if (all_fill) {
    store_->erase(chunk_key(chunk_index));
    return false;
  }
  store_encoded(chunk_index, vlen_encode(values));
  return true;
}

}  // namespace vczstats::zarr
