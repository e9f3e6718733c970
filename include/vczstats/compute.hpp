#pragma once
/// @file compute.hpp
/// @brief The one entry point of the library: run statistics over a query. The CLI, the Python
/// package and the MPI driver all call it.

#include <functional>
#include <span>

#include "vczstats/query.hpp"
#include "vczstats/run.hpp"
#include "vczstats/statistic.hpp"
#include "vczstats/table.hpp"

namespace vczstats {

/// @brief Optional callbacks of a run.
struct ComputeHooks {
  /// Called after every statistic accumulated a unit (plan order, calling thread): e.g. to
  /// stream the rows each statistic has finished, with the unit's variant fields at hand.
  std::function<void(const UnitData&)> after_unit;
  /// Variant fields after_unit reads, besides what the statistics need.
  PassNeeds needs;
};

/// @brief Read the query's plan once (one decode of the genotypes for all @p statistics),
/// run the heavy passes they need on the device run.device selects, and feed each statistic in
/// plan order. The statistics must have been begun (Statistic::begin) if the plan is a
/// partition; finish() them afterwards. Results do not depend on threads, device or chunking.
/// @throws UsageError (e.g. --device gpu without a GPU), FormatError, IoError, CudaError.
RunStats compute(const Query& q, std::span<Statistic* const> statistics, const RunOptions& run,
                 const ComputeHooks& hooks = {});

/// @brief Apply the query's count filters (--maf, --max-maf, --mac, --max-mac, --geno, --hwe:
/// filters.hpp) to its plan: one counting pass over the genotypes of the plan's sites and the
/// selected samples (on the device @p run selects), whose failing rows are masked. Call it once,
/// after make_query and before partitioning the plan (MPI ranks): compute() refuses a query whose
/// count filters are pending. Nothing is read when the query has no count filter.
/// @throws FormatError for a sites-only store, IoError, UsageError, CudaError.
void apply_count_filters(Query& q, const RunOptions& run);

/// @brief compute() for one statistic, returning its whole table.
Table compute_table(const Query& q, Statistic& statistic, const RunOptions& run,
                    RunStats* stats = nullptr);

}  // namespace vczstats
