// CUDA error checking and the RAII owners of cuda_util.cuh. Destructors never throw: they
// release what they own and ignore errors (after a failed kernel every CUDA call fails, and
// the original exception is already on its way to the caller).

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

#include "backend/cuda/cuda_util.cuh"
#include "vczstats/testing.hpp"

namespace vczstats::cuda {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw CudaError(std::string("CUDA error: ") + call + " failed at " + file + ":" +
                  std::to_string(line) + ": " + cudaGetErrorString(err) + " (" +
                  cudaGetErrorName(err) + ")");
}

Stream::Stream() {
  VCZ_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
}

Stream::~Stream() {
  if (s_) cudaStreamDestroy(s_);
}

void Stream::synchronize() const {
  VCZ_CUDA_CHECK(cudaStreamSynchronize(s_));
}

Event::Event(bool timing) {
  VCZ_CUDA_CHECK(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
}

Event::~Event() {
  if (e_) cudaEventDestroy(e_);
}

void Event::record(cudaStream_t stream) {
  VCZ_CUDA_CHECK(cudaEventRecord(e_, stream));
}

void Event::synchronize() const {
  VCZ_CUDA_CHECK(cudaEventSynchronize(e_));
}

namespace {
constexpr std::int64_t kHugePage = std::int64_t{2} << 20;

/// The mapping behind a registered PinnedBuffer of @p bytes: the bytes rounded up to huge
/// pages, and one huge page more so that the start can be aligned to one.
std::size_t mapping_bytes(std::int64_t bytes) {
  return static_cast<std::size_t>(align_up(bytes, kHugePage) + kHugePage);
}

/// Huge pages for pinned memory, unless hooks::set_pinned_hostalloc (benchmarks: the peer,
/// cudaHostAlloc and small pages, as before; bench/gpu_pinned_ab.sh).
bool huge_pinned() {
  return !hooks::pinned_hostalloc();
}
}  // namespace

void advise_huge_pages(void* p, std::size_t bytes) {
  if (!huge_pinned()) return;
  const auto begin = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p));
  const std::int64_t first = align_up(begin, kHugePage);
  const std::int64_t last = (begin + static_cast<std::int64_t>(bytes)) & ~(kHugePage - 1);
  if (last > first)  // advice only: without THP the memory keeps its small pages
    (void)madvise(reinterpret_cast<void*>(first), static_cast<std::size_t>(last - first),
                  MADV_HUGEPAGE);
}

PinnedBuffer::PinnedBuffer(std::int64_t bytes) : bytes_(bytes) {
  if (bytes <= 0) return;
  if (bytes >= kHugeBytes && huge_pinned()) {
    const std::size_t map = mapping_bytes(bytes);
    void* raw = mmap(nullptr, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw != MAP_FAILED) {
      auto* p = reinterpret_cast<std::byte*>(
          align_up(static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(raw)), kHugePage));
      const auto len = static_cast<std::size_t>(align_up(bytes, kHugePage));
      advise_huge_pages(p, len);
      if (cudaHostRegister(p, len, cudaHostRegisterPortable) == cudaSuccess) {
        p_ = p;
        map_ = raw;
        return;
      }
      (void)cudaGetLastError();  // not fatal: cudaHostAlloc below
      munmap(raw, map);
    }
  }
  void* p = nullptr;
  VCZ_CUDA_CHECK(cudaHostAlloc(&p, static_cast<std::size_t>(bytes), cudaHostAllocPortable));
  p_ = static_cast<std::byte*>(p);
}

void PinnedBuffer::release() noexcept {
  if (map_) {
    cudaHostUnregister(p_);
    munmap(map_, mapping_bytes(bytes_));
  } else if (p_) {
    cudaFreeHost(p_);
  }
  p_ = nullptr;
  map_ = nullptr;
  bytes_ = 0;
}

PinnedBuffer::~PinnedBuffer() {
  release();
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    release();
    p_ = std::exchange(o.p_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    map_ = std::exchange(o.map_, nullptr);
  }
  return *this;
}

DevicePool::DevicePool(int device) : device_(device) {
  int supported = 0;
  VCZ_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, device));
  if (!supported)
    throw CudaError("CUDA device " + std::to_string(device) +
                    " has no stream-ordered memory allocator (cudaMallocAsync)");
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  VCZ_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
  // Keep freed memory in the pool: buffers are reallocated per run and per benchmark case.
  std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
  const cudaError_t err =
      cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &threshold);
  if (err != cudaSuccess) {
    cudaMemPoolDestroy(pool_);
    throw_cuda_error(err, "cudaMemPoolSetAttribute(ReleaseThreshold)", __FILE__, __LINE__);
  }
}

DevicePool::~DevicePool() {
  if (pool_) cudaMemPoolDestroy(pool_);
}

DeviceBuffer::DeviceBuffer(DevicePool& pool, std::int64_t bytes, cudaStream_t stream)
    : stream_(stream) {
  if (bytes < 0) throw CudaError("negative device allocation requested");
  const std::int64_t padded = align_up(bytes > 0 ? bytes : 1, kAlignment);
  // The pool's own alignment is not documented: take kAlignment more and align the start.
  void* raw = nullptr;
  VCZ_CUDA_CHECK(cudaMallocFromPoolAsync(&raw, static_cast<std::size_t>(padded + kAlignment),
                                         pool.get(), stream));
  raw_ = static_cast<std::byte*>(raw);
  const auto start = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(raw));
  p_ = raw_ + (align_up(start, kAlignment) - start);
  bytes_ = padded;
}

DeviceBuffer::~DeviceBuffer() {
  reset();
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    raw_ = std::exchange(o.raw_, nullptr);
    p_ = std::exchange(o.p_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    stream_ = o.stream_;
  }
  return *this;
}

void DeviceBuffer::reset() noexcept {
  // Stream-ordered: the memory returns to the pool after the work queued on stream_ so far.
  if (raw_) cudaFreeAsync(raw_, stream_);
  raw_ = p_ = nullptr;
  bytes_ = 0;
}

DeviceInfo device_info(int device) {
  cudaDeviceProp prop = {};
  VCZ_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  DeviceInfo info;
  info.device = device;
  info.name = prop.name;
  char pci[32];
  std::snprintf(pci, sizeof pci, "%04x:%02x:%02x", prop.pciDomainID, prop.pciBusID,
                prop.pciDeviceID);
  info.pci = pci;
  info.multiprocessors = prop.multiProcessorCount;
  return info;
}

}  // namespace vczstats::cuda
