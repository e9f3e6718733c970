// Metadata documents: Zarr v2 (.zarray, .zattrs, .zgroup) and v3 (zarr.json), data types,
// fill values, and the mapping of both formats' codec lists onto one CodecPipeline.

#include "zarr/metadata.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vczstats/error.hpp"
#include "zarr/json_scan.hpp"
#include "zarr/stores.hpp"

namespace vczstats::zarr {

std::string DataType::name() const {
  switch (kind) {
    case DataKind::Bool:
      return "bool";
    case DataKind::Int:
      return fmt::format("int{}", size * 8);
    case DataKind::UInt:
      return fmt::format("uint{}", size * 8);
    case DataKind::Float:
      return fmt::format("float{}", size * 8);
    case DataKind::String:
      return "string";
  }
  return "unknown";
}

namespace detail {
namespace {

using nlohmann::json;

/// How the elements of an array are stored before any codec.
enum class Storage { Numeric, VariableLength, FixedBytes, FixedUcs4 };

struct StoredType {
  NumericEncoding encoding;  // decoded type and stored byte order
  Storage storage = Storage::Numeric;
  std::int64_t chars = 0;  // fixed-width strings
  const DataType& type() const { return encoding.type; }
  /// Bytes one decoded element costs in memory: the number, or a std::string plus the fixed
  /// width of its characters.
  std::int64_t decoded_cost() const {
    switch (storage) {
      case Storage::Numeric:
        return type().size;
      case Storage::FixedBytes:
        return std::int64_t{sizeof(std::string)} + chars;
      case Storage::FixedUcs4:
        return std::int64_t{sizeof(std::string)} + 4 * chars;
      case Storage::VariableLength:
        break;
    }
    return std::int64_t{sizeof(std::string)};
  }
};

json parse_json(const Store& store, const std::string& key, const Bytes& bytes) {
  const auto* p = reinterpret_cast<const char*>(bytes.data());
  return parse_json_bounded(std::string_view(p, bytes.size()),
                            fmt::format("{}: {}", store.path(), key));
}

std::optional<json> read_json(const Store& store, const std::string& key) {
  auto bytes = store.get(key);
  if (!bytes) return std::nullopt;
  return parse_json(store, key, *bytes);
}

std::string key_prefix(const std::string& path) {
  std::string_view p = trim_prefix(path);
  return p.empty() ? std::string() : std::string(p) + "/";
}

/// A string member, with @p fallback when it is absent or null.
std::string string_or(const json& j, const char* key, const std::string& fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_string()) throw FormatError(fmt::format("'{}' must be a string", key));
  return it->get<std::string>();
}

const json& member(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) throw FormatError(fmt::format("metadata lacks '{}'", key));
  return *it;
}

std::vector<std::int64_t> int_list(const json& j, const char* what) {
  if (!j.is_array()) throw FormatError(fmt::format("'{}' must be a list of integers", what));
  std::vector<std::int64_t> out;
  for (const auto& v : j) {
    if (!v.is_number_integer())
      throw FormatError(fmt::format("'{}' must be a list of integers", what));
    out.push_back(v.get<std::int64_t>());
  }
  return out;
}

// ---- data types ---------------------------------------------------------------------------------

StoredType parse_v2_dtype(const json& dtype) {
  if (!dtype.is_string())
    throw FormatError(
        fmt::format("unsupported dtype {} (structured dtypes are not supported)", dtype.dump()));
  const std::string spec = dtype.get<std::string>();
  auto bad = [&]() -> FormatError {
    return FormatError(fmt::format("unsupported dtype '{}'", spec));
  };
  if (spec.size() < 2 || std::string_view("<>|=").find(spec[0]) == std::string_view::npos)
    throw bad();
  const char kind = spec[1];
  const std::string_view digits = std::string_view(spec).substr(2);
  std::int64_t size = 0;
  if (!digits.empty()) {
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), size);
    if (ec != std::errc() || ptr != digits.data() + digits.size() || size < 0) throw bad();
  }
  StoredType t;
  t.encoding.big_endian = spec[0] == '>';
  auto numeric = [&](DataKind k, std::initializer_list<std::int64_t> sizes) {
    if (std::find(sizes.begin(), sizes.end(), size) == sizes.end()) throw bad();
    t.encoding.type = DataType{k, static_cast<int>(size)};
  };
  switch (kind) {
    case 'b':
      numeric(DataKind::Bool, {1});
      break;
    case 'i':
      numeric(DataKind::Int, {1, 2, 4, 8});
      break;
    case 'u':
      numeric(DataKind::UInt, {1, 2, 4, 8});
      break;
    case 'f':
      numeric(DataKind::Float, {4, 8});
      break;
    case 'O':
      if (!digits.empty() && size != 8) throw bad();
      t.storage = Storage::VariableLength;
      t.encoding.type = DataType{DataKind::String, 0};
      break;
    case 'S':
    case 'U':
      // A width beyond any chunk's size would only make width x elements wrap around.
      if (digits.empty() || size < 1 || size > kMaxChunkBytes) throw bad();
      t.storage = kind == 'S' ? Storage::FixedBytes : Storage::FixedUcs4;
      t.chars = size;
      t.encoding.type = DataType{DataKind::String, 0};
      break;
    default:
      throw bad();
  }
  return t;
}

