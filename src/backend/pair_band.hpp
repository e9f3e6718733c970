#pragma once
// The variant-pair family's heavy pass (vczstats/variant_pairs.hpp) as the backends run it: a
// sink of each unit's packed genotypes (or haplotype planes) that keeps the bit planes of the
// rows a later row may pair with (the halo, across work units), evaluates every pair of the
// band whose later row is in the unit, and queues one PairBatch per unit. CPU: popcount loops on
// the run's threads (cpu/pair_band_cpu.cpp); GPU: the halo stays on the device, kernels on
// their own stream (cuda/pair_band_gpu.cpp). No CUDA headers here.

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/site_pass.hpp"
#include "stats/banded_pairs.hpp"
#include "vczstats/variant_pairs.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats::backend {

/// @brief What a band evaluates, and over what.
struct PairBandSpec {
  const vcz::VczStore* store = nullptr;
  const vcz::ChunkPlan* plan = nullptr;
  std::int64_t samples = 0;  ///< selected samples
  int ploidy = 2;
  PairRequest request;
  /// Count only the plane bits whose bit is set (one word per 64 bits, as the planes: samples
  /// for genotype requests, allele slots for haplotype requests; empty: every bit); rows' n and
  /// sum and the pairs' counts are then those of the masked samples or slots (e.g. one
  /// population's, stats/banded_pairs.hpp). The CPU band compacts each row's planes to the
  /// masked bits, in order (the planes a selection of those samples alone gives); the GPU band
  /// clears the other bits (its rows are then never complete: pairs counted word by word). The
  /// pairs and rows are the same; the planes handed over for partition boundaries differ in
  /// layout, and both evaluate alike through stats/pair_boundary.hpp.
  std::vector<std::uint64_t> mask;
  /// Sum the pairs with this reducer instead of handing them over (stats/banded_pairs.hpp; a
  /// haplotype band without a mask). The CPU band uses it; the GPU band where gpu_reduces()
  /// (else it hands over the pairs).
  const stats::pairs::PairReducer* reducer = nullptr;
  /// Rows and boundary planes only (with a reducer on another band of the statistic that the
  /// band's device runs: dispatch/pair_passes.cpp clears it for a GPU band otherwise).
  bool rows_only = false;
  unsigned threads = 0;  ///< CPU threads (0: all cores)
  int device = 0;        ///< CUDA device index (GPU band)
};

/// @brief One statistic's band (see the file comment).
class PairBand : public PackedSink, public HaplotypeSink {
 public:
  /// @brief The batches of the units finished so far, in plan order (GPU: without waiting).
  virtual std::vector<PairBatch> take() = 0;
  /// @brief After the pass: the batches left, then the final batch (the last rows' planes).
  virtual std::vector<PairBatch> finish() = 0;
  /// @brief Seconds spent evaluating pairs (CPU: summed over threads; GPU: kernel time).
  virtual double compute_seconds() const = 0;
  /// @brief Pairs summed by the reducer on the device (GPU band; the -v report).
  virtual std::int64_t device_pairs() const { return 0; }
};

/// @brief Whether the GPU band sums @p spec's pairs on the device: a reducer with a device
/// description (PairReducer::device()), on a haplotype band without a mask or a focal filter.
inline bool gpu_reduces(const PairBandSpec& spec) {
  return spec.reducer && spec.reducer->device() && spec.request.haplotypes() && spec.mask.empty() &&
         !spec.request.focal_only;
}

/// @brief The band on CPU threads. @throws UsageError for a bad request.
std::unique_ptr<PairBand> make_pair_band_cpu(const PairBandSpec& spec);
/// @brief The band on CUDA device spec.device. @throws UsageError without the CUDA backend.
std::unique_ptr<PairBand> make_pair_band_gpu(const PairBandSpec& spec);

}  // namespace vczstats::backend
