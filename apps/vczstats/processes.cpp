// The processes of one run: alone, or MPI ranks (processes.hpp).

#include "processes.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <new>

#include "vczstats/error.hpp"

#ifdef VCZSTATS_HAVE_MPI
#include "dist/ranks.hpp"
#endif

namespace vczstats::cli {

namespace {
#ifdef VCZSTATS_HAVE_MPI
std::unique_ptr<dist::Ranks> g_ranks;
#endif
}  // namespace

Processes::Processes([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
#ifdef VCZSTATS_HAVE_MPI
  if (dist::Ranks::launched()) g_ranks = std::make_unique<dist::Ranks>(argc, argv);
#endif
}

Processes::~Processes() {
#ifdef VCZSTATS_HAVE_MPI
  g_ranks.reset();
#endif
}

void Processes::rank0_only(CLI::App* command) {
  if (primary_process()) return;
  command->preparse_callback([](std::size_t) { throw CLI::Success(); });
}

int Processes::finish(int code, const std::string& message) {
#ifdef VCZSTATS_HAVE_MPI
  if (g_ranks) {
    std::string first;
    const int agreed = g_ranks->finish(code, message, &first);
    if (g_ranks->rank() == 0 && !first.empty()) fmt::print(stderr, "vczstats: {}\n", first);
    return agreed;
  }
#endif
  if (!message.empty()) fmt::print(stderr, "vczstats: {}\n", message);
  return code;
}

std::pair<int, std::string> describe_error(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
#ifdef VCZSTATS_HAVE_MPI
  } catch (const dist::Stopped&) {
    return {dist::Ranks::kStopped, ""};
#endif
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

bool primary_process() {
#ifdef VCZSTATS_HAVE_MPI
  return !g_ranks || g_ranks->rank() == 0;
#else
  return true;
#endif
}

dist::Ranks* mpi_ranks() {
#ifdef VCZSTATS_HAVE_MPI
  return g_ranks.get();
#else
  return nullptr;
#endif
}

}  // namespace vczstats::cli
