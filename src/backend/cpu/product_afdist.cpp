// Site-pass product stats::kAfdistCounts: per-site afdist counts of the need's method
// (stats::AfdistAccumulator), merged over a unit's sample blocks and delivered with the unit in
// its slot (a std::span<const AfdistSite>).

#include "backend/site_product.hpp"

namespace vczstats::backend {
namespace {

class AfdistProduct final : public SiteProduct {
 public:
  AfdistProduct(const ProductContext& ctx, const ProductNeed& need) : plan_(*ctx.spec->plan) {
    afdist_.init({need.parameter<stats::AfdistMethod>(), 1}, ctx.spec->samples->size(),
                 ctx.spec->store->ploidy());
  }

  std::unique_ptr<ProductBlock> produce(int phase, std::int64_t unit, std::int64_t,
                                        const GenotypeChunkView& view, unsigned) override {
    if (phase != 0) return nullptr;
    auto out = std::make_unique<VectorBlock<stats::AfdistSite>>();
    out->data.assign(static_cast<std::size_t>(plan_.units[static_cast<std::size_t>(unit)].size()),
                     {});
    afdist_.count_sites(view, out->data);
    return out;
  }

  void merge(int, std::int64_t, std::int64_t block, ProductBlock& in) override {
    auto& b = static_cast<VectorBlock<stats::AfdistSite>&>(in);
    if (block == 0) {  // the first block's counts become the unit's
      unit_ = std::move(b.data);
      return;
    }
    for (std::size_t i = 0; i < unit_.size(); ++i)
      stats::AfdistAccumulator::merge_site(unit_[i], b.data[i]);
  }

  void finish(int, std::int64_t, UnitOutput& out) override {
    out.products.push_back({stats::kAfdistCounts, std::span<const stats::AfdistSite>(unit_)});
  }

 private:
  const vcz::ChunkPlan& plan_;
  stats::AfdistAccumulator afdist_;
  std::vector<stats::AfdistSite> unit_;
};

}  // namespace

std::unique_ptr<SiteProduct> make_afdist_product(const ProductContext& ctx,
                                                 const ProductNeed& need) {
  return std::make_unique<AfdistProduct>(ctx, need);
}

}  // namespace vczstats::backend
