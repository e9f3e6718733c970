// Site-pass product: every unit's packed genotypes (vczstats/packed.hpp) handed to the pass's
// PackedSink (the matrix and variant-pair families): each block's calls packed into words, ORed
// into the unit's rows in block order.

#include "backend/site_product.hpp"
#include "stats/element_type.hpp"
#include "stats/haplo_pack.hpp"
#include "stats/packed_math.hpp"
#include "vczstats/error.hpp"

namespace vczstats::backend {
namespace {

/// Pack a block's calls (vczstats/packed.hpp) into rows of words whose first sample sits
/// @p shift samples into the first word (so the words OR into the unit's rows at word
/// sample_offset / 32).
template <class T>
void pack_block(const GenotypeChunkView& b, int shift, std::vector<std::uint64_t>& out) {
  const std::int64_t nw = packed_words(shift + b.samples);
  out.assign(static_cast<std::size_t>(b.variants * nw), 0);
  const int ploidy = static_cast<int>(b.ploidy);
  for (std::int64_t v = 0; v < b.variants; ++v)
    for (std::int64_t w = 0; w < nw; ++w)
      out[static_cast<std::size_t>(v * nw + w)] =
          stats::packed::pack_word(b.row<T>(v), b.samples, ploidy, w, shift);
}

class PackedProduct final : public SiteProduct {
 public:
  explicit PackedProduct(const ProductContext& ctx)
      : plan_(*ctx.spec->plan),
        sinks_(ctx.spec->packed),
        samples_(ctx.spec->samples->size()),
        row_words_(packed_words(samples_)) {}

  std::unique_ptr<ProductBlock> produce(int phase, std::int64_t, std::int64_t,
                                        const GenotypeChunkView& view, unsigned) override {
    if (phase != 0) return nullptr;
    auto out = std::make_unique<VectorBlock<std::uint64_t>>();
    out->sample_offset = view.sample_offset;
    if (!with_element_type(view.elem_bytes, [&](auto t) {
          pack_block<decltype(t)>(view, static_cast<int>(view.sample_offset % 32), out->data);
        }))
      throw Error("packed genotypes: unsupported genotype width");
    return out;
  }

  void merge(int, std::int64_t u, std::int64_t block, ProductBlock& in) override {
    auto& b = static_cast<VectorBlock<std::uint64_t>&>(in);
    const std::int64_t rows = plan_.units[static_cast<std::size_t>(u)].size();
    if (block == 0) unit_.assign(static_cast<std::size_t>(rows * row_words_), 0);
    // OR the block's words into the unit's rows.
    stats::haplo::or_rows(unit_, row_words_, b.data, rows, b.sample_offset / 32);
  }

  void finish(int, std::int64_t u, UnitOutput&) override {
    const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(u)];
    const PackedGenotypeView view = packed_unit_view(unit_.data(), unit, samples_, row_words_);
    for (PackedSink* s : sinks_) s->host_unit(u, view);
  }

 private:
  const vcz::ChunkPlan& plan_;
  const std::vector<PackedSink*>& sinks_;
  const std::int64_t samples_, row_words_;
  std::vector<std::uint64_t> unit_;
};

}  // namespace

std::unique_ptr<SiteProduct> make_packed_product(const ProductContext& ctx) {
  return std::make_unique<PackedProduct>(ctx);
}

}  // namespace vczstats::backend
