// The registration list of the site pass's products on the GPU (backend/cuda/gpu_product.hpp):
// a new product is its own file plus one line here (and in backend/cpu/site_products.cpp). The
// order is the order in which the products run on a lane (sinks are called in it).

#include "backend/cuda/gpu_product.hpp"
#include "vczstats/error.hpp"

namespace vczstats::backend {

std::unique_ptr<GpuSiteProduct> make_counts_gpu(const GpuProductContext& ctx);
std::unique_ptr<GpuSiteProduct> make_afdist_gpu(const GpuProductContext& ctx);
std::unique_ptr<GpuSiteProduct> make_tallies_gpu(const GpuProductContext& ctx);
std::unique_ptr<GpuSiteProduct> make_packed_gpu(const GpuProductContext& ctx);
std::unique_ptr<GpuSiteProduct> make_haplotype_planes_gpu(const GpuProductContext& ctx);
std::unique_ptr<GpuSiteProduct> make_phased_gpu(const GpuProductContext& ctx);

std::vector<std::unique_ptr<GpuSiteProduct>> make_gpu_site_products(const GpuProductContext& ctx) {
  const SitePassSpec& spec = *ctx.spec;
  if (spec.sample_sums && !spec.tallies) throw Error("per-sample sums need the tallies");
  std::vector<std::unique_ptr<GpuSiteProduct>> products;
  if (spec.counts) products.push_back(make_counts_gpu(ctx));
  if (spec.afdist) products.push_back(make_afdist_gpu(ctx));
  if (spec.tallies) products.push_back(make_tallies_gpu(ctx));
  if (spec.packed) products.push_back(make_packed_gpu(ctx));
  if (spec.haplotypes) products.push_back(make_haplotype_planes_gpu(ctx));
  if (spec.phased) products.push_back(make_phased_gpu(ctx));
  return products;
}

}  // namespace vczstats::backend
