#pragma once
/// @file query.hpp
/// @brief What a computation reads: the store, the selected variants (a chunk plan), samples
/// and populations, and how sites are grouped into windows (regions, windows, accessible mask,
/// ancestral alleles). Built once and shared by every statistic of a run.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vczstats/ancestral.hpp"
#include "vczstats/filters.hpp"
#include "vczstats/populations.hpp"
#include "vczstats/site_expression.hpp"
#include "vczstats/vcz.hpp"
#include "vczstats/windows.hpp"

namespace vczstats {

/// @brief How windows are chosen (at most one kind).
struct WindowOptions {
  std::int64_t size = 0;      ///< --window-size: bp windows
  std::int64_t step = 0;      ///< --window-step (0: size)
  std::int64_t variants = 0;  ///< --window-variants: windows of N consecutive sites
  std::string file;           ///< --windows-file: BED or CHROM BEG END
  /// --window-span: where bp windows (and the one window of a group) start and end
  stats::WindowSpan span = stats::WindowSpan::Data;
};

/// @brief Everything a query is built from (the CLI's common options, or Python's arguments).
struct QueryOptions {
  std::string store;                 ///< directory, .zip, or URL (http(s)://, s3://, gs://)
  zarr::StoreOptions store_options;  ///< remote stores: endpoint, credentials, cache, retries
  std::string regions;               ///< -r: chr, chr:pos, chr:beg-end, chr:beg-, comma-separated
  std::string regions_file;          ///< -R
  vcz::RegionOverlap overlap = vcz::RegionOverlap::Record;
  std::vector<std::string> samples;  ///< -s names; a leading '^' on the first excludes
  std::string samples_file;          ///< -S
  bool force_samples = false;        ///< ignore requested samples absent from the store
  std::string pops_file;             ///< -P: sample, population (see read_populations_file)
  std::string pop_column;            ///< --pop-column: the header's population column
  /// Populations given in memory (sample, population), instead of a file.
  std::vector<std::pair<std::string, std::string>> pops;
  WindowOptions windows;
  std::string ancestral = "ref";  ///< ref, aa or an ancestral FASTA
  std::string accessible;         ///< accessibility mask (BED or CHROM BEG END)
  /// Site filters (filters.hpp): those of the variant metadata are applied by make_query, those
  /// of the genotype counts by compute() or apply_count_filters (prepare_count_filters in
  /// compute.hpp chooses).
  VariantFilterOptions filters;
};

/// @brief The accessible bases of each contig (merged, sorted intervals), or everything.
class AccessibleMask {
 public:
  AccessibleMask() = default;
  /// @brief Read @p path (empty: no mask). @throws IoError, UsageError.
  AccessibleMask(const vcz::VczStore& store, const std::string& path);
  bool active() const { return active_; }
  bool contains(std::int32_t contig, std::int64_t pos) const;
  /// @brief Bases of [start, end] that are accessible (all of them without a mask).
  double length(std::int32_t contig, std::int64_t start, std::int64_t end) const;

 private:
  bool active_ = false;
  std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> intervals_;
};

namespace detail {
/// @brief The first and last windowed site of each group (window span "data"), computed once
/// per query when a SiteFilter first needs them, over the plan make_query built: copies of the
/// query whose plan is a partition of it (MPI ranks, tests) share the spans of the whole run.
struct DataSpans {
  std::once_flag once;
  std::optional<vcz::ChunkPlan> plan;  ///< the plan the spans are of (empty: the query's own)
  /// By group key (contig index, or region index with regions): first, last (first > last:
  /// no site).
  std::vector<std::pair<std::int64_t, std::int64_t>> by_key;
  bool computed = false;        ///< by_key is filled
  bool count_filtered = false;  ///< by_key is that of the plan once its count filters apply
};
}  // namespace detail

/// @brief A built query.
struct Query {
  vcz::VczStore store;
  vcz::ChunkPlan plan;
  vcz::SampleSelection samples;
  vcz::Populations pops;             ///< one population "all" without -P
  std::vector<vcz::Region> regions;  ///< as given (-r or -R), in order; empty: whole store
  vcz::RegionOverlap overlap = vcz::RegionOverlap::Record;
  WindowOptions window_options;
  stats::WindowSpec windows;
  std::shared_ptr<const AccessibleMask> accessible;  ///< never null
  std::string accessible_path;
  std::string ancestral = "ref";
  std::vector<std::string> warnings;  ///< e.g. regions on contigs the store lacks
  vcz::SetupTimes setup;              ///< what building it took
  /// Filled on first use (data_spans()); shared by copies of the query.
  std::shared_ptr<detail::DataSpans> data_span_cache = std::make_shared<detail::DataSpans>();
  VariantFilterOptions filters;        ///< the site filters (removed rows are masked in plan)
  bool count_filters_applied = false;  ///< apply_count_filters has masked the plan
  std::int64_t unfiltered_sites = 0;  ///< selected variants before the site filters
  /// filters.include/exclude parsed and bound to the store (null: none)
  std::shared_ptr<const SiteExpression> expression;
  /// An --extract list (extract_variants, vczstats/matrix.hpp) given while the count filters
  /// were pending: applied right after them (apply_count_filters), as plink orders the two.
  std::string pending_extract;

