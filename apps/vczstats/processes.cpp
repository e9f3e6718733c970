// The processes of one run: alone, or MPI ranks (processes.hpp), through the library's
// vczstats::Processes.

#include "processes.hpp"

#include <fmt/format.h>

#include <memory>
#include <string_view>

#include "vczstats/device.hpp"
#include "vczstats/error.hpp"
#include "vczstats/processes.hpp"

namespace vczstats::cli {

namespace {
std::unique_ptr<vczstats::Processes> g_processes;
std::unique_ptr<GpuPrestart> g_prestart;

/// The CUDA device that `--device gpu` or `gpu:N` on the command line will use, or -1 (another
/// device, none given, or not known before MPI starts: a launcher that does not give the rank's
/// place on its node). The library's rule (process_gpu), with the launcher's local rank.
int device_of_command_line(int argc, char** argv) {
  std::string_view value;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") break;
    if (a == "--no-gpu-prestart") return -1;  // the hidden benchmark option (common.cpp)
    if (a == "--device" && i + 1 < argc)
      value = argv[++i];
    else if (a.starts_with("--device="))
      value = a.substr(9);
  }
  if (!value.starts_with("gpu")) return -1;
  DeviceSpec spec;
  try {
    spec = parse_device(value);
  } catch (const UsageError&) {
    return -1;  // the parse reports it
  }
  const bool index_given = value.find(':') != std::string_view::npos;
  const int local = vczstats::Processes::launcher_local_rank();
  if (vczstats::Processes::launched() && local < 0 && !index_given) return -1;
  return process_gpu(spec, index_given, local);
}
}  // namespace

Processes::Processes(int& argc, char**& argv) {
  // A GPU run starts CUDA on a thread now, while MPI starts and the command opens its store.
  if (const int device = device_of_command_line(argc, argv); device >= 0)
    g_prestart = std::make_unique<GpuPrestart>(device);
  g_processes = std::make_unique<vczstats::Processes>(argc, argv);
}

Processes::~Processes() {
  g_processes.reset();
  g_prestart.reset();
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
