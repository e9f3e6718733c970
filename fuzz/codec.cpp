// Fuzz target: the decode path of one codec (VCZ_FUZZ_CODEC names it), through the same
// pipeline an array uses. Input: one selector byte (which of the codec's array layouts: numeric
// chunks decode into a buffer of known size, string chunks into a buffer the codec sizes), then
// the stored chunk.

#include <string_view>

#include "fuzz_support.hpp"

namespace {

struct Layout {
  const char* key;       // the metadata document's key
  std::string metadata;  // the document
};

std::string v2(const std::string& dtype, const std::string& shape, const std::string& compressor,
               const std::string& filters = "null") {
  return R"({"zarr_format": 2, "shape": )" + shape + R"(, "chunks": )" + shape + R"(, "dtype": ")" +
         dtype + R"(", "compressor": )" + compressor +
         R"(, "fill_value": null, "order": "C", "filters": )" + filters + "}";
}

std::string v3(const std::string& type, const std::string& shape, const std::string& codecs) {
  return R"({"zarr_format": 3, "node_type": "array", "shape": )" + shape + R"(, "data_type": ")" +
         type + R"(", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": )" +
         shape + R"(}}, "chunk_key_encoding": {"name": "default"}, "fill_value": 0, "codecs": )" +
         codecs + "}";
}

/// A compressor on int32 numbers and on vlen-utf8 strings.
std::vector<Layout> compressor(const std::string& config) {
  return {{"a/.zarray", v2("<i4", "[300]", config)},
          {"a/.zarray", v2("|O", "[20]", config, R"([{"id": "vlen-utf8"}])")},
          {"a/.zarray", v2("|u1", "[4, 7]", config)}};
}

std::vector<Layout> layouts(std::string_view codec) {
  if (codec == "blosc")
    return compressor(R"({"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1})");
  if (codec == "zstd") return compressor(R"({"id": "zstd", "level": 3})");
  if (codec == "lz4") return compressor(R"({"id": "lz4", "acceleration": 1})");
  if (codec == "zlib") return compressor(R"({"id": "zlib", "level": 1})");
  if (codec == "gzip") return compressor(R"({"id": "gzip", "level": 1})");
  if (codec == "bz2") return compressor(R"({"id": "bz2", "level": 1})");
  if (codec == "crc32c")
    return {
        {"a/zarr.json",
         v3("int32", "[50]", R"([{"name": "bytes", "configuration": {"endian": "little"}},
                                     {"name": "crc32c"}])")},
        {"a/zarr.json", v3("string", "[10]", R"([{"name": "vlen-utf8"}, {"name": "crc32c"}])")}};
  if (codec == "vlen")
    return {{"a/.zarray", v2("|O", "[20]", "null", R"([{"id": "vlen-utf8"}])")},
            {"a/.zarray", v2("|O", "[4, 5]", "null", R"([{"id": "vlen-bytes"}])")},
            {"a/zarr.json", v3("string", "[3, 4]", R"([{"name": "vlen-utf8"}])")}};
  if (codec == "fixed_strings")
    return {{"a/.zarray", v2("|S7", "[20]", "null")},
            {"a/.zarray", v2("<U3", "[4, 5]", "null")},
            {"a/.zarray", v2(">U2", "[9]", "null")}};
  if (codec == "delta")
    return {{"a/.zarray", v2("<i4", "[40]", "null", R"([{"id": "delta", "dtype": "<i4"}])")},
            {"a/.zarray",
             v2("<i8", "[40]", "null", R"([{"id": "delta", "dtype": "<i8", "astype": "<i1"}])")},
            {"a/.zarray",
             v2("<f8", "[40]", "null", R"([{"id": "delta", "dtype": "<f8", "astype": "<f4"}])")},
            {"a/.zarray",
             v2(">u2", "[40]", "null", R"([{"id": "delta", "dtype": ">u2", "astype": ">u1"}])")},
            {"a/.zarray",
             v2("<i4", "[40]", "null", R"([{"id": "delta", "dtype": "<i4", "astype": "<f8"}])")},
            {"a/.zarray",
             v2("<u8", "[40]", "null", R"([{"id": "delta", "dtype": "<u8", "astype": "<f4"}])")}};
  if (codec == "packbits")
    return {{"a/.zarray", v2("|b1", "[37]", "null", R"([{"id": "packbits"}])")},
            {"a/.zarray", v2("|b1", "[3, 8]", "null", R"([{"id": "packbits"}])")}};
  if (codec == "transpose")
    return {{"a/zarr.json", v3("int16", "[6, 5, 4]", R"([{"name": "transpose",
                 "configuration": {"order": [2, 0, 1]}},
                 {"name": "bytes", "configuration": {"endian": "big"}}])")},
            {"a/zarr.json", v3("string", "[3, 4]", R"([{"name": "transpose",
                 "configuration": {"order": [1, 0]}}, {"name": "vlen-utf8"}])")},
            {"a/zarr.json", v3("uint8", "[7, 3]", R"([{"name": "transpose",
                 "configuration": {"order": "F"}}, {"name": "bytes"}])")}};
  __builtin_trap();  // an unknown VCZ_FUZZ_CODEC
}

/// A layout's store and array, opened once: an Array is immutable, and only the chunk changes
/// from one input to the next (parsing the metadata on every input cost more than the decode).
struct Opened {
  std::shared_ptr<vczstats::fuzz::MemoryStore> store;
  vczstats::zarr::Array array;
  std::string chunk_key;
};

std::vector<Opened> open_layouts() {
  std::vector<Opened> out;
  for (const Layout& layout : layouts(VCZ_FUZZ_CODEC)) {
    auto store = std::make_shared<vczstats::fuzz::MemoryStore>();
    store->put(layout.key, layout.metadata);
    auto array = vczstats::zarr::Array::open(store, "a");  // the layouts are valid: no catch
    const std::vector<std::int64_t> index(static_cast<std::size_t>(array.ndim()), 0);
    auto key = array.chunk_key(index);
    out.push_back({std::move(store), std::move(array), std::move(key)});
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vczstats;
  static const std::vector<Opened> kOpened = open_layouts();
  if (size == 0) return 0;
  const Opened& o = kOpened[data[0] % kOpened.size()];
  o.store->put(o.chunk_key, fuzz::as_bytes(data + 1, size - 1));
  fuzz::read_first_chunk(o.array);
  return 0;
}
