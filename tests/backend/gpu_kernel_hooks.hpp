#pragma once
// Test hooks of the CUDA kernels (tests/backend/gpu_kernel_hooks.cu): a host block copied to
// the device, one kernel run on it exactly as the pipeline runs it, the result copied back.
// Built only with the CUDA backend.

#include <cstdint>
#include <span>

#include "backend/cuda/afdist_lanes.hpp"
#include "backend/cuda/counts_lanes.hpp"
#include "vczstats/afdist.hpp"
#include "vczstats/counts.hpp"
#include "vczstats/genotypes.hpp"

namespace gputest::kernels {

/// Run the afdist heavy kernel of @p path on @p block, ADDING to @p sites (one per row).
void count_sites(const vczstats::GenotypeChunkView& block, vczstats::stats::AfdistMethod method,
                 vczstats::cuda::HeavyPath path, std::span<vczstats::stats::AfdistSite> sites);

/// Run the allele-counts kernel of @p path (or the seed-style baseline kernel) on @p block with
/// its population @p segments, ADDING to @p sites (rows × layout.site_width()).
/// @p swar_row_lanes > 0: the SWAR kernel with that many lanes per row and @p swar_words in
/// flight (launch_swar).
void allele_counts(const vczstats::GenotypeChunkView& block,
                   const vczstats::stats::CountsLayout& layout,
                   std::span<const vczstats::stats::AlleleCountsPass::Segment> segments,
                   vczstats::cuda::CountsPath path, std::span<std::int32_t> sites,
                   bool seed_baseline = false, int swar_row_lanes = 0, int swar_words = 4);

}  // namespace gputest::kernels
