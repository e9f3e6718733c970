#pragma once
/// @file device.hpp
/// @brief Where to compute: the CPU, a CUDA device by index, or the GPU when one is usable.

#include <string>
#include <string_view>

namespace vczstats {

/// @brief The kind of device a run asks for.
enum class DeviceKind { Cpu, Gpu, Auto };

/// @brief A device request: `cpu`, `gpu` (device 0), `gpu:N` or `auto` (device 0 when usable,
/// else the CPU). The index is explicit everywhere below: nothing assumes device 0.
struct DeviceSpec {
  DeviceKind kind = DeviceKind::Auto;
  int index = 0;  ///< CUDA device index (Gpu and Auto)
  /// @brief The option text: "cpu", "gpu:1", "auto".
  std::string to_string() const;
};

/// @brief Parse "cpu", "gpu", "gpu:N" or "auto". @throws UsageError.
DeviceSpec parse_device(std::string_view text);

/// @brief Number of CUDA devices (0 without a driver, a device or the CUDA backend; then
/// @p reason says why).
int gpu_count(std::string* reason = nullptr);

/// @brief Whether CUDA device @p index can be used; when not, @p reason says why.
bool gpu_available(std::string* reason = nullptr, int index = 0);

}  // namespace vczstats
