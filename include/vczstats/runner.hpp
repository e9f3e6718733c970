#pragma once
/// @file runner.hpp
/// @brief One statistic computed over a query, in this process (compute.hpp) or, under MPI,
/// across the ranks of the distributed driver, with the same output: the run path that the CLI's
/// statistic commands share. Rows reach the sink's write() in output order, on the process that
/// writes (rank 0, or this process alone).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vczstats/query.hpp"
#include "vczstats/run.hpp"
#include "vczstats/statistic.hpp"
#include "vczstats/table_writer.hpp"

namespace vczstats {

namespace dist {
class Ranks;     // the ranks of a distributed run (src/dist/ranks.hpp)
class MpiRanks;  // MPI's (an MPI build's)
}  // namespace dist

/// @brief Builds the run's statistic afresh (the same query and options every time): once for
/// this process (twice when a counting pass filtered the plan), and under MPI once more on rank 0
/// for each other rank's saved state. Shared, so that the maker may keep a share of what it made:
/// the Python package's statistics are Python objects that its functions read after the run.
using StatisticMaker = std::function<std::shared_ptr<Statistic>()>;

/// @brief Cells of one output row (rows of another rank travel to rank 0 as cells).
using Cells = std::vector<std::string>;

/// @brief Where a run streams its rows. Every member may be left empty.
struct RowStream {
  PassNeeds needs;  ///< variant fields unit_rows reads, besides the statistic's
  /// After each unit, on every process: hand the rows the statistic finished (take_rows) to
  /// @p row as cells.
  std::function<void(const UnitData& unit, Statistic& statistic,
                     const std::function<void(const Cells&)>& row)>
      unit_rows;
  /// On the writing process: write one row (its own, or another rank's, in output order).
  std::function<void(const Cells&)> write;
  /// On the writing process, after it merged another rank's part and before writing that rank's
  /// rows: write the rows the merge finished (take_rows).
  std::function<void(Statistic& statistic)> after_merge;
};

/// @brief The Runner's sink of a table, as the CLI writes it (`-o`, `--format`): the rows the
/// statistic finishes after each unit, in output order, written as TSV or JSON
/// (table_writer.hpp) on the writing process, then the rest when the run is done.
///
///     TableSink table(runner.statistic(), TableWriter::to_file(stdout), "tsv");
///     if (runner.run(table.rows()).writes) table.finish(runner.statistic());
class TableSink {
 public:
  /// @p statistic: the Runner's (the columns of the rows it streams are read now). @p sink and
  /// @p format: the TableWriter's, used on the writing process only (the table is opened at its
  /// first row). @throws UsageError for a format other than tsv or json.
  TableSink(Statistic& statistic, TableWriter::Sink sink, std::string format);
  TableSink(const TableSink&) = delete;
  TableSink& operator=(const TableSink&) = delete;

  /// @brief The RowStream to hand to Runner::run (valid while this sink lives).
  RowStream rows();
  /// @brief On the writing process after the run: write the rows @p statistic finishes and
  /// close the table (in JSON with the run's note). @return the note (the table's).
  std::string finish(Statistic& statistic);

 private:
  void open(const Table& t);
  void emit(const Table& t);
  TableWriter::Sink sink_;
  std::string format_;
  Table header_;
  std::optional<TableWriter> writer_;
  std::string note_;
};

/// @brief The processes a run spreads over.
struct RunnerRanks {
  dist::Ranks* ranks = nullptr;     ///< the MPI ranks; null: this process alone
  bool device_index_given = false;  ///< MPI: every rank uses run.device.index (`gpu:N`), rather
                                    ///< than GPU local_rank mod the node's GPUs
};

/// @brief What a run did.
struct RunnerResult {
  bool writes = true;  ///< this process writes the results (false on MPI ranks but 0: done)
  RunStats stats;      ///< on the writing process: every rank's stage times, added up
  /// MPI, on rank 0: one line per rank (its share, device and times) and one for the merge,
  /// for -v; empty in one process.
  std::vector<std::string> rank_lines;
};

/// @brief One statistic, computed over a query by this process or across MPI ranks.
///
/// Under MPI every rank builds the same Runner (same query, same maker). run() splits the
/// plan's units into contiguous shares, runs each share on its rank (threads: the node's cores
/// shared among its ranks unless run.threads is set; GPU: one per rank), and merges the states
/// and rows on rank 0 in rank order, so the output is byte-identical to one process. A
/// statistic that asks for sums over pairs of samples (the matrix family) is split by rows
/// instead: every rank runs the whole plan for a stripe of the matrix's rows of about equal
/// cells (split_matrix_rows), and rank 0 places the stripes, in rank order, into the
/// statistic's sums (on the CPU every cell is one process's double whatever the stripe;
/// run_matrix_stripes below runs a matrix of several stripes).
/// Afterwards the writing process takes the remaining rows of statistic() and finishes it.
class Runner {
 public:
  /// @brief A run of the statistic @p make builds over @p q. @p q's pending count filters
  /// (filters.hpp) are got ready here (prepare_count_filters in compute.hpp): left to the run's
  /// pass when compute() fuses them with this statistic in one process, else applied now by a
  /// counting pass on the CPU with run.threads (which may add to q.warnings). @p make is called
  /// once, or twice when that filtered the plan.
  Runner(Query& q, StatisticMaker make, RunOptions run, RunnerRanks ranks = {});
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  /// @brief The statistic (before run(): e.g. to read the columns of the rows it will stream;
  /// after, on the writing process: holding the merged state of the whole plan).
  Statistic& statistic() { return *statistic_; }

  /// @brief Compute, streaming rows through @p rows. Call once.
  /// @throws what compute() throws; under MPI dist::Stopped when another rank failed.
  RunnerResult run(const RowStream& rows = {});

 private:
  /// The run as rank ranks.rank() of a distributed run (MPI's ranks, or this process's threads),
  /// with its own @p statistic (rank 0: statistic_).
  RunnerResult run_spread(dist::Ranks& ranks, const std::shared_ptr<Statistic>& statistic,
                          const RunOptions& run, const RowStream& rows);
  Query& q_;
  StatisticMaker make_;
  RunOptions run_;
  RunnerRanks ranks_;
  std::vector<int> shares_;  // several GPUs: the device of each share; else empty
  std::shared_ptr<Statistic> statistic_;
};

/// @brief Builds a matrix statistic whose sample_matrix() asks for the rows [r0, r1).
using StripeMaker = std::function<std::shared_ptr<Statistic>(std::int64_t r0, std::int64_t r1)>;

/// @brief The stripes of rows @p stripes of a matrix statistic (in row order, each a pass over
/// the store), each handed to @p write on the writing process, in order, as a statistic that
/// holds its sums (finish it there), and what each run did to @p report.
///
/// One process: a Runner per stripe. MPI with at least as many stripes as ranks: rounds of one
/// stripe per rank, each rank computing its stripe whole over every variant; rank 0 writes its
/// own as soon as it is done, then the others' in rank order (the stripes left over after the
/// last whole round, and every stripe when they are fewer than the ranks: a Runner each, whose
/// rows are split across the ranks). The cells are one process's on the CPU, so the output is
/// byte-identical. @throws what Runner throws.
void run_matrix_stripes(Query& q, const StripeMaker& make,
                        const std::vector<std::pair<std::int64_t, std::int64_t>>& stripes,
                        const RunOptions& run, RunnerRanks ranks,
                        const std::function<void(Statistic& stripe)>& write,
                        const std::function<void(const RunnerResult& run)>& report);

}  // namespace vczstats
