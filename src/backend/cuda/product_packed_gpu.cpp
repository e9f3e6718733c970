// Site-pass products on the GPU that stay on the device: every unit's packed genotypes, handed
// to the pass's PackedSink, and every unit's haplotype planes, handed to its HaplotypeSink
// (backend/cpu/product_packed.cpp and product_haplotype_planes.cpp on the CPU). The sinks get
// the lane's device words, valid for the work they queue on the lane's stream.

#include "backend/cuda/gpu_product.hpp"
#include "backend/cuda/packed_kernels.cuh"
#include "backend/cuda/pair_band_kernels.cuh"
#include "stream/genotype_reader.hpp"

namespace vczstats::backend {
namespace {

class PackedGpu final : public GpuSiteProduct {
 public:
  explicit PackedGpu(const GpuProductContext& ctx)
      : ctx_(ctx),
        sinks_(ctx.spec->packed),
        samples_(ctx.spec->samples->size()),
        rows_(ctx_, packed_words(samples_)) {}

  void add_lane(cudaStream_t st) override { rows_.add_lane(st, false); }
  void begin_unit(unsigned lane, const vcz::WorkUnit& unit, cudaStream_t st) override {
    rows_.clear(lane, unit.size(), st);
  }
  void launch(int phase, unsigned lane, std::int64_t, const GenotypeChunkView& dv,
              const vcz::WorkUnit&, cudaStream_t st) override {
    if (phase == 0) cuda::launch_pack(dv, rows_.device(lane), rows_.per_row(), st);
  }
  void unit_done(int, unsigned lane, std::int64_t u, const vcz::WorkUnit& unit,
                 cudaStream_t st) override {
    const PackedGenotypeView view =
        packed_unit_view(rows_.device(lane), unit, samples_, rows_.per_row());
    for (PackedSink* s : sinks_) s->device_unit(u, view, st);
  }

 private:
  const GpuProductContext ctx_;
  const std::vector<PackedSink*>& sinks_;
  const std::int64_t samples_;
  LaneRows<std::uint64_t> rows_;
};

class HaplotypePlanesGpu final : public GpuSiteProduct {
 public:
  explicit HaplotypePlanesGpu(const GpuProductContext& ctx)
      : ctx_(ctx),
        sinks_(ctx.spec->haplotypes),
        haplotypes_(ctx.spec->samples->size() * ctx.reader->ploidy()),
        plane_words_(haplotype_words(haplotypes_)),
        rows_(ctx_, 2 * plane_words_) {}

  void add_lane(cudaStream_t st) override { rows_.add_lane(st, false); }
  void begin_unit(unsigned lane, const vcz::WorkUnit& unit, cudaStream_t st) override {
    rows_.clear(lane, unit.size(), st);
  }
  void launch(int phase, unsigned lane, std::int64_t, const GenotypeChunkView& dv,
              const vcz::WorkUnit&, cudaStream_t st) override {
    if (phase == 0) cuda::launch_pack_haplotype_planes(dv, rows_.device(lane), plane_words_, st);
  }
  void unit_done(int, unsigned lane, std::int64_t u, const vcz::WorkUnit& unit,
                 cudaStream_t st) override {
    const PackedHaplotypeView view =
        haplotype_unit_view(rows_.device(lane), unit, haplotypes_, plane_words_);
    for (HaplotypeSink* s : sinks_) s->device_haplotypes(u, view, st);
  }

 private:
  const GpuProductContext ctx_;
  const std::vector<HaplotypeSink*>& sinks_;
  const std::int64_t haplotypes_, plane_words_;
  LaneRows<std::uint64_t> rows_;
};

}  // namespace

std::unique_ptr<GpuSiteProduct> make_packed_gpu(const GpuProductContext& ctx) {
  return std::make_unique<PackedGpu>(ctx);
}

std::unique_ptr<GpuSiteProduct> make_haplotype_planes_gpu(const GpuProductContext& ctx) {
  return std::make_unique<HaplotypePlanesGpu>(ctx);
}

}  // namespace vczstats::backend
