#pragma once
/// @file statistics.hpp
/// @brief Every statistic of the site family, as a library object (statistic.hpp) made from a
/// query and its options. Definitions: tests/tools/POPGEN.md. Each finishes into a Table whose
/// columns are those the CLI prints (TSV header names).

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vczstats/afdist.hpp"
#include "vczstats/query.hpp"
#include "vczstats/statistic.hpp"

namespace vczstats {

/// @brief afdist (bcftools +af-dist or the VCF Zarr publication's zarr_afdist). Table: start,
/// stop (bin edges), prob_dist.
class AfdistStatistic : public Statistic {
 public:
  /// @brief The histogram so far (after finish(): of the whole run).
  virtual stats::AfdistResult result() const = 0;
};
std::unique_ptr<AfdistStatistic> make_afdist(const Query& q, const stats::AfdistOptions& options);

/// @brief The per-site tables, one row per selected site and population.
enum class SiteTable {
  Freq,        ///< plink2 --freq counts: alt_cts, obs_ct, alt_freqs
  GenoCounts,  ///< plink2 --geno-counts
  Hardy,       ///< plink2 --hardy (REF against the rest)
  Missing,     ///< plink2 --missing .vmiss
};
/// @brief Table: variant (global index), contig (label), pos, population (label), then the
/// table's columns. Rows are final after each unit (take_rows()).
std::unique_ptr<Statistic> make_site_table(const Query& q, SiteTable table);

/// @brief Diversity per window and population. Table: chrom, start, end, population, n_sites,
/// n_seg, pi_sum, pi_per_bp, theta_w, theta_w_per_bp, n_max, tajima_d, singletons, n_unfolded,
/// s_unfolded, theta_pi_u, theta_h, theta_l, fay_wu_h, fay_wu_h_norm, zeng_e.
std::unique_ptr<Statistic> make_diversity(const Query& q);

/// @brief Divergence per window and pair of populations (@p pairs "A,B;C,D", empty: all).
/// Table: chrom, start, end, pop1, pop2, n_sites, dxy_sum, dxy_per_bp, pi1_sum, pi2_sum, da_sum,
/// da_per_bp, n_hudson, hudson_num, hudson_den, hudson_fst, n_wc, wc_a, wc_abc, wc_fst,
/// wc_fst_mean, nei_gst.
std::unique_ptr<Statistic> make_divergence(const Query& q, const std::string& pairs);

/// @brief One statistic of the `stats` scan.
struct ScanStatisticInfo {
  const char* name;
  bool pairwise;
  const char* help;
};
/// @brief The statistics the scan knows: pi, theta_w, tajima_d, ..., pbs.
std::span<const ScanStatisticInfo> scan_statistics();

/// @brief Options of the scan.
struct ScanOptions {
  std::vector<std::string> statistics;  ///< names from scan_statistics()
  std::string pairs;                    ///< "A,B;C,D" (empty: every pair)
  std::string pbs;                      ///< "A,B,C" for the pbs statistic
};
/// @brief Several windowed statistics in one pass, long format. Table: chrom, start, end,
/// statistic, populations, value.
std::unique_ptr<Statistic> make_scan(const Query& q, const ScanOptions& options);

/// @brief Options of the site frequency spectrum.
struct SfsOptions {
  bool folded = false;
  bool scaled = false;
  std::string joint;  ///< "A,B": the joint spectrum of two populations (1 to 4 with project)
  /// "N" or "POP=N,...": project each site's called alleles to N by hypergeometric sampling
  /// (sites with fewer called alleles are left out); empty: complete calls only.
  std::string project;
  bool preview = false;           ///< per population and n: sites kept, segregating sites
  std::int64_t memory_mb = 1024;  ///< largest joint projected spectrum (array and table), MiB
};
/// @brief Site frequency spectra. Table: population, n, derived|folded, count[, scaled]; joint:
/// pop1, pop2, n1, n2, derived1, derived2 (or folded1, folded2), count. Projected: the same
/// columns with a float count (joint: pop1..popK, n1..nK, derived1..K, count); preview:
/// population, n, sites, segregating_sites.
std::unique_ptr<Statistic> make_sfs(const Query& q, const SfsOptions& options);

/// @brief A site frequency spectrum as a dense array, as dadi's and moments' Spectrum holds it.
struct SpectrumArray {
  std::vector<std::string> populations;  ///< one per dimension
  std::vector<std::int64_t> shape;       ///< alleles + 1 per population
  std::vector<double> values;            ///< row-major
  std::vector<std::uint8_t> mask;        ///< 1: masked (corners; folded: past the diagonal)
  bool folded = false;
};
/// @brief The array of an unfolded sfs table holding one spectrum (one population's 1-D rows,
/// or a joint one), folded as dadi's Spectrum.fold() when @p fold: entries whose derived
/// counts sum past half the alleles are added to their mirror image and masked, entries at
/// exactly half are averaged with theirs. @throws UsageError for several spectra or none.
SpectrumArray spectrum_array(const Table& unfolded, bool fold);
/// @brief The text of a dadi/moments .fs file: dimensions, folded|unfolded and the quoted
/// population names; the values; the mask (1 masked), each on one line.
std::string fs_text(const SpectrumArray& spectrum);

/// @brief Options of the f-statistics (exactly one of f2, f3, d).
struct FstatsOptions {
  std::string f2, f3, d;
  std::int64_t blocks = 0;  ///< jackknife block size in biallelic sites (0: no jackknife)
};
/// @brief Patterson's f2, f3 or D. Table: stat, pops, n_sites, n_defined, num_sum, den_sum,
/// estimate, n_blocks, se, z.
std::unique_ptr<Statistic> make_fstats(const Query& q, const FstatsOptions& options);

/// @brief Per-sample missingness and inbreeding coefficient. Table (in store order): sample,
/// population, missing_ct, obs_ct, f_miss, o_hom, e_hom, het_obs_ct, f.
std::unique_ptr<Statistic> make_sample_stats(const Query& q);

}  // namespace vczstats
