#pragma once
// Entry points of the CUDA backend for the rest of the library (no CUDA headers here, so plain
// C++ files and the tests can include it). Without CUDA (VCZSTATS_CUDA=OFF) run_afdist_gpu and
// run_allele_counts_gpu are stubs that throw UsageError, and the testing hooks do not exist.

#include <cstdint>
#include <span>
#include <vector>

#include "backend/cuda/afdist_lanes.hpp"
#include "backend/cuda/counts_lanes.hpp"
#include "vczstats/afdist.hpp"
#include "vczstats/counts.hpp"
#include "vczstats/engine.hpp"
#include "vczstats/genotypes.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats {

/// @brief afdist on the GPU: producer threads decode (unit, sample block) items into a ring of
/// pinned slabs, the calling thread copies each to the device on one of a few CUDA streams and
/// queues the heavy pass and the histogram reduction there, so decode, copy and compute overlap.
/// Same result as the CPU backend, bit for bit. Store must have call_genotype.
/// @throws UsageError, FormatError, IoError, CudaError.
/// afdist of a plan with at least one unit and one selected sample, on the GPU. @p acc is the
/// caller's initialised accumulator: its options, edges and sample count define the histogram.
stats::AfdistResult run_afdist_gpu(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                                   const vcz::SampleSelection& samples,
                                   const stats::AfdistAccumulator& acc, const RunOptions& run,
                                   RunStats* stats = nullptr);

/// @brief Whether this build's GPU backend computes the allele-counts heavy pass.
bool gpu_has_allele_counts();

/// @brief The allele-counts heavy pass on the GPU (same pipeline as afdist); each unit's counts
/// come back to the host and go to @p consume in plan order. Counts equal the CPU's bit for
/// bit. @throws UsageError, FormatError, IoError, CudaError.
void run_allele_counts_gpu(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                           const vcz::SampleSelection& samples, const stats::AlleleCountsPass& pass,
                           const RunOptions& run, RunStats* stats, const CountsConsumer& consume);

namespace cuda::testing {

/// @brief Run the heavy-pass kernel of @p path on a host block (copied to the device), ADDING its
/// counts to @p sites (one per row), exactly as the pipeline does. @throws CudaError, UsageError.
void count_sites(const GenotypeChunkView& block, stats::AfdistMethod method, HeavyPath path,
                 std::span<stats::AfdistSite> sites);

/// @brief Run the allele-counts kernel of @p path (or, with @p seed_baseline, the seed-style
/// baseline kernel) on a host block copied to the device, with the block's population segments
/// (AlleleCountsPass::segments), ADDING its counts to @p sites (rows × layout.site_width()), as
/// the pipeline does. @throws CudaError, UsageError.
void allele_counts(const GenotypeChunkView& block, const stats::CountsLayout& layout,
                   std::span<const stats::AlleleCountsPass::Segment> segments, CountsPath path,
                   std::span<std::int32_t> sites, bool seed_baseline = false);

/// @brief The histogram of finished sites computed by the reduction kernel (mask empty: all).
std::vector<std::uint64_t> histogram(std::span<const stats::AfdistSite> sites,
                                     std::span<const std::uint8_t> mask,
                                     const stats::AfdistOptions& options, std::int64_t num_samples);

}  // namespace cuda::testing
}  // namespace vczstats
