#pragma once
// Private helpers shared by the statistics of src/stats/.

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

/// Labels of contigs and populations, shared by a statistic's tables.
inline std::shared_ptr<const std::vector<std::string>> contig_labels(const Query& q) {
  return std::make_shared<const std::vector<std::string>>(q.store.contig_ids());
}
inline std::shared_ptr<const std::vector<std::string>> population_labels(const Query& q) {
  return std::make_shared<const std::vector<std::string>>(q.pops.names);
}

/// a / b, NaN when b is 0.
double ratio(double a, double b);

}  // namespace vczstats::stats::detail
