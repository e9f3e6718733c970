#pragma once
/// @file backend.hpp
/// @brief Where a run computes: the CPU's threads or one CUDA device. compute() chooses it once
/// per run (from RunOptions::device, `auto` included: vczstats/device.hpp) and hands it to every
/// statistic (Statistic::attach) and to the heavy pass; a statistic with device work of its own
/// asks the backend for it rather than choosing a device itself.

#include <memory>
#include <string>

namespace vczstats {
namespace stats {
class PackedProduct;
struct PackedMatrixView;
namespace haplo {
class SegmentRunner;
}
}  // namespace stats

/// @brief The CPU's threads, or CUDA device N with host threads beside it.
class Backend {
 public:
  /// @brief CPU threads (0: every core).
  static Backend cpu(unsigned threads);
  /// @brief CUDA device @p device, with @p threads host threads (0: every core) beside it.
  static Backend cuda(int device, unsigned threads);

  /// @brief Whether this is a CUDA device.
  bool gpu() const { return gpu_; }
  /// @brief The CUDA device index (gpu()).
  int device() const { return device_; }
  /// @brief The host threads (0: every core).
  unsigned threads() const { return threads_; }
  /// @brief "cpu (N threads)" or "gpu N".
  std::string describe() const;

  /// @brief The haplotype family's segment kernels on this backend (stats/haplo_runner.hpp).
  /// @throws UsageError for a CUDA device in a build without the CUDA backend, CudaError.
  std::unique_ptr<stats::haplo::SegmentRunner> segment_runner() const;
  /// @brief Products of the packed matrix @p x (the randomized PCA) on the CUDA device; on the
  /// CPU those of stats::make_cpu_packed_product. @throws as segment_runner().
  std::unique_ptr<stats::PackedProduct> packed_product(const stats::PackedMatrixView& x) const;

 private:
  bool gpu_ = false;
  int device_ = 0;
  unsigned threads_ = 0;
};

}  // namespace vczstats
