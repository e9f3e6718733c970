#pragma once
// The matrix family's heavy pass (vczstats/sample_matrix.hpp) as the backends run it: an
// accumulator per request, each one of the site pass's packed sinks (backend/site_pass.hpp:
// SitePassSpec::packed), and, for statistics that read the packed units on the host
// (UnitData::packed), a sink that keeps a host copy of each unit until it is delivered. No CUDA
// headers here.

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/site_pass.hpp"
#include "vczstats/packed.hpp"
#include "vczstats/sample_matrix.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats::backend {

/// Accumulates one request over every unit it is handed (plan order, the caller's thread).
class SampleMatrixAccumulator : public PackedSink {
 public:
  /// The sums of everything handed so far (waits for the work still queued). Once, after the
  /// pass.
  virtual SampleMatrixSums finish() = 0;
};

/// What an accumulator sums, over which variants and samples.
struct SampleMatrixSpec {
  SampleMatrixRequest request;
  const vcz::ChunkPlan* plan = nullptr;  ///< the units' masks (rows outside are left out)
  std::int64_t samples = 0;              ///< selected samples (the packed rows' width)
  unsigned threads = 0;                  ///< CPU: worker threads (0: all cores)
  int device = 0;                        ///< GPU: CUDA device index
};

/// On CPU threads (popcount kernels for the counts, BLAS for the product).
std::unique_ptr<SampleMatrixAccumulator> make_sample_matrix_cpu(const SampleMatrixSpec& spec);
/// On CUDA device spec.device (integer tensor-core GEMMs for the counts, FP64 GEMMs for the
/// product); the sums equal the CPU's exactly for the counts. @throws UsageError without CUDA.
std::unique_ptr<SampleMatrixAccumulator> make_sample_matrix_gpu(const SampleMatrixSpec& spec);

/// Keeps a host copy of device units until they are delivered (GPU backend; CUDA only).
class PackedHostMirror : public PackedSink {
 public:
  /// The host words of unit @p unit (valid until the next unit on the same stream starts).
  virtual const PackedGenotypeView* view(std::int64_t unit) const = 0;
};
std::unique_ptr<PackedHostMirror> make_packed_host_mirror_gpu(std::int64_t samples, int device);

/// The packed units on the host, for statistics that read them there (UnitData::packed): one of
/// the pass's packed sinks, last in its list. On the CPU it keeps the view of the unit just
/// handed over (the unit is delivered before the next one is made); on the GPU a mirror copies
/// each device unit back.
class PackedHostUnits final : public PackedSink {
 public:
  /// @p mirror: the GPU's host mirror (make_packed_host_mirror_gpu), or null on the CPU.
  explicit PackedHostUnits(std::unique_ptr<PackedHostMirror> mirror) : mirror_(std::move(mirror)) {}
  void host_unit(std::int64_t unit, const PackedGenotypeView& view) override {
    host_ = view;
    host_unit_ = unit;
  }
  void device_unit(std::int64_t unit, const PackedGenotypeView& view, void* stream) override {
    if (mirror_) mirror_->device_unit(unit, view, stream);
  }
  /// The host words of @p unit, or null when they are not kept.
  const PackedGenotypeView* view(std::int64_t unit) const {
    if (mirror_) return mirror_->view(unit);
    return unit == host_unit_ ? &host_ : nullptr;
  }

 private:
  std::unique_ptr<PackedHostMirror> mirror_;
  PackedGenotypeView host_;
  std::int64_t host_unit_ = -1;
};

}  // namespace vczstats::backend
