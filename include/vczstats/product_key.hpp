#pragma once
/// @file product_key.hpp
/// @brief The name of a keyed product of the site pass (products.hpp): a statistic asks for the
/// product by its key (PassNeeds::products) and finds its output under it (UnitData::product);
/// the backends make it from the key (their registration lists). Light on purpose (CUDA
/// headers include the headers that define keys).

#include <string_view>

namespace vczstats {

/// @brief One keyed product of the site pass. Keys compare by name, so two definitions of one
/// name (in two libraries) are one product. Define a product's key beside the type of its output,
/// as `inline constexpr ProductKey kName{"name"};` (the name is used in messages).
struct ProductKey {
  std::string_view name;
  friend bool operator==(const ProductKey& a, const ProductKey& b) { return a.name == b.name; }
};

}  // namespace vczstats
