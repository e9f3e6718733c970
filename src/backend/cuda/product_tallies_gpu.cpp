// Site-pass product on the GPU: complete diploid tallies per site and population, and the
// per-sample sums (backend/cpu/product_tallies.cpp on the CPU). The tallies are summed on the
// lane and copied back when delivered (UnitOutput::tallies). The per-sample sums stay on the
// device: after a unit's phase 0 its per-site weights are found from its tallies on the lane,
// its phase 1 stores each sample's sums, and those are added to the run's totals in plan order
// (an event chain across lanes), which keeps the floating-point sums equal to the CPU's bit for
// bit; the totals come back once, after the last unit.

#include <cstring>

#include "backend/cuda/gpu_product.hpp"
#include "backend/cuda/sample_kernels.cuh"

namespace vczstats::backend {
namespace {

using cuda::DeviceBuffer;
using cuda::PinnedBuffer;
using cuda::StageTimer;

class TalliesGpu final : public GpuSiteProduct {
 public:
  explicit TalliesGpu(const GpuProductContext& ctx)
      : ctx_(ctx),
        request_(*ctx.spec->tallies),
        sums_(ctx.spec->sample_sums),
        samples_(ctx.spec->samples->size()),
        tallies_(ctx_, request_.site_width()) {}

  int phases() const override { return sums_ ? 2 : 1; }

  void add_lane(cudaStream_t st) override {
    tallies_.add_lane(st, request_.deliver);
    if (!sums_) return;
    Lane& lane = lanes_.emplace_back();
    const std::int64_t rows = ctx_.max_rows;
    lane.weights = DeviceBuffer(*ctx_.pool, rows * request_.pops * 8, st);
    lane.mask = DeviceBuffer(*ctx_.pool, rows, st);
    lane.host_mask = PinnedBuffer(rows);
    lane.partial = DeviceBuffer(
        *ctx_.pool, samples_ * static_cast<std::int64_t>(sizeof(cuda::DeviceSampleSums)), st);
  }

  void setup(cudaStream_t s0) override {
    const auto bytes = static_cast<std::int64_t>(request_.population_of->size() * 4);
    population_of_ = DeviceBuffer(*ctx_.pool, bytes, s0);
    VCZ_CUDA_CHECK(cudaMemcpyAsync(population_of_.data(), request_.population_of->data(),
                                   static_cast<std::size_t>(bytes), cudaMemcpyHostToDevice, s0));
    if (!sums_) return;
    totals_ = DeviceBuffer(
        *ctx_.pool, samples_ * static_cast<std::int64_t>(sizeof(cuda::DeviceSampleSums)), s0);
    VCZ_CUDA_CHECK(
        cudaMemsetAsync(totals_.data(), 0, static_cast<std::size_t>(totals_.size()), s0));
  }

  void begin_unit(unsigned lane, const vcz::WorkUnit& unit, cudaStream_t st) override {
    tallies_.clear(lane, unit.size(), st);
  }

  void launch(int phase, unsigned li, std::int64_t, const GenotypeChunkView& dv,
              const vcz::WorkUnit& unit, cudaStream_t st) override {
    if (phase == 0) {
      cuda::launch_tallies(dv, population_of_.as<std::int32_t>(), request_.pops, request_.alleles,
                           tallies_.device(li), st);
      return;
    }
    Lane& lane = lanes_[li];
    cuda::launch_sample_sums(dv, population_of_.as<std::int32_t>(), request_.pops,
                             lane.weights.as<double>(),
                             unit.mask.empty() ? nullptr : lane.mask.as<std::uint8_t>(),
                             lane.partial.as<cuda::DeviceSampleSums>(), st);
  }

  void unit_done(int phase, unsigned li, std::int64_t, const vcz::WorkUnit& unit,
                 cudaStream_t st) override {
    cuda::StageTimer& timer = *ctx_.timer;
    if (phase == 1) {
      // Add the unit's per-sample sums to the totals, in plan order across lanes.
      if (add_chained_) VCZ_CUDA_CHECK(cudaStreamWaitEvent(st, added_.get(), 0));
      const int t = timer.start(st);
      cuda::launch_add_sample_sums(lanes_[li].partial.as<cuda::DeviceSampleSums>(), samples_,
                                   totals_.as<cuda::DeviceSampleSums>(), st);
      timer.stop(t, st, StageTimer::kReduce);
      added_.record(st);
      add_chained_ = true;
      return;
    }
    if (sums_) {  // the weights and the row mask phase 1 needs
      Lane& lane = lanes_[li];
      int t = timer.start(st);
      cuda::launch_site_weights(tallies_.device(li), unit.size(), request_.pops, request_.alleles,
                                lane.weights.as<double>(), st);
      timer.stop(t, st, StageTimer::kReduce);
      if (!unit.mask.empty()) {
        if (lane.mask_pending) lane.mask_copied.synchronize();  // its last copy read host_mask
        std::memcpy(lane.host_mask.data(), unit.mask.data(), unit.mask.size());
        t = timer.start(st);
        VCZ_CUDA_CHECK(cudaMemcpyAsync(lane.mask.data(), lane.host_mask.data(), unit.mask.size(),
                                       cudaMemcpyHostToDevice, st));
        timer.stop(t, st, StageTimer::kH2D);
        lane.mask_copied.record(st);
        lane.mask_pending = true;
      }
    }
    if (request_.deliver) tallies_.copy_back(li, unit.size(), st);
  }

  void deliver(unsigned lane, const vcz::WorkUnit& unit, UnitOutput& out) override {
    if (request_.deliver) out.tallies = tallies_.host(lane, unit.size());
  }

  /// The run's per-sample totals, back on the host.
  void end(cudaStream_t s0) override {
    if (!sums_ || !ctx_.sample_sums) return;
    if (add_chained_) VCZ_CUDA_CHECK(cudaStreamWaitEvent(s0, added_.get(), 0));
    std::vector<cuda::DeviceSampleSums> host(static_cast<std::size_t>(samples_));
    VCZ_CUDA_CHECK(cudaMemcpyAsync(host.data(), totals_.data(),
                                   host.size() * sizeof(cuda::DeviceSampleSums),
                                   cudaMemcpyDeviceToHost, s0));
    VCZ_CUDA_CHECK(cudaStreamSynchronize(s0));
    std::vector<stats::SampleSums>& out = *ctx_.sample_sums;
    out.resize(host.size());
    for (std::size_t i = 0; i < host.size(); ++i)
      out[i] = {host[i].obs, host[i].missing, host[i].het_sites, host[i].o_hom, host[i].e_hom};
  }

 private:
  struct Lane {
    DeviceBuffer weights, mask, partial;  // per-site weights, row mask, the unit's sample sums
    PinnedBuffer host_mask;
    cuda::Event mask_copied;
    bool mask_pending = false;
  };

  const GpuProductContext ctx_;
  const TalliesRequest& request_;
  const bool sums_;
  const std::int64_t samples_;
  LaneRows<std::int32_t> tallies_;
  std::vector<Lane> lanes_;  // per-sample sums
  DeviceBuffer population_of_, totals_;
  cuda::Event added_;
  bool add_chained_ = false;
};

}  // namespace

std::unique_ptr<GpuSiteProduct> make_tallies_gpu(const GpuProductContext& ctx) {
  return std::make_unique<TalliesGpu>(ctx);
}

}  // namespace vczstats::backend
