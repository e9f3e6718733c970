#pragma once
/// @file afdist.hpp
/// @brief afdist: the distribution of genotype probabilities given the allele frequency, the
/// benchmark statistic of the VCF Zarr publication and of bcftools +af-dist.

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vczstats/genotypes.hpp"
#include "vczstats/product_key.hpp"

namespace vczstats::stats {

/// @brief Which definition of afdist to compute.
enum class AfdistMethod {
  /// `bcftools +fill-tags -- -t AF | bcftools +af-dist`: AF of ALT 1 from called alleles
  /// (fill-tags counting), float32 arithmetic, samples with a missing allele or a ploidy below
  /// the record's skipped, dosage counts allele 1 only; bins are float32 edges i/N.
  Bcftools,
  /// zarr_afdist of the VCF Zarr publication: diploid only, missing alleles count as non-ref,
  /// hom-alt is a==b && a!=0, n = all selected samples; bins linspace(0,1,N+1) with the last
  /// edge + 0.0125, np.digitize semantics, float64.
  ZarrAfdist,
};

/// @brief Parse "bcftools" or "zarr-afdist". @throws UsageError.
AfdistMethod parse_afdist_method(const std::string& name);
/// @brief The option spelling of a method.
std::string to_string(AfdistMethod m);

/// @brief Options of afdist.
struct AfdistOptions {
  AfdistMethod method = AfdistMethod::Bcftools;
  int bins = 10;
};

/// @brief Per-site counts of the heavy pass (additive across sample blocks, see merge_site).
/// Only the fields of the chosen method are filled.
struct AfdistSite {
  // --method bcftools
  std::int32_t an = 0;         ///< called alleles, bcftools +fill-tags rules
  std::int32_t ac1 = 0;        ///< copies of allele 1, bcftools +fill-tags rules
  std::int32_t n_dosage1 = 0;  ///< complete samples of the record ploidy with one allele 1
  std::int32_t n_dosage2 = 0;  ///< ... with two copies of allele 1
  std::int32_t ploidy = 0;     ///< record ploidy: the largest non-fill length seen
  // --method zarr-afdist
  std::int32_t ref_count = 0;  ///< alleles equal to 0
  std::int32_t het = 0;        ///< samples with a != b
  std::int32_t hom_alt = 0;    ///< samples with a == b != 0
};

/// @brief The finished histogram.
struct AfdistResult {
  AfdistMethod method = AfdistMethod::Bcftools;
  std::vector<double> edges;          ///< bins + 1 edges, as the method defines them
  std::vector<std::uint64_t> counts;  ///< one per bin
  std::int64_t sites = 0;             ///< variants reduced
  /// @brief Text of an edge: shortest round-trip form (float32 for bcftools, float64 else).
  std::string edge_text(std::size_t i) const;
};

/// @brief The site pass's product of every unit's per-site afdist counts (vczstats/products.hpp):
/// a std::span<const AfdistSite> of the unit's rows, host memory, valid while the unit is handed
/// over. Its parameter: the AfdistMethod whose fields are counted.
inline constexpr ProductKey kAfdistCounts{"afdist counts"};

/// @brief The afdist accumulator: init / accumulate per-site counts of a variant block / merge
/// / finalize. Merge is associative and commutative (integer histograms).
class AfdistAccumulator {
 public:
  using Site = AfdistSite;
  /// @brief Start an empty histogram for @p num_samples selected samples.
  void init(const AfdistOptions& options, std::int64_t num_samples, std::int64_t ploidy);
  /// @brief Sites per variant row (one AfdistSite).
  std::int64_t site_width() const { return 1; }
  /// @brief Heavy pass: add the calls of @p block to @p sites (one per row of the block). CPU
  /// loop; the CUDA backend runs the same per-call math in its kernel.
  void count_sites(const GenotypeChunkView& block, std::span<Site> sites) const;
  /// @brief Combine the counts of one site from two disjoint sets of samples.
  static void merge_site(Site& into, const Site& from);
  /// @brief Reduce the finished per-site counts of a variant block (mask: 1 = selected; empty
  /// = all) into the histogram.
  void accumulate(std::span<const Site> sites, std::span<const std::uint8_t> mask);
  /// @brief Add another accumulator's histogram (same options).
  void merge(const AfdistAccumulator& other);
  AfdistResult finalize() const;
  /// @brief The histogram and site count so far (to carry a partition's state elsewhere).
  std::pair<std::vector<std::uint64_t>, std::int64_t> state() const { return {counts_, sites_}; }
  /// @brief Replace them. @throws FormatError when the number of bins differs.
  void set_state(std::vector<std::uint64_t> counts, std::int64_t sites);
  const AfdistOptions& options() const { return options_; }
  /// @brief Use only the generic per-call loop (testing the specialised fast paths).
  void set_generic_only(bool on) { generic_only_ = on; }

 private:
  AfdistOptions options_;
  std::int64_t num_samples_ = 0;
  std::vector<float> edges_f_;
  std::vector<double> edges_d_;
  std::vector<std::uint64_t> counts_;
  std::int64_t sites_ = 0;
  bool generic_only_ = false;
};

}  // namespace vczstats::stats
