// The tables the CLI writes, for any caller of the library (vczstats/table_writer.hpp).

#include "vczstats/table_writer.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "vczstats/error.hpp"

namespace vczstats {

TableWriter::TableWriter(Sink sink, std::string_view format, std::vector<Column> columns)
    : sink_(std::move(sink)), json_(format == "json"), columns_(std::move(columns)) {
  check_format(format);
  if (json_) {
    buffer_ = "{\"rows\": [";
    return;
  }
  for (std::size_t i = 0; i < columns_.size(); ++i) buffer_ += (i ? "\t" : "") + columns_[i].name;
  buffer_ += "\n";
}

void TableWriter::row(const std::vector<std::string>& cells) {
  if (cells.size() != columns_.size()) throw Error("table: row width does not match the header");
  if (json_) {
    buffer_ += rows_ ? ",\n{" : "\n{";
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) buffer_ += ", ";
      // Text that is not UTF-8 (a name from a user's file) is written with U+FFFD in its place:
      // the JSON stays valid. Ids from the store were checked when it was opened.
      constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
      buffer_ += nlohmann::json(columns_[i].name).dump(-1, ' ', false, kReplace) + ": ";
      if (cells[i] == "NA")
        buffer_ += "null";
      else if (columns_[i].numeric)
        buffer_ += cells[i];
      else
        buffer_ += nlohmann::json(cells[i]).dump(-1, ' ', false, kReplace);
    }
    buffer_ += "}";
  } else {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) buffer_ += '\t';
      buffer_ += cells[i];
    }
    buffer_ += '\n';
  }
  ++rows_;
  if (buffer_.size() > (1u << 20)) flush();
}

void TableWriter::check_format(std::string_view format) {
  if (format != "tsv" && format != "json")
    throw UsageError("table format '" + std::string(format) + "': give tsv or json");
}

TableWriter::Sink TableWriter::to_file(std::FILE* file) {
  return [file](std::string_view text) {
    if (std::fwrite(text.data(), 1, text.size(), file) != text.size())
      throw IoError("write failed: " + std::string(std::strerror(errno)));
  };
}

TableWriter::TableWriter(std::FILE* file, std::string_view format, std::vector<Column> columns)
    : TableWriter(to_file(file), format, std::move(columns)) {}

void TableWriter::rows(const Table& t) {
  std::vector<std::string> cells;
  for (std::int64_t r = 0; r < t.rows(); ++r) {
    cells.clear();
    table_cells(t, r, cells);
    row(cells);
  }
}

void TableWriter::flush() {
  if (!buffer_.empty()) sink_(buffer_);
  buffer_.clear();
}

void TableWriter::finish(const std::string& note) {
  if (json_) {
    constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
    buffer_ += std::string(rows_ ? "\n]" : "]") +
               ", \"note\": " + nlohmann::json(note).dump(-1, ' ', false, kReplace) + "}\n";
  }
  flush();
}

std::string format_number(double v) {
  if (std::isnan(v)) return "NA";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{}", v);
}

std::vector<TableWriter::Column> table_columns(const Table& t, int first) {
  std::vector<TableWriter::Column> cols;
  for (std::size_t i = static_cast<std::size_t>(first); i < t.columns.size(); ++i) {
    const auto k = t.columns[i].kind;
    cols.push_back({t.columns[i].name, k == Column::Kind::Int || k == Column::Kind::Float});
  }
  return cols;
}

void table_cells(const Table& t, std::int64_t r, std::vector<std::string>& cells, int first) {
  using Kind = Column::Kind;
  const auto i = static_cast<std::size_t>(r);
  for (std::size_t c = static_cast<std::size_t>(first); c < t.columns.size(); ++c) {
    const auto& col = t.columns[c];
    switch (col.kind) {
      case Kind::Int:
        cells.push_back(std::to_string(col.ints[i]));
        break;
      case Kind::Float:
        cells.push_back(col.single_precision && !std::isnan(col.floats[i])
                            ? fmt::format("{}", static_cast<float>(col.floats[i]))
                            : format_number(col.floats[i]));
        break;
      case Kind::Label:
        cells.push_back(col.label(r));
        break;
      case Kind::IntList:
      case Kind::FloatList: {
        std::string text;
        for (auto k = col.offsets[i]; k < col.offsets[i + 1]; ++k) {
          if (k > col.offsets[i]) text += ',';
          const auto j = static_cast<std::size_t>(k);
          text += col.kind == Kind::IntList ? std::to_string(col.ints[j])
                                            : format_number(col.floats[j]);
        }
        cells.push_back(std::move(text));
        break;
      }
    }
  }
}

}  // namespace vczstats
