// Reading a store's compressed chunk files into GPU memory two ways, as device decode needs
// them: the host path of the GPU pipeline (pread into pinned host memory, then an asynchronous
// host-to-device copy) against GPUDirect Storage (cuFileRead straight into device memory), on
// the same files with the same threads, warm (page cache) and cold (each file's pages dropped
// with posix_fadvise before every run). The device bytes of both paths are compared.
//
// Usage: gpu_gds_bench STORE_DIR [ARRAY] [THREADS] [RUNS]
//   ARRAY    the array whose chunk files are read (default call_genotype)
//   THREADS  reader threads of each path (default 8)
//   RUNS     timed runs per path and cache state; the median is printed (default 3)
// Built only where CUDA's cuFile library is found (the GPU machine's toolkit has it).

#include <cuda_runtime.h>
#include <cufile.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "gpu_gds_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

bool ok(CUfileError_t e) {
  return e.err == CU_FILE_SUCCESS;
}

struct Chunk {
  std::string path;
  std::size_t size = 0, offset = 0;  // offset into the device buffer
};

std::vector<Chunk> chunk_files(const fs::path& array) {
  std::vector<Chunk> files;
  std::size_t offset = 0;
  for (const auto& e : fs::recursive_directory_iterator(array)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (name == ".zarray" || name == ".zattrs" || name == "zarr.json") continue;
    const std::size_t size = e.file_size();
    if (size == 0) continue;
    files.push_back({e.path().string(), size, offset});
    offset += (size + 4095) / 4096 * 4096;
  }
  return files;
}

