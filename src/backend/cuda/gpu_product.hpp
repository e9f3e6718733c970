#pragma once
// The products of the site pass (backend/site_pass.hpp) as the CUDA backend runs them: the GPU
// side of each product of backend/site_product.hpp, made from the pass's spec by the one
// registration list (make_gpu_site_products, backend/cuda/site_products_gpu.cpp). The pass
// (site_pass_gpu.cpp) owns the lanes (a CUDA stream each, units on stream unit mod lanes), the
// copies of the genotypes to the device and the decode; it loops over the products and names
// none of them:
//
//   per lane, at the start           product.add_lane(stream): the lane's buffers
//   once, on stream 0                product.setup(stream 0): run-wide device data
//   producer thread, per item        product.check_block(...): a host check of the decoded block
//                                    (device decode: check_encoded(...), per block of the item)
//   a unit starts on a lane          product.begin_unit(lane, unit, stream): clear its sums
//   per block on the device          product.launch(phase, lane, block, view, unit, stream)
//   after a unit's phase             product.unit_done(...): device sinks, copies to the host
//   the lane's copies are back       product.deliver(lane, unit, out): into the unit's output
//   after the last unit              product.end(stream 0): run-wide results

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/gpu_pipeline.hpp"
#include "backend/site_pass.hpp"

namespace vczstats::stream {
class GenotypeReader;
}

namespace vczstats::backend {

/// @brief What every GPU product sees of the pass.
struct GpuProductContext {
  const SitePassSpec* spec = nullptr;
  const stream::GenotypeReader* reader = nullptr;  ///< ploidy, sample blocks
  cuda::DevicePool* pool = nullptr;                ///< the device's memory pool
  cuda::StageTimer* timer = nullptr;               ///< the pass's stage timer
  std::int64_t max_rows = 0;                       ///< rows of the largest unit (lane buffers)
  unsigned workers = 1;                            ///< producer threads
  bool seed = false;  ///< the seed-style baseline (hooks::gpu_seed_baseline): pageable copies
  /// Per-sample totals of the run in selection order (when the caller asked for them).
  std::vector<stats::SampleSums>* sample_sums = nullptr;
};

/// @brief One per-block product of the site pass on a CUDA device (see the file comment).
class GpuSiteProduct {
 public:
  virtual ~GpuSiteProduct() = default;
  /// @brief Phases per unit (2: a second read of each unit after every product's phase 0).
  virtual int phases() const { return 1; }
  /// @brief Add a lane: its buffers, allocated on @p st (lanes are numbered as added).
  virtual void add_lane(cudaStream_t st) = 0;
  /// @brief Run-wide device data, queued on stream 0 before any lane starts.
  virtual void setup(cudaStream_t s0) { (void)s0; }
  /// @brief Producer thread @p worker: check block @p block of @p unit as the host decoded it.
  virtual void check_block(const vcz::WorkUnit& unit, std::int64_t block,
                           const GenotypeChunkView& view, unsigned worker) {
    (void)unit, (void)block, (void)view, (void)worker;
  }
  /// @brief Producer thread @p worker, device decode: the same check of block @p block of @p unit,
  /// whose genotypes the device decodes (the product reads what it needs itself).
  virtual void check_encoded(const vcz::WorkUnit& unit, std::int64_t block, unsigned worker) {
    (void)unit, (void)block, (void)worker;
  }
  /// @brief A unit starts on @p lane (its last unit handed over): clear the unit's sums.
  virtual void begin_unit(unsigned lane, const vcz::WorkUnit& unit, cudaStream_t st) = 0;
  /// @brief The product's kernels on block @p block of @p unit, on the device as @p dv.
  virtual void launch(int phase, unsigned lane, std::int64_t block, const GenotypeChunkView& dv,
                      const vcz::WorkUnit& unit, cudaStream_t st) = 0;
  /// @brief After @p phase of unit @p u on @p lane: hand device words to a sink, queue the
  /// copies back to the lane's host buffers (the pass records one event after every product's).
  virtual void unit_done(int phase, unsigned lane, std::int64_t u, const vcz::WorkUnit& unit,
                         cudaStream_t st) = 0;
  /// @brief The lane's copies are back: the unit's outputs into @p out.
  virtual void deliver(unsigned lane, const vcz::WorkUnit& unit, UnitOutput& out) {
    (void)lane, (void)unit, (void)out;
  }
  /// @brief After the last unit's work is queued: run-wide results (waits on stream 0).
  virtual void end(cudaStream_t s0) { (void)s0; }
};

/// @brief A product's rows of each lane's unit on the device (@p per_row elements a row), and
/// their copy on the host: pinned, or pageable for the seed-style baseline.
template <class T>
class LaneRows {
 public:
  LaneRows(const GpuProductContext& ctx, std::int64_t per_row) : ctx_(ctx), per_row_(per_row) {}
  /// @brief A lane's buffers (@p host: with a host copy).
  void add_lane(cudaStream_t st, bool host = true) {
    Lane& lane = lanes_.emplace_back();
    lane.device = cuda::DeviceBuffer(*ctx_.pool, ctx_.max_rows * row_bytes(), st);
    if (host && !ctx_.seed) lane.host = cuda::PinnedBuffer(ctx_.max_rows * row_bytes());
  }
  T* device(unsigned lane) { return lanes_[lane].device.template as<T>(); }
  /// @brief Zero the first @p rows rows of @p lane.
  void clear(unsigned lane, std::int64_t rows, cudaStream_t st) {
    VCZ_CUDA_CHECK(cudaMemsetAsync(lanes_[lane].device.data(), 0, bytes(rows), st));
  }
  /// @brief Queue the copy of the first @p rows rows of @p lane to its host copy (timed D2H).
  void copy_back(unsigned li, std::int64_t rows, cudaStream_t st) {
    Lane& lane = lanes_[li];
    void* host = lane.host.data();
    if (ctx_.seed) {
      lane.pageable.resize(static_cast<std::size_t>(rows * per_row_));
      host = lane.pageable.data();
    }
    const int t = ctx_.timer->start(st);
    VCZ_CUDA_CHECK(
        cudaMemcpyAsync(host, lane.device.data(), bytes(rows), cudaMemcpyDeviceToHost, st));
    ctx_.timer->stop(t, st, cuda::StageTimer::kD2H);
  }
  /// @brief The host copy of the first @p rows rows of @p lane (after its copy is back).
  std::span<const T> host(unsigned li, std::int64_t rows) const {
    const Lane& lane = lanes_[li];
    const T* data = ctx_.seed ? lane.pageable.data() : reinterpret_cast<const T*>(lane.host.data());
    return {data, static_cast<std::size_t>(rows * per_row_)};
  }
  std::int64_t per_row() const { return per_row_; }

