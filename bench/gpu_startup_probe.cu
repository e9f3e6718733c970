// Where a GPU process's fixed cost goes: the wall time of each CUDA start-up step in a fresh
// process (driver initialisation over the visible devices, the primary context, streams, a
// device pool, pinned host memory, the first kernel launch), and the process's user and system
// CPU seconds. Run it with and without CUDA_VISIBLE_DEVICES to see what each visible device
// costs (bench/gpu_startup.sh does both, next to the vczstats runs they explain).
//
//   gpu_startup_probe [DEVICE]

#include <cuda_runtime.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

__global__ void touch(int* p) {
  if (threadIdx.x == 0 && p) *p = 1;
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double t0 = now();
double last = t0;

void step(const char* name, cudaError_t err) {
  const double t = now();
  std::printf("%-34s %8.1f ms  (at %7.1f ms)%s%s\n", name, (t - last) * 1e3, (t - t0) * 1e3,
              err == cudaSuccess ? "" : "  error: ", err == cudaSuccess ? "" : cudaGetErrorString(err));
  last = t;
}

}  // namespace

int main(int argc, char** argv) {
  const int device = argc > 1 ? std::atoi(argv[1]) : 0;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  std::printf("CUDA_VISIBLE_DEVICES=%s, device %d\n", visible ? visible : "(unset)", device);
  int count = 0;
  step("cudaGetDeviceCount (driver init)", cudaGetDeviceCount(&count));
  std::printf("  %d visible device(s)\n", count);
  cudaDeviceProp prop{};
  step("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, device));
  step("cudaSetDevice", cudaSetDevice(device));
  step("cudaFree(0) (primary context)", cudaFree(nullptr));
  cudaStream_t s[3];
  cudaError_t e = cudaSuccess;
  for (auto& x : s) e = e != cudaSuccess ? e : cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking);
  step("3 streams", e);
  cudaMemPool_t pool;
  step("cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, device));
  void* d = nullptr;
  step("cudaMallocAsync 256 MiB", cudaMallocAsync(&d, 256 << 20, s[0]));
  step("cudaStreamSynchronize", cudaStreamSynchronize(s[0]));
  void* h = nullptr;
  step("cudaMallocHost 64 MiB", cudaMallocHost(&h, 64 << 20));
  touch<<<1, 32, 0, s[0]>>>(static_cast<int*>(d));
  step("first kernel launch", cudaGetLastError());
  step("cudaStreamSynchronize", cudaStreamSynchronize(s[0]));
  step("cudaFreeHost 64 MiB", cudaFreeHost(h));
  step("cudaFreeAsync + sync", cudaFreeAsync(d, s[0]) == cudaSuccess
                                   ? cudaStreamSynchronize(s[0])
                                   : cudaErrorUnknown);
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("process so far: user %.3f s, sys %.3f s\n",
              static_cast<double>(ru.ru_utime.tv_sec) + ru.ru_utime.tv_usec * 1e-6,
              static_cast<double>(ru.ru_stime.tv_sec) + ru.ru_stime.tv_usec * 1e-6);
  return 0;
}
