#pragma once
// The one way statistic commands compute: in this process (vczstats::compute), or, under mpirun
// (processes.hpp), across the MPI ranks through the distributed driver (src/dist/driver.hpp),
// with the same output. The command supplies how its statistic is made and how rows become
// cells; rows reach write() in output order on the process that writes (rank 0).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common.hpp"
#include "vczstats/statistic.hpp"

namespace vczstats::cli {

/// @brief Builds the command's statistic afresh (same query and options every time).
using StatisticMaker = std::function<std::unique_ptr<Statistic>()>;

/// @brief Cells of one output row.
using Cells = std::vector<std::string>;

/// @brief How a command streams its rows.
struct RowStream {
  PassNeeds needs;  ///< variant fields unit_rows reads
  /// After each unit, on every process: hand the rows the statistic finished to @p row as cells
  /// (rows of another rank travel to rank 0 as cells).
  std::function<void(const UnitData& unit, Statistic& statistic,
                     const std::function<void(const Cells&)>& row)>
      unit_rows;
  /// On the writing process: write one row.
  std::function<void(const Cells&)> write;
  /// On the writing process, after it merged another rank's part: write the rows the merge
  /// finished (take_rows).
  std::function<void(Statistic& statistic)> after_merge;
};

/// @brief One statistic computed for a command.
class StatisticRun {
 public:
  StatisticRun(const CommonOptions& o, Query& q, StatisticMaker make);
  Statistic& statistic() { return *statistic_; }
  /// @brief Compute, streaming rows through @p rows. Returns whether this process writes the
  /// results (false on MPI ranks other than 0, which are then done).
  bool compute(const RowStream& rows);
  /// @brief The -v report (warnings always), on the writing process.
  void report() const;
  /// @brief What the computation did (on the writing process: every rank's, added up).
  const RunStats& stats() const { return stats_; }

 private:
  const CommonOptions& o_;
  Query& q_;
  StatisticMaker make_;
  std::unique_ptr<Statistic> statistic_;
  RunStats stats_;
  std::vector<std::string> rank_lines_;  // MPI: one line per rank and the merge, for -v
};

}  // namespace vczstats::cli
