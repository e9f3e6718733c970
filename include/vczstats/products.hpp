#pragma once
/// @file products.hpp
/// @brief The way in and out of the site pass's keyed products: a statistic's need of one
/// (ProductNeed, in PassNeeds::products, with the product's parameter when it has one) and one
/// unit's output of one (ProductSlot, found with UnitData::product). The backends make a keyed
/// product from its need through their registration lists (src/backend/cpu/site_products.cpp,
/// src/backend/cuda/site_products_gpu.cpp); the dispatch code carries needs and slots without
/// knowing any product.

#include <any>
#include <span>
#include <string>
#include <typeinfo>
#include <utility>

#include "vczstats/error.hpp"
#include "vczstats/product_key.hpp"

namespace vczstats {

/// @brief A need of the keyed product @p key, with no parameter or one value of the product's
/// own parameter type (afdist's method). Two needs of one key in one run must ask the same.
class ProductNeed {
 public:
  explicit ProductNeed(ProductKey key) : key_(key) {}
  template <class T>
  ProductNeed(ProductKey key, T parameter)
      : key_(key), parameter_(std::move(parameter)), same_(&same_parameter<T>) {}

  const ProductKey& key() const { return key_; }
  /// @brief The parameter. @throws Error when there is none or it is not a T.
  template <class T>
  const T& parameter() const {
    if (const T* p = std::any_cast<T>(&parameter_)) return *p;
    throw Error("the site pass's product '" + std::string(key_.name) +
                (parameter_.has_value() ? "' has a parameter of another type than asked for"
                                        : "' was asked for without its parameter"));
  }
  /// @brief Whether @p o (of the same key) asks for the same product: both without a parameter,
  /// or with equal parameters of one type.
  bool same_request(const ProductNeed& o) const {
    if (!parameter_.has_value() || !o.parameter_.has_value())
      return parameter_.has_value() == o.parameter_.has_value();
    // By type, not by same_'s address: each library has its own copy of same_parameter<T>.
    return parameter_.type() == o.parameter_.type() && same_(parameter_, o.parameter_);
  }

 private:
  template <class T>
  static bool same_parameter(const std::any& a, const std::any& b) {
    return std::any_cast<const T&>(a) == std::any_cast<const T&>(b);
  }

  ProductKey key_;
  std::any parameter_;
  bool (*same_)(const std::any&, const std::any&) = nullptr;
};

/// @brief One unit's output of a keyed product (a view valid while the unit is handed over).
struct ProductSlot {
  ProductKey key;
  std::any value;
};

/// @brief The output of @p key among @p slots as a T, or null when the unit has none (the product
/// was not asked for, or no pass ran: an empty plan or no sample). @throws Error when it is not a
/// T.
template <class T>
const T* find_product(std::span<const ProductSlot> slots, const ProductKey& key) {
  for (const ProductSlot& s : slots)
    if (s.key == key) {
      if (const T* p = std::any_cast<T>(&s.value)) return p;
      throw Error("the site pass's product '" + std::string(key.name) + "' is a " +
                  s.value.type().name() + ", asked for as a " + typeid(T).name());
    }
  return nullptr;
}

}  // namespace vczstats
