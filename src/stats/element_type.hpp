#pragma once
// Run-time genotype width → compile-time element type, shared by the CPU loops and the CUDA
// launchers.

#include <cstdint>

namespace vczstats {

/// @brief Call @p f(T{}) with T the signed integer type of @p elem_bytes (1, 2, 4 or 8 bytes).
/// @return false (f not called) for any other width.
template <class F>
bool with_element_type(int elem_bytes, F&& f) {
  switch (elem_bytes) {
    case 1:
      f(std::int8_t{});
      return true;
    case 2:
      f(std::int16_t{});
      return true;
    case 4:
      f(std::int32_t{});
      return true;
    case 8:
      f(std::int64_t{});
      return true;
    default:
      return false;
  }
}

}  // namespace vczstats
