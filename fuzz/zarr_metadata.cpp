// Fuzz target: Zarr array metadata (v2 .zarray, or v3 zarr.json when built with VCZ_FUZZ_V3),
// then the decoding of one chunk with the pipeline it describes.
// Input: the metadata document, optionally followed by a NUL byte and the bytes of chunk 0.

#include <cstring>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vczstats;
  const auto* nul = static_cast<const std::uint8_t*>(std::memchr(data, 0, size));
  const std::size_t meta_size = nul ? static_cast<std::size_t>(nul - data) : size;
  auto store = std::make_shared<fuzz::MemoryStore>();
#ifdef VCZ_FUZZ_V3
  store->put("a/zarr.json", fuzz::as_bytes(data, meta_size));
#else
  store->put("a/.zarray", fuzz::as_bytes(data, meta_size));
#endif
  try {
    const auto array = zarr::Array::open(store, "a");
    (void)array.metadata().codecs;
    for (int d = 0; d < array.ndim(); ++d) (void)array.num_chunks(d);
    const std::vector<std::int64_t> index(static_cast<std::size_t>(array.ndim()), 0);
    const std::string key = array.chunk_key(index);
    fuzz::read_first_chunk(array);  // absent: the fill value
    if (nul) {
      store->put(key, fuzz::as_bytes(nul + 1, size - meta_size - 1));
      fuzz::read_first_chunk(array);
    }
  } catch (const Error&) {
  }
  return 0;
}
