#pragma once
// The rows the haplotype statistics work on: the usable sites of one haplotype set (a
// population, or two pooled), one bit per haplotype ("carries the higher of the site's two
// alleles"), with their positions. Rows come from the heavy pass (accumulate) and, for what a
// partition lacks, from the store itself (StoreRows: the same decoding, phasing check and
// packing as the CPU backend). RowSource keeps a contiguous run of them and extends it at
// either end on demand. Definitions: tests/tools/POPGEN.md §11.1.

#include <cstdint>
#include <istream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stats/haplo_kernel.hpp"
#include "stream/genotype_reader.hpp"
#include "stream/phased_reader.hpp"
#include "vczstats/ancestral.hpp"
#include "vczstats/packed_haplotypes.hpp"
#include "vczstats/query.hpp"
#include "vczstats/statistic.hpp"
#include "vczstats/variants.hpp"

namespace vczstats::stats::haplo {

/// A set of haplotypes of the selection: runs [begin, end) of haplotype indices (s * ploidy + j).
struct HapSet {
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;
  std::int64_t n = 0;    ///< haplotypes
  std::int64_t n_a = 0;  ///< pooled pair: the first n_a are population A (else n)
};

/// The haplotypes of population @p pop of @p q.
HapSet population_set(const Query& q, int pop);
/// Populations @p a then @p b pooled.
HapSet pair_set(const Query& q, int a, int b);

/// Which usable sites a statistic keeps (every one is complete with at most two alleles).
struct RowFilter {
  double maf = 0;            ///< both alleles at least this frequent (0: monomorphic kept)
  bool polymorphic = false;  ///< two alleles present
};

/// A genetic map: plink .map rows (chrom, id, cM, bp), or a HapMap-style table (a header
/// `Chromosome Position(bp) Rate(cM/Mb) Map(cM)`, then chrom, bp, rate, cM: the HapMap II and
/// 1000 Genomes genetic_map files; the rate is checked to be a number and not used), linearly
/// interpolated between its positions and extrapolated with the rate of the first or last
/// interval. A contig missing from the map is looked up with "chr" added or removed. A map of
/// one region without a chromosome column (a header whose first name is the position and whose
/// last is the map: moments.LD's `pos Map(cM)`, HapMap II's `position COMBINED_rate(cM/Mb)
/// Genetic_Map(cM)`) serves the one contig a run reads; a second contig is an error.
class GeneticMap {
 public:
  /// @throws IoError, UsageError naming the file and line (a malformed line or header,
  /// positions not increasing).
  explicit GeneticMap(const std::string& path);
  /// @brief The map in @p in, named @p path in errors (the fuzz target's way in).
  GeneticMap(std::istream& in, const std::string& path);
  /// @throws UsageError when the map has fewer than two positions on @p contig.
  double at(const std::string& contig, std::int64_t pos) const;

 private:
  void parse(std::istream& in);
  const std::vector<std::pair<std::int64_t, double>>* points(const std::string& contig) const;

  std::string path_;
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> points_;
  bool one_region_ = false;           ///< no chromosome column: points_[""] for one contig
  mutable std::mutex bound_mutex_;    ///< guards bound_contig_
  mutable std::string bound_contig_;  ///< the contig a one-region map was first asked for
};

/// One usable row's description.
struct RowInfo {
  std::int64_t variant = 0;  ///< global index
  std::int32_t contig = 0;
  std::int64_t pos = 0;
  double gpos = 0;
  std::int32_t lo = 0, hi = 0;  ///< the alleles present (lo == hi: one)
  std::int32_t ancestral = 0;   ///< allele index, -1 unknown
  std::int64_t carriers = 0;    ///< haplotypes carrying hi (bit 1)
  std::int64_t carriers_a = 0;  ///< among population A (pooled pairs)
  std::int32_t ref_length = 1;  ///< length of REF (when the alleles were read)
};

/// Turns heavy-pass planes into the rows of one set.
class RowExtractor {
 public:
  RowExtractor(HapSet set, RowFilter filter, std::shared_ptr<const GeneticMap> map,
               std::shared_ptr<const std::vector<std::string>> contigs);
  const HapSet& set() const { return set_; }
  std::int64_t words() const { return words_; }
  /// The usable row of @p view's row @p r, or nullopt. Writes its bits to @p bits (words()).
  std::optional<RowInfo> extract(const PhasedHaplotypeView& view, std::int64_t r,
                                 const vcz::VariantBlock& vb, int ancestral,
                                 std::uint64_t* bits) const;
  /// As above with the caller's scratch (words()): safe from several threads at once.
  std::optional<RowInfo> extract(const PhasedHaplotypeView& view, std::int64_t r,
                                 const vcz::VariantBlock& vb, int ancestral, std::uint64_t* bits,
                                 std::uint64_t* scratch) const;

