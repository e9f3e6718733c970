#pragma once
// The processes of one vczstats run: this process alone, or, in an MPI build started by mpirun,
// mpiexec or srun, the MPI ranks (src/dist/). Every rank parses the same command line and runs
// the same command; statistic commands split the work (statistic_run.hpp), the others
// (info, convert, simulate, recompress) run on rank 0 alone. Rank 0 writes the output and the
// messages; an error on any rank ends every rank with that error, printed once by rank 0.

#include <CLI/CLI.hpp>

#include <exception>
#include <string>
#include <utility>

namespace vczstats::dist {
class Ranks;
}

namespace vczstats::cli {

/// @brief Held by main(): starts MPI when an MPI launcher started the process (and the build has
/// MPI), and ends it.
class Processes {
 public:
  Processes(int& argc, char**& argv);
  ~Processes();
  Processes(const Processes&) = delete;
  Processes& operator=(const Processes&) = delete;

  /// @brief Run @p command only on rank 0 (the other ranks skip it and succeed).
  void rank0_only(CLI::App* command);
  /// @brief The exit code of the run: this process's @p code and @p message (printed as
  /// "vczstats: <message>"), or under MPI the outcome agreed by every rank (dist/ranks.hpp),
  /// printed by rank 0.
  int finish(int code, const std::string& message);
};

/// @brief The exit code and message of an exception escaping a command: 2 for usage errors, 1
/// for the others; a rank stopped because another failed gets dist::Ranks::kStopped.
std::pair<int, std::string> describe_error(const std::exception_ptr& e);

/// @brief Whether this process writes the output and messages: it runs alone, or it is rank 0.
bool primary_process();

/// @brief The MPI ranks of this run, or null when this process runs alone.
dist::Ranks* mpi_ranks();

}  // namespace vczstats::cli
