#pragma once
// GenotypeReader: decodes the call_genotype blocks of a work unit (one variant chunk × one
// sample chunk at a time) and restricts them to the selected samples, producing dense
// GenotypeChunkViews. Reusable buffers make the steady state allocation-free.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "vczstats/genotypes.hpp"
#include "vczstats/variants.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats::stream {

/// Per-thread buffers a GenotypeReader decodes into.
struct BlockBuffers {
  std::vector<std::byte> decoded;   ///< one full chunk as stored
  std::vector<std::byte> gathered;  ///< selected samples of the unit's rows, dense
};

/// Time and bytes spent by one read, added up by the caller.
struct ReadCounters {
  std::int64_t read_decode_ns = 0;
  std::int64_t gather_ns = 0;
  std::int64_t decoded_bytes = 0;
};

/// Genotypes set to missing by FORMAT fields (--min-gq, --min-dp; 0: off).
struct GenotypeMask {
  int min_gq = 0;
  int min_dp = 0;
  bool active() const { return min_gq > 0 || min_dp > 0; }
};

class GenotypeReader {
 public:
  /// @brief With @p mask, calls whose call_GQ (call_DP) is below the minimum read as missing
  /// (-1 in every slot but fill). @throws FormatError naming an array the mask needs that the
  /// store lacks or chunks unlike call_genotype.
  GenotypeReader(const vcz::VczStore& store, const vcz::SampleSelection& samples,
                 GenotypeMask mask = {});

  /// Sample blocks (sample chunks holding at least one selected sample).
  std::size_t num_blocks() const { return blocks_.size(); }
  /// Selected samples in total.
  std::int64_t num_samples() const { return num_selected_; }
  std::int64_t ploidy() const { return ploidy_; }
  int elem_bytes() const { return elem_bytes_; }
  /// Selection index of the first sample of block @p block (the views' sample_offset).
  std::int64_t block_first(std::size_t block) const { return blocks_.at(block).first; }
  /// Selected samples of block @p block (the views' samples).
  std::int64_t block_samples(std::size_t block) const {
    return static_cast<std::int64_t>(blocks_.at(block).local.size());
  }
  /// Sample chunk index of block @p block.
  std::int64_t block_chunk(std::size_t block) const { return blocks_.at(block).chunk; }
  /// Offsets of block @p block's selected samples inside its stored chunk, in view order.
  std::span<const std::int64_t> block_columns(std::size_t block) const {
    return blocks_.at(block).local;
  }
  /// Whether block @p block is every column of its stored chunk in order (no gather needed).
  bool block_dense(std::size_t block) const { return blocks_.at(block).contiguous_all; }
  /// The call_genotype array.
  const zarr::Array& array() const { return gt_; }
  /// Bytes of one decoded genotype chunk (the largest buffer a thread needs).
  std::int64_t chunk_bytes() const { return gt_.chunk_bytes(); }

  /// Read-ahead hint for a remote store: the chunks of @p units, every sample block, in the
  /// order read() will want them (no-op for local stores). Call once before reading a plan.
  /// With @p fields, each unit's variant fields follow its genotypes (a unit needs both).
  void prefetch(std::span<const vcz::WorkUnit> units,
                const vcz::VariantReader* fields = nullptr) const;

  /// Bytes a gather buffer needs for any unit of at most @p max_rows rows.
  std::int64_t gathered_bytes(std::int64_t max_rows) const;

  /// The rows of @p unit for sample block @p block, dense over the block's selected samples.
  /// Decodes into @p decoded (chunk_bytes()) and, when the block is a sample subset or an edge
  /// chunk, gathers into @p gathered (gathered_bytes(unit rows)); both may be pinned memory.
  /// The view points into one of them.
  GenotypeChunkView read(const vcz::WorkUnit& unit, std::size_t block, std::span<std::byte> decoded,
                         std::span<std::byte> gathered, ReadCounters* counters = nullptr) const;
  /// The same with buffers grown as needed.
  GenotypeChunkView read(const vcz::WorkUnit& unit, std::size_t block, BlockBuffers& buf,
                         ReadCounters* counters = nullptr) const;

 private:
  struct SampleBlock {
    std::int64_t chunk = 0;           ///< sample chunk index
    std::vector<std::int64_t> local;  ///< selected sample offsets inside the chunk
    std::int64_t first = 0;           ///< selection index of the block's first sample
    bool contiguous_all = false;      ///< the block is every column of the stored chunk, in order
  };
  // Set the calls of rows [row0, row0 + rows) whose field @p a is below @p min to missing.
  void mask_calls(const zarr::Array& a, int min, std::int64_t chunk, const SampleBlock& sb,
                  std::int64_t row0, GenotypeChunkView& view) const;
  const zarr::Array& gt_;
  GenotypeMask mask_;
  std::optional<zarr::Array> gq_, dp_;
  std::vector<SampleBlock> blocks_;
  std::int64_t num_selected_ = 0;
  std::int64_t ploidy_ = 0;
  int elem_bytes_ = 1;
};

}  // namespace vczstats::stream