StoredType parse_v3_dtype(const json& data_type) {
  if (!data_type.is_string())
    throw FormatError(fmt::format("unsupported data_type {}", data_type.dump()));
  const std::string name = data_type.get<std::string>();
  StoredType t;
  if (name == "string") {
    t.storage = Storage::VariableLength;
    t.encoding.type = DataType{DataKind::String, 0};
    return t;
  }
  static const std::vector<std::pair<std::string, DataType>> kTypes = {
      {"bool", {DataKind::Bool, 1}},    {"int8", {DataKind::Int, 1}},
      {"int16", {DataKind::Int, 2}},    {"int32", {DataKind::Int, 4}},
      {"int64", {DataKind::Int, 8}},    {"uint8", {DataKind::UInt, 1}},
      {"uint16", {DataKind::UInt, 2}},  {"uint32", {DataKind::UInt, 4}},
      {"uint64", {DataKind::UInt, 8}},  {"float32", {DataKind::Float, 4}},
      {"float64", {DataKind::Float, 8}}};
  for (const auto& [n, type] : kTypes)
    if (n == name) {
      t.encoding.type = type;
      return t;
    }
  throw FormatError(fmt::format("unsupported data_type '{}'", name));
}

// ---- fill values --------------------------------------------------------------------------------

template <class T>
void store_value(std::vector<std::byte>& out, T value) {
  out.resize(sizeof(T));
  std::memcpy(out.data(), &value, sizeof(T));
}

