#pragma once
/// @file device.hpp
/// @brief Whether a CUDA device can be used (answered without CUDA when the backend is off).

#include <string>

namespace vczstats {

/// @brief Whether a usable CUDA device is present; when not, @p reason says why.
bool gpu_available(std::string* reason = nullptr);

}  // namespace vczstats
