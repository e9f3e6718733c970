// Fuzz target: a zip store (end of central directory, zip64 records and extra fields, local
// headers, stored and deflated entries), then the Zarr group and arrays it holds.
// Input: the zip file.

#include "fuzz_support.hpp"
#include "zarr/stores.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vczstats;
  try {
    const auto store =
        zarr::detail::open_zip_store_bytes(fuzz::as_bytes(data, size), nullptr, "fuzz.zip");
    for (const auto& entry : store->list("")) {
      try {
        (void)store->get(entry.key);
      } catch (const Error&) {
      }
    }
    (void)store->children("");
    (void)zarr::open_group(*store);
    for (const auto& name : zarr::list_arrays(*store)) {
      try {
        fuzz::read_first_chunk(zarr::Array::open(store, name));
      } catch (const Error&) {
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
