#pragma once
// Launchers of the tallies and per-sample-sums kernels (backend/site_pass.hpp): phase 0 tallies
// the complete diploid calls per site and population, a per-unit kernel turns the tallies into
// site weights, phase 1 adds every sample's sums. The math is stats/sample_math.hpp,
// shared with the CPU loop, so the sums are bit-identical. Every call takes its stream.

#include <cuda_runtime.h>

#include <cstdint>

#include "vczstats/exact_sum.hpp"
#include "vczstats/genotypes.hpp"

namespace vczstats::cuda {

/// @brief Per-sample sums as the kernels keep them (one per selected sample).
struct DeviceSampleSums {
  long long obs = 0, missing = 0, het_sites = 0, o_hom = 0;
  stats::ExactSum e_hom;  // exact across units, as the CPU backend adds them
};

/// @brief ADD the complete diploid tallies of @p block (resident on the device) to @p tallies
/// (rows × pops × (2 alleles + 1), stats/tallies_math.hpp). @p population_of: per selected
/// sample.
void launch_tallies(const GenotypeChunkView& block, const std::int32_t* population_of, int pops,
                    int alleles, std::int32_t* tallies, cudaStream_t stream);

/// @brief Per-site weights (rows × pops) from the tallies (stats::sample::site_weight).
void launch_site_weights(const std::int32_t* tallies, std::int64_t rows, int pops, int alleles,
                         double* weights, cudaStream_t stream);

/// @brief Phase 1: the sums of the block's samples over its selected rows (@p mask: one flag per
/// row, or null), STORED into partial[block.sample_offset + i] (each sample is in one block).
void launch_sample_sums(const GenotypeChunkView& block, const std::int32_t* population_of, int pops,
                        const double* weights, const std::uint8_t* mask, DeviceSampleSums* partial,
                        cudaStream_t stream);

/// @brief totals[i] += partial[i] for i < n (units are added in plan order by the caller).
void launch_add_sample_sums(const DeviceSampleSums* partial, std::int64_t n,
                            DeviceSampleSums* totals, cudaStream_t stream);

}  // namespace vczstats::cuda
