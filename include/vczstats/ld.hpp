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

/// @brief Options of `ld --decay`: r² summed in bins of the distance between a pair's variants.
struct LdDecayOptions {
  /// GenotypeR2 (r² of allele counts, as `ld --r2`) or Haplotype (as `ld --hap`).
  PairMeasure measure = PairMeasure::GenotypeR2;
  /// Bin edges in bp of distance, strictly increasing, from 0 or more: bin k holds the pairs
  /// with edges[k] <= pos_b - pos_a < edges[k + 1].
  std::vector<std::int64_t> edges;
  /// --ld-window N: only pairs at most N - 1 selected variants apart (default: any).
  std::int64_t window_variants = std::numeric_limits<std::int64_t>::max();
  /// --window-size: one curve per window [k W + 1, (k + 1) W] of each contig, a pair counted in
  /// the window of its first variant (0: one curve over every contig).
  std::int64_t window_size = 0;
  /// -P: one curve per population of the query (r² over its samples, or haplotypes), all in
  /// one pass over the store.
  bool per_population = false;
};

/// @brief Binned r² (LD decay) without writing pairs: for every pair of the band (same contig,
/// distance below the last edge) whose r² is defined, its distance bin gets one more pair and its
/// r². Table (finish()): [chrom, window_start, window_end (with window_size)], bin_start,
/// bin_end, pairs, sum_r2, mean_r2 (NaN for an empty bin); every bin of every window that holds
/// a pair, or of the one curve. Sums are exact (vczstats/exact_sum.hpp), so partitions (work
/// units, MPI ranks) merge by adding pairs and sums, bin by bin, and give the same bits. With
/// per_population, a leading pop column and the curves of each population in turn, each the
/// table one population alone gives (one variant-pair band per population, masked to its
/// samples, in the same pass).
/// @throws UsageError (bad options, fewer than two samples, a population of fewer than two),
/// FormatError (no call_genotype; Haplotype on unphased heterozygous calls).
std::unique_ptr<Statistic> make_ld_decay(const Query& q, const LdDecayOptions& options);

/// @brief Options of `ld --ld-scores` (ldsc --l2): exactly one of the three windows.
struct LdScoreOptions {
  PairMeasure measure = PairMeasure::GenotypeR2;  ///< or Haplotype
  std::int64_t window_variants = -1;  ///< --ld-wind-snps N: partners at most N variants away
  std::int64_t window_bp = -1;        ///< --ld-wind-kb × 1000: partners at most this many bp away
  double window_cm = -1;              ///< --ld-wind-cm: partners at most this many cM away
  /// --map: the genetic map of window_cm (plink .map: chrom, id, cM, bp, or a HapMap-style
  /// table: Chromosome Position(bp) Rate(cM/Mb) Map(cM); linear between its positions,
  /// extrapolated with the rate of its first or last interval, as ihs --map)
  std::string map;
};

/// @brief LD scores as ldsc --l2: per selected variant, 1 (itself) plus the sum over the other
/// variants of its window on both sides (same contig; in cM: |cM difference| <= window_cm) of
/// r²_adj = r² - (1 - r²) / (n - 2), n the samples (haplotypes) called at both; pairs whose r² is
/// undefined, or with n <= 2, are left out. Table: variant (global index), chrom, pos, pairs
/// (partners summed), l2 (NaN for a variant without variance among its calls). Rows are final
/// (take_rows()) once no later variant can pair with them.
/// @throws UsageError (bad options, fewer than two samples, a map without the contigs),
/// IoError (the map), FormatError (as make_ld_decay).
std::unique_ptr<Statistic> make_ld_scores(const Query& q, const LdScoreOptions& options);

/// @brief Options of `ld-stats`: moments.LD's two-locus statistics in bins of bp distance.
struct LdStatsOptions {
  /// Bin edges in bp, strictly increasing from 0 or more (bin k: edges[k] <= d < edges[k + 1]).
  std::vector<std::int64_t> edges;
  /// Instead of edges: bin edges of recombination distance r = |cM_b - cM_a| / 100 (Morgans, as
  /// moments.LD's r_bins with a map in cM) on @p map, strictly increasing from 0 or more.
  std::vector<double> r_edges;
  std::string map;  ///< with r_edges: a genetic map, as ld --ld-scores --map
  /// --genotypes: the estimators from unphased diploid genotypes (each pair's 3 × 3 table of
  /// non-REF counts over the samples called at both sites), not from phased haplotypes.
  bool genotypes = false;
};

/// @brief moments.LD's statistics of one population from phased haplotype counts (Ragsdale &
/// Gravel's unbiased estimators, as moments.LD.Parsing.compute_ld_statistics sums them): per bin
/// of bp distance, over the pairs of sites (same contig) both polymorphic and called at every
/// selected haplotype, the sums of DD_0_0 (D²), Dz_0_0_0 (D (1 - 2p)(1 - 2q)) and pi2_0_0_0_0
/// (p(1 - p) q(1 - q)); and H_0_0, the sum over those sites of 2 p (1 - p) n / (n - 1). Table
/// (finish()): bin_start, bin_end, pairs, DD_0_0, Dz_0_0_0, pi2_0_0_0_0, sites, H_0_0 (the
/// last two the same on every row). Sums are exact, so partitions merge by addition.
/// Calls are read as haplotypes in the order stored (as ld --hap), phased or not. With
/// options.genotypes, the estimators of unphased diploid genotypes (docs/ld-decay.md): pairs of
/// sites polymorphic among the called alleles of the populations, counted over the samples
/// called at both (a pair with fewer than four such samples in a population is left out); the
/// same columns. Several populations (the query's, up to four): moments.LD's basis
/// (stats/ld_moments.cpp).
/// @throws UsageError (bad options, fewer than four haplotypes, or samples with genotypes; not
/// diploid with genotypes), FormatError (no call_genotype).
std::unique_ptr<Statistic> make_ld_stats(const Query& q, const LdStatsOptions& options);

}  // namespace vczstats
