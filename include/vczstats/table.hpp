#pragma once
/// @file table.hpp
/// @brief Results of statistics: typed columns of numbers with names. Text appears only as
/// labels (a column of indices into a shared list of names: contigs, populations), so the CLI
/// writes TSV/JSON, Python builds numpy arrays, and MPI ranks concatenate or add tables,
/// without parsing anything.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vczstats/archive.hpp"

namespace vczstats {

/// @brief One column of a Table.
struct Column {
  enum class Kind {
    Int,        ///< int64 per row (ints)
    Float,      ///< float64 per row (floats); NaN means "not defined"
    Label,      ///< index per row (ints) into labels
    IntList,    ///< a list of int64 per row: ints[offsets[r] .. offsets[r + 1])
    FloatList,  ///< a list of float64 per row: floats[offsets[r] .. offsets[r + 1])
  };
  std::string name;
  Kind kind = Kind::Int;
  /// Float columns whose values are float32 numbers held in doubles (printed as float32).
  bool single_precision = false;
  std::vector<std::int64_t> ints;
  std::vector<double> floats;
  std::vector<std::int64_t> offsets{0};  ///< list columns: rows + 1 entries
  std::shared_ptr<const std::vector<std::string>> labels;

  /// @brief Number of rows.
  std::int64_t rows() const;
  /// @brief Whether the values are whole numbers (Int, Label, IntList).
  bool integral() const {
    return kind == Kind::Int || kind == Kind::Label || kind == Kind::IntList;
  }
  /// @brief The label of row @p r of a Label column.
  const std::string& label(std::int64_t r) const;
};

/// @brief A table of results: columns of equal length, plus free-text notes for the reader
/// (how sites were polarised, window conventions) that the CLI prints as a comment.
class Table {
 public:
  std::vector<Column> columns;
  std::string note;

  /// @brief Number of rows (0 without columns).
  std::int64_t rows() const { return columns.empty() ? 0 : columns.front().rows(); }
  /// @brief The column named @p name. @throws Error when absent.
  const Column& column(std::string_view name) const;
  /// @brief The index of column @p name, or -1.
  int find(std::string_view name) const;

  // Building, column by column, then row by row with the push_* calls in column order.
  /// @brief Add a column; returns its index.
  int add(std::string name, Column::Kind kind,
          std::shared_ptr<const std::vector<std::string>> labels = nullptr);
  void push_int(int col, std::int64_t v) {
    columns[static_cast<std::size_t>(col)].ints.push_back(v);
  }
  void push_float(int col, double v) { columns[static_cast<std::size_t>(col)].floats.push_back(v); }
  /// @brief Close the list of row r of a list column (after pushing its values).
  void end_list(int col);

  /// @brief An empty table with the same columns (names, kinds, labels) as this one.
  Table empty_like() const;
  /// @brief Append the rows of @p more (same columns) after ours.
  void append(const Table& more);

  /// @brief Write the rows (values of every column; names and kinds as a check; not labels).
  void save(ByteWriter& w) const;
  /// @brief Replace the rows with saved ones; the columns (and their labels) stay ours.
  /// @throws FormatError when the saved columns differ.
  void load(ByteReader& r);
};

}  // namespace vczstats
