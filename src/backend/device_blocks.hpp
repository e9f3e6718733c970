#pragma once
// Copies genotype blocks made on the host into device memory (GenotypeBlockStream on the GPU,
// vczstats/blocks.hpp): each producer stages its block in pinned memory and copies it on its
// own stream of the device. No CUDA headers here; without the CUDA backend make() throws.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace vczstats::backend {

/// @brief Host-to-device copies of whole blocks for a fixed number of producers.
class DeviceBlockCopier {
 public:
  /// @brief A copier on CUDA device @p device for @p producers producers (one stream and one
  /// pinned staging buffer each). @throws UsageError without the CUDA backend, CudaError.
  static std::unique_ptr<DeviceBlockCopier> make(int device, unsigned producers);
  virtual ~DeviceBlockCopier() = default;

  /// @brief Producer @p producer's pinned staging buffer, grown to at least @p bytes (its
  /// contents are not kept when it grows). Valid until that producer's next call.
  virtual std::span<std::byte> staging(unsigned producer, std::int64_t bytes) = 0;
  /// @brief Copy the first @p bytes of producer @p producer's staging buffer into new device
  /// memory and wait for the copy. Returns the device pointer through @p device_data and its
  /// owner: releasing the owner frees the memory (stream-ordered); the owner keeps the
  /// device's streams alive, so it may outlive the copier. Any thread may call this for its
  /// own producer index. @throws CudaError.
  virtual std::shared_ptr<void> copy(unsigned producer, std::int64_t bytes,
                                     std::byte** device_data) = 0;
};

}  // namespace vczstats::backend
