// Built when the CUDA backend is disabled at configure time (-DVCZSTATS_CUDA=OFF).
#include "backend/site_pass.hpp"
#include "stats/haplo_runner.hpp"
#include "vczstats/device.hpp"
#include "vczstats/error.hpp"

namespace vczstats {

namespace {
constexpr const char* kNoCuda =
    "this build has no CUDA backend (configured with VCZSTATS_CUDA=OFF)";
}

int gpu_count(std::string* reason) {
  if (reason) *reason = kNoCuda;
  return 0;
}

bool gpu_available(std::string* reason, int) {
  return gpu_count(reason) > 0;
}

namespace backend {
void run_site_pass_gpu(const SitePassSpec&, const Deliver&, std::vector<stats::SampleSums>*,
                       RunStats*) {
  throw UsageError(std::string("--device gpu: ") + kNoCuda);
}
std::unique_ptr<stats::haplo::SegmentRunner> make_gpu_segment_runner(int) {
  throw UsageError(std::string("--device gpu: ") + kNoCuda);
}
}  // namespace backend

}  // namespace vczstats
