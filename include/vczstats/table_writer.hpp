#pragma once
/// @file table_writer.hpp
/// @brief The tables the CLI writes (`-o`, `--format tsv|json`), for any caller of the library: a
/// Table (vczstats/table.hpp) or rows of cells streamed as TSV, whose first line is the header,
/// or as a JSON object {"rows": [objects], "note": the run's note}. A C++ program that runs a
/// statistic with vczstats::Runner hands each row its RowStream gets to row() and gets the
/// CLI's bytes.

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "vczstats/table.hpp"

namespace vczstats {

/// @brief A table streamed row by row (see the file comment). Cells are preformatted text
/// (table_cells); "NA" is written as null in JSON, and columns declared numeric are written
/// unquoted; text that is not UTF-8 is written with U+FFFD in its place, so the JSON stays valid.
/// Buffered (about 1 MiB); finish() writes the rest (and, in JSON, the note).
class TableWriter {
 public:
  struct Column {
    std::string name;
    bool numeric = true;  ///< written unquoted in JSON
  };
  /// Where the text goes, in pieces, in order. @throws what the caller's sink throws.
  using Sink = std::function<void(std::string_view text)>;

  /// @p format: "tsv" or "json". @throws UsageError for another format.
  TableWriter(Sink sink, std::string_view format, std::vector<Column> columns);
  /// Writes to @p file (not closed). @throws IoError when a write fails.
  TableWriter(std::FILE* file, std::string_view format, std::vector<Column> columns);
  /// @brief A sink that writes to @p file (not closed). @throws IoError when a write fails.
  static Sink to_file(std::FILE* file);
  /// @brief @throws UsageError unless @p format is tsv or json (the constructor's check, for
  /// callers that open the table later).
  static void check_format(std::string_view format);

  /// @brief Append one row (as many cells as columns). @throws Error for another width.
  void row(const std::vector<std::string>& cells);
  /// @brief Append every row of @p t (its columns as the writer's, from the first).
  void rows(const Table& t);
  /// @brief Write the rest; in JSON, close the rows and add @p note. Once, at the end.
  void finish(const std::string& note = "");

 private:
  void flush();
  Sink sink_;
  bool json_;
  std::vector<Column> columns_;
  std::string buffer_;
  std::int64_t rows_ = 0;
};

/// @brief Shortest round-trip text of a double; "NA" for NaN, "inf"/"-inf".
std::string format_number(double v);

/// @brief The header columns of @p t's columns [first, end): Int and Float columns are numeric.
std::vector<TableWriter::Column> table_columns(const Table& t, int first = 0);

/// @brief The text of row @p r of @p t's columns [first, end), appended to @p cells: integers as
/// integers, floats in shortest round-trip form (float32 ones as float32, NaN as NA), labels as
/// their names, lists comma-separated.
void table_cells(const Table& t, std::int64_t r, std::vector<std::string>& cells, int first = 0);

}  // namespace vczstats
