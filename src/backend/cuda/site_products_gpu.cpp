// The registration list of the site pass's products on the GPU (backend/cuda/gpu_product.hpp):
// a new product is its own file plus one line here (and in backend/cpu/site_products.cpp). The
// order is the order in which the products run on a lane (sinks are called in it): the named
// products first, then the keyed ones (vczstats/products.hpp) in the order of kKeyed.

#include "backend/cuda/gpu_product.hpp"
#include "vczstats/afdist.hpp"
#include "vczstats/error.hpp"
#include "vczstats/packed_haplotypes.hpp"

namespace vczstats::backend {

std::unique_ptr<GpuSiteProduct> make_counts_gpu(const GpuProductContext& ctx);
std::unique_ptr<GpuSiteProduct> make_tallies_gpu(const GpuProductContext& ctx);
std::unique_ptr<GpuSiteProduct> make_packed_gpu(const GpuProductContext& ctx);
std::unique_ptr<GpuSiteProduct> make_haplotype_planes_gpu(const GpuProductContext& ctx);
std::unique_ptr<GpuSiteProduct> make_afdist_gpu(const GpuProductContext& ctx,
                                                const ProductNeed& need);
std::unique_ptr<GpuSiteProduct> make_phased_gpu(const GpuProductContext& ctx,
                                                const ProductNeed& need);

namespace {
/// The keyed products: one line each, key → maker.
constexpr KeyedFactory<GpuSiteProduct, GpuProductContext> kKeyed[] = {
    {stats::kAfdistCounts, make_afdist_gpu},
    {kPhasedHaplotypes, make_phased_gpu},
};
}  // namespace

std::vector<std::unique_ptr<GpuSiteProduct>> make_gpu_site_products(const GpuProductContext& ctx) {
  const SitePassSpec& spec = *ctx.spec;
  if (spec.sample_sums && !spec.tallies) throw Error("per-sample sums need the tallies");
  std::vector<std::unique_ptr<GpuSiteProduct>> products;
  if (spec.counts) products.push_back(make_counts_gpu(ctx));
  if (spec.tallies) products.push_back(make_tallies_gpu(ctx));
  if (!spec.packed.empty()) products.push_back(make_packed_gpu(ctx));
  if (!spec.haplotypes.empty()) products.push_back(make_haplotype_planes_gpu(ctx));
  for (auto& p : make_keyed_products<GpuSiteProduct, GpuProductContext>(spec, ctx, kKeyed,
                                                                        "the CUDA backend"))
    products.push_back(std::move(p));
  return products;
}

}  // namespace vczstats::backend
