// vczstats: population-genetics statistics from VCF Zarr stores.

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <exception>
#include <string>

#include "commands.hpp"
#include "help.hpp"
#include "processes.hpp"

int main(int argc, char** argv) {
  // MPI ranks when mpirun/srun started this process (MPI builds); else this process alone.
  vczstats::cli::Processes processes(argc, argv);
  CLI::App app{
      "vczstats: population-genetics statistics streamed from VCF Zarr (VCZ) stores on CPU "
      "threads or NVIDIA GPUs. STORE is a directory, a .zip or a URL."};
  app.formatter(vczstats::cli::help_formatter());  // before the commands: they share it
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
  vczstats::cli::set_up_help(app);
  for (const char* name : {"info", "convert", "simulate", "recompress"})
    processes.rank0_only(app.get_subcommand(name));
  int code = 0;
  std::string message;
  try {
    // A first word that names no command: say which one was probably meant (CLI11 would only
    // say that a subcommand is required).
    if (argc > 1 && argv[1][0] != '-')
      if (auto m = vczstats::cli::unknown_command_message(app, argv[1]); !m.empty()) {
        message = "error: " + m;
        code = 2;
      }
    if (code == 0) app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help, --version: printed on stdout
      if (vczstats::cli::primary_process()) app.exit(e);
    } else {  // one line, "vczstats: error: ...", exit 2 as other usage errors
      message = "error: " + vczstats::cli::parse_error_message(app, e);
      code = 2;
    }
  } catch (...) {
    std::tie(code, message) = vczstats::cli::describe_error(std::current_exception());
  }
  return processes.finish(code, message);
}
