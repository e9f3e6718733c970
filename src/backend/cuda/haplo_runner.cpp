// The GPU segment runner (stats/haplo_runner.hpp): a batch's rows and segments are copied to
// the device, one thread block runs each segment (the lanes of stats/haplo_kernel.hpp are its
// threads), and the results come back. Buffers grow to the largest batch and are kept.

#include <algorithm>
#include <cstring>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/gpu_pipeline.hpp"
#include "backend/cuda/haplo_kernels.cuh"
#include "backend/site_pass.hpp"
#include "stats/haplo_runner.hpp"

namespace vczstats::backend {
namespace {

using stats::haplo::BatchView;

class GpuSegmentRunner final : public stats::haplo::SegmentRunner {
 public:
  explicit GpuSegmentRunner(int device) : ctx_(cuda::DeviceContext::get(device)) {}

  ~GpuSegmentRunner() override { cudaStreamSynchronize(stream_.get()); }

  void run(const BatchView& host) override {
    if (host.nsegments <= 0) return;
    ctx_.make_current();
    const cudaStream_t st = stream_.get();
    // Lanes: enough for a few positions each, a multiple of the warp size, at most 256.
    const int lanes =
        static_cast<int>(std::clamp<std::int64_t>((host.n / 8 + 31) / 32 * 32, 32, 256));
    const std::int64_t per_block = stats::haplo::scratch_bytes(host.n, lanes, host.max_steps);
    // Blocks resident at once: a few per multiprocessor, within a scratch budget of 2 GiB.
    const std::int64_t want = std::int64_t{4} * std::max(ctx_.info().multiprocessors, 1);
    const auto grid = static_cast<int>(std::max<std::int64_t>(
        1, std::min({host.nsegments, want, (std::int64_t{2} << 30) / per_block})));

    BatchView dev = host;
    dev.bits = copy(bits_, host.bits, host.rows * host.words * 8);
    dev.pos = copy(pos_, host.pos, host.rows * 8);
    dev.gpos = copy(gpos_, host.gpos, host.rows * 8);
    dev.segments = copy(segments_, host.segments,
                        host.nsegments * static_cast<std::int64_t>(sizeof(stats::haplo::Segment)));
    const std::int64_t nfocal = outputs(host);
    const std::int64_t nevents = events(host);
    dev.events = nevents
                     ? copy(events_, host.events,
                            nevents * static_cast<std::int64_t>(sizeof(stats::haplo::GarudEvent)))
                     : nullptr;
    const std::int64_t focal_bytes =
        nfocal * static_cast<std::int64_t>(sizeof(stats::haplo::FocalResult));
    const std::int64_t garud_bytes =
        nevents * static_cast<std::int64_t>(sizeof(stats::haplo::GarudResult));
    const std::int64_t curve_bytes = host.curve ? nfocal * 3 * (host.max_steps + 1) * 8 : 0;
    dev.focal = host.focal ? reserve(focal_, focal_bytes).as<stats::haplo::FocalResult>() : nullptr;
    dev.garud = host.garud ? reserve(garud_, garud_bytes).as<stats::haplo::GarudResult>() : nullptr;
    dev.curve = host.curve ? reserve(curve_, curve_bytes).as<std::uint64_t>() : nullptr;
    DeviceBufferRef scratch = reserve(scratch_, per_block * grid);
    VCZ_CUDA_CHECK(
        cudaMemsetAsync(scratch.data(), 0, static_cast<std::size_t>(per_block * grid), st));
    cuda::launch_segments(dev, lanes, grid, scratch.data(), per_block, st);
    if (host.focal)
      VCZ_CUDA_CHECK(cudaMemcpyAsync(host.focal, dev.focal, static_cast<std::size_t>(focal_bytes),
                                     cudaMemcpyDeviceToHost, st));
    if (host.garud)
      VCZ_CUDA_CHECK(cudaMemcpyAsync(host.garud, dev.garud, static_cast<std::size_t>(garud_bytes),
                                     cudaMemcpyDeviceToHost, st));
    if (host.curve)
      VCZ_CUDA_CHECK(cudaMemcpyAsync(host.curve, dev.curve, static_cast<std::size_t>(curve_bytes),
                                     cudaMemcpyDeviceToHost, st));
    stream_.synchronize();
  }

  std::int64_t preferred_segments() const override {
    return std::int64_t{8} * std::max(ctx_.info().multiprocessors, 1);
  }

  std::string describe() const override {
    return "gpu " + std::to_string(ctx_.index()) + " (" + ctx_.info().name + ")";
  }

 private:
  using DeviceBufferRef = cuda::DeviceBuffer&;

  /// @p buffer grown to at least @p bytes (its contents are not kept).
  cuda::DeviceBuffer& reserve(cuda::DeviceBuffer& buffer, std::int64_t bytes) {
    if (buffer.size() < bytes) {
      buffer = cuda::DeviceBuffer();
      buffer = cuda::DeviceBuffer(ctx_.pool(), std::max<std::int64_t>(bytes, 256), stream_.get());
    }
    return buffer;
  }

  /// Copy @p bytes of host memory to @p buffer (grown as needed); its device address.
  template <class T>
  const T* copy(cuda::DeviceBuffer& buffer, const T* src, std::int64_t bytes) {
    reserve(buffer, bytes);
    if (bytes > 0)
      VCZ_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), src, static_cast<std::size_t>(bytes),
                                     cudaMemcpyHostToDevice, stream_.get()));
    return buffer.as<T>();
  }

  /// Focal results the batch writes (the largest out index + 1).
  static std::int64_t outputs(const BatchView& b) {
    std::int64_t n = 0;
    for (std::int64_t g = 0; g < b.nsegments; ++g) {
      const auto& s = b.segments[g];
      if (s.focal_to > s.focal_from) n = std::max(n, s.out + s.focal_to - s.focal_from);
    }
    return n;
  }
  static std::int64_t events(const BatchView& b) {
    std::int64_t n = 0;
    for (std::int64_t g = 0; g < b.nsegments; ++g) n = std::max(n, b.segments[g].event_end);
    return n;
  }

  cuda::DeviceContext& ctx_;
  cuda::Stream stream_;
  cuda::DeviceBuffer bits_, pos_, gpos_, segments_, events_, focal_, garud_, curve_, scratch_;
};

}  // namespace

std::unique_ptr<stats::haplo::SegmentRunner> make_gpu_segment_runner(int device) {
  return std::make_unique<GpuSegmentRunner>(device);
}

}  // namespace vczstats::backend
