#pragma once
/// @file ld.hpp
/// @brief Linkage disequilibrium between nearby variants: `ld` (plink 1.9 --r2 [dprime],
/// vcftools --geno-r2 / --hap-r2) and `prune` (plink 1.9 --indep-pairwise). Definitions, the
/// handling of missing calls and multi-allelic sites, and the differences from plink and
/// vcftools: tests/tools/POPGEN.md, "Linkage".

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "vczstats/query.hpp"
#include "vczstats/statistic.hpp"

namespace vczstats {

/// @brief Options of `ld`.
struct LdOptions {
  /// GenotypeR2, GenotypeEm (with D') or Haplotype (with D and D'); not PruneEdge.
  PairMeasure measure = PairMeasure::GenotypeR2;
  /// --ld-window N: pairs at most N - 1 selected variants apart (plink's default 10).
  std::int64_t window_variants = 10;
  /// --ld-window-kb × 1000 (or --ld-window-bp): pairs at most this many bp apart.
  std::int64_t window_bp = 1000000;
  /// --ld-window-r2: report pairs with r² >= this (pairs whose r² is undefined never).
  double min_r2 = 0.2;
  /// --ld-snp / --ld-snp-list: variant IDs; each is paired with every variant of its window on
  /// both sides, itself included (empty: every pair of the window, earlier variant first).
  std::vector<std::string> focal;
};

/// @brief Pairs of variants and their LD, sorted by the first variant (the focal one with
/// focal IDs), then the second. Table: variant_a, chrom_a, pos_a, variant_b, chrom_b, pos_b
/// (variants as global indices), n (samples or, for Haplotype, haplotypes with both calls),
/// r2, then dprime (GenotypeEm) or d, dprime (Haplotype). Rows are final (take_rows()) once no
/// later variant can pair with their first variant.
/// @throws UsageError (bad options, focal IDs not among the selected variants, fewer than two
/// samples), FormatError (no call_genotype; Haplotype on unphased heterozygous calls, found
/// during the run).
std::unique_ptr<Statistic> make_ld(const Query& q, const LdOptions& options);

/// @brief Options of `prune` (plink --indep-pairwise W S r2).
struct PruneOptions {
  std::int64_t window = 50;  ///< W: variants, or kb with window_kb
  bool window_kb = false;    ///< W is in kb (plink's "W kb")
  std::int64_t step = 5;     ///< S: variants the window moves by
  double r2 = 0.5;           ///< prune one of each pair with r² above this
};

/// @brief plink 1.9's greedy pairwise pruning. Table: variant (global index), chrom, pos, kept
/// (1: in prune.in, 0: in prune.out), one row per selected variant in plan order; rows are final
/// once the window has passed them.
/// @throws UsageError (bad options, fewer than two samples), FormatError (no call_genotype).
std::unique_ptr<Statistic> make_prune(const Query& q, const PruneOptions& options);

}  // namespace vczstats
