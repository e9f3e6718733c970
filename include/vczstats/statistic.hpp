#pragma once
/// @file statistic.hpp
/// @brief The light level of every statistic: an object fed, in plan order, with the finished
/// heavy-pass output of each work unit, whose state merges with the next partition's and
/// finishes into a Table.
//
// Life of a statistic over one run (compute() in compute.hpp drives it):
//   begin(cursor)                 the sites before this partition (default: none)
//   accumulate(unit) × units      in plan order, on one thread
//   accumulate_samples(sums)      once, for per-sample statistics
//   accumulate_pairs(batch)       variant-pair family: each unit's pairs, then a final batch
//   accumulate_sample_matrix(s)   once, for the matrix family (sums over pairs of samples)
//   take_rows()                   any time: rows that are final, to stream large outputs
//   merge(next partition)         partitions in order (MPI ranks), associative; save() and
//                                 load() carry a partition's state to another process
//   finish()                      the remaining rows

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vczstats/afdist.hpp"
#include "vczstats/archive.hpp"
#include "vczstats/backend.hpp"
#include "vczstats/counts.hpp"
#include "vczstats/packed.hpp"
#include "vczstats/products.hpp"
#include "vczstats/sample_matrix.hpp"
#include "vczstats/sample_stats.hpp"
#include "vczstats/table.hpp"
#include "vczstats/variant_pairs.hpp"
#include "vczstats/variants.hpp"
#include "vczstats/windows.hpp"

namespace vczstats {

/// @brief What a statistic needs from the heavy pass and the variant fields.
struct PassNeeds {
  bool counts = false;       ///< allele counts per site and population (stats::AlleleCountsPass)
  bool tallies = false;      ///< complete diploid tallies per site and population
  bool sample_sums = false;  ///< per-sample sums (a second pass over each unit)
  bool positions = false;    ///< variant contig and position
  bool alleles = false;      ///< variant_allele (number of alleles, REF length)
  bool ids = false;          ///< variant_id
  bool ancestral = false;    ///< ancestral allele index per site (Query::ancestral)
  bool packed = false;       ///< packed genotypes of every unit on the host (UnitData::packed)
  /// The keyed products of every unit (products.hpp; UnitData::product), one need per key:
  /// the phased haplotypes (kPhasedHaplotypes), the afdist counts of a method
  /// (stats::kAfdistCounts).
  std::vector<ProductNeed> products;
  /// The first and last site of each group (Query::data_spans): read before the pass, so that
  /// its reads do not take the chunks the pass has asked a remote store for ahead.
  bool data_spans = false;

  /// @brief Ask for the keyed product of @p need (once per key; see operator|).
  PassNeeds& need(ProductNeed need);
  /// @brief Whether the keyed product @p key is asked for.
  bool wants(const ProductKey& key) const;
  /// @brief Everything either needs. @throws UsageError when both need one keyed product with
  /// different parameters.
  PassNeeds operator|(const PassNeeds& o) const;
};

/// @brief One work unit's finished heavy pass, as the light level sees it.
struct UnitData {
  std::int64_t index = 0;               ///< unit index in the plan
  const vcz::WorkUnit* unit = nullptr;  ///< rows [begin, end) and their mask
  stats::CountsLayout layout;
  std::span<const std::int32_t> counts;  ///< rows × layout.site_width() (when asked)
  /// rows × pops × (2 alleles + 1) (when asked): per population, each allele's copies and
  /// heterozygous carriers among complete diploid calls, then the number of such calls
  std::span<const std::int32_t> tallies;
  const vcz::VariantBlock* variants = nullptr;  ///< rows (the fields asked for)
  std::span<const int> ancestral;               ///< rows (when asked): allele index, -1 unknown
  const PackedGenotypeView* packed = nullptr;   ///< rows, host words (when asked)
  /// The unit's keyed products (when asked; none when no pass ran): read them with product().
  std::span<const ProductSlot> products;

