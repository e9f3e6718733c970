#pragma once
// PhasedReader: checks that the calls of a decoded genotype block are phased, from the
// matching chunk of call_genotype_phased (the haplotype statistics need phased haplotypes).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "stream/genotype_reader.hpp"
#include "vczstats/genotypes.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats::stream {

class PhasedReader {
 public:
  /// @throws FormatError when the store has no call_genotype_phased, or chunks it unlike
  /// call_genotype.
  PhasedReader(const vcz::VczStore& store, const vcz::SampleSelection& samples,
               const GenotypeReader& genotypes);
  /// Throw FormatError naming the sample and the variant of the first call of @p view (block
  /// @p block of @p unit) with two or more called alleles whose call_genotype_phased is false.
  /// Rows outside the unit's mask are not checked. @p buffer holds one decoded chunk.
  void check(const vcz::WorkUnit& unit, std::size_t block, const GenotypeChunkView& view,
             std::vector<std::byte>& buffer) const;
  /// The same check where the genotypes are not decoded on the host (the GPU decodes them): when
  /// every selected call of the block's rows has its call_genotype_phased flag set (a phased
  /// store), nothing more is read; otherwise the block is decoded here into @p scratch and
  /// check() decides (a flag may be false on a call with fewer than two called alleles).
  void check_encoded(const vcz::WorkUnit& unit, std::size_t block, std::vector<std::byte>& buffer,
                     BlockBuffers& scratch) const;

 private:
  /// A block's call_genotype_phased flags, read into a buffer: row r of the unit, column i of
  /// the block's selected samples.
  struct Flags {
    const std::byte* rows = nullptr;
    std::int64_t row_bytes = 0;
    int elem = 1;
    std::span<const std::int64_t> columns;
    bool set(std::int64_t r, std::size_t i) const {
      const std::byte* flag = rows + r * row_bytes + columns[i] * elem;
      if (elem == 1) return flag[0] != std::byte{0};
      for (int b = 0; b < elem; ++b)
        if (flag[b] != std::byte{0}) return true;
      return false;
    }
  };
  Flags read_flags(const vcz::WorkUnit& unit, std::size_t block,
                   std::vector<std::byte>& buffer) const;
  /// check() of @p view against flags already read.
  void check_flags(const vcz::WorkUnit& unit, const GenotypeChunkView& view,
                   const Flags& flags) const;

  const vcz::VczStore& store_;
  const vcz::SampleSelection& samples_;
  const GenotypeReader& genotypes_;
  zarr::Array phased_;
};

}  // namespace vczstats::stream
