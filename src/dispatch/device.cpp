// Device requests: parsing "cpu", "gpu", "gpu:N", "auto".

#include <charconv>

#include "vczstats/device.hpp"
#include "vczstats/error.hpp"

namespace vczstats {

std::string DeviceSpec::to_string() const {
  switch (kind) {
    case DeviceKind::Cpu:
      return "cpu";
    case DeviceKind::Gpu:
      return index == 0 ? "gpu" : "gpu:" + std::to_string(index);
    case DeviceKind::Auto:
      break;
  }
  return "auto";
}

DeviceSpec parse_device(std::string_view text) {
  if (text == "cpu") return {DeviceKind::Cpu, 0};
  if (text == "auto") return {DeviceKind::Auto, 0};
  if (text == "gpu") return {DeviceKind::Gpu, 0};
  if (text.starts_with("gpu:")) {
    const std::string_view n = text.substr(4);
    int index = -1;
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), index);
    if (ec == std::errc() && end == n.data() + n.size() && !n.empty() && index >= 0)
      return {DeviceKind::Gpu, index};
  }
  throw UsageError("unknown device '" + std::string(text) +
                   "' (expected cpu, gpu, gpu:N with N a device index, or auto)");
}

}  // namespace vczstats
