#pragma once
// The one way statistic commands compute: the library's Runner (vczstats/runner.hpp), in this
// process or, under mpirun (processes.hpp), across the MPI ranks, with the same output. The
// command supplies how its statistic is made and how rows become cells (RowStream); rows reach
// write() in output order on the process that writes (rank 0). This wrapper adds what belongs
// to the CLI: the run options of the command line, the warnings and the -v report.

#include <cstddef>
#include <string>
#include <vector>

#include "common.hpp"
#include "vczstats/runner.hpp"

namespace vczstats::cli {

/// @brief One statistic computed for a command.
class StatisticRun {
 public:
  /// @brief The Runner gets @p q's pending count filters ready (prints their warnings).
  StatisticRun(const CommonOptions& o, Query& q, StatisticMaker make);
  Statistic& statistic() { return runner_.statistic(); }
  /// @brief Compute, streaming rows through @p rows. Returns whether this process writes the
  /// results (false on MPI ranks other than 0, which are then done).
  bool compute(const RowStream& rows);
  /// @brief The -v report (warnings always), on the writing process.
  void report() const;
  /// @brief What the computation did (on the writing process: every rank's, added up).
  const RunStats& stats() const { return result_.stats; }

 private:
  const CommonOptions& o_;
  std::size_t warned_;  // the query's warnings printed before the Runner got its filters ready
  Runner runner_;
  RunnerResult result_;
};

}  // namespace vczstats::cli
