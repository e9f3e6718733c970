// Built when the CUDA backend is disabled at configure time (-DVCZSTATS_CUDA=OFF).
#include <atomic>

#include "backend/device_blocks.hpp"
#include "backend/pair_band.hpp"
#include "backend/sample_matrix_pass.hpp"
#include "backend/site_pass.hpp"
#include "stats/haplo_runner.hpp"
#include "stats/packed_product.hpp"
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

struct GpuPrestart::Thread {};
GpuPrestart::GpuPrestart(const std::vector<int>&) {}
GpuPrestart::~GpuPrestart() = default;

namespace detail {
std::atomic<bool> g_cuda_started{false};  // never set: there is no CUDA runtime to start
}  // namespace detail

namespace backend {
void run_site_pass_gpu(const SitePassSpec&, const Deliver&, std::vector<stats::SampleSums>*,
                       RunStats*) {
  throw UsageError(std::string("--device gpu: ") + kNoCuda);
}

std::unique_ptr<DeviceBlockCopier> DeviceBlockCopier::make(int, unsigned) {
  throw UsageError(std::string("device gpu: ") + kNoCuda);
}

std::unique_ptr<PairBand> make_pair_band_gpu(const PairBandSpec&) {
  throw UsageError(std::string("--device gpu: ") + kNoCuda);
}

std::unique_ptr<SampleMatrixAccumulator> make_sample_matrix_gpu(const SampleMatrixSpec&) {
  throw UsageError(std::string("--device gpu: ") + kNoCuda);
}

std::unique_ptr<PackedHostMirror> make_packed_host_mirror_gpu(std::int64_t, int) {
  throw UsageError(std::string("--device gpu: ") + kNoCuda);
}

std::unique_ptr<stats::haplo::SegmentRunner> make_gpu_segment_runner(int) {
  throw UsageError(std::string("--device gpu: ") + kNoCuda);
}

std::unique_ptr<stats::PackedProduct> make_gpu_packed_product(const stats::PackedMatrixView&, int) {
  throw UsageError(std::string("--device gpu: ") + kNoCuda);
}
}  // namespace backend

}  // namespace vczstats
