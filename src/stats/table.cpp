// Result tables: building and appending.

#include "vczstats/table.hpp"

#include "vczstats/error.hpp"

namespace vczstats {

std::int64_t Column::rows() const {
  switch (kind) {
    case Kind::Int:
    case Kind::Label:
      return static_cast<std::int64_t>(ints.size());
    case Kind::Float:
      return static_cast<std::int64_t>(floats.size());
    case Kind::IntList:
    case Kind::FloatList:
      return static_cast<std::int64_t>(offsets.size()) - 1;
  }
  return 0;
}

const std::string& Column::label(std::int64_t r) const {
  return labels->at(static_cast<std::size_t>(ints[static_cast<std::size_t>(r)]));
}

const Column& Table::column(std::string_view name) const {
  const int i = find(name);
  if (i < 0) throw Error("result table has no column '" + std::string(name) + "'");
  return columns[static_cast<std::size_t>(i)];
}

int Table::find(std::string_view name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == name) return static_cast<int>(i);
  return -1;
}

int Table::add(std::string name, Column::Kind kind,
               std::shared_ptr<const std::vector<std::string>> labels) {
  Column c;
  c.name = std::move(name);
  c.kind = kind;
  c.labels = std::move(labels);
  if (kind == Column::Kind::Label && !c.labels) throw Error("label column without labels");
  columns.push_back(std::move(c));
  return static_cast<int>(columns.size()) - 1;
}

void Table::end_list(int col) {
  Column& c = columns[static_cast<std::size_t>(col)];
  c.offsets.push_back(
      static_cast<std::int64_t>(c.kind == Column::Kind::IntList ? c.ints.size() : c.floats.size()));
}

Table Table::empty_like() const {
  Table t;
  t.note = note;
  for (const auto& c : columns) {
    Column e;
    e.name = c.name;
    e.kind = c.kind;
    e.single_precision = c.single_precision;
    e.labels = c.labels;
    t.columns.push_back(std::move(e));
  }
  return t;
}

void Table::append(const Table& more) {
  if (more.columns.empty()) return;
  if (columns.empty()) {
    *this = more;
    return;
  }
  if (more.columns.size() != columns.size()) throw Error("appending tables of different columns");
  for (std::size_t i = 0; i < columns.size(); ++i) {
    Column& a = columns[i];
    const Column& b = more.columns[i];
    if (a.name != b.name || a.kind != b.kind) throw Error("appending tables of different columns");
    const auto base = static_cast<std::int64_t>(a.kind == Column::Kind::FloatList ? a.floats.size()
                                                                                  : a.ints.size());
    a.ints.insert(a.ints.end(), b.ints.begin(), b.ints.end());
    a.floats.insert(a.floats.end(), b.floats.begin(), b.floats.end());
    if (a.kind == Column::Kind::IntList || a.kind == Column::Kind::FloatList)
      for (std::size_t r = 1; r < b.offsets.size(); ++r) a.offsets.push_back(base + b.offsets[r]);
  }
}

void Table::save(ByteWriter& w) const {
  w.put<std::uint64_t>(columns.size());
  for (const auto& c : columns) {
    w.put_string(c.name);
    w.put(c.kind);
    w.put_vector(c.ints);
    w.put_vector(c.floats);
    w.put_vector(c.offsets);
  }
}

void Table::load(ByteReader& r) {
  if (r.get<std::uint64_t>() != columns.size())
    throw FormatError("statistic state: the saved table has other columns");
  for (auto& c : columns) {
    if (r.get_string() != c.name || r.get<Column::Kind>() != c.kind)
      throw FormatError("statistic state: the saved table has other columns");
    c.ints = r.get_vector<std::int64_t>();
    c.floats = r.get_vector<double>();
    c.offsets = r.get_vector<std::int64_t>();
  }
}

}  // namespace vczstats
