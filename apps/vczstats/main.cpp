// vczstats: population-genetics statistics from VCF Zarr stores.

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <exception>

#include "commands.hpp"
#include "vczstats/error.hpp"

int main(int argc, char** argv) {
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
  vczstats::cli::add_convert_command(app);
  vczstats::cli::add_simulate_command(app);
  vczstats::cli::add_recompress_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const vczstats::UsageError& e) {
    fmt::print(stderr, "vczstats: error: {}\n", e.what());
    return 2;
  } catch (const vczstats::Error& e) {
    fmt::print(stderr, "vczstats: error: {}\n", e.what());
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    fmt::print(stderr, "vczstats: error: {}\n", e.what());
    return 1;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "vczstats: error: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "vczstats: internal error: {}\n", e.what());
    return 1;
  }
  return 0;
}
