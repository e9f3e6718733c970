// CUDA device discovery for --device auto|gpu.
#include <cuda_runtime.h>

#include <string>

#include "vczstats/device.hpp"

namespace vczstats {
bool gpu_available(std::string* reason) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (reason) *reason = cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky error state of a failed query
    return false;
  }
  if (count == 0) {
    if (reason) *reason = "no CUDA device";
    return false;
  }
  return true;
}
}  // namespace vczstats
