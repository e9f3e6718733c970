// Site-pass product stats::kAfdistCounts on the GPU: per-site afdist counts of the need's method
// (backend/cpu/product_afdist.cpp on the CPU), merged on the lane over a unit's blocks, copied
// back to the lane's host buffer and delivered with the unit in its slot (a
// std::span<const AfdistSite>).

#include "backend/cuda/afdist_kernels.cuh"
#include "backend/cuda/gpu_product.hpp"

namespace vczstats::backend {
namespace {

class AfdistGpu final : public CopiedRowsProduct<stats::AfdistSite> {
 public:
  AfdistGpu(const GpuProductContext& ctx, const ProductNeed& need)
      : CopiedRowsProduct(ctx, 1), method_(need.parameter<stats::AfdistMethod>()) {}

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
    out.products.push_back({stats::kAfdistCounts, rows_.host(lane, unit.size())});
  }

 private:
  const stats::AfdistMethod method_;
};

}  // namespace

std::unique_ptr<GpuSiteProduct> make_afdist_gpu(const GpuProductContext& ctx,
                                                const ProductNeed& need) {
  return std::make_unique<AfdistGpu>(ctx, need);
}

}  // namespace vczstats::backend
