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
/// partition; finish() them afterwards. Results do not depend on threads, device or how the
/// plan's work units are shared out (partitions, MPI ranks); sums kept per unit in double
/// (StagedSum) can differ in their last digits when the units themselves are cut differently.
/// A query whose count filters are pending is run with them applied inside this pass when
/// fuses_count_filters() says so (the same results as apply_count_filters first); any other
/// query with pending count filters is refused.
/// @throws UsageError (e.g. --device gpu without a GPU), FormatError, IoError, CudaError.
RunStats compute(const Query& q, std::span<Statistic* const> statistics, const RunOptions& run,
                 const ComputeHooks& hooks = {});

/// @brief Apply the query's count filters (--maf, --max-maf, --mac, --max-mac, --geno, --hwe:
/// filters.hpp) to its plan: one counting pass over the genotypes of the plan's sites and the
/// selected samples (on the device @p run selects), whose failing rows are masked. Call it once,
/// after make_query and before partitioning the plan (MPI ranks), or let prepare_count_filters
/// choose: compute() refuses a query whose count filters are pending unless it fuses them.
/// Nothing is read when the query has no count filter.
/// @throws FormatError for a sites-only store, IoError, UsageError, CudaError.
void apply_count_filters(Query& q, const RunOptions& run);

/// @brief Whether compute() applies @p q's pending count filters inside its own pass for
/// @p statistics (with @p extra, what ComputeHooks::needs reads), with no counting pass first:
/// when every statistic needs the allele counts and nothing else of the pass but per-site
/// tallies and variant fields (no afdist, per-sample sums, packed genotypes or haplotypes,
/// variant pairs or sample matrices), and every selected sample is in exactly one population (their
/// counts add up to those of all selected samples, which the filters read).
bool fuses_count_filters(const Query& q, std::span<Statistic* const> statistics,
                         const PassNeeds& extra = {});

/// @brief Get @p q's pending count filters ready for a run of @p statistics in one process:
/// left pending when compute() fuses them (fuses_count_filters), applied by apply_count_filters
/// otherwise (under MPI, the Runner splits that counting pass over the ranks instead). Returns
/// whether @p q's plan changed (then statistics built from @p q must be built again).
/// @throws as apply_count_filters.
bool prepare_count_filters(Query& q, std::span<Statistic* const> statistics, const RunOptions& run,
                           const PassNeeds& extra = {});

/// @brief compute() for one statistic, returning its whole table.
Table compute_table(const Query& q, Statistic& statistic, const RunOptions& run,
                    RunStats* stats = nullptr);

}  // namespace vczstats
