// Site-pass product: allele counts per site and population (stats::AlleleCountsPass), summed over
// a unit's sample blocks and delivered with the unit (UnitOutput::counts).

#include "backend/site_product.hpp"

namespace vczstats::backend {
namespace {

class CountsProduct final : public SiteProduct {
 public:
  explicit CountsProduct(const ProductContext& ctx)
      : plan_(*ctx.spec->plan), pass_(*ctx.spec->counts) {}

  std::unique_ptr<ProductBlock> produce(int phase, std::int64_t unit, std::int64_t,
                                        const GenotypeChunkView& view, unsigned) override {
    if (phase != 0) return nullptr;
    auto out = std::make_unique<VectorBlock<std::int32_t>>();
    out->data.assign(static_cast<std::size_t>(rows(unit) * pass_.site_width()), 0);
    pass_.count_sites(view, out->data);
    return out;
  }

  void merge(int, std::int64_t, std::int64_t block, ProductBlock& in) override {
    auto& b = static_cast<VectorBlock<std::int32_t>&>(in);
    if (block == 0) {  // the first block's counts become the unit's
      unit_ = std::move(b.data);
      return;
    }
    for (std::size_t i = 0; i < unit_.size(); ++i) unit_[i] += b.data[i];
  }

  void finish(int, std::int64_t, UnitOutput& out) override { out.counts = unit_; }

 private:
  std::int64_t rows(std::int64_t unit) const {
    return plan_.units[static_cast<std::size_t>(unit)].size();
  }

  const vcz::ChunkPlan& plan_;
  const stats::AlleleCountsPass& pass_;
  std::vector<std::int32_t> unit_;
};

}  // namespace

std::unique_ptr<SiteProduct> make_counts_product(const ProductContext& ctx) {
  return std::make_unique<CountsProduct>(ctx);
}

}  // namespace vczstats::backend
