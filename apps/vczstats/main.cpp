// vczstats: population-genetics statistics from VCF Zarr stores.

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <exception>

#include "commands.hpp"
#include "processes.hpp"

int main(int argc, char** argv) {
  // MPI ranks when mpirun/srun started this process (MPI builds); else this process alone.
  vczstats::cli::Processes processes(argc, argv);
  CLI::App app{
      "vczstats: population-genetics statistics streamed from VCF Zarr (VCZ) stores on CPU "
      "threads or NVIDIA GPUs.\n"
      "Usage: vczstats <command> STORE [options]; STORE is a directory or a .zip store."};
  app.set_version_flag("--version", "vczstats 0.1.0");
  app.require_subcommand(1);
  vczstats::cli::add_info_command(app);
  vczstats::cli::add_afdist_command(app);
  vczstats::cli::add_site_table_commands(app);
  vczstats::cli::add_window_commands(app);
  vczstats::cli::add_haplotype_commands(app);
  vczstats::cli::add_spectra_commands(app);
  vczstats::cli::add_sample_stats_command(app);
  vczstats::cli::add_ld_commands(app);
  vczstats::cli::add_matrix_commands(app);
  vczstats::cli::add_convert_command(app);
  vczstats::cli::add_simulate_command(app);
  vczstats::cli::add_recompress_command(app);
  for (const char* name : {"info", "convert", "simulate", "recompress"})
    processes.rank0_only(app.get_subcommand(name));
  int code = 0;
  std::string message;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = vczstats::cli::primary_process() ? app.exit(e) : e.get_exit_code();
    code = rc == 0 ? 0 : 2;
  } catch (...) {
    std::tie(code, message) = vczstats::cli::describe_error(std::current_exception());
  }
  return processes.finish(code, message);
}
