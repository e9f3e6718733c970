// Site-pass product: every unit's haplotype planes (backend/site_pass.hpp, PackedHaplotypeView)
// handed to the pass's HaplotypeSink (the variant-pair family's --hap input): each block's planes
// ORed into the unit's rows in block order.

#include "backend/site_product.hpp"
#include "stats/element_type.hpp"
#include "stats/haplo_pack.hpp"
#include "stats/haplotype_planes.hpp"
#include "stream/genotype_reader.hpp"
#include "vczstats/error.hpp"

namespace vczstats::backend {
namespace {

/// Haplotype planes of a block's rows, the block's first slot placed @p shift slots into the
/// first word: per row, the non-REF words then the called words.
template <class T>
void pack_haplotype_block(const GenotypeChunkView& b, int shift, std::vector<std::uint64_t>& out) {
  const int ploidy = static_cast<int>(b.ploidy);
  const std::int64_t nw = (shift + b.samples * ploidy + 63) / 64;
  out.assign(static_cast<std::size_t>(b.variants * 2 * nw), 0);
  for (std::int64_t v = 0; v < b.variants; ++v)
    for (std::int64_t w = 0; w < nw; ++w) {
      std::uint64_t* row = out.data() + v * 2 * nw;
      stats::packed::haplotype_words(b.row<T>(v), b.samples, ploidy, w, shift, row[w], row[nw + w]);
    }
}

class HaplotypePlanesProduct final : public SiteProduct {
 public:
  explicit HaplotypePlanesProduct(const ProductContext& ctx)
      : plan_(*ctx.spec->plan),
        sinks_(ctx.spec->haplotypes),
        ploidy_(ctx.reader->ploidy()),
        haplotypes_(ctx.spec->samples->size() * ploidy_),
        plane_words_((haplotypes_ + 63) / 64) {}

  std::unique_ptr<ProductBlock> produce(int phase, std::int64_t, std::int64_t,
                                        const GenotypeChunkView& view, unsigned) override {
    if (phase != 0) return nullptr;
    auto out = std::make_unique<VectorBlock<std::uint64_t>>();
    out->sample_offset = view.sample_offset;
    if (!with_element_type(view.elem_bytes, [&](auto t) {
          pack_haplotype_block<decltype(t)>(
              view, static_cast<int>(view.sample_offset * view.ploidy % 64), out->data);
        }))
      throw Error("haplotype planes: unsupported genotype width");
    return out;
  }

  void merge(int, std::int64_t u, std::int64_t block, ProductBlock& in) override {
    auto& b = static_cast<VectorBlock<std::uint64_t>&>(in);
    const std::int64_t rows = plan_.units[static_cast<std::size_t>(u)].size();
    const std::int64_t row = 2 * plane_words_;
    if (block == 0) unit_.assign(static_cast<std::size_t>(rows * row), 0);
    // OR the block's planes into the unit's rows (each variant's two planes, one row each).
    stats::haplo::or_rows(unit_, plane_words_, b.data, 2 * rows, b.sample_offset * ploidy_ / 64);
  }

  void finish(int, std::int64_t u, UnitOutput&) override {
    const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(u)];
    const PackedHaplotypeView view =
        haplotype_unit_view(unit_.data(), unit, haplotypes_, plane_words_);
    for (HaplotypeSink* s : sinks_) s->host_haplotypes(u, view);
  }

 private:
  const vcz::ChunkPlan& plan_;
  const std::vector<HaplotypeSink*>& sinks_;
  const std::int64_t ploidy_, haplotypes_, plane_words_;
  std::vector<std::uint64_t> unit_;
};

}  // namespace

std::unique_ptr<SiteProduct> make_haplotype_planes_product(const ProductContext& ctx) {
  return std::make_unique<HaplotypePlanesProduct>(ctx);
}

}  // namespace vczstats::backend
