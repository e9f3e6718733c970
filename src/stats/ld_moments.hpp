#pragma once
// moments.LD's two-locus statistics (ld-stats, vczstats/ld.hpp) of one pair of sites in one
// population from its haplotype counts, and the counts recovered from what the pair band hands
// out (n and D of the pair, the non-REF counts of its rows).

#include <cmath>
#include <cstdint>

#include <memory>

#include "stats/haplo_rows.hpp"
#include "stats/ld_math.hpp"
#include "stats/ld_moments_terms.hpp"
#include "vczstats/error.hpp"
#include "vczstats/ld.hpp"
#include "vczstats/table.hpp"

namespace vczstats::stats::moments {

/// One population's estimators of D², D (1 - 2p)(1 - 2q) and p (1 - p) q (1 - q).
struct MomentsTerms {
  double dd = 0, dz = 0, pi2 = 0;
};

/// Counts below this many haplotypes have their estimators' numerators (products of four
/// counts, a few of them added) exact in 64 bits; above, in 128.
constexpr std::int64_t kNarrowHaplotypes = std::int64_t{1} << 15;

/// moments_terms() in the integer type @p I, over @p den = n (n - 1)(n - 2)(n - 3).
template <class I>
MomentsTerms moments_terms_in(I a, I b, I c, I d, double den) {
  const I dd = a * (a - 1) * d * (d - 1) + b * (b - 1) * c * (c - 1) - 2 * a * b * c * d;
  const I dz = (a * d - b * c) * (c + d - a - b) * (b + d - a - c) +
               (a * d - b * c) * (b + c - a - d) + 2 * (b * c + a * d);
  const I pi2 = (a + b) * (a + c) * (b + d) * (c + d) - a * d * (-1 + a + 3 * b + 3 * c + d) -
                b * c * (-1 + 3 * a + b + c + 3 * d);
  return {static_cast<double>(dd) / den, static_cast<double>(dz) / den,
          static_cast<double>(pi2) / den};
}

/// Ragsdale & Gravel's unbiased estimators from the haplotype counts c1 (AB), c2 (Ab), c3 (aB),
/// c4 (ab): numerators exact integers (64 bits when they fit, else 128), then one division.
inline MomentsTerms moments_terms(std::int64_t c1, std::int64_t c2, std::int64_t c3,
                                  std::int64_t c4) {
  const std::int64_t n = c1 + c2 + c3 + c4;
  if (n < kNarrowHaplotypes)
    return moments_terms_in<std::int64_t>(c1, c2, c3, c4,
                                          static_cast<double>(n * (n - 1) * (n - 2) * (n - 3)));
  __extension__ typedef __int128 I;
  const I w = n;
  return moments_terms_in<I>(c1, c2, c3, c4, static_cast<double>(w * (w - 1) * (w - 2) * (w - 3)));
}

/// The haplotypes REF at both sites of a pair from its band values: @p n haplotypes called at
/// both, @p a and @p b non-REF at the first and the second, @p d the pair's D = x11 / n - p q
/// (REF frequencies p, q): x11 = n D + (n - a)(n - b) / n, an integer to far better than 1/2,
/// checked by computing D again from the counts (one haplotype more or less in a cell moves D
/// by 1/n). @throws Error when they do not agree.
inline std::int64_t ref_at_both(std::int64_t n, std::int64_t a, std::int64_t b, double d) {
  const double x =
      static_cast<double>(n) * d + static_cast<double>((n - a) * (n - b)) / static_cast<double>(n);
  const std::int64_t x11 = std::llround(x);
  ld::HaplotypeCounts c;
  c.n = n;
  c.a = a;
  c.b = b;
  c.ab = x11 - (n - a - b);  // non-REF at both
  if (!(c.ab >= 0 && c.ab <= std::min(a, b)) ||
      !(std::fabs(ld::haplotype_values(c).d - d) < 0.25 / static_cast<double>(n)))
    throw Error("ld-stats: the haplotype counts of a pair could not be recovered");
  return x11;
}

/// Where ld-stats puts a pair: bins of bp distance, or of recombination distance on a map
/// (ld_summary.cpp).
class PairBinner {
 public:
  /// @throws UsageError for bad edges, or a map without r edges and the reverse.
  PairBinner(const Query& q, const LdStatsOptions& o);
  std::size_t bins() const { return r_ ? r_edges_.size() - 1 : edges_.size() - 1; }
  /// The band's reach: the largest bp distance a binned pair may have.
  std::int64_t max_bp() const { return max_bp_; }
  /// The bin of the pair at @p a and @p b (same contig, a <= b), or -1.
  std::int64_t bin(std::int32_t contig, std::int64_t a, std::int64_t b) const {
    return bin_at(a, b, coordinate(contig, a), coordinate(contig, b));
  }
  /// A site's coordinate for bin_at(): its cM on the map (bins of r), else 0.
  double coordinate(std::int32_t contig, std::int64_t pos) const;
  /// bin() from the sites' positions and coordinates (a site's kept once, not looked up again).
  std::int64_t bin_at(std::int64_t a, std::int64_t b, double ca, double cb) const;
  /// The edges as pair_bin() (stats/ld_moments_terms.hpp) reads them: pointers into this binner.
  BinEdges edges() const {
    return {static_cast<std::int64_t>(bins()), r_, edges_.data(), r_edges_.data()};
  }
  /// Add the columns bin_start, bin_end (bp: integers; r: floats) to @p t.
  void add_columns(Table& t) const;
  /// Push bin @p k's edges into columns 0 and 1 of @p t.
  void push_edges(Table& t, std::size_t k) const;
  /// "bp distance pos_b - pos_a" or "recombination distance (Morgans) on MAP".
  std::string what() const;

 private:
  std::vector<std::int64_t> edges_;
  std::vector<double> r_edges_;
  std::shared_ptr<const haplo::GeneticMap> map_;
  std::shared_ptr<const std::vector<std::string>> contigs_;
  bool r_ = false;
  std::int64_t max_bp_ = 0;
};

/// ld-stats of the query's two or more populations (ld_moments.cpp).
std::unique_ptr<Statistic> make_ld_stats_pops(const Query& q, const LdStatsOptions& options);

}  // namespace vczstats::stats::moments
