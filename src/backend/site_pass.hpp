#pragma once
// The heavy passes of the site family as the backends run them (backend/cpu, backend/cuda): one
// read of the plan's genotypes computing every requested per-site and per-sample sum, each
// unit's output handed over in plan order. No CUDA headers here.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vczstats/afdist.hpp"
#include "vczstats/counts.hpp"
#include "vczstats/error.hpp"
#include "vczstats/packed.hpp"
#include "vczstats/packed_haplotypes.hpp"
#include "vczstats/products.hpp"
#include "vczstats/run.hpp"
#include "vczstats/sample_stats.hpp"
#include "vczstats/variants.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats::stats::haplo {
class SegmentRunner;
}
namespace vczstats::stats {
class PackedProduct;
struct PackedMatrixView;
}  // namespace vczstats::stats

namespace vczstats::backend {

/// @brief Tallies of complete diploid calls per site and population (stats/tallies_math.hpp:
/// each allele's copies, each allele's heterozygous carriers, the number of such calls), for
/// Weir & Cockerham's Fst and the per-sample sums.
struct TalliesRequest {
  const std::vector<std::int32_t>* population_of = nullptr;  ///< per selected sample
  int pops = 1;
  int alleles = 2;       ///< allele columns of the store
  bool deliver = false;  ///< hand them over with each unit (else only phase 1 uses them)
  /// @brief int32 columns per site.
  std::int64_t site_width() const { return std::int64_t{pops} * (2 * alleles + 1); }
};

/// @brief Receives every unit's packed genotypes (all selected samples, vczstats/packed.hpp) in
/// plan order, on the calling thread: the input of the matrix family, whose tile accumulators
/// plug in here.
class PackedSink {
 public:
  virtual ~PackedSink() = default;
  /// @brief CPU backend: host words, valid during the call.
  virtual void host_unit(std::int64_t unit, const PackedGenotypeView& view) = 0;
  /// @brief GPU backend: device words on device spec.device, valid for work queued on
  /// @p stream (a cudaStream_t) during the call; the buffer is reused after that work.
  virtual void device_unit(std::int64_t unit, const PackedGenotypeView& view, void* stream) = 0;
};

/// @brief Bit planes of haplotypes (the variant-pair family's --hap input): per variant row two
/// planes of words_per_plane 64-bit words over the samples × ploidy slots of the selection (slot
/// k of sample i is bit i * ploidy + k): a non-REF allele, a called allele (missing and fill
/// slots are not called). Non-owning; on the GPU backend the words are device memory.
struct PackedHaplotypeView {
  const std::uint64_t* words = nullptr;
  std::int64_t variants = 0;
  std::int64_t haplotypes = 0;
  std::int64_t words_per_plane = 0;
  std::int64_t variant_offset = 0;  ///< global index of row 0
};

/// @brief The views of a unit's rows of @p words that the packed products hand over, the same
/// on both backends (the words: host or device memory).
inline PackedGenotypeView packed_unit_view(const std::uint64_t* words, const vcz::WorkUnit& unit,
                                           std::int64_t samples, std::int64_t words_per_row) {
  PackedGenotypeView v;
  v.words = words;
  v.variants = unit.size();
  v.samples = samples;
  v.words_per_row = words_per_row;
  v.variant_offset = unit.begin;
  return v;
}
inline PackedHaplotypeView haplotype_unit_view(const std::uint64_t* words,
                                               const vcz::WorkUnit& unit, std::int64_t haplotypes,
                                               std::int64_t words_per_plane) {
  PackedHaplotypeView v;
  v.words = words;
  v.variants = unit.size();
  v.haplotypes = haplotypes;
  v.words_per_plane = words_per_plane;
  v.variant_offset = unit.begin;
  return v;
}
/// @brief The planes of the phased haplotypes (kPhasedHaplotypes) of @p store: 1 + its ALT allele
/// columns.
inline int phased_planes(const vcz::VczStore& store) {
  return std::max(vcz::store_max_alleles(store), 1);
}
inline PhasedHaplotypeView phased_unit_view(const std::uint64_t* words, const vcz::WorkUnit& unit,
                                            std::int64_t haplotypes, std::int64_t ploidy,
                                            int planes, std::int64_t words_per_plane) {
  PhasedHaplotypeView v;
  v.words = words;
  v.variants = unit.size();
  v.haplotypes = haplotypes;
  v.ploidy = static_cast<int>(ploidy);
  v.planes = planes;
  v.words_per_plane = words_per_plane;
  v.variant_offset = unit.begin;
  return v;
}

/// @brief Receives every unit's haplotype planes in plan order, on the calling thread (as
/// PackedSink does the 2-bit codes).
class HaplotypeSink {
 public:
  virtual ~HaplotypeSink() = default;
  /// @brief CPU backend: host words, valid during the call.
  virtual void host_haplotypes(std::int64_t unit, const PackedHaplotypeView& view) = 0;
  /// @brief GPU backend: device words, valid for work queued on @p stream (a cudaStream_t)
  /// during the call; the buffer is reused after that work.
  virtual void device_haplotypes(std::int64_t unit, const PackedHaplotypeView& view,
                                 void* stream) = 0;
};

/// @brief What one pass computes, and over what.
struct SitePassSpec {
  const vcz::VczStore* store = nullptr;
  int min_gq = 0, min_dp = 0;  ///< --min-gq, --min-dp (stream::GenotypeMask; GPU: host decode)
  const vcz::ChunkPlan* plan = nullptr;
  const vcz::SampleSelection* samples = nullptr;
  const RunOptions* run = nullptr;
  int device = 0;                                   ///< CUDA device index (GPU backend)
  const stats::AlleleCountsPass* counts = nullptr;  ///< allele counts per site × population
  const TalliesRequest* tallies = nullptr;  ///< complete diploid tallies per site × population
  /// Per-sample sums (missingness, homozygosity; needs tallies): a second phase per unit that
  /// reads the genotypes again with the unit's per-site weights from the tallies.
  bool sample_sums = false;
  /// The sinks of every unit's packed genotypes (variant-pair bands, matrix accumulators, the
  /// host copies of UnitData::packed), called in this order; none: no packed genotypes made.
  std::vector<PackedSink*> packed;
  /// The sinks of every unit's haplotype planes (the variant-pair bands of haplotypes), in order.
  std::vector<HaplotypeSink*> haplotypes;
  const vcz::VariantReader* variants = nullptr;  ///< fields read with each unit
  /// The keyed products of every unit (vczstats/products.hpp), one need per key: each backend's
  /// registration list makes them (make_keyed_products), each from its need and the spec.
  std::vector<ProductNeed> products;
};

/// @brief One unit's finished output, handed over in plan order.
struct UnitOutput {
  std::int64_t index = 0;
  std::span<const std::int32_t> counts;   ///< rows × counts->site_width()
  std::span<const std::int32_t> tallies;  ///< rows × tallies->site_width() (when delivered)
  std::shared_ptr<const vcz::VariantBlock> variants;  ///< when spec.variants
  /// One slot per keyed product of spec.products (its view of the unit's rows, host memory).
  std::vector<ProductSlot> products;
};
using Deliver = std::function<void(const UnitOutput&)>;

/// @brief One line of a backend's registration list of keyed products: the key and the maker of
/// the product (of that backend's product type, from its context and the need).
template <class Product, class Context>
struct KeyedFactory {
  ProductKey key;
  std::unique_ptr<Product> (*make)(const Context& ctx, const ProductNeed& need);
};

/// @brief The keyed products @p spec asks for, in the order of @p list (the order they finish a
/// unit), each made from its need. @throws Error naming a product asked for twice, or one that
/// @p list of @p backend ("the CPU backend") has no line for.
template <class Product, class Context>
std::vector<std::unique_ptr<Product>> make_keyed_products(
    const SitePassSpec& spec, const Context& ctx,
    std::span<const KeyedFactory<Product, Context>> list, const char* backend) {
  for (std::size_t i = 0; i < spec.products.size(); ++i) {
    const ProductKey& key = spec.products[i].key();
    for (std::size_t j = 0; j < i; ++j)
      if (spec.products[j].key() == key)
        throw Error("the site pass was asked for its product '" + std::string(key.name) +
                    "' twice");
    bool known = false;
    for (const auto& line : list) known = known || line.key == key;
    if (!known)
      throw Error("the site pass has no product '" + std::string(key.name) + "' on " + backend +
                  " (no line for it in the backend's registration list)");
  }
  std::vector<std::unique_ptr<Product>> products;
  for (const auto& line : list)
    for (const ProductNeed& need : spec.products)
      if (need.key() == line.key) products.push_back(line.make(ctx, need));
  return products;
}

/// @brief The pass on CPU threads. @p sample_sums (when spec.sample_sums) receives the run's
/// per-sample totals in selection order. @throws FormatError, IoError, UsageError.
void run_site_pass_cpu(const SitePassSpec& spec, const Deliver& deliver,
                       std::vector<stats::SampleSums>* sample_sums, RunStats* stats);

/// @brief The haplotype family's segment kernels on CUDA device @p device (stats/haplo_runner.hpp).
/// @throws UsageError without the CUDA backend, CudaError.
std::unique_ptr<stats::haplo::SegmentRunner> make_gpu_segment_runner(int device);

/// @brief The randomized PCA's products of @p x on CUDA device @p device
/// (stats/packed_product.hpp): its packed rows are copied to the device once.
std::unique_ptr<stats::PackedProduct> make_gpu_packed_product(const stats::PackedMatrixView& x,
                                                              int device);

/// @brief The same on CUDA device spec.device; results equal the CPU's bit for bit.
/// @throws UsageError without the CUDA backend, CudaError, FormatError, IoError.
void run_site_pass_gpu(const SitePassSpec& spec, const Deliver& deliver,
                       std::vector<stats::SampleSums>* sample_sums, RunStats* stats);

}  // namespace vczstats::backend
