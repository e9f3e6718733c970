// Hardy–Weinberg exact test: the null distribution of the heterozygote count given the allele
// counts, walked outwards from its mode with the ratio of successive probabilities (no
// factorials, so no overflow), then the p-value sums the outcomes no more likely than observed.

#include "vczstats/hardy.hpp"

#include <algorithm>
#include <vector>

namespace vczstats::stats {

double hwe_exact_p(std::int64_t het, std::int64_t hom1, std::int64_t hom2, bool midp) {
  const std::int64_t n = het + hom1 + hom2;
  if (n <= 0) return 1.0;
  const std::int64_t rare_hom = std::min(hom1, hom2), common_hom = std::max(hom1, hom2);
  const std::int64_t rare = 2 * rare_hom + het;  // copies of the rarer allele
  (void)common_hom;
  // Heterozygote counts share the parity of `rare`; start at the mode.
  std::int64_t mode = rare * (2 * n - rare) / (2 * n);
  if ((mode & 1) != (rare & 1)) ++mode;
  // Only the counts of rare's parity are written and read (the others have probability 0), so the
  // buffer is reused between calls without clearing: no allocation per site.
  thread_local std::vector<double> p;
  if (p.size() < static_cast<std::size_t>(rare + 1)) p.resize(static_cast<std::size_t>(rare + 1));
  p[static_cast<std::size_t>(mode)] = 1.0;
  double total = 1.0;
  {  // fewer heterozygotes: each step turns two hets into one rare and one common homozygote
    std::int64_t h = mode, rh = (rare - mode) / 2, ch = n - mode - rh;
    for (; h > 1; h -= 2) {
      const double next = p[static_cast<std::size_t>(h)] * static_cast<double>(h) *
                          static_cast<double>(h - 1) /
                          (4.0 * static_cast<double>(rh + 1) * static_cast<double>(ch + 1));
      p[static_cast<std::size_t>(h - 2)] = next;
      total += next;
      ++rh;
      ++ch;
    }
  }
  {  // more heterozygotes
    std::int64_t h = mode, rh = (rare - mode) / 2, ch = n - mode - rh;
    for (; h <= rare - 2; h += 2) {
      const double next = p[static_cast<std::size_t>(h)] * 4.0 * static_cast<double>(rh) *
                          static_cast<double>(ch) /
                          (static_cast<double>(h + 2) * static_cast<double>(h + 1));
      p[static_cast<std::size_t>(h + 2)] = next;
      total += next;
      --rh;
      --ch;
    }
  }
  const double observed = p[static_cast<std::size_t>(het)] * (1.0 + 1e-7);
  double sum = 0;
  for (std::int64_t h = rare & 1; h <= rare; h += 2)  // ascending, as the sum always was
    if (p[static_cast<std::size_t>(h)] <= observed) sum += p[static_cast<std::size_t>(h)];
  if (midp) sum -= 0.5 * p[static_cast<std::size_t>(het)];
  return std::min(1.0, sum / total);
}

}  // namespace vczstats::stats
