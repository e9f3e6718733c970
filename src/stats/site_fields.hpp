#pragma once
// The fields of a store a site expression (vczstats/site_expression.hpp) reads: its schema
// (bind_site_expression) and, unit by unit, the values of every site (SiteFieldReader).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vczstats/site_expression.hpp"
#include "vczstats/variants.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats::stats {

/// @brief Parse @p text and bind it to @p store: its INFO fields (variant_<NAME>) and filter
/// names. @throws UsageError for a bad expression, FormatError naming an array the store lacks.
SiteExpression bind_site_expression(const vcz::VczStore& store, std::string_view text,
                                    bool exclude);

/// @brief Reads the fields an expression needs, one work unit at a time.
class SiteFieldReader {
 public:
  /// @throws FormatError naming an array the expression needs and the store lacks.
  SiteFieldReader(const vcz::VczStore& store, const SiteExpression& expression);
  /// @brief Read rows [begin, end) of the variant arrays.
  void read(std::int64_t begin, std::int64_t end);
  /// @brief The fields of row @p r of the rows read (counts left empty).
  SiteFields site(std::int64_t r);

 private:
  struct Info {
    zarr::Array array;
    std::int64_t width = 1;
    bool text = false, integer = false;
    std::vector<double> numbers;
    std::vector<std::string> strings;
  };
  const vcz::VczStore& store_;
  const SiteExpression::Needs& needs_;
  vcz::VariantReader reader_;
  std::optional<zarr::Array> quality_, filters_;
  std::int64_t filter_columns_ = 0;
  std::vector<Info> info_;
  vcz::VariantBlock block_;
  std::vector<double> qual_;
  std::vector<std::uint8_t> filter_flags_;
  std::vector<InfoValues> values_;
};

}  // namespace vczstats::stats
