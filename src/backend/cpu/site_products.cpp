// The registration list of the site pass's products (backend/site_product.hpp): a new product is
// its own file plus one line here. The order is the order in which the products finish a unit
// (sinks are called in it): the named products first (the engine reads them: count filters,
// layouts, sinks), then the keyed ones (vczstats/products.hpp) in the order of kKeyed.

#include "backend/site_product.hpp"
#include "vczstats/afdist.hpp"
#include "vczstats/error.hpp"
#include "vczstats/packed_haplotypes.hpp"

namespace vczstats::backend {

std::unique_ptr<SiteProduct> make_counts_product(const ProductContext& ctx);
std::unique_ptr<SiteProduct> make_tallies_product(const ProductContext& ctx);
std::unique_ptr<SiteProduct> make_packed_product(const ProductContext& ctx);
std::unique_ptr<SiteProduct> make_haplotype_planes_product(const ProductContext& ctx);
std::unique_ptr<SiteProduct> make_afdist_product(const ProductContext& ctx,
                                                 const ProductNeed& need);
std::unique_ptr<SiteProduct> make_phased_product(const ProductContext& ctx,
                                                 const ProductNeed& need);

namespace {
/// The keyed products: one line each, key → maker.
constexpr KeyedFactory<SiteProduct, ProductContext> kKeyed[] = {
    {stats::kAfdistCounts, make_afdist_product},
    {kPhasedHaplotypes, make_phased_product},
};
}  // namespace

std::vector<std::unique_ptr<SiteProduct>> make_cpu_site_products(const ProductContext& ctx) {
  const SitePassSpec& spec = *ctx.spec;
  std::vector<std::unique_ptr<SiteProduct>> products;
  if (spec.counts) products.push_back(make_counts_product(ctx));
  if (spec.sample_sums && !spec.tallies) throw Error("per-sample sums need the tallies");
  if (spec.tallies) products.push_back(make_tallies_product(ctx));
  if (!spec.packed.empty()) products.push_back(make_packed_product(ctx));
  if (!spec.haplotypes.empty()) products.push_back(make_haplotype_planes_product(ctx));
  for (auto& p :
       make_keyed_products<SiteProduct, ProductContext>(spec, ctx, kKeyed, "the CPU backend"))
    products.push_back(std::move(p));
  return products;
}

}  // namespace vczstats::backend
