// CUDA device discovery for --device auto|gpu|gpu:N.
#include <cuda_runtime.h>

#include <atomic>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

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

struct GpuPrestart::Thread {
  std::vector<std::thread> threads;
  void start(const std::vector<int>& devices) {
    for (const int device : devices) {
      if (device < 0) continue;
      detail::g_cuda_started.store(true);
      try {
        threads.emplace_back([device] {
          // Since CUDA 12 cudaSetDevice makes the primary context; cudaFree(nullptr) makes sure.
          if (cudaSetDevice(device) == cudaSuccess) cudaFree(nullptr);
          cudaGetLastError();  // a failure stays on this thread: the run's first call reports it
        });
      } catch (const std::system_error&) {
        // No thread (a process or memory limit): the run starts CUDA itself, as without this.
      }
    }
  }
};

GpuPrestart::GpuPrestart(const std::vector<int>& indices) : thread_(std::make_unique<Thread>()) {
  thread_->start(bind_process_to_gpus(indices));
}

GpuPrestart::~GpuPrestart() {
  for (auto& t : thread_->threads)
    if (t.joinable()) t.join();
}

}  // namespace vczstats
