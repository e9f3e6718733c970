// The processes of one run: alone, or MPI ranks (processes.hpp), through the library's
// vczstats::Processes.

#include "processes.hpp"

#include <fmt/format.h>

#include <memory>

#include "vczstats/processes.hpp"

namespace vczstats::cli {

namespace {
std::unique_ptr<vczstats::Processes> g_processes;
}  // namespace

Processes::Processes(int& argc, char**& argv) {
  g_processes = std::make_unique<vczstats::Processes>(argc, argv);
}

Processes::~Processes() {
  g_processes.reset();
}

void Processes::rank0_only(CLI::App* command) {
  if (primary_process()) return;
  command->preparse_callback([](std::size_t) { throw CLI::Success(); });
}

int Processes::finish(int code, const std::string& message) {
  return g_processes->finish(code, message);
}

std::pair<int, std::string> describe_error(const std::exception_ptr& e) {
  return vczstats::Processes::describe_error(e);
}

bool primary_process() {
  return !g_processes || g_processes->writes();
}

dist::Ranks* mpi_ranks() {
  return g_processes ? g_processes->mpi() : nullptr;
}

}  // namespace vczstats::cli
