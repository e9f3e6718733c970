#pragma once
// CUDA plumbing of the GPU backend: error checking that throws vczstats::CudaError, and RAII
// owners for streams, events, pinned host memory and device memory. Device memory comes only
// from a DevicePool (one stream-ordered cudaMemPool per run): nothing else in the project calls
// cudaMalloc or cudaFree. Library code never calls cudaDeviceSynchronize; it waits on streams
// and events only.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "vczstats/error.hpp"

namespace vczstats::cuda {

/// @brief Throw CudaError naming the call, its place in the source and CUDA's message.
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

/// @brief Throw CudaError unless @p err is cudaSuccess.
inline void check(cudaError_t err, const char* call, const char* file, int line) {
  if (err != cudaSuccess) throw_cuda_error(err, call, file, line);
}

}  // namespace vczstats::cuda

/// @brief Check a CUDA runtime call: throws vczstats::CudaError with the call text, file:line
/// and cudaGetErrorString.
#define VCZ_CUDA_CHECK(call) ::vczstats::cuda::check((call), #call, __FILE__, __LINE__)

/// @brief Check the launch just made (bad configuration, missing kernel image...). Errors of the
/// kernel's execution surface at the next synchronising call on its stream.
#define VCZ_CUDA_CHECK_LAUNCH(kernel_name) \
  ::vczstats::cuda::check(cudaGetLastError(), "launch of " kernel_name, __FILE__, __LINE__)

namespace vczstats::cuda {

/// @brief Round @p n up to a multiple of @p a (a power of two).
constexpr std::int64_t align_up(std::int64_t n, std::int64_t a) {
  return (n + a - 1) & ~(a - 1);
}

/// @brief A non-blocking CUDA stream (does not synchronise with the legacy default stream).
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(Stream&& o) noexcept : s_(o.s_) { o.s_ = nullptr; }
  Stream& operator=(Stream&&) = delete;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  /// @brief Wait for all work queued so far. @throws CudaError.
  void synchronize() const;

 private:
  cudaStream_t s_ = nullptr;
};

/// @brief A CUDA event; with @p timing false it cannot time but costs less to record and wait.
class Event {
 public:
  explicit Event(bool timing = false);
  ~Event();
  Event(Event&& o) noexcept : e_(o.e_) { o.e_ = nullptr; }
  Event& operator=(Event&&) = delete;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  /// @brief Record the event on @p stream. @throws CudaError.
  void record(cudaStream_t stream);
  /// @brief Block until the work before the last record() is done. @throws CudaError.
  void synchronize() const;

 private:
  cudaEvent_t e_ = nullptr;
};

/// @brief Ask the kernel to back the 2 MiB-aligned part of [@p p, @p p + @p bytes) with
/// transparent huge pages. Call it before the memory is first touched. Pinning such memory for
/// the GPU (cudaHostRegister) then costs about half, and freeing it a seventh: on the H100 host
/// (bench/gpu_pinned_bench) 256 MiB were pinned and written in 0.067 s against 0.144 s with
/// cudaHostAlloc, and freed in 0.005 s against 0.037 s. A no-op where THP is off, or with
/// hooks::set_pinned_hostalloc (for benchmarks: PinnedBuffer then uses cudaHostAlloc at every
/// size).
void advise_huge_pages(void* p, std::size_t bytes);

/// @brief Page-locked host memory, so copies from it run asynchronously at full PCIe speed.
/// From kHugeBytes up it is anonymous memory on huge pages (advise_huge_pages), registered with
/// cudaHostRegister; smaller, or where registering fails, cudaHostAlloc. The start is at least
/// 64-byte aligned.
class PinnedBuffer {
 public:
  /// Sizes from which the memory is mapped on huge pages (rounded up to 2 MiB).
  static constexpr std::int64_t kHugeBytes = std::int64_t{4} << 20;
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::int64_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)),
        bytes_(std::exchange(o.bytes_, 0)),
        map_(std::exchange(o.map_, nullptr)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  std::byte* data() const { return p_; }
  std::int64_t size() const { return bytes_; }
  std::span<std::byte> span() const { return {p_, static_cast<std::size_t>(bytes_)}; }

 private:
  void release() noexcept;
  std::byte* p_ = nullptr;
  std::int64_t bytes_ = 0;
  void* map_ = nullptr;  // the mapping of a registered buffer (null: cudaHostAlloc's)
};

/// @brief The device memory resource: a cudaMemPool of one device that keeps what it allocated
/// until it is destroyed (release threshold: unlimited), so a run's repeated allocations cost
/// nothing after the first. Must outlive every DeviceBuffer taken from it.
class DevicePool {
 public:
  /// @brief A pool on @p device. @throws CudaError (e.g. no stream-ordered allocator).
  explicit DevicePool(int device = 0);
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;
  cudaMemPool_t get() const { return pool_; }
  int device() const { return device_; }

 private:
  cudaMemPool_t pool_ = nullptr;
  int device_ = 0;
};

/// @brief Device memory from a DevicePool, allocated and freed in the order of one stream. The
/// start is 256-byte aligned and the size rounded up to a multiple of 256, so kernels may read
/// whole 16-byte words up to the rounded end. Must be destroyed before its stream.
class DeviceBuffer {
 public:
  static constexpr std::int64_t kAlignment = 256;
  DeviceBuffer() = default;
  /// @brief @p bytes from @p pool, usable by work queued on @p stream after this call (other
  /// streams: after an event recorded on it or a synchronisation). @throws CudaError.
  DeviceBuffer(DevicePool& pool, std::int64_t bytes, cudaStream_t stream);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : raw_(o.raw_), p_(o.p_), bytes_(o.bytes_), stream_(o.stream_) {
    o.raw_ = o.p_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::byte* data() const { return p_; }
  template <class T>
  T* as() const {
    return reinterpret_cast<T*>(p_);
  }
  std::int64_t size() const { return bytes_; }

 private:
  void reset() noexcept;
  std::byte* raw_ = nullptr;  // what the pool returned (freed)
  std::byte* p_ = nullptr;    // raw_ aligned up to kAlignment
  std::int64_t bytes_ = 0;
  cudaStream_t stream_ = nullptr;
};

/// @brief What a run reports about the device.
struct DeviceInfo {
  int device = 0;
  std::string name;
  std::string pci;  ///< PCI domain:bus:device: which physical GPU, whatever CUDA_VISIBLE_DEVICES
  int multiprocessors = 0;
};

/// @brief Name and size of @p device. @throws CudaError.
DeviceInfo device_info(int device = 0);

}  // namespace vczstats::cuda
