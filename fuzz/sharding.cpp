// Fuzz target: a v3 sharded array (sharding_indexed): the shard index (at the end or the start,
// with or without crc32c) and the inner chunks it points to. Input: one selector byte, then the
// stored shard.

#include "fuzz_support.hpp"

namespace {

std::string sharded(const char* inner_codecs, const char* index_codecs, const char* location,
                    const char* type = "int16") {
  return std::string(
             R"({"zarr_format": 3, "node_type": "array", "shape": [16, 12], "data_type": ")") +
         type + R"(", "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [8, 12]}},
    "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
    "codecs": [{"name": "sharding_indexed", "configuration": {"chunk_shape": [4, 3],
      "codecs": )" +
         inner_codecs + R"(, "index_codecs": )" + index_codecs + R"(, "index_location": ")" +
         location + R"("}}]})";
}

const char* kBytes = R"([{"name": "bytes", "configuration": {"endian": "little"}}])";
const char* kBytesGzip =
    R"([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}])";
const char* kCrcIndex =
    R"([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}])";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vczstats;
  // Each layout's store and array are opened once (an Array is immutable); an input replaces
  // the shard.
  static const auto kOpened = [] {
    std::vector<std::pair<std::shared_ptr<fuzz::MemoryStore>, zarr::Array>> out;
    for (const auto& metadata :
         {sharded(kBytes, kBytes, "end"), sharded(kBytes, kBytes, "start"),
          sharded(kBytesGzip, kBytes, "end"), sharded(kBytes, kCrcIndex, "end"),
          sharded(R"([{"name": "vlen-utf8"}])", kBytes, "start", "string")}) {
      auto store = std::make_shared<fuzz::MemoryStore>();
      store->put("a/zarr.json", metadata);
      auto array = zarr::Array::open(store, "a");
      out.emplace_back(std::move(store), std::move(array));
    }
    return out;
  }();
  if (size == 0) return 0;
  const auto& [store, array] = kOpened[data[0] % kOpened.size()];
  store->put("a/c/0/0", fuzz::as_bytes(data + 1, size - 1));
  fuzz::read_first_chunk(array);
  return 0;
}
