#pragma once
// The heavy passes of the site family as the backends run them (backend/cpu, backend/cuda): one
// read of the plan's genotypes computing every requested per-site and per-sample sum, each
// unit's output handed over in plan order. No CUDA headers here.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vczstats/afdist.hpp"
#include "vczstats/counts.hpp"
#include "vczstats/packed.hpp"
#include "vczstats/packed_haplotypes.hpp"
#include "vczstats/run.hpp"
#include "vczstats/sample_stats.hpp"
#include "vczstats/variants.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats::stats::haplo {
class SegmentRunner;
}

namespace vczstats::backend {

/// @brief Per-sample sums (missingness, homozygosity): two phases per unit. Phase 0 counts the
/// alleles of complete diploid calls per site and population (alleles + 1 columns: the count of
/// such calls last), which give each site's expected homozygosity; phase 1 adds every sample's
/// sums (stats/sample_math.hpp).
struct SampleSumsRequest {
  const std::vector<std::int32_t>* population_of = nullptr;  ///< per selected sample
  int pops = 1;
  int alleles = 2;  ///< allele columns of the store
};

/// @brief Receives every unit's packed genotypes (all selected samples, vczstats/packed.hpp) in
/// plan order, on the calling thread: the input of the matrix family, whose tile accumulators
/// plug in here.
class PackedSink {
 public:
  virtual ~PackedSink() = default;
  /// @brief CPU backend: host words, valid during the call.
  virtual void host_unit(std::int64_t unit, const PackedGenotypeView& view) = 0;
  /// @brief GPU backend: device words on device spec.device, valid for work queued on
  /// @p stream (a cudaStream_t) during the call; the buffer is reused after that work.
  virtual void device_unit(std::int64_t unit, const PackedGenotypeView& view, void* stream) = 0;
};

/// @brief Bit-packed phased haplotypes of every unit (vczstats/packed_haplotypes.hpp), for the
/// haplotype family. The producers also check call_genotype_phased: a call with two or more
/// called alleles that is not phased stops the pass with an error naming it.
struct HaplotypeRequest {
  int planes = 2;  ///< 1 + the store's ALT allele columns
};

/// @brief What one pass computes, and over what.
struct SitePassSpec {
  const vcz::VczStore* store = nullptr;
  const vcz::ChunkPlan* plan = nullptr;
  const vcz::SampleSelection* samples = nullptr;
  const RunOptions* run = nullptr;
  int device = 0;                                    ///< CUDA device index (GPU backend)
  const stats::AlleleCountsPass* counts = nullptr;   ///< allele counts per site × population
  const stats::AfdistAccumulator* afdist = nullptr;  ///< per-site afdist counts (its method)
  const SampleSumsRequest* sample_sums = nullptr;    ///< per-sample sums
  PackedSink* packed = nullptr;                  ///< packed genotypes of every unit (matrix family)
  const HaplotypeRequest* haplotypes = nullptr;  ///< packed haplotypes of every unit
  const vcz::VariantReader* variants = nullptr;  ///< fields read with each unit
};

/// @brief One unit's finished output, handed over in plan order.
struct UnitOutput {
  std::int64_t index = 0;
  std::span<const std::int32_t> counts;               ///< rows × counts->site_width()
  std::span<const stats::AfdistSite> afdist;          ///< rows
  std::shared_ptr<const vcz::VariantBlock> variants;  ///< when spec.variants
  PackedHaplotypeView haplotypes;                     ///< when spec.haplotypes (host memory)
};
using Deliver = std::function<void(const UnitOutput&)>;

/// @brief The pass on CPU threads. @p sample_sums (when spec.sample_sums) receives the run's
/// per-sample totals in selection order. @throws FormatError, IoError, UsageError.
void run_site_pass_cpu(const SitePassSpec& spec, const Deliver& deliver,
                       std::vector<stats::SampleSums>* sample_sums, RunStats* stats);

/// @brief The haplotype family's segment kernels on CUDA device @p device (stats/haplo_runner.hpp).
/// @throws UsageError without the CUDA backend, CudaError.
std::unique_ptr<stats::haplo::SegmentRunner> make_gpu_segment_runner(int device);

/// @brief The same on CUDA device spec.device; results equal the CPU's bit for bit.
/// @throws UsageError without the CUDA backend, CudaError, FormatError, IoError.
void run_site_pass_gpu(const SitePassSpec& spec, const Deliver& deliver,
                       std::vector<stats::SampleSums>* sample_sums, RunStats* stats);

}  // namespace vczstats::backend