std::vector<std::byte> numeric_fill(const json& fv, const DataType& type) {
  std::vector<std::byte> out(static_cast<std::size_t>(type.size), std::byte{0});
  if (fv.is_null()) return out;
  auto bad = [&]() -> FormatError {
    return FormatError(
        fmt::format("fill_value {} does not fit data type {}", fv.dump(), type.name()));
  };
  switch (type.kind) {
    case DataKind::Bool:
      if (fv.is_boolean())
        out[0] = std::byte{fv.get<bool>() ? std::uint8_t{1} : std::uint8_t{0}};
      else if (fv.is_number())
        out[0] = std::byte{fv.get<double>() != 0 ? std::uint8_t{1} : std::uint8_t{0}};
      else
        throw bad();
      return out;
    case DataKind::Float: {
      double v = 0;
      if (fv.is_number()) {
        v = fv.get<double>();
      } else if (fv.is_boolean()) {
        v = fv.get<bool>() ? 1 : 0;
      } else if (fv.is_string()) {
        const auto s = fv.get<std::string>();
        if (s == "NaN") {
          v = std::numeric_limits<double>::quiet_NaN();
        } else if (s == "Infinity") {
          v = std::numeric_limits<double>::infinity();
        } else if (s == "-Infinity") {
          v = -std::numeric_limits<double>::infinity();
        } else if (s.starts_with("0x") && s.size() == 2 + 2 * static_cast<std::size_t>(type.size)) {
          // v3: the raw bits in hexadecimal
          std::uint64_t bits = 0;
          auto [ptr, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), bits, 16);
          if (ec != std::errc() || ptr != s.data() + s.size()) throw bad();
          if (type.size == 4)
            store_value(out, static_cast<std::uint32_t>(bits));
          else
            store_value(out, bits);
          return out;
        } else {
          throw bad();
        }
      } else {
        throw bad();
      }
      if (type.size == 4)
        store_value(out, static_cast<float>(v));
      else
        store_value(out, v);
      return out;
    }
    case DataKind::Int:
    case DataKind::UInt: {
      // A negative value travels as int64, any other as uint64, so every 64-bit value fits.
      bool negative = false;
      std::int64_t i = 0;
      std::uint64_t u = 0;
      if (fv.is_number_unsigned()) {
        u = fv.get<std::uint64_t>();
      } else if (fv.is_number_integer()) {
        i = fv.get<std::int64_t>();
        negative = i < 0;
        u = static_cast<std::uint64_t>(i);
      } else if (fv.is_number_float()) {
        const double d = fv.get<double>();
        if (!std::isfinite(d) || d != std::trunc(d) || d < -9.2e18 || d >= 1.8e19) throw bad();
        negative = d < 0;
        if (negative) {
          i = static_cast<std::int64_t>(d);
          u = static_cast<std::uint64_t>(i);
        } else {
          u = static_cast<std::uint64_t>(d);
        }
      } else if (fv.is_boolean()) {
        u = fv.get<bool>() ? 1 : 0;
      } else {
        throw bad();
      }
      const int bits = type.size * 8;
      const bool is_signed = type.kind == DataKind::Int;
      if (negative) {
        if (!is_signed) throw bad();
        if (bits < 64 && i < -(std::int64_t{1} << (bits - 1))) throw bad();
      } else {
        const std::uint64_t max = is_signed    ? (std::uint64_t{1} << (bits - 1)) - 1
                                  : bits == 64 ? std::numeric_limits<std::uint64_t>::max()
                                               : (std::uint64_t{1} << bits) - 1;
        if (u > max) throw bad();
      }
      // The low bytes of the two's complement, little-endian: the native representation.
      for (int k = 0; k < type.size; ++k)
        out[static_cast<std::size_t>(k)] = std::byte{static_cast<unsigned char>(u >> (8 * k))};
      return out;
    }
    case DataKind::String:
      break;
  }
  return {};
}

