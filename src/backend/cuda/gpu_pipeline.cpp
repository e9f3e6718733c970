// The GPU pipeline's machinery (gpu_pipeline.hpp): device contexts, pinned budget, stage timing.

#include "backend/cuda/gpu_pipeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>

namespace vczstats::detail {
extern std::atomic<bool> g_cuda_started;  // device.cu
}  // namespace vczstats::detail

namespace vczstats::cuda {

DeviceContext::DeviceContext(int index) : index_(index), info_(device_info(index)), pool_(index) {}

DeviceContext& DeviceContext::get(int index) {
  vczstats::detail::g_cuda_started.store(true);
  static std::mutex mutex;
  // Kept for the life of the process (never destroyed: the CUDA runtime may be torn down first
  // at exit, and a pool must not outlive it).
  static auto* contexts = new std::map<int, std::unique_ptr<DeviceContext>>();
  VCZ_CUDA_CHECK(cudaSetDevice(index));
  std::lock_guard lock(mutex);
  auto& c = (*contexts)[index];
  if (!c) c.reset(new DeviceContext(index));
  return *c;
}

void DeviceContext::make_current() const {
  VCZ_CUDA_CHECK(cudaSetDevice(index_));
}

std::int64_t pinned_budget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const std::int64_t phys =
      pages > 0 && page > 0 ? std::int64_t{pages} * page : std::int64_t{8} << 30;
  return std::min<std::int64_t>(phys / 4, std::int64_t{16} << 30);
}

// ---- stage timing with CUDA events -------------------------------------------------------------

int StageTimer::start(cudaStream_t stream) {
  const int k = take();
  pairs_[static_cast<std::size_t>(k)].first.record(stream);
  return k;
}

void StageTimer::stop(int k, cudaStream_t stream, Stage stage) {
  pairs_[static_cast<std::size_t>(k)].second.record(stream);
  pending_.emplace_back(k, stage);
}

void StageTimer::drain() {
  while (!pending_.empty()) collect_front();
}

int StageTimer::take() {
  if (free_.empty() && pending_.size() >= kMaxPending) collect_front();
  if (!free_.empty()) {
    const int k = free_.back();
    free_.pop_back();
    return k;
  }
  pairs_.emplace_back(std::piecewise_construct, std::forward_as_tuple(true),
                      std::forward_as_tuple(true));
  return static_cast<int>(pairs_.size() - 1);
}

void StageTimer::collect_front() {
  const auto [k, stage] = pending_.front();
  pending_.pop_front();
  auto& [begin, end] = pairs_[static_cast<std::size_t>(k)];
  end.synchronize();
  float ms = 0;
  VCZ_CUDA_CHECK(cudaEventElapsedTime(&ms, begin.get(), end.get()));
  ms_[stage] += static_cast<double>(ms);
  free_.push_back(k);
}

}  // namespace vczstats::cuda
