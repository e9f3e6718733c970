// Host-to-device copies of whole genotype blocks (backend/device_blocks.hpp): one stream and one
// pinned staging buffer per producer, device memory from the device context's pool.

#include "backend/device_blocks.hpp"

#include <vector>

#include "backend/cuda/gpu_pipeline.hpp"

namespace vczstats::backend {
namespace {

/// The producers' streams, shared by the copier and every block it made: a block's memory is
/// freed in its stream's order, so the stream must outlive it.
struct Streams {
  std::vector<cuda::Stream> streams;
};

/// The owner of one block's device memory.
struct DeviceBlockMemory {
  std::shared_ptr<Streams> streams;  // declared first: destroyed after the buffer
  cuda::DeviceContext* context = nullptr;
  cuda::DeviceBuffer buffer;
  ~DeviceBlockMemory() {
    // The consumer's thread may have another device current: free on ours.
    try {
      context->make_current();
    } catch (...) {  // a failing runtime at exit: the free below fails quietly too
    }
    buffer = cuda::DeviceBuffer();
  }
};

class CudaBlockCopier final : public DeviceBlockCopier {
 public:
  CudaBlockCopier(int device, unsigned producers)
      : context_(cuda::DeviceContext::get(device)),
        streams_(std::make_shared<Streams>()),
        staging_(producers) {
    for (unsigned p = 0; p < producers; ++p) streams_->streams.emplace_back();
  }

  std::span<std::byte> staging(unsigned producer, std::int64_t bytes) override {
    context_.make_current();  // producers are pool threads
    auto& buffer = staging_.at(producer);
    if (buffer.size() < bytes) {
      buffer = cuda::PinnedBuffer();  // free first: the two need not fit at once
      buffer = cuda::PinnedBuffer(bytes + bytes / 4);
    }
    return buffer.span();
  }

  std::shared_ptr<void> copy(unsigned producer, std::int64_t bytes,
                             std::byte** device_data) override {
    context_.make_current();
    auto& staged = staging_.at(producer);
    if (bytes > staged.size()) throw CudaError("device block copy larger than its staging buffer");
    const cudaStream_t stream = streams_->streams.at(producer).get();
    auto memory = std::make_shared<DeviceBlockMemory>();
    memory->streams = streams_;
    memory->context = &context_;
    memory->buffer = cuda::DeviceBuffer(context_.pool(), bytes, stream);
    if (bytes > 0)
      VCZ_CUDA_CHECK(cudaMemcpyAsync(memory->buffer.data(), staged.data(),
                                     static_cast<std::size_t>(bytes), cudaMemcpyHostToDevice,
                                     stream));
    // The block is handed out ready: consumers on any stream may read it without an event.
    streams_->streams.at(producer).synchronize();
    *device_data = memory->buffer.data();
    return memory;
  }

 private:
  cuda::DeviceContext& context_;
  std::shared_ptr<Streams> streams_;
  std::vector<cuda::PinnedBuffer> staging_;
};

}  // namespace

std::unique_ptr<DeviceBlockCopier> DeviceBlockCopier::make(int device, unsigned producers) {
  return std::make_unique<CudaBlockCopier>(device, producers);
}

}  // namespace vczstats::backend