std::string base64_decode(const std::string& s, bool& ok) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  ok = true;
  for (char c : s) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+')
      v = 62;
    else if (c == '/')
      v = 63;
    else if (c == '=')
      break;
    else {
      ok = false;
      return {};
    }
    buffer = (buffer << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

std::string string_fill(const json& fv, Storage storage) {
  if (!fv.is_string()) return "";  // null (or a number written by some tools) reads as ""
  std::string s = fv.get<std::string>();
  if (storage == Storage::FixedBytes) {
    // v2 writes the fill of bytes dtypes in base64.
    bool ok = false;
    std::string decoded = base64_decode(s, ok);
    if (ok) s = std::move(decoded);
    while (!s.empty() && s.back() == '\0') s.pop_back();
  }
  return s;
}

// ---- pipelines ----------------------------------------------------------------------------------

using ArrayCodecs = std::vector<std::unique_ptr<const ArrayToArrayCodec>>;
using BytesCodecs = std::vector<std::unique_ptr<const BytesToBytesCodec>>;

std::unique_ptr<const ArrayToBytesCodec> default_v2_array_to_bytes(const StoredType& t,
                                                                   const ElementLayout& layout) {
  switch (t.storage) {
    case Storage::Numeric:
      return make_raw_bytes_codec(layout, false);  // byte order handled by a byteswap codec
    case Storage::FixedBytes:
      return make_fixed_string_codec(layout, t.chars, false, false);
    case Storage::FixedUcs4:
      return make_fixed_string_codec(layout, t.chars, true, t.encoding.big_endian);
    case Storage::VariableLength:
      break;
  }
  throw FormatError("object dtype '|O' needs a vlen-utf8 or vlen-bytes filter");
}

std::shared_ptr<const CodecPipeline> build_v2_pipeline(const json& zarray, const StoredType& t,
                                                       const std::vector<std::int64_t>& chunks) {
  const ElementLayout layout{chunks, t.type().size};
  ArrayCodecs array_codecs;
  std::unique_ptr<const ArrayToBytesCodec> array_to_bytes;
  BytesCodecs bytes_codecs;
  ElementLayout current = layout;
  if (t.storage == Storage::Numeric && t.encoding.big_endian && t.type().size > 1)
    array_codecs.push_back(make_byteswap_codec(layout));

  const json filters = zarray.contains("filters") ? zarray["filters"] : json();
  if (!filters.is_null() && !filters.is_array()) throw FormatError("'filters' must be a list");
  for (const json& f : filters.is_array() ? filters : json::array()) {
    if (!f.is_object() || !f.contains("id") || !f["id"].is_string())
      throw FormatError(fmt::format("filter without an id: {}", f.dump()));
    const auto id = f["id"].get<std::string>();
    if (!array_to_bytes) {
      if (id == "delta") {
        if (t.storage != Storage::Numeric) throw FormatError("delta filter on a non-numeric dtype");
        const std::string dtype = string_or(f, "dtype", "");
        const std::string astype = string_or(f, "astype", dtype);
        const StoredType d = parse_v2_dtype(json(dtype));
        const StoredType a = parse_v2_dtype(json(astype));
        if (d.storage != Storage::Numeric || a.storage != Storage::Numeric)
          throw FormatError("delta filter needs numeric dtypes");
        const std::string description = astype == dtype
                                            ? fmt::format("delta({})", dtype)
                                            : fmt::format("delta({} as {})", dtype, astype);
        array_codecs.push_back(make_delta_codec(current, d.encoding, a.encoding, description));
        current = array_codecs.back()->encoded();
        continue;
      }
      if (id == "packbits") {
        if (t.type().kind != DataKind::Bool)
          throw FormatError("packbits filter on a non-bool dtype");
        array_codecs.push_back(make_packbits_codec(current));
        current = array_codecs.back()->encoded();
        continue;
      }
      if (id == "vlen-utf8" || id == "vlen-bytes") {
        if (t.storage != Storage::VariableLength)
          throw FormatError(fmt::format("{} filter on a dtype that is not '|O'", id));
        array_to_bytes = make_vlen_codec(current, id);
        continue;
      }
    }
    auto codec = make_numcodecs_codec(f);
    if (!codec) throw FormatError(fmt::format("unknown codec '{}'", id));
    if (!array_to_bytes) array_to_bytes = default_v2_array_to_bytes(t, current);
    bytes_codecs.push_back(std::move(codec));
  }
  if (!array_to_bytes) array_to_bytes = default_v2_array_to_bytes(t, current);
  if (zarray.contains("compressor") && !zarray["compressor"].is_null()) {
    const json& c = zarray["compressor"];
    auto codec = make_numcodecs_codec(c);
    if (!codec)
      throw FormatError(fmt::format("unknown codec '{}'", c.value("id", std::string("?"))));
    bytes_codecs.push_back(std::move(codec));
  }
  return std::make_shared<const CodecPipeline>(layout, std::move(array_codecs),
                                               std::move(array_to_bytes), std::move(bytes_codecs));
}

std::shared_ptr<const CodecPipeline> build_v3_pipeline(const json& codecs, const StoredType& t,
                                                       const ElementLayout& layout,
                                                       const std::vector<std::byte>& fill,
                                                       const std::string& fill_string);

/// A v3 codec entry: {"name": ..., "configuration": {...}} or just a name.
std::pair<std::string, json> codec_entry(const json& c) {
  if (c.is_string()) return {c.get<std::string>(), json::object()};
  if (!c.is_object() || !c.contains("name") || !c["name"].is_string())
    throw FormatError(fmt::format("codec without a name: {}", c.dump()));
  json config = c.contains("configuration") ? c["configuration"] : json::object();
  if (config.is_null()) config = json::object();
  return {c["name"].get<std::string>(), config};
}

std::unique_ptr<const ArrayToBytesCodec> make_v3_array_to_bytes(
    const std::string& name, const json& config, const StoredType& t, const ElementLayout& layout,
    const std::vector<std::byte>& fill, const std::string& fill_string) {
  const bool is_string = t.storage == Storage::VariableLength;
  if (name == "bytes" || name == "endian") {
    if (is_string) throw FormatError(fmt::format("codec '{}' cannot encode strings", name));
    const std::string endian = string_or(config, "endian", "little");
    if (endian != "little" && endian != "big")
      throw FormatError(fmt::format("bytes codec: unknown endian '{}'", endian));
    return make_raw_bytes_codec(layout, endian == "big");
  }
  if (name == "vlen-utf8" || name == "vlen-bytes") {
    if (!is_string) throw FormatError(fmt::format("codec '{}' needs the string data type", name));
    return make_vlen_codec(layout, name);
  }
  if (name == "sharding_indexed") {
    const auto inner_shape = int_list(member(config, "chunk_shape"), "chunk_shape");
    if (inner_shape.size() != layout.shape.size())
      throw FormatError("sharding_indexed: chunk_shape has the wrong number of dimensions");
    for (std::size_t d = 0; d < inner_shape.size(); ++d)
      if (inner_shape[d] <= 0 || layout.shape[d] % inner_shape[d] != 0)
        throw FormatError(
            fmt::format("sharding_indexed: inner chunk shape [{}] does not divide shard shape [{}]",
                        fmt::join(inner_shape, ", "), fmt::join(layout.shape, ", ")));
    const ElementLayout inner_layout{inner_shape, layout.itemsize};
    auto inner = build_v3_pipeline(member(config, "codecs"), t, inner_layout, fill, fill_string);
    ElementLayout index_layout{{}, 8};
    std::int64_t cells = 1;
    for (std::size_t d = 0; d < inner_shape.size(); ++d) {
      index_layout.shape.push_back(layout.shape[d] / inner_shape[d]);
      cells *= index_layout.shape.back();  // at most the shard's elements: no overflow
    }
    index_layout.shape.push_back(2);
    if (cells > kMaxChunkBytes / 16)
      throw FormatError(fmt::format(
          "sharding_indexed: {} inner chunks per shard; their index would exceed {} bytes", cells,
          kMaxChunkBytes));
    json index_codecs =
        config.contains("index_codecs")
            ? config["index_codecs"]
            : json::array({json{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                           json{{"name", "crc32c"}}});
    StoredType index_type;
    index_type.encoding.type = DataType{DataKind::UInt, 8};
    auto index = build_v3_pipeline(index_codecs, index_type, index_layout,
                                   std::vector<std::byte>(8, std::byte{0}), "");
    const std::string location = string_or(config, "index_location", "end");
    if (location != "start" && location != "end")
      throw FormatError(fmt::format("sharding_indexed: unknown index_location '{}'", location));
    return make_sharding_codec(layout, inner_shape, std::move(inner), std::move(index),
                               location == "end", fill, fill_string);
  }
  return nullptr;
}

std::shared_ptr<const CodecPipeline> build_v3_pipeline(const json& codecs, const StoredType& t,
                                                       const ElementLayout& layout,
                                                       const std::vector<std::byte>& fill,
                                                       const std::string& fill_string) {
  if (!codecs.is_array()) throw FormatError("'codecs' must be a list");
  ArrayCodecs array_codecs;
  std::unique_ptr<const ArrayToBytesCodec> array_to_bytes;
  BytesCodecs bytes_codecs;
  ElementLayout current = layout;
  for (const json& c : codecs) {
    auto [name, config] = codec_entry(c);
    if (name == "transpose") {
      if (array_to_bytes)
        throw FormatError("codec 'transpose' must come before the array-to-bytes codec");
      std::vector<int> order;
      const json& o = member(config, "order");
      if (o.is_string()) {  // early drafts: "C" or "F"
        for (std::size_t d = 0; d < current.shape.size(); ++d)
          order.push_back(static_cast<int>(o == "F" ? current.shape.size() - 1 - d : d));
      } else {
        for (auto v : int_list(o, "order")) order.push_back(static_cast<int>(v));
      }
      array_codecs.push_back(make_transpose_codec(current, std::move(order)));
      current = array_codecs.back()->encoded();
      continue;
    }
    if (auto a2b = make_v3_array_to_bytes(name, config, t, current, fill, fill_string)) {
      if (array_to_bytes) throw FormatError("more than one array-to-bytes codec");
      array_to_bytes = std::move(a2b);
      continue;
    }
    auto codec = make_v3_bytes_codec(name, config);
    if (!codec) throw FormatError(fmt::format("unknown codec '{}'", name));
    if (!array_to_bytes)
      throw FormatError(fmt::format("codec '{}' comes before any array-to-bytes codec", name));
    bytes_codecs.push_back(std::move(codec));
  }
  if (!array_to_bytes) throw FormatError("the codec list has no array-to-bytes codec");
  return std::make_shared<const CodecPipeline>(layout, std::move(array_codecs),
                                               std::move(array_to_bytes), std::move(bytes_codecs));
}

// ---- documents ----------------------------------------------------------------------------------

void check_grid(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& chunks,
                const StoredType& t) {
  if (shape.size() != chunks.size())
    throw FormatError(fmt::format("shape [{}] and chunks [{}] differ in dimensions",
                                  fmt::join(shape, ", "), fmt::join(chunks, ", ")));
  std::int64_t elements = 1;
  bool overflow = false;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) throw FormatError("negative shape");
    if (chunks[d] <= 0) throw FormatError("chunk sizes must be positive");
    overflow = overflow || __builtin_mul_overflow(elements, chunks[d], &elements);
  }
  // Checked here, before any buffer is allocated for a chunk: a few bytes of metadata must not
  // make a reader allocate gigabytes.
  std::int64_t bytes = 0;
  overflow = overflow || __builtin_mul_overflow(elements, t.decoded_cost(), &bytes);
  if (overflow || bytes > kMaxChunkBytes)
    throw FormatError(fmt::format(
        "chunks [{}] of {} decode to more than {} bytes each, the most a chunk may hold",
        fmt::join(chunks, ", "), t.type().name(), kMaxChunkBytes));
}

