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

}  // namespace vczstats::stats::detail
