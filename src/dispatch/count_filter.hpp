#pragma once
// The count filters of a query (filters.hpp) decided row by row from the allele counts of all
// selected samples as one population: by the counting pass of apply_count_filters
// (dispatch/filters.cpp), and inside compute()'s own pass when the run's statistics need only
// per-site products of that pass (the fused path, dispatch/compute.cpp).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "stats/site_fields.hpp"
#include "vczstats/counts.hpp"
#include "vczstats/query.hpp"
#include "vczstats/run.hpp"
#include "vczstats/statistic.hpp"

namespace vczstats::dispatch {

/// Decides which selected rows of a unit pass the query's count filters (and its -i/-e
/// expression when that reads counts; its other fields are read unit by unit from the store).
class CountFilter {
 public:
  explicit CountFilter(const Query& q);
  /// keep[r] for the rows of @p unit: selected and passing. @p counts: rows × (alleles +
  /// CountsLayout::kExtra), the counts of every selected sample. With @p threads > 1, blocks of
  /// rows are decided on up to that many threads of the shared pool (the exact HWE test of
  /// 10^4 samples costs microseconds a site: a GPU pass's consumer would wait on it).
  void decide(const vcz::WorkUnit& unit, std::span<const std::int32_t> counts, int alleles,
              std::vector<std::uint8_t>& keep, unsigned threads = 1);

 private:
  void decide_rows(const vcz::WorkUnit& unit, std::span<const std::int32_t> counts, int alleles,
                   std::int64_t begin, std::int64_t end, std::vector<std::uint8_t>& keep);
  const VariantFilterOptions& f_;
  const SiteExpression* expression_;
  std::optional<stats::SiteFieldReader> fields_;
};

/// Whether every selected sample of @p q is in exactly one population (then the populations'
/// counts add up to the counts of all selected samples).
bool populations_partition(const Query& q);

/// The counts of all populations of each row added up: @p out gets rows × (alleles + kExtra).
void total_counts(std::span<const std::int32_t> counts, const stats::CountsLayout& layout,
                  std::int64_t rows, std::vector<std::int32_t>& out);

/// Which selected rows of the units @p units of @p q's plan pass the count filters: one
/// counting pass over those units alone (on the CPU), keep[i] for units[i].
std::vector<std::vector<std::uint8_t>> count_filter_units(const Query& q,
                                                          std::span<const std::int64_t> units,
                                                          const RunOptions& run);

/// @throws FormatError when @p q's store has no genotype calls to count.
void require_genotypes_for_count_filters(const Query& q);

/// The end of apply_count_filters: @p q's plan keeps the rows that @p keep marks (per unit of
/// the plan, per row), its count filters are marked applied, and a warning is added when none
/// is left.
void keep_counted_rows(Query& q, const std::vector<std::vector<std::uint8_t>>& keep);

/// The warning of a run whose count filters keep none of the @p selected variants of @p q.
std::string no_sites_kept(const Query& q, std::int64_t selected);

/// The data spans (Query::data_spans) of @p q's plan once its count filters are applied,
/// counting only the units at either end of each group (until a row passes).
std::vector<std::pair<std::int64_t, std::int64_t>> filtered_data_spans(const Query& q,
                                                                       const RunOptions& run);

}  // namespace vczstats::dispatch