ArraySpec read_v2(const Store& store, const std::string& prefix, const json& zarray) {
  if (!zarray.is_object()) throw FormatError(".zarray is not a JSON object");
  if (zarray.contains("zarr_format") && zarray["zarr_format"] != 2)
    throw FormatError(fmt::format("unsupported zarr_format {}", zarray["zarr_format"].dump()));
  ArraySpec spec;
  ArrayMetadata& m = spec.metadata;
  m.zarr_format = 2;
  m.shape = int_list(member(zarray, "shape"), "shape");
  m.chunks = int_list(member(zarray, "chunks"), "chunks");
  const StoredType t = parse_v2_dtype(member(zarray, "dtype"));
  m.dtype = t.type();
  m.dtype_spec = zarray["dtype"].get<std::string>();
  check_grid(m.shape, m.chunks, t);
  const std::string order = string_or(zarray, "order", "C");
  if (order == "F")
    throw FormatError("order \"F\" (Fortran, column-major) is not supported; only \"C\" is");
  if (order != "C") throw FormatError(fmt::format("unknown order '{}'", order));
  const std::string sep = string_or(zarray, "dimension_separator", ".");
  if (sep != "." && sep != "/")
    throw FormatError(fmt::format("unsupported dimension_separator '{}'", sep));
  spec.keys = ChunkKeyEncoding{"", sep[0]};
  const json fill = zarray.contains("fill_value") ? zarray["fill_value"] : json();
  if (t.storage == Storage::Numeric)
    m.fill_value = numeric_fill(fill, m.dtype);
  else
    m.fill_string = string_fill(fill, t.storage);
  spec.pipeline = build_v2_pipeline(zarray, t, m.chunks);
  m.codecs = spec.pipeline->describe();
  m.attributes = json::object();
  if (auto attrs = read_json(store, prefix + ".zattrs")) {
    if (attrs->is_object()) m.attributes = *attrs;
    auto dims = m.attributes.find("_ARRAY_DIMENSIONS");
    if (dims != m.attributes.end() && dims->is_array())
      for (const auto& d : *dims)
        m.dimension_names.push_back(d.is_string() ? d.get<std::string>() : "");
  }
  return spec;
}

