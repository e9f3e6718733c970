// Built without libcurl (VCZSTATS_REMOTE=OFF): URLs are refused with a clear message.

#include "vczstats/error.hpp"
#include "zarr/stores.hpp"

namespace vczstats::zarr::detail {

std::shared_ptr<const Store> open_remote_store(const std::string& url, const StoreOptions&) {
  throw UsageError(url +
                   ": this vczstats was built without remote store support (configure with "
                   "libcurl's headers installed, or -DVCZSTATS_REMOTE=ON)");
}

}  // namespace vczstats::zarr::detail