  /// @brief The unit's output of the keyed product @p key (rows of the unit), or null when it has
  /// none: not asked for, or no pass ran (an empty plan or no selected sample). @throws Error
  /// when the product's output is not a T.
  template <class T>
  const T* product(const ProductKey& key) const {
    return find_product<T>(products, key);
  }
  std::int64_t rows() const { return unit->size(); }
  /// @brief Whether row @p r is selected (the unit's mask).
  bool selected(std::int64_t r) const {
    return unit->mask.empty() || unit->mask[static_cast<std::size_t>(r)] != 0;
  }
  /// @brief The counts of population @p pop at row @p r.
  const std::int32_t* site(std::int64_t r, int pop = 0) const {
    return counts.data() + r * layout.site_width() + std::int64_t{pop} * layout.width();
  }
  /// @brief The tallies of population @p pop at row @p r.
  const std::int32_t* site_tallies(std::int64_t r, int pop) const {
    const std::int64_t w = 2 * std::int64_t{layout.alleles} + 1;
    return tallies.data() + (r * layout.pops + pop) * w;
  }
};

/// @brief A statistic's light level (see the file comment).
class Statistic {
 public:
  virtual ~Statistic() = default;
  /// @brief A short name for messages ("diversity").
  virtual std::string name() const = 0;
  virtual PassNeeds needs() const = 0;
  /// @brief The backend compute() chose (vczstats/backend.hpp), before the first unit (default:
  /// ignored): a statistic with device work of its own asks it for that work.
  virtual void attach(const Backend& backend) { (void)backend; }
  /// @brief Start a partition whose sites follow those summarised by @p cursor.
  virtual void begin(const stats::SiteCursor& cursor) { (void)cursor; }
  /// @brief Reduce one unit's heavy-pass output (units in plan order).
  virtual void accumulate(const UnitData& unit) { (void)unit; }
  /// @brief Per-sample sums of the partition, in selection order (needs().sample_sums).
  virtual void accumulate_samples(std::span<const stats::SampleSums> sums) { (void)sums; }
  /// @brief Variant-pair family (ld, prune): the pairs of nearby variants the heavy pass
  /// evaluates for this statistic (variant_pairs.hpp), or null.
  virtual const PairRequest* pair_request() const { return nullptr; }
  /// @brief Variant-pair family: the pass's batch of each unit in plan order, then a final one.
  virtual void accumulate_pairs(PairBatch&& batch) { (void)batch; }
  /// @brief Matrix family: the sums over pairs of samples the heavy pass accumulates for this
  /// statistic (sample_matrix.hpp), or null.
  virtual const SampleMatrixRequest* sample_matrix() const { return nullptr; }
  /// @brief Matrix family: the partition's sums, once after its pass.
  virtual void accumulate_sample_matrix(SampleMatrixSums&& sums) { (void)sums; }
  /// @brief Remove and return the rows no later site can change (to stream large outputs).
  virtual Table take_rows() { return {}; }
  /// @brief After the partition's last unit, before save() or merge(): finish what this
  /// partition can finish alone, reading beyond its edges from the store where it must (the
  /// selection scans' walks that cross an edge). The MPI driver calls it on every rank, so that
  /// this work runs on all of them at once rather than on rank 0 after the merge. Default: none.
  virtual void settle() {}
  /// @brief Absorb @p later, the next partition of the same statistic (same query and options,
  /// begun at this partition's end). @throws Error when it is another statistic.
  virtual void merge(Statistic& later) = 0;
  /// @brief The rows left, after the last partition.
  virtual Table finish() = 0;
  /// @brief Write the partition's state, for merge() in another process (MPI rank 0).
  virtual void save(ByteWriter& w) const = 0;
  /// @brief Replace the state with one that save() wrote (same query and options).
  /// @throws FormatError when the bytes are not such a state.
  virtual void load(ByteReader& r) = 0;
};

}  // namespace vczstats
