#pragma once
/// @file haplotypes.hpp
/// @brief The haplotype family: bit-packed phased haplotypes from the heavy pass, and the
/// haplotype and selection statistics built on them (haplotype diversity and Garud's H per
/// window, EHH decay, iHS, nSL, XP-EHH, XP-nSL). Definitions: tests/tools/POPGEN.md §11.
//
// Work beyond a partition: these statistics need the haplotypes on both sides of every site
// (EHH is integrated outward until it decays; a window may start in an earlier partition). A
// statistic keeps the rows it has been fed, and reads the rows it lacks — the halo before its
// partition, the flanks after it, whole windows after a merge — from the query's store itself
// (the same decoding and packing as the heavy pass, on the calling thread). save() carries the
// sites whose flanks are not yet known, and finish() completes them, so partitions merged in
// order equal one pass.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vczstats/packed_haplotypes.hpp"
#include "vczstats/query.hpp"
#include "vczstats/statistic.hpp"

namespace vczstats {

/// @brief The four selection scans.
enum class SelectionScan {
  Ihs,    ///< iHS (Voight et al. 2006): per population
  Nsl,    ///< nSL (Ferrer-Admetlla et al. 2014): per population
  Xpehh,  ///< XP-EHH (Sabeti et al. 2007): per pair of populations
  Xpnsl,  ///< XP-nSL (Szpiech et al. 2021): per pair of populations
};

/// @brief Options of the selection scans (selscan's names and defaults).
struct SelectionOptions {
  double maf = 0.05;         ///< iHS, nSL: sites with a minor allele frequency below are left out
  double cutoff = 0.05;      ///< EHH below which integration stops (nSL: 0, as selscan 2)
  double gap_scale = 20000;  ///< gaps longer than this many bp count as gap_scale bp
  double max_gap = 200000;   ///< a gap longer than this many bp drops the site
  double max_extend = 1000000;        ///< iHS, XP-EHH: stop this many bp from the site (<= 0: none)
  std::int64_t max_extend_nsl = 100;  ///< nSL, XP-nSL: stop this many sites away (<= 0: none)
  bool trunc_ok = false;              ///< integrate up to a contig end instead of dropping the site
  std::string map;  ///< genetic map (plink .map or HapMap-style table); empty: physical
  int bins = 100;   ///< iHS, nSL: allele frequency bins of the standardisation
  std::int64_t min_bin_sites = 20;  ///< a bin with fewer scores gives no standardised values
  double crit = 2;                  ///< |standardised score| >= crit is extreme (windows)
  std::string pairs;                ///< XP: "A,B;C,D" (empty: every pair of populations, in order)
};

/// @brief A selection scan: per-site table (chrom, pos, variant, population or pop1/pop2,
/// frequencies, integrated EHH, the unstandardised and standardised score, the left and right
/// integrals), and after finish() a per-window summary.
class SelectionStatistic : public Statistic {
 public:
  /// @brief Per window of the query's windows and population (pair), over the sites with a
  /// standardised score: chrom, start, end, population (pop1, pop2), n_scores, frac_gt,
  /// frac_lt, frac_crit (|score| >= crit), max_score, min_score. Valid after finish().
  virtual Table windows() const = 0;
};

/// @brief iHS, nSL, XP-EHH or XP-nSL over the query's populations. @throws UsageError.
std::unique_ptr<SelectionStatistic> make_selection_scan(const Query& q, SelectionScan scan,
                                                        const SelectionOptions& options);

/// @brief Haplotype statistics per window of the query and population: chrom, start, end,
/// population, n_sites, n_used, n_haplotypes, n_distinct, hap_diversity, h1, h12, h123, h2_h1.
std::unique_ptr<Statistic> make_haplotype_windows(const Query& q);

/// @brief Options of the EHH decay.
struct EhhOptions {
  std::vector<std::pair<std::string, std::int64_t>> focal;  ///< (contig, position)
  std::int64_t window = 100000;                             ///< bp on each side
  double maf = 0.05;  ///< flanking sites below this minor allele frequency are left out
  std::string map;    ///< genetic map, as SelectionOptions::map
};

/// @brief EHH of the derived and ancestral carriers and of all haplotypes at every site within
/// the window of each focal site, per population: chrom, focal_pos, population, pos, distance,
/// variants, gdistance, ehh_derived, ehh_ancestral, ehh. Reads its windows from the store in
/// finish() (a point query: it needs no pass over the plan).
std::unique_ptr<Statistic> make_ehh(const Query& q, const EhhOptions& options);

}  // namespace vczstats
