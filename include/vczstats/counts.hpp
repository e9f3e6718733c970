#pragma once
/// @file counts.hpp
/// @brief The heavy pass shared by the population statistics: per site and per population, the
/// count of every allele, of called alleles and of genotype classes.

#include <cstdint>
#include <span>
#include <vector>

#include "vczstats/genotypes.hpp"

namespace vczstats::stats {

/// @brief Shape of the per-site counts: for each site, `pops` groups of `width()` int32
/// columns: the counts of alleles 0..alleles-1, then the columns of CountColumn.
struct CountsLayout {
  int alleles = 2;  ///< allele columns (the store's maximum number of alleles per site)
  int pops = 1;
  /// @brief Columns of one population.
  int width() const { return alleles + kExtra; }
  /// @brief Columns of one site (all populations).
  std::int64_t site_width() const { return std::int64_t{pops} * width(); }
  /// @brief Number of columns after the allele counts.
  static constexpr int kExtra = 6;
};

/// @brief The columns after the allele counts, as offsets from `alleles`.
/// A sample's genotype is its slots before the first fill (-2). It is *missing* when any of
/// them is missing (negative); otherwise it is classified by its alleles: all REF → hom_ref;
/// REF and ALT → het_ref; one ALT allele only → hom_alt; two or more distinct ALT alleles and no
/// REF → het_alt. A haploid call is hom_ref or hom_alt. A sample with no slot (all fill) counts
/// nowhere. Called alleles count in `called` and, when below `alleles`, in their allele column
/// (so called minus the allele columns' sum is the number of out-of-range allele indices).
enum CountColumn : int {
  kCalled = 0,
  kHomRef = 1,
  kHetRef = 2,
  kHomAlt = 3,
  kHetAlt = 4,
  kMissing = 5,
};

/// @brief The heavy pass over genotype blocks into per-site counts (int32: additive across
/// sample blocks, merged by plain addition).
class AlleleCountsPass {
 public:
  using Site = std::int32_t;
  /// @brief @p population_of: population index of each selected sample, in selection order;
  /// empty means one population.
  void init(const CountsLayout& layout, std::vector<std::int32_t> population_of);
  const CountsLayout& layout() const { return layout_; }
  /// @brief int32 columns per site: layout().site_width().
  std::int64_t site_width() const { return layout_.site_width(); }
  /// @brief Heavy pass: ADD the counts of @p block (its columns are the selected samples
  /// [block.sample_offset, block.sample_offset + block.samples)) to @p sites, rows × site_width.
  void count_sites(const GenotypeChunkView& block, std::span<Site> sites) const;
  static void merge_site(Site& into, const Site& from) { into += from; }
  /// @brief Use only the generic per-call loop (testing the specialised fast paths).
  void set_generic_only(bool on) { generic_only_ = on; }
  /// @brief Population of each selected sample.
  const std::vector<std::int32_t>& population_of() const { return population_of_; }

  /// @brief A maximal run [begin, end) of a block's columns that belong to one population.
  struct Segment {
    std::int64_t begin = 0, end = 0;
    std::int32_t pop = 0;
  };
  /// @brief The population segments of a block's columns.
  std::vector<Segment> segments(const GenotypeChunkView& block) const;

 private:
  CountsLayout layout_;
  std::vector<std::int32_t> population_of_;
  bool generic_only_ = false;
};

}  // namespace vczstats::stats
