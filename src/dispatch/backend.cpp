// The run's backend (vczstats/backend.hpp): the one place that maps a CPU or CUDA backend to the
// device work a statistic asks for.

#include "vczstats/backend.hpp"

#include <fmt/format.h>

#include "backend/site_pass.hpp"
#include "stats/haplo_runner.hpp"
#include "stats/packed_product.hpp"

namespace vczstats {

Backend Backend::cpu(unsigned threads) {
  Backend b;
  b.threads_ = threads;
  return b;
}

Backend Backend::cuda(int device, unsigned threads) {
  Backend b;
  b.gpu_ = true;
  b.device_ = device;
  b.threads_ = threads;
  return b;
}

std::string Backend::describe() const {
  if (gpu_) return fmt::format("gpu {}", device_);
  return threads_ ? fmt::format("cpu ({} threads)", threads_) : std::string("cpu (every core)");
}

std::unique_ptr<stats::haplo::SegmentRunner> Backend::segment_runner() const {
  return gpu_ ? backend::make_gpu_segment_runner(device_) : stats::haplo::make_cpu_runner(threads_);
}

std::unique_ptr<stats::PackedProduct> Backend::packed_product(
    const stats::PackedMatrixView& x) const {
  return gpu_ ? backend::make_gpu_packed_product(x, device_) : stats::make_cpu_packed_product(x);
}

}  // namespace vczstats