 private:
  HapSet set_;
  RowFilter filter_;
  std::shared_ptr<const GeneticMap> map_;
  std::shared_ptr<const std::vector<std::string>> contigs_;
  std::int64_t words_ = 0;
  mutable std::vector<std::uint64_t> scratch_;
};

/// One unit of the store's plan, decoded and packed as the heavy pass would.
struct StoreUnit {
  std::vector<std::uint64_t> words;
  PhasedHaplotypeView view;
  vcz::VariantBlock variants;
  std::vector<int> ancestral;  ///< empty: REF
  const vcz::WorkUnit* unit = nullptr;
};

/// Reads units of the query's whole selection (q.store.plan(q.regions, q.overlap)), for the
/// rows a partition lacks. Not thread-safe (one per statistic).
class StoreRows {
 public:
  explicit StoreRows(const Query& q);
  ~StoreRows();
  const vcz::ChunkPlan& plan() const { return plan_; }
  /// The unit holding variant @p v, or the first after it (units.size() when none).
  std::int64_t unit_at(std::int64_t v) const;
  /// The variant fields of unit @p u (contig and positions; alleles when polarising or when
  /// regions select by record overlap).
  const vcz::VariantBlock& variants(std::int64_t u);
  /// Unit @p u decoded (phasing checked) and packed. @throws FormatError, IoError.
  const StoreUnit& read(std::int64_t u);

 private:
  const Query& q_;
  vcz::ChunkPlan plan_;
  int planes_ = 2;
  std::unique_ptr<vcz::VariantReader> variants_reader_;
  std::unique_ptr<vcz::AncestralAlleles> polarise_;
  std::unique_ptr<stream::GenotypeReader> genotypes_;
  std::unique_ptr<stream::PhasedReader> phased_;
  std::int64_t cached_ = -1, cached_variants_ = -1;
  StoreUnit unit_;
  vcz::VariantBlock vb_;
};

/// A contiguous run of the rows of one set (in the selection's order), fed by accumulate()
/// at the back and extended from the store at either end.
class RowSource {
 public:
  RowSource(const Query& q, RowExtractor extractor, std::shared_ptr<StoreRows> store);

  const RowExtractor& extractor() const { return extractor_; }
  std::int64_t size() const { return static_cast<std::int64_t>(info_.size()) - head_; }
  const RowInfo& info(std::int64_t i) const { return info_[static_cast<std::size_t>(head_ + i)]; }
  const std::uint64_t* bits(std::int64_t i) const {
    return bits_.data() + (head_ + i) * extractor_.words();
  }
  const std::int64_t* positions() const { return pos_.data() + head_; }
  const double* genetic() const { return gpos_.data() + head_; }
  /// The row of variant @p v (binary search), or -1.
  std::int64_t find(std::int64_t v) const;

  /// Append the usable rows of a streamed unit (selected rows only).
  void append(const vczstats::UnitData& u);
  /// Rows appended from the stream and not yet taken: the range [first, size()).
  std::int64_t fresh_from() const { return fresh_; }
  void take_fresh() { fresh_ = size(); }

  /// Whether row @p i is the first (last) usable row of its contig in the whole selection;
  /// false when unknown.
  bool contig_first(std::int64_t i) const;
  bool contig_last(std::int64_t i) const;
  /// The first (last) row of the run that is on row @p i's contig.
  std::int64_t contig_begin(std::int64_t i) const;
  std::int64_t contig_end(std::int64_t i) const;  ///< one past

  /// Read rows before the first row from the store, until @p want rows of its contig lie
  /// before row @p i or its contig starts; returns the rows added in front (indices shift).
  std::int64_t extend_back(std::int64_t i, std::int64_t want);
  /// Read rows after the last row from the store, until @p want rows of row @p i's contig lie
  /// after it or its contig ends. Only once the stream has delivered everything.
  void extend_front(std::int64_t i, std::int64_t want);
  /// Empty the run and load the store's unit holding variant @p v (its rows of the set).
  void seek(std::int64_t v);
  /// Drop the rows before row @p i.
  void trim(std::int64_t i);

 private:
  void push(const RowInfo& info, const std::uint64_t* bits);
  void compact();
  void rebuild_runs();
  /// The contig run holding row @p i: [begin, end) in absolute indices.
  std::pair<std::int64_t, std::int64_t> run_of(std::int64_t i) const;

  const Query& q_;
  RowExtractor extractor_;
  std::shared_ptr<StoreRows> store_;
  std::vector<std::uint64_t> bits_;
  std::vector<RowInfo> info_;
  std::vector<std::int64_t> pos_;
  std::vector<double> gpos_;
  std::vector<std::int64_t> runs_;  ///< absolute index where each contig's rows begin
  std::int64_t head_ = 0, fresh_ = 0;
  bool start_known_ = false;  ///< the first row starts its contig
  bool end_known_ = false;    ///< the last row ends its contig
  std::vector<std::uint64_t> row_;
  std::vector<std::uint64_t> unit_bits_;  ///< append()'s rows before they are kept
};

/// @p v as a vector of the statistic's contig labels.
std::shared_ptr<const std::vector<std::string>> contig_names(const Query& q);

/// A kernel batch over the rows of @p rows: @p n haplotypes, the first @p n_a of population A.
BatchView batch_over(const RowSource& rows, std::int64_t n, std::int64_t n_a);

}  // namespace vczstats::stats::haplo
