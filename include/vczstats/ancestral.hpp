#pragma once
/// @file ancestral.hpp
/// @brief The ancestral allele of each site, for unfolded statistics: REF, the store's
/// variant_AA array (INFO/AA), or the base of an ancestral-sequence FASTA at POS.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vczstats/variants.hpp"

namespace vczstats::vcz {

/// @brief Resolves ancestral allele indices for VariantBlocks.
class AncestralAlleles {
 public:
  /// @brief @p spec: "ref" (REF is ancestral), "aa" (variant_AA of the store), or the path of a
  /// FASTA file (plain text; a .fai beside it is not needed). @throws UsageError, IoError,
  /// FormatError.
  AncestralAlleles(const VczStore& store, const std::string& spec);
  ~AncestralAlleles();
  /// @brief What the output should say about polarisation.
  std::string description() const { return describe(spec_); }
  /// @brief The same, from the option text alone (no file is read).
  static std::string describe(const std::string& spec);
  /// @brief The ancestral allele index of each row of @p block (-1: unknown). An allele matches
  /// when it equals the ancestral text, ignoring case ("A|||" style INFO/AA values use the part
  /// before '|'); a FASTA gives one base, so only single-base alleles can match it; 'N', '-',
  /// '.' and absent values are unknown.
  std::vector<int> indices(const VariantBlock& block);

 private:
  struct Fasta;
  enum class Kind { Ref, Aa, Fasta } kind_ = Kind::Ref;
  const VczStore& store_;
  std::string spec_;
  std::optional<zarr::Array> aa_;
  std::unique_ptr<Fasta> fasta_;
};

}  // namespace vczstats::vcz
