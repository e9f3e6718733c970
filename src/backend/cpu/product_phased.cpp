// Site-pass product kPhasedHaplotypes: every unit's bit-packed phased haplotypes
// (vczstats/packed_haplotypes.hpp: 1 + the store's ALT allele columns planes), delivered with the
// unit in its slot (a PhasedHaplotypeView, host memory). Each block is
// checked against call_genotype_phased first (stream::PhasedReader): a call with two or more
// called alleles that is not phased stops the pass with an error naming it.

#include "backend/site_product.hpp"
#include "stats/element_type.hpp"
#include "stats/haplo_pack.hpp"
#include "stream/genotype_reader.hpp"
#include "stream/phased_reader.hpp"
#include "vczstats/error.hpp"
#include "vczstats/packed_haplotypes.hpp"

namespace vczstats::backend {
namespace {

class PhasedProduct final : public SiteProduct {
 public:
  explicit PhasedProduct(const ProductContext& ctx)
      : plan_(*ctx.spec->plan),
        reader_(*ctx.spec->store, *ctx.spec->samples, *ctx.reader),
        buffers_(ctx.workers),
        planes_(phased_planes(*ctx.spec->store)),
        ploidy_(ctx.reader->ploidy()),
        haplotypes_(ctx.spec->samples->size() * ploidy_),
        plane_words_(haplotype_words(haplotypes_)) {}

  std::unique_ptr<ProductBlock> produce(int phase, std::int64_t u, std::int64_t block,
                                        const GenotypeChunkView& view, unsigned worker) override {
    if (phase != 0) return nullptr;
    reader_.check(plan_.units[static_cast<std::size_t>(u)], static_cast<std::size_t>(block), view,
                  buffers_[worker]);
    auto out = std::make_unique<VectorBlock<std::uint64_t>>();
    out->sample_offset = view.sample_offset;
    const int shift = static_cast<int>(view.sample_offset * view.ploidy % 64);
    if (!with_element_type(view.elem_bytes, [&](auto t) {
          stats::haplo::pack_block_planes<decltype(t)>(view, planes_, shift, out->data);
        }))
      throw Error("packed haplotypes: unsupported genotype width");
    return out;
  }

  void merge(int, std::int64_t u, std::int64_t block, ProductBlock& in) override {
    auto& b = static_cast<VectorBlock<std::uint64_t>&>(in);
    const std::int64_t rows = plan_.units[static_cast<std::size_t>(u)].size();
    if (block == 0) unit_.assign(static_cast<std::size_t>(rows * planes_ * plane_words_), 0);
    // OR the block's planes into the unit's rows.
    stats::haplo::or_rows(unit_, plane_words_, b.data, rows * planes_,
                          b.sample_offset * ploidy_ / 64);
  }

  void finish(int, std::int64_t u, UnitOutput& out) override {
    const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(u)];
    out.products.push_back({kPhasedHaplotypes, phased_unit_view(unit_.data(), unit, haplotypes_,
                                                                ploidy_, planes_, plane_words_)});
  }

 private:
  const vcz::ChunkPlan& plan_;
  stream::PhasedReader reader_;
  std::vector<std::vector<std::byte>> buffers_;  // one per producer
  const int planes_;
  const std::int64_t ploidy_, haplotypes_, plane_words_;
  std::vector<std::uint64_t> unit_;
};

}  // namespace

std::unique_ptr<SiteProduct> make_phased_product(const ProductContext& ctx, const ProductNeed&) {
  return std::make_unique<PhasedProduct>(ctx);
}

}  // namespace vczstats::backend
