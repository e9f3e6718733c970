#pragma once
// Launchers of the allele-counts kernels. Every call takes the stream it is queued on; every
// launch is checked; nothing here synchronises.

#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/counts_lanes.hpp"
#include "vczstats/genotypes.hpp"

namespace vczstats::cuda {

/// @brief A run [begin, end) of a block's columns that belong to population @p pop
/// (AlleleCountsPass::Segment, as the kernels read it).
struct CountSegment {
  std::int64_t begin = 0, end = 0;
  std::int32_t pop = 0;
  std::int32_t unused = 0;
};

/// @brief A genotype block resident on the device, its population segments, and the per-site
/// counts it adds to.
struct CountsArgs {
  /// 16-byte aligned; rows × samples × ploidy × elem bytes, readable up to the next multiple
  /// of 16 bytes (a DeviceBuffer is)
  const std::byte* data = nullptr;
  int elem_bytes = 1;
  std::int64_t rows = 0;
  std::int64_t samples = 0;
  int ploidy = 2;
  const CountSegment* segments = nullptr;  ///< device array, in column order, covering [0, samples)
  std::int64_t num_segments = 0;
  int alleles = 2;                 ///< CountsLayout::alleles
  int pops = 1;                    ///< CountsLayout::pops
  std::int32_t* counts = nullptr;  ///< rows × pops × (alleles + kExtra), ADDED to
};

/// @brief The arguments for @p block (resident on the device) with @p layout.
inline CountsArgs counts_args(const GenotypeChunkView& block, const stats::CountsLayout& layout,
                              const CountSegment* segments, std::int64_t num_segments,
                              std::int32_t* counts) {
  CountsArgs a;
  a.data = block.data;
  a.elem_bytes = block.elem_bytes;
  a.rows = block.variants;
  a.samples = block.samples;
  a.ploidy = static_cast<int>(block.ploidy);
  a.segments = segments;
  a.num_segments = num_segments;
  a.alleles = layout.alleles;
  a.pops = layout.pops;
  a.counts = counts;
  return a;
}

/// @brief Queue the counts of one sample block on @p stream. Blocks of the same rows must be
/// queued on the same stream (they add to the same counts). @throws CudaError, UsageError (a
/// path that does not fit the layout, a misaligned block).
void launch_allele_counts(const CountsArgs& args, cudaStream_t stream,
                          CountsPath path = CountsPath::Auto);

/// @brief Fewest words of a population segment per lane that launch_allele_counts leaves when it
/// picks the SWAR kernel's lanes per row (swar_row_lanes). Four allele columns with 16 or 32
/// lanes per row want kSwarWordsPerLaneWide: on the H100 their 5 blocks of 4 warps per SM
/// gained more from rows per warp than two columns' 3 blocks of 8 (bench/NOTES-gpu-counts.md
/// step 10: with these rules the pick is the best of 4-32 lanes, or within 1-2 points of it, in
/// every cell of bench/gpu_afdist_bench).
inline constexpr int kSwarWordsPerLane = 12;
inline constexpr int kSwarWordsPerLaneWide = 24;

/// @brief Lanes per row of the SWAR kernel that launch_allele_counts runs: the most of 32, 16, 8,
/// 4 that leaves each lane kSwarWordsPerLane 16-byte words of an average segment
/// (kSwarWordsPerLaneWide for four allele columns at 16 or 32 lanes; a warp counts 32 / lanes
/// rows at once, so each segment's sums and partial words are paid once for that many rows),
/// and enough for the longest rows' counters.
int swar_row_lanes(const CountsArgs& args);

/// @brief Words in flight per lane of the SWAR kernel that launch_allele_counts runs with
/// @p row_lanes lanes per row: 4. (Until 2026-11-25 four allele columns took 2 on short
/// segments, where up to 3 single-word remainder steps per segment made 4 the slower; with the
/// remainder in one masked step 4 is as fast or faster in every cell: bench/NOTES-gpu-counts.md
/// step 10.)
int swar_words_in_flight(const CountsArgs& args, int row_lanes);

/// @brief The SWAR kernel with @p row_lanes (4, 8, 16 or 32) lanes per row and
/// @p words_in_flight (2 or 4) loads per lane, for the benchmark and the tests, which run each.
/// @throws UsageError when the layout or the combination does not fit.
void launch_swar(const CountsArgs& args, cudaStream_t stream, int row_lanes, int words_in_flight);

/// @brief The seed-style kernel (one thread per variant looping over its samples with element
/// loads, adding straight into global memory) that the pipeline's baseline mode runs, for
/// comparison only. Same counts.
void launch_allele_counts_baseline(const CountsArgs& args, cudaStream_t stream);

}  // namespace vczstats::cuda
