#pragma once
// One function per subcommand adds it to the application.
#include <CLI/CLI.hpp>

namespace vczstats::cli {
void add_info_command(CLI::App& app);
void add_afdist_command(CLI::App& app);
void add_site_table_commands(CLI::App& app);
void add_window_commands(CLI::App& app);
void add_haplotype_commands(CLI::App& app);
void add_spectra_commands(CLI::App& app);
void add_sample_stats_command(CLI::App& app);
void add_matrix_commands(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_recompress_command(CLI::App& app);
void add_ld_commands(CLI::App& app);
}  // namespace vczstats::cli