ArraySpec read_v3(const json& doc) {
  if (!doc.is_object()) throw FormatError("zarr.json is not a JSON object");
  if (doc.value("zarr_format", json()) != 3)
    throw FormatError(
        fmt::format("unsupported zarr_format {}", doc.value("zarr_format", json()).dump()));
  ArraySpec spec;
  ArrayMetadata& m = spec.metadata;
  m.zarr_format = 3;
  m.shape = int_list(member(doc, "shape"), "shape");
  const StoredType t = parse_v3_dtype(member(doc, "data_type"));
  m.dtype = t.type();
  m.dtype_spec = doc["data_type"].get<std::string>();
  const json& grid = member(doc, "chunk_grid");
  if (string_or(grid, "name", "") != "regular")
    throw FormatError(fmt::format("unsupported chunk_grid {}", grid.dump()));
  m.chunks = int_list(member(member(grid, "configuration"), "chunk_shape"), "chunk_shape");
  check_grid(m.shape, m.chunks, t);

  const json encoding = doc.value("chunk_key_encoding", json{{"name", "default"}});
  const std::string encoding_name = string_or(encoding, "name", "default");
  const json encoding_config = encoding.value("configuration", json::object());
  if (encoding_name == "default") {
    spec.keys = ChunkKeyEncoding{"c", string_or(encoding_config, "separator", "/")[0]};
  } else if (encoding_name == "v2") {
    spec.keys = ChunkKeyEncoding{"", string_or(encoding_config, "separator", ".")[0]};
  } else {
    throw FormatError(fmt::format("unsupported chunk_key_encoding '{}'", encoding_name));
  }
  if (spec.keys.separator != '/' && spec.keys.separator != '.')
    throw FormatError("chunk_key_encoding separator must be '/' or '.'");
  if (auto st = doc.find("storage_transformers"); st != doc.end() && !st->is_null() && !st->empty())
    throw FormatError("storage_transformers are not supported");

  const json fill = doc.contains("fill_value") ? doc["fill_value"] : json();
  if (t.storage == Storage::Numeric)
    m.fill_value = numeric_fill(fill, m.dtype);
  else
    m.fill_string = string_fill(fill, t.storage);
  spec.pipeline = build_v3_pipeline(member(doc, "codecs"), t, ElementLayout{m.chunks, m.dtype.size},
                                    m.fill_value, m.fill_string);
  m.codecs = spec.pipeline->describe();
  m.attributes = doc.value("attributes", json::object());
  if (auto dims = doc.find("dimension_names"); dims != doc.end() && dims->is_array())
    for (const auto& d : *dims)
      m.dimension_names.push_back(d.is_string() ? d.get<std::string>() : "");
  return spec;
}

