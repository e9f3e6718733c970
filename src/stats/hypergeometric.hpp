#pragma once
// Hypergeometric probabilities for projecting site frequency spectra to a smaller sample
// (Marth et al. 2004; dadi's and moments' project): the chance of j derived alleles among N
// alleles drawn without replacement from n, of which d are derived.

#include <algorithm>
#include <cstdint>
#include <vector>

namespace vczstats::stats {

/// @brief P(j) = C(d, j) C(n - d, N - j) / C(n, N) for j = lo .. hi, the values that can be
/// non-zero (lo = max(0, N - (n - d)), hi = min(N, d)), into @p w (hi - lo + 1 entries);
/// returns lo. Needs 0 <= d <= n and 0 <= N <= n.
///
/// Computed without factorials: 1 at the mode, the ratios
///   P(j + 1) / P(j) = (d - j)(N - j) / ((j + 1)(n - d - N + j + 1))
/// outwards from it (every step below 1, so nothing overflows and far tails underflow to 0),
/// then divided by their sum. Each value carries a relative error of about 2 |j - mode| ulp,
/// whatever n (no log-gamma differences of large numbers).
inline std::int64_t hypergeometric(std::int64_t n, std::int64_t d, std::int64_t N,
                                   std::vector<double>& w) {
  const std::int64_t lo = std::max<std::int64_t>(0, N - (n - d)), hi = std::min(N, d);
  w.assign(static_cast<std::size_t>(hi - lo + 1), 0.0);
  const std::int64_t mode = std::clamp((N + 1) * (d + 1) / (n + 2), lo, hi);
  auto at = [&](std::int64_t j) -> double& { return w[static_cast<std::size_t>(j - lo)]; };
  at(mode) = 1.0;
  for (std::int64_t j = mode; j < hi; ++j)
    at(j + 1) = at(j) * (static_cast<double>(d - j) * static_cast<double>(N - j)) /
                (static_cast<double>(j + 1) * static_cast<double>(n - d - N + j + 1));
  for (std::int64_t j = mode; j > lo; --j)
    at(j - 1) = at(j) * (static_cast<double>(j) * static_cast<double>(n - d - N + j)) /
                (static_cast<double>(d - j + 1) * static_cast<double>(N - j + 1));
  double sum = 0;
  for (double v : w) sum += v;
  for (double& v : w) v /= sum;
  return lo;
}

}  // namespace vczstats::stats
