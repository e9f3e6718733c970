// Site-pass product: complete diploid tallies per site and population (TalliesRequest), delivered
// with the unit when asked (UnitOutput::tallies), and the per-sample sums (SitePassSpec::
// sample_sums): a second phase per unit that reads the genotypes again with the unit's per-site
// weights, found from its tallies when phase 0 finishes, and adds each block's sums to the run's
// totals in plan order.

#include <map>
#include <mutex>

#include "backend/site_product.hpp"
#include "stats/element_type.hpp"
#include "stats/sample_math.hpp"
#include "vczstats/error.hpp"

namespace vczstats::backend {
namespace {

/// The complete diploid tallies of one block per site × pop (stats/tallies_math.hpp).
template <class T>
void count_tallies(const GenotypeChunkView& b, const TalliesRequest& r,
                   std::vector<std::int32_t>& out) {
  const int ploidy = static_cast<int>(b.ploidy), w = stats::tallies::width(r.alleles);
  out.assign(static_cast<std::size_t>(b.variants * r.site_width()), 0);
  for (std::int64_t v = 0; v < b.variants; ++v) {
    const T* row = b.row<T>(v);
    std::int32_t* site = out.data() + v * r.site_width();
    for (std::int64_t i = 0; i < b.samples; ++i)
      stats::tallies::add_call(
          site + (*r.population_of)[static_cast<std::size_t>(b.sample_offset + i)] * w,
          row + i * ploidy, ploidy, r.alleles);
  }
}

/// Phase 1 on one block: every sample's sums over the unit's selected rows.
template <class T>
void sample_sums(const GenotypeChunkView& b, const TalliesRequest& r,
                 const std::vector<double>& weights, const std::vector<std::uint8_t>& mask,
                 std::vector<stats::SampleSums>& out) {
  const int ploidy = static_cast<int>(b.ploidy);
  std::vector<stats::sample::CallSums> sums(static_cast<std::size_t>(b.samples));
  for (std::int64_t v = 0; v < b.variants; ++v) {
    if (!mask.empty() && !mask[static_cast<std::size_t>(v)]) continue;
    const T* row = b.row<T>(v);
    const double* wv = weights.data() + v * r.pops;
    for (std::int64_t i = 0; i < b.samples; ++i)
      stats::sample::add_sample(
          sums[static_cast<std::size_t>(i)], row + i * ploidy, ploidy,
          wv[(*r.population_of)[static_cast<std::size_t>(b.sample_offset + i)]]);
  }
  out.resize(sums.size());
  for (std::size_t i = 0; i < sums.size(); ++i)
    out[i] = {sums[i].obs, sums[i].missing, sums[i].het_sites, sums[i].o_hom, sums[i].e_hom};
}

class TalliesProduct final : public SiteProduct {
 public:
  explicit TalliesProduct(const ProductContext& ctx)
      : plan_(*ctx.spec->plan),
        request_(*ctx.spec->tallies),
        sums_(ctx.spec->sample_sums),
        totals_(ctx.sample_sums) {
    if (sums_ && totals_) totals_->assign(static_cast<std::size_t>(ctx.spec->samples->size()), {});
  }

  int phases() const override { return sums_ ? 2 : 1; }

  std::unique_ptr<ProductBlock> produce(int phase, std::int64_t unit, std::int64_t,
                                        const GenotypeChunkView& view, unsigned) override {
    if (phase == 0) {
      auto out = std::make_unique<VectorBlock<std::int32_t>>();
      if (!with_element_type(view.elem_bytes, [&](auto t) {
            count_tallies<decltype(t)>(view, request_, out->data);
          }))
        throw Error("sample pass: unsupported genotype width");
      return out;
    }
    std::shared_ptr<const std::vector<double>> w;
    {
      std::lock_guard lock(weights_mutex_);
      w = weights_.at(unit);
    }
    auto out = std::make_unique<VectorBlock<stats::SampleSums>>();
    out->sample_offset = view.sample_offset;
    if (!with_element_type(view.elem_bytes, [&](auto t) {
          sample_sums<decltype(t)>(view, request_, *w,
                                   plan_.units[static_cast<std::size_t>(unit)].mask, out->data);
        }))
      throw Error("sample pass: unsupported genotype width");
    return out;
  }

  void merge(int phase, std::int64_t, std::int64_t block, ProductBlock& in) override {
    if (phase == 0) {
      auto& b = static_cast<VectorBlock<std::int32_t>&>(in);
      if (block == 0) {  // the first block's tallies become the unit's
        unit_ = std::move(b.data);
        return;
      }
      for (std::size_t i = 0; i < unit_.size(); ++i) unit_[i] += b.data[i];
      return;
    }
    auto& b = static_cast<VectorBlock<stats::SampleSums>&>(in);
    for (std::size_t i = 0; i < b.data.size(); ++i)
      (*totals_)[static_cast<std::size_t>(b.sample_offset) + i].merge(b.data[i]);
  }

  void finish(int phase, std::int64_t u, UnitOutput& out) override {
    if (phase == 1) {
      std::lock_guard lock(weights_mutex_);
      weights_.erase(u);
      return;
    }
    if (sums_) {  // the weights phase 1 needs
      const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(u)];
      auto w = std::make_shared<std::vector<double>>(
          static_cast<std::size_t>(unit.size() * request_.pops));
      const int width = stats::tallies::width(request_.alleles);
      for (std::size_t i = 0; i < w->size(); ++i)
        (*w)[i] = stats::sample::site_weight(unit_.data() + i * width, request_.alleles);
      std::lock_guard lock(weights_mutex_);
      weights_[u] = std::move(w);
    }
    if (request_.deliver) out.tallies = unit_;
  }

 private:
  const vcz::ChunkPlan& plan_;
  const TalliesRequest& request_;
  const bool sums_;
  std::vector<stats::SampleSums>* totals_;
  std::vector<std::int32_t> unit_;
  // Per-site weights of the units whose phase 1 runs (the consumer writes, producers read).
  std::mutex weights_mutex_;
  std::map<std::int64_t, std::shared_ptr<const std::vector<double>>> weights_;
};

}  // namespace

std::unique_ptr<SiteProduct> make_tallies_product(const ProductContext& ctx) {
  return std::make_unique<TalliesProduct>(ctx);
}

}  // namespace vczstats::backend
