#pragma once
// The distributed driver: the same statistics over many ranks, with the output of one process.
// The ranks are MPI's (one process each) or a process's threads, one per GPU (thread_ranks.hpp).
//
//   (with Hooks::whole_plan, every rank runs the whole plan instead: steps 1 and 2 are skipped)
//   1. rank 0 weighs the plan's units (compressed genotype bytes, shares.hpp) and broadcasts
//      contiguous shares of whole units, one per rank;
//   2. each rank summarises the sites of its share; the summaries are all-gathered and each rank
//      folds those before it into its site cursor, and begins its statistics there;
//   3. each rank runs the normal engine (vczstats::compute) over its share, on its own GPU or its
//      share of the node's cores, streaming the rows its statistics finish (rank 0 writes its own
//      at once, the others keep theirs, spilling to a temporary file past 64 MiB);
//   4. rank 0 takes the other ranks' saved states and rows in rank order: it merges each state
//      into its statistics, writes what the merge finished, then that rank's rows. The caller
//      then finishes the statistics on rank 0.
// Floating-point sums are exact (stats::ExactSum) and shares are whole units, so the output is
// byte-identical for any number of ranks. Errors follow ranks.hpp: any rank's error stops all.
// Generic over Statistic: anything with save/load/merge runs here.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dist/ranks.hpp"
#include "vczstats/archive.hpp"
#include "vczstats/query.hpp"
#include "vczstats/run.hpp"
#include "vczstats/statistic.hpp"

namespace vczstats::dist {

/// @brief Builds statistic @p i of a run afresh (rank 0 loads the other ranks' states into it).
using StatisticFactory = std::function<std::shared_ptr<Statistic>(std::size_t i)>;

/// @brief How the caller streams rows.
struct Hooks {
  PassNeeds needs;  ///< variant fields unit_rows reads, besides the statistics'
  /// Every rank, after each unit (calling thread): encode the rows the statistics finished
  /// (take_rows) into @p out, in the caller's own format.
  std::function<void(const UnitData& unit, ByteWriter& out)> unit_rows;
  /// Rank 0: write rows unit_rows encoded (on any rank), in output order.
  std::function<void(std::span<const std::byte> rows)> write_rows;
  /// Rank 0: after merging the next rank's states, before writing that rank's rows: write the
  /// rows the merge finished (take_rows of the statistics).
  std::function<void()> after_merge;
  /// Every rank runs the whole plan, rather than a share of its units (the matrix family's
  /// stripes: each rank's statistics ask for other cells); no site cursor (statistics begin at
  /// the first site), and the ranks' states merge as usual.
  bool whole_plan = false;
};

/// @brief What one rank did (for -v).
struct RankReport {
  int rank = 0;
  std::string host;
  std::int64_t first_unit = 0, end_unit = 0;  ///< its share of the plan's units
  std::int64_t weight = 0;                    ///< the share's weight (unit_weights)
  double cursor_seconds = 0;                  ///< summarising its sites, and the all-gather
  double settle_seconds = 0;  ///< Statistic::settle after its units (the walks across its edges)
  double wait_seconds = 0;    ///< after its computation, for the slowest rank
  RunStats run;               ///< its computation
};

/// @brief What a distributed run did.
struct Report {
  std::vector<RankReport> ranks;  ///< rank 0: every rank's; others: their own
  double merge_seconds = 0;       ///< rank 0: receiving, merging and writing the others' parts
  double wall_seconds = 0;        ///< the whole run on this rank
  RunStats total;                 ///< rank 0: the ranks' stage times, bytes and calls added up
};

/// @brief Run @p statistics (built from @p q on every rank, not begun) over @p q across the
/// ranks. Afterwards rank 0's statistics hold the merged state of the whole plan: take their
/// remaining rows and finish() them there. @throws Stopped when another rank failed, and what
/// compute() throws.
Report compute(Ranks& ranks, const Query& q, std::span<Statistic* const> statistics,
               const StatisticFactory& fresh, const RunOptions& run, const Hooks& hooks);

/// @brief The query's count filters (vczstats/filters.hpp) applied with one counting pass split
/// over the ranks: each rank counts a contiguous share of the plan's units (balanced by selected
/// rows) on its CPU threads, and the rows that pass are all-gathered (a bit each), so that every
/// rank holds the plan apply_count_filters gives in one process. Collective.
/// @throws Stopped when another rank failed, and what apply_count_filters throws.
void apply_count_filters(Ranks& ranks, Query& q, const RunOptions& run);

/// @brief The run options of this rank: without -t, the node's cores shared among its ranks; a
/// GPU asked for without an index (`gpu`, `auto`) is device local_rank mod the node's GPUs.
RunOptions rank_run_options(RunOptions run, const Ranks& ranks, bool threads_given,
                            bool device_index_given);

}  // namespace vczstats::dist
