#pragma once
// The help's layout (one usage line, a one-line summary per command, an Examples section per
// command, negated flags without CLI11's "{false}") and one-line messages for command-line
// mistakes, with suggestions for misspelled commands and options.

#include <CLI/CLI.hpp>

#include <string>

namespace vczstats::cli {

/// The help formatter; set it on the application before adding commands (they share it).
std::shared_ptr<CLI::Formatter> help_formatter();

/// After every command is added: group the commands and give each its Examples footer.
void set_up_help(CLI::App& app);

/// When @p word (the first argument, not an option) names no command: the error message (without
/// "vczstats: "), suggesting the command the user probably meant; else "".
std::string unknown_command_message(const CLI::App& app, const std::string& word);

/// The one-line message (without "vczstats: ") of a parse error other than --help/--version:
/// the command it concerns, CLI11's reason or, for unknown options, the closest option names.
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e);

/// The candidate closest to @p word by edit distance (transpositions count 1), when it is close
/// enough to be a likely misspelling, or the only candidate @p word is a prefix of; else "".
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace vczstats::cli
