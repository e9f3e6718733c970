#pragma once
// The ranks of a distributed run: MPI's (MPI_COMM_WORLD) or a process's threads (thread_ranks.hpp),
// and the rules that let an error on any rank stop every
// rank without a hang, with rank 0 reporting it.
//
// The rules. Every rank runs the same sequence of steps; between steps, check() is a collective
// (an all-reduce of "did anyone fail") after which the step's data moves between ranks with code
// that cannot fail. A rank that fails announces it (announce_failure: a small message to every
// other rank) and goes straight to finish(), whose first collective is the same all-reduce: it
// meets the others at their next check() (or at their own finish()), which throws Stopped on
// them; long steps poll() for announcements and throw Stopped at once. A rank stopped by a
// check() skips finish()'s all-reduce (it already took part in that one), so every rank makes
// the same number of them. finish() then gathers every rank's exit code and message on rank 0,
// which reports the lowest failing rank's, and every rank exits with that code.
// MPI calls are made from the main thread only (MPI_THREAD_FUNNELED). Thread ranks keep the same
// rules with a barrier for the all-reduce and queues for the messages (thread_ranks.hpp).

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace vczstats {
class Statistic;  // vczstats/statistic.hpp
}

namespace vczstats::dist {

/// @brief Thrown on a rank that stops because another rank failed (that rank's error is the one
/// reported).
class Stopped : public std::exception {
 public:
  const char* what() const noexcept override { return "stopped: another rank failed"; }
};

/// @brief The ranks of a distributed run, as the driver (driver.hpp) sees them: MPI's
/// (MpiRanks, one process each) or a process's own threads (ThreadRanks, thread_ranks.hpp: one
/// share of the run per GPU of the process). The same rules hold for both (the file comment).
class Ranks {
 public:
  /// @brief The exit code finish() takes from a rank that threw Stopped.
  static constexpr int kStopped = -1;

  virtual ~Ranks() = default;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// @brief Rank and number of ranks on this node.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  /// @brief Number of nodes, and this one's name.
  int nodes() const { return nodes_; }
  const std::string& host() const { return host_; }
  /// @brief Whether the ranks are threads of this process (ThreadRanks), not MPI's processes.
  virtual bool in_process() const { return false; }

  /// @brief Collective: returns when no rank failed; throws Stopped when one did.
  virtual void check() = 0;
  /// @brief Tell every other rank that this one failed (once; finish() does it too).
  virtual void announce_failure() = 0;
  /// @brief Throw Stopped when another rank announced a failure. Cheap: call it often.
  virtual void poll() = 0;

  /// @brief Collective (after a check): @p values of @p root on every rank (sizes equal).
  virtual void broadcast(std::vector<std::int64_t>& values, int root = 0) = 0;
  /// @brief Collective (after a check): every rank's bytes, in rank order.
  virtual std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) = 0;
  /// @brief Collective (after a check): every rank's bytes on rank 0 (others get nothing).
  virtual std::vector<std::vector<std::byte>> gather(std::span<const std::byte> mine) = 0;
  /// @brief Send one message of bytes to rank @p to (blocks until it is received or buffered).
  virtual void send(int to, std::span<const std::byte> bytes) = 0;
  /// @brief Receive the next message from rank @p from.
  virtual std::vector<std::byte> receive(int from) = 0;

  /// @brief Ranks in one process (in_process()): this rank's statistics, left for rank 0 to
  /// merge as they are (live, not saved and loaded), and another rank's once it left them; the
  /// rank keeps them alive, untouched, until the next check() after rank 0's merge. MPI's ranks
  /// leave nothing (and give an empty span).
  virtual void leave_statistics(std::span<Statistic* const> statistics) { (void)statistics; }
  virtual std::span<Statistic* const> left_statistics(int rank) const {
    (void)rank;
    return {};
  }

 protected:
  Ranks() = default;
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, nodes_ = 1;
  std::string host_;
};

/// @brief The MPI ranks of this process (MPI_COMM_WORLD), initialised in the constructor and
/// finalised in the destructor. One per process; defined in an MPI build only (ranks.cpp).
class MpiRanks final : public Ranks {
 public:
  /// @brief Whether an MPI launcher started this process (Open MPI's mpirun/mpiexec, MPICH's or
  /// Intel's mpiexec through PMI, srun through PMI or PMIx).
  static bool launched();

  /// @brief MPI_Init_thread (funneled), unless MPI is running already (e.g. mpi4py started
  /// it: then it is left running at the end too). @throws Error when MPI cannot start.
  MpiRanks(int& argc, char**& argv);
  ~MpiRanks() override;

  void check() override;
  void announce_failure() override;
  void poll() override;
  /// @brief Collective, once per process, at the end: agree on the outcome. @p code: 0 (done),
  /// an exit code > 0 with @p message (this rank failed), or kStopped. Returns every rank's exit
  /// code: that of the lowest rank that failed, 0 when none; on rank 0 @p first_message gets
  /// that rank's message (prefixed with the rank when there are several).
  int finish(int code, const std::string& message, std::string* first_message);

  void broadcast(std::vector<std::int64_t>& values, int root = 0) override;
  std::vector<std::vector<std::byte>> allgather(std::span<const std::byte> mine) override;
  std::vector<std::vector<std::byte>> gather(std::span<const std::byte> mine) override;
  void send(int to, std::span<const std::byte> bytes) override;
  std::vector<std::byte> receive(int from) override;

 private:
  struct Pending;  // announcements in flight (MPI requests: mpi.h stays in ranks.cpp)
  bool announced_ = false, stopped_by_check_ = false, finished_ = false;
  bool owned_ = true;  // this object started MPI (and finalises it)
  std::unique_ptr<Pending> pending_;
};

}  // namespace vczstats::dist
