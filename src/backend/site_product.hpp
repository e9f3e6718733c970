#pragma once
// The products of the site pass (backend/site_pass.hpp) as the CPU backend runs them: each
// per-block output of the heavy pass (allele counts, afdist counts, tallies and per-sample sums,
// packed genotypes, haplotype planes, phased haplotypes) is one SiteProduct, made from the pass's
// spec by the one registration list (make_cpu_site_products, backend/cpu/site_products.cpp).
// The pass loops over the products and names none of them:
//
//   producer thread, per item       product.produce(phase, unit, block, view, worker) → a block
//   consumer thread, blocks in order product.merge(phase, unit, block, that block)
//   consumer, after a unit's phase  product.finish(phase, unit, out): into the unit's output
//                                   (UnitOutput) or to a sink, before the unit is handed over
//
// A product with two phases (the per-sample sums) gets a second read of each unit, started once
// every product has finished the unit's phase 0. No CUDA headers here.

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/site_pass.hpp"

namespace vczstats::stream {
class GenotypeReader;
}

namespace vczstats::backend {

/// @brief One product's output of one work item (a unit's sample block), opaque to the pass.
struct ProductBlock {
  virtual ~ProductBlock() = default;
};

/// @brief A product block that is one vector (the common case).
template <class T>
struct VectorBlock final : ProductBlock {
  std::vector<T> data;
  std::int64_t sample_offset = 0;  ///< the block's first sample in the selection
};

/// @brief What every product sees of the pass.
struct ProductContext {
  const SitePassSpec* spec = nullptr;
  const stream::GenotypeReader* reader = nullptr;  ///< ploidy, sample blocks
  unsigned workers = 1;                            ///< producer threads (worker indices < this)
  /// Per-sample totals of the run in selection order (when the caller asked for them).
  std::vector<stats::SampleSums>* sample_sums = nullptr;
};

/// @brief One per-block product of the site pass on CPU threads (see the file comment).
class SiteProduct {
 public:
  virtual ~SiteProduct() = default;
  /// @brief Phases per unit (2: a second read of each unit after every product's phase 0).
  virtual int phases() const { return 1; }
  /// @brief Producer thread @p worker, for item (@p unit, @p block) of @p phase: the block's
  /// output, or null when this product has none in that phase.
  virtual std::unique_ptr<ProductBlock> produce(int phase, std::int64_t unit, std::int64_t block,
                                                const GenotypeChunkView& view, unsigned worker) = 0;
  /// @brief Consumer thread: add @p in, block @p block of @p unit, to the unit's state (blocks
  /// in order, block 0 first).
  virtual void merge(int phase, std::int64_t unit, std::int64_t block, ProductBlock& in) = 0;
  /// @brief Consumer thread, after the last block of @p unit's @p phase: hand the unit's state
  /// over, into @p out (delivered after every product's finish) or to a sink.
  virtual void finish(int phase, std::int64_t unit, UnitOutput& out) = 0;
};

/// @brief The registration list: the products @p ctx.spec asks for, in the order they finish.
std::vector<std::unique_ptr<SiteProduct>> make_cpu_site_products(const ProductContext& ctx);

}  // namespace vczstats::backend
