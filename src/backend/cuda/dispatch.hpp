#pragma once
// Run-time layout → compile-time template arguments, shared by the kernels' launchers: the
// element type of a genotype width, and the ploidies whose calls do not straddle 16-byte words.

#include <cstdint>
#include <type_traits>

#include "stats/element_type.hpp"

namespace vczstats::cuda {

using vczstats::with_element_type;

/// @brief Call @p f(std::integral_constant<int, P>{}) with P = @p ploidy when P × sizeof(T)
/// divides 16 (the word paths' layouts). @return false (f not called) otherwise.
template <class T, class F>
bool with_word_ploidy(int ploidy, F&& f) {
  constexpr int kMaxPloidy = 16 / static_cast<int>(sizeof(T));
  switch (ploidy) {
    case 1:
      f(std::integral_constant<int, 1>{});
      return true;
    case 2:
      f(std::integral_constant<int, 2>{});
      return true;
    case 4:
      if constexpr (kMaxPloidy >= 4) {
        f(std::integral_constant<int, 4>{});
        return true;
      }
      break;
    case 8:
      if constexpr (kMaxPloidy >= 8) {
        f(std::integral_constant<int, 8>{});
        return true;
      }
      break;
    case 16:
      if constexpr (kMaxPloidy >= 16) {
        f(std::integral_constant<int, 16>{});
        return true;
      }
      break;
    default:
      break;
  }
  return false;
}

}  // namespace vczstats::cuda
