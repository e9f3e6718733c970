#pragma once
// The matrix family's heavy pass (vczstats/sample_matrix.hpp) as the backends run it: an
// accumulator per request, fed every unit's packed genotypes through the site pass's PackedSink
// (backend/site_pass.hpp), and a router that fans the packed units out to the accumulators and,
// for statistics that read them on the host (UnitData::packed), keeps a host copy of each unit
// until it is delivered. No CUDA headers here.

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

/// The one PackedSink of a pass: hands each unit to every accumulator and keeps the unit's host
/// words (CPU: the backend's own, valid until delivered; GPU: a mirror's copy) for view().
class PackedRouter : public PackedSink {
 public:
  PackedRouter(std::vector<SampleMatrixAccumulator*> accumulators,
               std::unique_ptr<PackedHostMirror> mirror)
      : accumulators_(std::move(accumulators)), mirror_(std::move(mirror)) {}
  void host_unit(std::int64_t unit, const PackedGenotypeView& view) override {
    for (auto* a : accumulators_) a->host_unit(unit, view);
    host_ = view;
    host_unit_ = unit;
  }
  void device_unit(std::int64_t unit, const PackedGenotypeView& view, void* stream) override {
    for (auto* a : accumulators_) a->device_unit(unit, view, stream);
    if (mirror_) mirror_->device_unit(unit, view, stream);
  }
  /// The host words of @p unit, or null when they are not kept.
  const PackedGenotypeView* view(std::int64_t unit) const {
    if (mirror_) return mirror_->view(unit);
    return unit == host_unit_ ? &host_ : nullptr;
  }

 private:
  std::vector<SampleMatrixAccumulator*> accumulators_;
  std::unique_ptr<PackedHostMirror> mirror_;
  PackedGenotypeView host_;
  std::int64_t host_unit_ = -1;
};

}  // namespace vczstats::backend
