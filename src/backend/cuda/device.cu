// CUDA device discovery for --device auto|gpu|gpu:N.
#include <cuda_runtime.h>

#include <atomic>
#include <string>

#include "vczstats/device.hpp"

namespace vczstats {

namespace detail {
std::atomic<bool> g_cuda_started{false};
}  // namespace detail

int gpu_count(std::string* reason) {
  detail::g_cuda_started.store(true);
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (reason) *reason = cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky error state of a failed query
    return 0;
  }
  if (count == 0 && reason) *reason = "no CUDA device";
  return count;
}

bool gpu_available(std::string* reason, int index) {
  const int count = gpu_count(reason);
  if (count == 0) return false;
  if (index < 0 || index >= count) {
    if (reason)
      *reason = "no CUDA device " + std::to_string(index) + " (" + std::to_string(count) +
                " device" + (count == 1 ? "" : "s") + ")";
    return false;
  }
  return true;
}

}  // namespace vczstats