void drop_pages(const std::vector<Chunk>& files) {
  for (const auto& f : files) {
    const int fd = open(f.path.c_str(), O_RDONLY);
    if (fd < 0) continue;
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
}

/// Runs @p read(file) for every file on @p threads threads; returns seconds.
template <class Read>
double timed(const std::vector<Chunk>& files, int threads, Read read) {
  std::atomic<std::size_t> next{0};
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t i; (i = next++) < files.size();) read(t, files[i]);
    });
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gpu_gds_bench STORE_DIR [ARRAY] [THREADS] [RUNS]\n");
    return 2;
  }
  const fs::path array = fs::path(argv[1]) / (argc > 2 ? argv[2] : "call_genotype");
  const int threads = argc > 3 ? std::atoi(argv[3]) : 8;
  const int runs = argc > 4 ? std::atoi(argv[4]) : 3;
  const auto files = chunk_files(array);
  if (files.empty()) {
    std::fprintf(stderr, "gpu_gds_bench: no chunk files under %s\n", array.c_str());
    return 1;
  }
  std::size_t total = 0, largest = 0, span = files.back().offset + files.back().size;
  for (const auto& f : files) total += f.size, largest = std::max(largest, f.size);

  void *host_dst = nullptr, *gds_dst = nullptr;
  check(cudaMalloc(&host_dst, span), "cudaMalloc");
  check(cudaMalloc(&gds_dst, span), "cudaMalloc");
  std::vector<void*> pinned(static_cast<std::size_t>(threads));
  std::vector<cudaStream_t> streams(static_cast<std::size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    check(cudaMallocHost(&pinned[t], largest), "cudaMallocHost");
    check(cudaStreamCreateWithFlags(&streams[t], cudaStreamNonBlocking), "cudaStreamCreate");
  }

  // The host path: pread into this thread's pinned buffer, copy, wait (the buffer is reused).
  auto host_read = [&](int t, const Chunk& f) {
    const int fd = open(f.path.c_str(), O_RDONLY);
    std::size_t done = 0;
    while (fd >= 0 && done < f.size) {
      const ssize_t n =
          pread(fd, static_cast<char*>(pinned[t]) + done, f.size - done, static_cast<off_t>(done));
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
    if (fd >= 0) close(fd);
    if (done != f.size) std::fprintf(stderr, "gpu_gds_bench: short read of %s\n", f.path.c_str());
    check(cudaMemcpyAsync(static_cast<char*>(host_dst) + f.offset, pinned[t], f.size,
                          cudaMemcpyHostToDevice, streams[t]),
          "cudaMemcpyAsync");
    check(cudaStreamSynchronize(streams[t]), "cudaStreamSynchronize");
  };

  // GPUDirect Storage: cuFileRead into device memory (O_DIRECT where the file system takes it).
  const bool nvfs = fs::exists("/proc/driver/nvidia-fs/stats");
  const CUfileError_t opened = cuFileDriverOpen();
  bool gds = ok(opened);
  if (!gds) std::fprintf(stderr, "gpu_gds_bench: cuFileDriverOpen failed (%d)\n", opened.err);
  bool registered = false;
  if (gds) registered = ok(cuFileBufRegister(gds_dst, span, 0));
  std::atomic<int> gds_errors{0};
  std::atomic<bool> reported{false};
  auto fail = [&](const char* call, long code, const Chunk& f) {  // the first failure, once
    ++gds_errors;
    if (!reported.exchange(true))
      std::fprintf(stderr, "gpu_gds_bench: %s failed on %s: code %ld\n", call, f.path.c_str(),
                   code);
  };
  auto gds_read = [&](int, const Chunk& f) {
    int fd = open(f.path.c_str(), O_RDONLY | O_DIRECT);
    if (fd < 0) fd = open(f.path.c_str(), O_RDONLY);
    CUfileDescr_t descr{};
    descr.handle.fd = fd;
    descr.type = CU_FILE_HANDLE_TYPE_OPAQUE_FD;
    CUfileHandle_t handle;
    if (fd < 0) return fail("open", errno, f);
    const CUfileError_t r = cuFileHandleRegister(&handle, &descr);
    if (!ok(r)) {
      close(fd);
      return fail("cuFileHandleRegister", r.err, f);
    }
    const ssize_t n = cuFileRead(handle, gds_dst, f.size, 0, static_cast<off_t>(f.offset));
    if (n != static_cast<ssize_t>(f.size)) fail("cuFileRead", n < 0 ? -n : 0, f);
    cuFileHandleDeregister(handle);
    close(fd);
  };

  std::printf("gpu_gds_bench: %s: %zu chunk files, %.1f MB, %d threads, median of %d runs\n",
              array.c_str(), files.size(), total / 1e6, threads, runs);
  std::printf("nvidia-fs kernel module: %s; cuFile driver: %s; device buffer registered: %s\n\n",
              nvfs ? "loaded (true GPUDirect Storage)"
                   : "absent (cuFile runs in compatibility mode: POSIX reads through host memory)",
              gds ? "opened" : "failed", registered ? "yes" : "no");
  std::printf("| path | page cache | GB/s | s |\n|---|---|---:|---:|\n");
  for (const bool cold : {false, true}) {
    std::vector<double> th, tg;
    for (int r = 0; r < runs + (cold ? 0 : 1); ++r) {  // warm: one untimed run first
      if (cold) drop_pages(files);
      const double a = timed(files, threads, host_read);
      if (cold) drop_pages(files);
      const double b = gds ? timed(files, threads, gds_read) : 0;
      if (cold || r > 0) th.push_back(a), tg.push_back(b);
    }
    const double mh = median(th), mg = median(tg);
    std::printf("| pread + pinned copy | %s | %.2f | %.4f |\n", cold ? "cold" : "warm",
                total / mh / 1e9, mh);
    if (gds)
      std::printf("| cuFileRead | %s | %.2f | %.4f |\n", cold ? "cold" : "warm", total / mg / 1e9,
                  mg);
  }
  if (gds) {
    // The two paths must have put the same bytes on the device.
    std::vector<char> a(span), b(span);
    check(cudaMemcpy(a.data(), host_dst, span, cudaMemcpyDeviceToHost), "cudaMemcpy");
    check(cudaMemcpy(b.data(), gds_dst, span, cudaMemcpyDeviceToHost), "cudaMemcpy");
    bool same = gds_errors == 0;
    for (const auto& f : files)
      same = same && std::memcmp(a.data() + f.offset, b.data() + f.offset, f.size) == 0;
    std::printf("\ndevice bytes of the two paths: %s (%d cuFile errors)\n",
                same ? "identical" : "DIFFERENT", gds_errors.load());
    if (registered) cuFileBufDeregister(gds_dst);
    cuFileDriverClose();
    if (!same) return 1;
  }
  return 0;
}
