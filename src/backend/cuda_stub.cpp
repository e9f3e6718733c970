// Built when the CUDA backend is disabled at configure time (-DVCZSTATS_CUDA=OFF).
#include "backend/cuda/gpu_engine.hpp"
#include "vczstats/device.hpp"
#include "vczstats/error.hpp"

namespace vczstats {
bool gpu_available(std::string* reason) {
  if (reason) *reason = "this build has no CUDA backend (configured with VCZSTATS_CUDA=OFF)";
  return false;
}

stats::AfdistResult run_afdist_gpu(const vcz::VczStore&, const vcz::ChunkPlan&,
                                   const vcz::SampleSelection&, const stats::AfdistAccumulator&,
                                   const RunOptions&, RunStats*) {
  throw UsageError(
      "--device gpu: this build has no CUDA backend (configured with VCZSTATS_CUDA=OFF)");
}

bool gpu_has_allele_counts() { return false; }

void run_allele_counts_gpu(const vcz::VczStore&, const vcz::ChunkPlan&,
                           const vcz::SampleSelection&, const stats::AlleleCountsPass&,
                           const RunOptions&, RunStats*, const CountsConsumer&) {
  throw UsageError(
      "--device gpu: this build has no CUDA backend (configured with VCZSTATS_CUDA=OFF)");
}
}  // namespace vczstats
