#pragma once
/// @file filters.hpp
/// @brief Variant (site) filters of a query, with plink2's and bcftools' names and meanings.
/// They remove sites from the query's plan (the rows of its work units), so every statistic of
/// every family, on every device and under MPI, sees the same filtered sites.
///
/// Two kinds: those of the variant metadata alone (--snps-only, --min-alleles, --max-alleles,
/// --apply-filters, --min-qual), applied when the query is built; and those of the genotype
/// counts over the selected samples (--maf, --max-maf, --mac, --max-mac, --geno, --hwe), applied
/// by compute() inside its own pass for statistics that need only per-site counts, else by
/// apply_count_filters() with one counting pass over the genotypes first (prepare_count_filters
/// in compute.hpp chooses). An -i/-e expression (site_expression.hpp) is of the first kind
/// unless it reads counts (AC, AN, AF, MAF, MAC, F_MISSING, N_MISSING); then it is evaluated
/// with the count filters.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vczstats {

/// @brief The site filters of a query (all off by default).
struct VariantFilterOptions {
  bool snps_only = false;  ///< --snps-only: every allele one base long (plink2)
  int min_alleles = 0;  ///< --min-alleles: at least this many alleles, REF included (bcftools -m)
  int max_alleles = 0;  ///< --max-alleles: at most this many alleles (0: no limit; bcftools -M)
  /// --apply-filters: keep sites whose FILTER holds one of these names ("." = no filter set),
  /// as bcftools -f
  std::vector<std::string> apply_filters;
  std::optional<double> min_qual;       ///< --min-qual: QUAL at least this (missing QUAL fails)
  std::optional<double> maf;            ///< --maf: 1 - (major allele frequency) at least this
  std::optional<double> max_maf;        ///< --max-maf: at most this
  std::optional<std::int64_t> mac;      ///< --mac: non-major allele count at least this
  std::optional<std::int64_t> max_mac;  ///< --max-mac: at most this
  std::optional<double> geno;           ///< --geno: missing-genotype rate at most this
  std::optional<double> hwe;            ///< --hwe: HWE exact test p-value at least this
  bool hwe_midp = false;                ///< --hwe-midp: the mid-p version of the test
  /// --min-gq / --min-dp: genotypes with a GQ (DP) below this count as missing in every
  /// statistic (plink2 --vcf-min-gq/--vcf-min-dp, bcftools +setGT -n . -i 'FMT/GQ<N'); a missing
  /// GQ (DP) masks nothing. CPU runs only, for now.
  int min_gq = 0;
  int min_dp = 0;
  /// -i/--include, -e/--exclude: a bcftools-style expression; keep the sites where it is true
  /// (include) or not true (exclude). At most one of them.
  std::optional<std::string> include, exclude;

  /// @brief Whether an -i/-e expression is given.
  bool expression() const { return include.has_value() || exclude.has_value(); }

  /// @brief Whether genotypes are masked (--min-gq, --min-dp).
  bool genotype_masks() const { return min_gq > 0 || min_dp > 0; }

  /// @brief Whether any filter of the variant metadata is set.
  bool metadata() const {
    return snps_only || min_alleles > 0 || max_alleles > 0 || !apply_filters.empty() ||
           min_qual.has_value();
  }
  /// @brief Whether any filter of the genotype counts is set.
  bool counts() const {
    return maf.has_value() || max_maf.has_value() || mac.has_value() || max_mac.has_value() ||
           geno.has_value() || hwe.has_value();
  }
  bool any() const { return metadata() || counts() || genotype_masks() || expression(); }
  /// @brief The filters as command-line options ("--snps-only --maf 0.01"), for notes.
  std::string describe() const;
  /// @brief @throws UsageError naming the option when a value is out of range.
  void validate() const;
};

namespace stats {

/// @brief Whether a site with these counts over the selected samples passes the count filters:
/// @p allele_counts the copies of each allele (called alleles), @p genotypes the samples with
/// a genotype (missing ones included), @p missing those missing, @p hom_ref, @p het_ref,
/// @p hom_other the classes of the HWE test (REF against the other alleles, as `hardy`).
bool passes_count_filters(const VariantFilterOptions& f, const std::int32_t* allele_counts,
                          int alleles, std::int64_t genotypes, std::int64_t missing,
                          std::int64_t hom_ref, std::int64_t het_ref, std::int64_t hom_other);

}  // namespace stats
}  // namespace vczstats
