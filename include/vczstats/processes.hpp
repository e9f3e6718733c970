#pragma once
/// @file processes.hpp
/// @brief The processes of a program's runs: this process alone or, when an MPI launcher
/// (mpirun, mpiexec, srun) started it and the library was built with MPI, the MPI ranks. A
/// program makes one Processes in main(), hands runner_ranks() to every Runner (runner.hpp), and
/// ends with finish(): each rank runs the same steps, the Runner splits the work, rank 0 alone
/// gets the results, and an error on any rank ends every rank with that error, reported once.
///
/// @code
///   int main(int argc, char** argv) {
///     vczstats::Processes processes(argc, argv);
///     try {
///       vczstats::Query q = vczstats::make_query(options);
///       vczstats::Runner runner(q, maker, run, processes.runner_ranks());
///       runner.run();
///       if (processes.writes()) print(runner.statistic().finish());
///     } catch (...) {
///       return processes.finish(std::current_exception());
///     }
///     return processes.finish();
///   }
/// @endcode
/// examples/library_mpi.cpp is this program in full.

#include <exception>
#include <memory>
#include <string>

#include "vczstats/runner.hpp"

namespace vczstats {

/// @brief The processes of a program's runs (see the file comment). One per process.
class Processes {
 public:
  /// @brief Whether this build of the library can run across MPI ranks.
  static bool mpi_built();
  /// @brief Whether the constructor will start MPI: an MPI launcher started this process (its
  /// environment says so) and the build has MPI.
  static bool launched();
  /// @brief This process's rank among those of its node, as the MPI launcher put it in the
  /// environment (Open MPI, MPICH and Intel MPI's Hydra, MVAPICH, Slurm's srun, Cray's PALS),
  /// known before MPI starts; -1 when not launched() or the launcher does not say.
  static int launcher_local_rank();

  /// @brief Starts MPI when an MPI launcher started the process and the build has MPI (leaving it
  /// running at the end when something else, e.g. mpi4py, started it first); else this process
  /// runs alone. @throws Error when MPI cannot start.
  Processes(int& argc, char**& argv);
  /// @brief Ends MPI (when this object started it). Call finish() first.
  ~Processes();
  Processes(const Processes&) = delete;
  Processes& operator=(const Processes&) = delete;

  /// @brief This process's rank (0 alone) and the number of processes (1 alone).
  int rank() const;
  int size() const;
  /// @brief Whether this process gets the results and writes them: it runs alone, or it is
  /// rank 0.
  bool writes() const { return rank() == 0; }
  /// @brief What a Runner takes to spread over these processes (null ranks alone).
  /// @p device_index_given: every rank uses RunOptions::device's index rather than the GPU of
  /// its local rank (RunnerRanks).
  RunnerRanks runner_ranks(bool device_index_given = false) const;

  /// @brief The exit code of the program, once, at its end. Alone: @p code. Under MPI every rank
  /// agrees on the outcome (a collective): the exit code and message of the lowest rank that
  /// failed, 0 when none did. @p message is this process's error (empty when @p code is 0);
  /// @p first_message, when given, gets on the writing process the message to report (prefixed
  /// with the failing rank when there are several), else finish() prints it on stderr as
  /// "vczstats: <message>".
  int finish(int code = 0, const std::string& message = "", std::string* first_message = nullptr);
  /// @brief finish() with the exit code and message of an exception that ended this process's
  /// work (describe_error()), e.g. std::current_exception() in a catch block.
  int finish(const std::exception_ptr& error, std::string* first_message = nullptr);

  /// @brief The exit code and message of @p error: 2 for UsageError, 1 for the others (messages
  /// "error: ..." or "internal error: ..."), and Processes::kStopped for a rank stopped because
  /// another rank failed (its message is not reported).
  static std::pair<int, std::string> describe_error(const std::exception_ptr& error);
  /// @brief The code describe_error() gives a rank that another rank's failure stopped.
  static constexpr int kStopped = -1;

  /// @brief The MPI ranks (null when this process runs alone): for code inside the library's
  /// own tree that needs the driver (src/dist/ranks.hpp).
  dist::Ranks* mpi() const;

 private:
  struct EndRanks {  // deletes the ranks where they are defined (an MPI build's src/dist/)
    void operator()(dist::MpiRanks* ranks) const;
  };
  std::unique_ptr<dist::MpiRanks, EndRanks> ranks_;
};

}  // namespace vczstats