 private:
  struct Lane {
    cuda::DeviceBuffer device;
    cuda::PinnedBuffer host;
    std::vector<T> pageable;  // baseline
  };
  std::int64_t row_bytes() const { return per_row_ * static_cast<std::int64_t>(sizeof(T)); }
  std::size_t bytes(std::int64_t rows) const {
    return static_cast<std::size_t>(rows * row_bytes());
  }

  const GpuProductContext& ctx_;
  const std::int64_t per_row_;
  std::vector<Lane> lanes_;
};

/// @brief A product whose output is rows of each unit, copied back to the host with the unit
/// (allele counts, afdist counts, phased haplotypes): its derived class launches the kernels and
/// puts rows_.host(lane, rows) into the unit's output.
template <class T>
class CopiedRowsProduct : public GpuSiteProduct {
 public:
  CopiedRowsProduct(const GpuProductContext& ctx, std::int64_t per_row)
      : ctx_(ctx), rows_(ctx_, per_row) {}
  void add_lane(cudaStream_t st) override { rows_.add_lane(st); }
  void begin_unit(unsigned lane, const vcz::WorkUnit& unit, cudaStream_t st) override {
    rows_.clear(lane, unit.size(), st);
  }
  void unit_done(int, unsigned lane, std::int64_t, const vcz::WorkUnit& unit,
                 cudaStream_t st) override {
    rows_.copy_back(lane, unit.size(), st);
  }

 protected:
  const GpuProductContext ctx_;
  LaneRows<T> rows_;
};

/// @brief The registration list: the products @p ctx.spec asks for, in the order they run.
std::vector<std::unique_ptr<GpuSiteProduct>> make_gpu_site_products(const GpuProductContext& ctx);

}  // namespace vczstats::backend
