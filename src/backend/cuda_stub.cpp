// Built when the CUDA backend is disabled at configure time (-DVCZSTATS_CUDA=OFF).
#include "vczstats/device.hpp"

namespace vczstats {
bool gpu_available(std::string* reason) {
  if (reason) *reason = "this build has no CUDA backend (configured with VCZSTATS_CUDA=OFF)";
  return false;
}
}  // namespace vczstats