std::string display_name(const std::string& path) {
  return path.empty() ? "/" : path;
}

}  // namespace

ArraySpec read_array_spec(const Store& store, const std::string& path) {
  const std::string prefix = key_prefix(path);
  auto context = [&](const std::string& what) {
    return fmt::format("{}: array {}: {}", store.path(), display_name(path), what);
  };
  try {
    if (auto zarray = read_json(store, prefix + ".zarray")) return read_v2(store, prefix, *zarray);
    if (auto doc = read_json(store, prefix + "zarr.json")) {
      if (doc->is_object() && doc->value("node_type", json()) == "group")
        throw FormatError("is a group, not an array");
      return read_v3(*doc);
    }
  } catch (const json::exception& e) {
    throw FormatError(context(fmt::format("malformed metadata: {}", e.what())));
  } catch (const FormatError& e) {
    const std::string what = e.what();
    if (what.starts_with(store.path() + ":")) throw;  // already names the store (bad JSON)
    throw FormatError(context(what));
  }
  throw FormatError(context("not found (no .zarray or zarr.json)"));
}

}  // namespace detail

GroupInfo open_group(const Store& store, const std::string& path) {
  using nlohmann::json;
  const std::string prefix = detail::key_prefix(path);
  const std::string where = path.empty() ? "the root" : "'" + path + "'";
  GroupInfo info;
  if (auto doc = detail::read_json(store, prefix + "zarr.json")) {
    if (!doc->is_object() || doc->value("node_type", json()) != "group")
      throw FormatError(
          fmt::format("{}: {} is not a Zarr group (zarr.json node_type is not \"group\")",
                      store.path(), where));
    info.zarr_format = 3;
    info.attributes = doc->value("attributes", json::object());
    return info;
  }
  if (auto zgroup = detail::read_json(store, prefix + ".zgroup")) {
    if (!zgroup->is_object() || zgroup->value("zarr_format", json()) != 2)
      throw FormatError(
          fmt::format("{}: {}.zgroup: unsupported zarr_format", store.path(), prefix));
    info.zarr_format = 2;
    info.attributes = json::object();
    if (auto attrs = detail::read_json(store, prefix + ".zattrs"); attrs && attrs->is_object())
      info.attributes = *attrs;
    return info;
  }
  throw FormatError(fmt::format("{}: no Zarr group at {} (neither .zgroup nor zarr.json found)",
                                store.path(), where));
}

std::vector<std::string> list_arrays(const Store& store, const std::string& path) {
  const std::string prefix = detail::key_prefix(path);
  std::vector<std::string> arrays;
  for (const auto& child : store.children(prefix)) {
    const std::string dir = prefix + child + "/";
    if (store.contains(dir + ".zarray")) {
      arrays.push_back(child);
      continue;
    }
    if (auto bytes = store.get(dir + "zarr.json")) {
      try {
        const auto* p = reinterpret_cast<const char*>(bytes->data());
        const auto doc =
            detail::parse_json_bounded(std::string_view(p, bytes->size()), dir + "zarr.json");
        if (doc.is_object() && doc.value("node_type", nlohmann::json()) == "array")
          arrays.push_back(child);
      } catch (const FormatError&) {
        // not an array we can read; Array::open reports the details
      }
    }
  }
  std::sort(arrays.begin(), arrays.end());
  return arrays;
}

}  // namespace vczstats::zarr