  /// @brief Whether the expression reads genotype counts (it is applied with the count filters).
  bool expression_reads_counts() const { return expression && expression->needs().counts; }
  /// @brief Whether the count filters still have to be applied (apply_count_filters).
  bool count_filters_pending() const {
    return (filters.counts() || expression_reads_counts()) && !count_filters_applied;
  }

  /// @brief The first and last windowed site of each group (reads the positions of the plan
  /// once). @throws IoError, FormatError.
  const std::vector<std::pair<std::int64_t, std::int64_t>>& data_spans() const;

  /// @brief The index of population @p name. @throws UsageError naming @p option.
  int population(const std::string& name, const char* option) const;
  /// @brief Populations named in a comma-separated list of exactly @p expected names.
  std::vector<int> population_list(const std::string& spec, std::size_t expected,
                                   const char* option) const;
  /// @brief Pairs "A,B;C,D" (empty: every pair in order). @throws UsageError.
  std::vector<std::pair<int, int>> population_pairs(const std::string& spec,
                                                    const char* option = "--pairs") const;
};

/// @brief Open the store and build the query. @throws UsageError, IoError, FormatError.
Query make_query(const QueryOptions& options);

/// @brief Decides which group (region or contig, see windows.hpp) a site belongs to, and
/// whether windowed statistics use it at all (a region selects it; the mask covers it).
class SiteFilter {
 public:
  /// @brief With @p raw, groups span their regions or contigs whatever the window span (used to
  /// find the data spans themselves).
  explicit SiteFilter(const Query& q, bool raw = false);
  /// @brief The group of a site, or nullopt when windowed statistics leave it out.
  std::optional<stats::WindowGroup> group(std::int32_t contig, std::int64_t pos,
                                          std::int64_t ref_length) const;
  /// @brief Whether group() needs REF's length (record overlap with regions).
  bool needs_ref_length() const { return !regions_.empty() && !pos_overlap_; }
  /// @brief Whether group() reads the query's data spans (Query::data_spans).
  bool uses_data_spans() const;

 private:
  struct Entry {
    std::int64_t start, end;
    std::size_t k;  // index in the order given
  };
  struct ContigIndex {
    std::vector<Entry> entries;         // by start
    std::vector<std::int64_t> max_end;  // running maximum of entries[0..i].end
  };
  const Query& q_;
  const vcz::VczStore& store_;
  const std::vector<vcz::Region>& regions_;
  const AccessibleMask& mask_;
  std::vector<ContigIndex> by_contig_;
  bool pos_overlap_ = false;
  bool per_contig_ = false;  // explicit windows: one group per contig
  // The data span of group @p key (read once per query).
  const std::pair<std::int64_t, std::int64_t>& span_of(std::int64_t key) const;
  bool data_span_ = false;  // groups span their sites (WindowSpan::Data, bp or group windows)
  mutable const std::vector<std::pair<std::int64_t, std::int64_t>>* spans_ = nullptr;
};

namespace detail {
/// @brief Mask the rows of @p q's plan that fail the filters of the variant metadata (called by
/// make_query). @throws FormatError naming an array the filters need that the store lacks.
void apply_metadata_filters(Query& q);
}  // namespace detail

namespace detail {
/// @brief Fill @p q's data spans (shared by its copies) with @p spans, those of its plan once
/// its count filters apply (compute()'s fused path). Returns false when they were computed
/// already (then they are left as they were).
bool set_count_filtered_data_spans(const Query& q,
                                   std::vector<std::pair<std::int64_t, std::int64_t>> spans);
}  // namespace detail

/// @brief Keep only the selected rows of @p q's plan for which @p keep(unit, row) is true (units
/// left without a row are dropped), and make the plan the one the data spans are of.
void filter_plan(Query& q, const std::function<bool(std::size_t unit, std::int64_t row)>& keep);

/// @brief A place in the plan: row @p row of unit @p unit (row 0 of unit units.size() is the
/// end).
struct PlanCut {
  std::int64_t unit = 0;
  std::int64_t row = 0;
};

/// @brief The units of @p plan between two cuts, the rows outside them masked out.
vcz::ChunkPlan partition_plan(const vcz::ChunkPlan& plan, PlanCut begin, PlanCut end);

/// @brief The state of the site stream before @p cut (positions and alleles of the selected
/// variants before it are read). A partition starting there begins its statistics with it.
stats::SiteCursor site_cursor(const Query& q, PlanCut cut);

}  // namespace vczstats
