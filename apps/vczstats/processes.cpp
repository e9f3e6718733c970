// The processes of one run: alone, or MPI ranks (processes.hpp), through the library's
// vczstats::Processes.

#include "processes.hpp"

#include <fmt/format.h>

#include <memory>
#include <string_view>
#include <vector>

#include "vczstats/device.hpp"
#include "vczstats/error.hpp"
#include "vczstats/processes.hpp"

namespace vczstats::cli {

namespace {
std::unique_ptr<vczstats::Processes> g_processes;
std::unique_ptr<GpuPrestart> g_prestart;

/// The CUDA devices that `--device gpu`, `gpu:N` or several GPUs (`gpu:0,1`, `gpu:all`) on the
/// command line will use, or none (another device, none given, or not known before MPI starts:
/// a launcher that does not give the rank's place on its node). The library's rule
/// (process_gpu), with the launcher's local rank; several GPUs without MPI are all this
/// process's.
std::vector<int> devices_of_command_line(int argc, char** argv) {
  std::string_view value;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") break;
    if (a == "--no-gpu-prestart") return {};  // the hidden benchmark option (common.cpp)
    if (a == "--device" && i + 1 < argc)
      value = argv[++i];
    else if (a.starts_with("--device="))
      value = a.substr(9);
  }
  if (!value.starts_with("gpu")) return {};
  DeviceSpec spec;
  try {
    spec = parse_device(value);
  } catch (const UsageError&) {
    return {};  // the parse reports it
  }
  const bool launched = vczstats::Processes::launched();
  if (spec.several() && !launched) {
    if (!spec.all_gpus) return spec.gpus;
    std::vector<int> all(static_cast<std::size_t>(gpus_without_starting_cuda()));
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    return all;
  }
  const bool index_given = value.find(':') != std::string_view::npos && !spec.all_gpus;
  const int local = vczstats::Processes::launcher_local_rank();
  if (launched && local < 0 && (!index_given || spec.several())) return {};
  return {process_gpu(spec, index_given, local)};
}
}  // namespace

Processes::Processes(int& argc, char**& argv) {
  // A GPU run starts CUDA on a thread now, while MPI starts and the command opens its store.
  if (const auto devices = devices_of_command_line(argc, argv); !devices.empty())
    g_prestart = std::make_unique<GpuPrestart>(devices);
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
