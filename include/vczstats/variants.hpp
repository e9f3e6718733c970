#pragma once
/// @file variants.hpp
/// @brief Per-variant fields (contig, position, ID, alleles) of a range of variants, for
/// statistics that report sites or windows.

#include <cstdint>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "vczstats/vcz.hpp"

namespace vczstats::vcz {

/// @brief The fields of variants [begin, end).
struct VariantBlock {
  std::int64_t begin = 0, end = 0;
  std::vector<std::int32_t> contig;    ///< index into VczStore::contig_ids()
  std::vector<std::int64_t> position;  ///< 1-based POS
  std::vector<std::string> id;         ///< "." when absent; empty when ids were not requested
  int max_alleles = 0;                 ///< columns of alleles
  /// rows × max_alleles, "" padding; empty when not requested or the store has no
  /// variant_allele
  std::vector<std::string> alleles;
  std::int64_t size() const { return end - begin; }
  /// @brief Number of alleles of row @p r (REF included; trailing "" padding excluded).
  int num_alleles(std::int64_t r) const;
  /// @brief Allele @p k of row @p r ("N" when the alleles were not read).
  const std::string& allele(std::int64_t r, int k) const {
    static const std::string unnamed(1, 'N');
    return alleles.empty() ? unnamed : alleles[static_cast<std::size_t>(r * max_alleles + k)];
  }
};

/// @brief Reads VariantBlocks. Thread-safe (arrays are immutable).
class VariantReader {
 public:
  /// @brief @p with_alleles / @p with_ids: also read variant_allele / variant_id (when the store
  /// has them); with @p key_missing_ids, an absent ID (".", or no variant_id) reads as
  /// variant_key's CHROM:POS:REF:ALT (the alleles are read too).
  /// @throws FormatError when variant_contig is missing.
  VariantReader(const VczStore& store, bool with_alleles, bool with_ids,
                bool key_missing_ids = false);
  VariantBlock read(std::int64_t begin, std::int64_t end) const;
  /// @brief Append to @p keys the chunk keys read() reads for variants [begin, end) (every
  /// array it reads; those already in @p seen are skipped and added to it).
  void chunk_keys(std::int64_t begin, std::int64_t end, std::vector<std::string>& keys,
                  std::unordered_set<std::string>& seen) const;
  /// @brief Read-ahead hint for a remote store: the chunks of @p units' variants, in plan order
  /// (no-op for local stores), so that they are fetched many at a time instead of one round
  /// trip each as read() first meets them.
  void prefetch(std::span<const WorkUnit> units) const;
  /// @brief Allele columns of variant_allele (2 when the store has none).
  int max_alleles() const { return max_alleles_; }

 private:
  const VczStore& store_;
  zarr::Array contig_, position_;
  std::optional<zarr::Array> alleles_, ids_;
  bool with_ids_ = false;
  bool key_missing_ids_ = false;
  int max_alleles_ = 2;
};

/// @brief The ID of row @p r of @p b, or where it has none ("." or empty) CHROM:POS:REF:ALT with
/// the ALT alleles comma-separated ("." when there is none), as `bcftools annotate --set-id
/// +'%CHROM:%POS:%REF:%ALT'` names them (plink2 --set-missing-var-ids for biallelic sites).
/// @p b holds the alleles when the ID is absent.
std::string variant_key(const VczStore& store, const VariantBlock& b, std::int64_t r);

/// @brief The number of allele columns of a store's variant_allele (2 when absent).
int store_max_alleles(const VczStore& store);

}  // namespace vczstats::vcz
