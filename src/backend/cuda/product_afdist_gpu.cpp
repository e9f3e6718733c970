// Site-pass product on the GPU: per-site afdist counts of one method (backend/cpu/
// product_afdist.cpp on the CPU), merged on the lane over a unit's blocks, copied back to the
// lane's host buffer and delivered with the unit (UnitOutput::afdist).

#include "backend/cuda/afdist_kernels.cuh"
#include "backend/cuda/gpu_product.hpp"

namespace vczstats::backend {
namespace {

class AfdistGpu final : public CopiedRowsProduct<stats::AfdistSite> {
 public:
  explicit AfdistGpu(const GpuProductContext& ctx)
      : CopiedRowsProduct(ctx, 1), method_(ctx.spec->afdist->options().method) {}

  void launch(int phase, unsigned lane, std::int64_t, const GenotypeChunkView& dv,
              const vcz::WorkUnit&, cudaStream_t st) override {
    if (phase != 0) return;
    cuda::HeavyArgs h;
    h.data = dv.data;
    h.elem_bytes = dv.elem_bytes;
    h.rows = dv.variants;
    h.samples = dv.samples;
    h.ploidy = static_cast<int>(dv.ploidy);
    h.sites = rows_.device(lane);
    h.method = method_;
    if (ctx_.seed)
      cuda::launch_afdist_baseline(h, st);
    else
      cuda::launch_afdist_heavy(h, st);
  }

  void deliver(unsigned lane, const vcz::WorkUnit& unit, UnitOutput& out) override {
    out.afdist = rows_.host(lane, unit.size());
  }

 private:
  const stats::AfdistMethod method_;
};

}  // namespace

std::unique_ptr<GpuSiteProduct> make_afdist_gpu(const GpuProductContext& ctx) {
  return std::make_unique<AfdistGpu>(ctx);
}

}  // namespace vczstats::backend
