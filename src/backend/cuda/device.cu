// CUDA device discovery for --device auto|gpu|gpu:N.
#include <cuda_runtime.h>

#include <atomic>
#include <string>
#include <system_error>
#include <thread>

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
  std::thread thread;
};

GpuPrestart::GpuPrestart(int index) : index_(bind_process_to_gpu(index)) {
  if (index_ < 0) return;
  detail::g_cuda_started.store(true);
  const int device = index_;
  try {
    auto t = std::make_unique<Thread>();
    t->thread = std::thread([device] {
      // Since CUDA 12 cudaSetDevice makes the primary context; cudaFree(nullptr) makes sure.
      if (cudaSetDevice(device) == cudaSuccess) cudaFree(nullptr);
      cudaGetLastError();  // a failure stays on this thread: the run's first call reports it
    });
    thread_ = std::move(t);
  } catch (const std::system_error&) {
    // No thread (a process or memory limit): the run starts CUDA itself, as without this.
  }
}

GpuPrestart::~GpuPrestart() {
  if (thread_ && thread_->thread.joinable()) thread_->thread.join();
}

}  // namespace vczstats
