// The processes of a program's runs: alone, or MPI ranks (vczstats/processes.hpp).

#include "vczstats/processes.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <system_error>

#include "vczstats/error.hpp"

#include "dist/ranks.hpp"

namespace vczstats {

static_assert(Processes::kStopped == dist::Ranks::kStopped);

bool Processes::mpi_built() {
#ifdef VCZSTATS_HAVE_MPI
  return true;
#else
  return false;
#endif
}

bool Processes::launched() {
#ifdef VCZSTATS_HAVE_MPI
  return dist::MpiRanks::launched();
#else
  return false;
#endif
}

int Processes::launcher_local_rank() {
#ifdef VCZSTATS_HAVE_MPI
  if (!dist::MpiRanks::launched()) return -1;
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                           "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "PALS_LOCAL_RANKID"})
    if (const char* v = std::getenv(name)) {
      int rank = -1;
      const char* end = v + std::strlen(v);
      const auto [p, ec] = std::from_chars(v, end, rank);
      if (ec == std::errc() && p == end && rank >= 0) return rank;
    }
#endif
  return -1;
}

void Processes::EndRanks::operator()([[maybe_unused]] dist::MpiRanks* ranks) const {
#ifdef VCZSTATS_HAVE_MPI
  delete ranks;
#endif
}

Processes::Processes([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
#ifdef VCZSTATS_HAVE_MPI
  if (launched()) ranks_.reset(new dist::MpiRanks(argc, argv));
#endif
}

Processes::~Processes() = default;

int Processes::rank() const {
#ifdef VCZSTATS_HAVE_MPI
  if (ranks_) return ranks_->rank();
#endif
  return 0;
}

int Processes::size() const {
#ifdef VCZSTATS_HAVE_MPI
  if (ranks_) return ranks_->size();
#endif
  return 1;
}

dist::Ranks* Processes::mpi() const {
  return ranks_.get();
}

RunnerRanks Processes::runner_ranks(bool device_index_given) const {
  return {ranks_.get(), device_index_given};
}

int Processes::finish(int code, const std::string& message, std::string* first_message) {
  std::string first = message;
#ifdef VCZSTATS_HAVE_MPI
  if (ranks_) {
    first.clear();
    code = ranks_->finish(code, message, &first);
    if (ranks_->rank() != 0) first.clear();
  }
#endif
  if (first_message)
    *first_message = first;
  else if (!first.empty())
    fmt::print(stderr, "vczstats: {}\n", first);
  return code;
}

int Processes::finish(const std::exception_ptr& error, std::string* first_message) {
  const auto [code, message] = describe_error(error);
  return finish(code, message, first_message);
}

std::pair<int, std::string> Processes::describe_error(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const dist::Stopped&) {  // MPI's or thread ranks'
    return {kStopped, ""};
  } catch (const UsageError& x) {
    return {2, fmt::format("error: {}", x.what())};
  } catch (const Error& x) {
    return {1, fmt::format("error: {}", x.what())};
  } catch (const std::filesystem::filesystem_error& x) {
    return {1, fmt::format("error: {}", x.what())};
  } catch (const std::bad_alloc&) {
    return {1, "error: out of memory"};
  } catch (const std::exception& x) {
    return {1, fmt::format("internal error: {}", x.what())};
  } catch (...) {
    return {1, "internal error: unknown exception"};
  }
}

}  // namespace vczstats
