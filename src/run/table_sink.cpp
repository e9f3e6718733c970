// The Runner's sink of a table (vczstats/runner.hpp: TableSink).

#include <utility>

#include "vczstats/runner.hpp"

namespace vczstats {

TableSink::TableSink(Statistic& statistic, TableWriter::Sink sink, std::string format)
    : sink_(std::move(sink)), format_(std::move(format)), header_(statistic.take_rows()) {
  TableWriter::check_format(format_);  // now: the table itself opens at its first row
}

void TableSink::open(const Table& t) {
  if (!writer_) writer_.emplace(sink_, format_, table_columns(t));
  if (note_.empty()) note_ = t.note;
}

void TableSink::emit(const Table& t) {
  open(t);
  writer_->rows(t);
}

RowStream TableSink::rows() {
  RowStream rows;
  // Every process: the rows the statistic finished, as cells (another rank's travel to rank 0).
  rows.unit_rows = [](const UnitData&, Statistic& s, const std::function<void(const Cells&)>& row) {
    const Table t = s.take_rows();
    Cells cells;
    for (std::int64_t r = 0; r < t.rows(); ++r) {
      cells.clear();
      table_cells(t, r, cells);
      row(cells);
    }
  };
  // The writing process: streamed rows have the columns the statistic had before the run.
  rows.write = [this](const Cells& cells) {
    open(header_);
    writer_->row(cells);
  };
  rows.after_merge = [this](Statistic& s) {
    const Table t = s.take_rows();
    if (t.rows() > 0) emit(t);
  };
  return rows;
}

std::string TableSink::finish(Statistic& statistic) {
  emit(statistic.finish());
  writer_->finish(note_);
  return note_;
}

}  // namespace vczstats
