#pragma once
// Private helpers shared by the statistics of src/stats/.

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "vczstats/error.hpp"
#include "vczstats/query.hpp"
#include "vczstats/statistic.hpp"

namespace vczstats::stats::detail {

/// The partition @p later as the same statistic type as @p self. @throws Error otherwise.
template <class T>
T& same_statistic(const T& self, Statistic& later) {
  auto* p = dynamic_cast<T*>(&later);
  if (!p) throw Error("cannot merge " + later.name() + " into " + self.name());
  return *p;
}

/// a + b and a - b saturated at the int64 range: positions come from untrusted stores and
/// window sizes from users, so POS + window must not wrap (UBSan) near 2^63.
inline std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<std::int64_t>::max()
               : std::numeric_limits<std::int64_t>::min();
}
inline std::int64_t saturating_sub(std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b > 0 ? std::numeric_limits<std::int64_t>::min()
               : std::numeric_limits<std::int64_t>::max();
}

/// Labels of contigs and populations, shared by a statistic's tables.
inline std::shared_ptr<const std::vector<std::string>> contig_labels(const Query& q) {
  return std::make_shared<const std::vector<std::string>>(q.store.contig_ids());
}
inline std::shared_ptr<const std::vector<std::string>> population_labels(const Query& q) {
  return std::make_shared<const std::vector<std::string>>(q.pops.names);
}

/// a / b, NaN when b is 0.
double ratio(double a, double b);

/// @p add(group, position, r) for each selected row r of @p u that windowed statistics use
/// (@p filter: in a region, inside the mask).
template <class Add>
void for_each_windowed_site(const SiteFilter& filter, const UnitData& u, Add&& add) {
  const auto& vb = *u.variants;
  for (std::int64_t r = 0; r < u.rows(); ++r) {
    if (!u.selected(r)) continue;
    const auto i = static_cast<std::size_t>(r);
    const auto g = filter.group(vb.contig[i], vb.position[i],
                                static_cast<std::int64_t>(vb.allele(r, 0).size()));
    if (g) add(*g, vb.position[i], r);
  }
}

/// Merge the later partition of a windowed statistic (window accumulator @p later_acc, finished
/// rows @p later_rows) into ours. State of a partition, in output order: [heads][rows][other
/// windows]. Our windows left open absorb the later partition's heads. Its rows follow all of
/// those: if it has any, its heads had closed (open windows are a suffix), so ours are closed
/// now too, and @p rows_of(windows) turns them into rows first.
template <class Acc, class RowsOf>
void merge_windows(Acc& acc, Table& rows, Acc& later_acc, Table& later_rows, RowsOf&& rows_of) {
  const std::size_t mine = acc.pending() - acc.heads();
  acc.merge(later_acc);
  if (later_rows.rows() > 0) {
    rows_of(acc.take_front(mine));
    rows.append(later_rows);
    later_rows = later_rows.empty_like();
  }
}

/// The finished rows: @p rows after the rows of @p windows (through @p rows_of), taken out.
template <class Windows, class RowsOf>
Table take_window_rows(Table& rows, Windows&& windows, RowsOf&& rows_of) {
  rows_of(std::forward<Windows>(windows));
  Table out = std::move(rows);
  rows = out.empty_like();
  return out;
}

}  // namespace vczstats::stats::detail
