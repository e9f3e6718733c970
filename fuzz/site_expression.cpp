// Fuzz target: site filter expressions (-i/-e, vczstats/site_expression.hpp). Input: the text of
// an expression. A parsed expression is bound to a schema that has every INFO field it names (a
// first letter of the name chooses its kind) and a few filters, then evaluated on sites of every
// shape: no ALT, several ALTs, missing values, no called allele. Parse and bind may only throw
// UsageError; evaluation must not throw at all.

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_support.hpp"
#include "vczstats/error.hpp"
#include "vczstats/site_expression.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vczstats;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  SiteExpression e;
  try {
    e = SiteExpression::parse(text, size % 2 == 1);
    SiteSchema schema;
    for (const auto& name : e.needs().info) {
      switch (name.empty() ? 'I' : name[0]) {
        case 'F':
          schema.info.push_back(SiteSchema::Kind::Flag);
          break;
        case 'S':
          schema.info.push_back(SiteSchema::Kind::String);
          break;
        case 'R':
          schema.info.push_back(SiteSchema::Kind::Float);
          break;
        default:
          schema.info.push_back(SiteSchema::Kind::Integer);
      }
    }
    schema.filters = {"PASS", "q10", "LowQual"};
    e.bind(schema);
  } catch (const UsageError&) {
    return 0;
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::string> one = {"A"}, two = {"A", "C"}, many = {"AC", "A", "ATG", "*"};
  const std::vector<double> numbers = {1, nan, -2.5, 0};
  const std::vector<std::string> strings = {"x", ".", "", "yz"};
  const std::vector<std::int32_t> counts = {3, 0, 5, 1}, none = {0, 0, 0, 0};
  const std::vector<std::uint8_t> flags = {1, 0, 1};
  for (int shape = 0; shape < 4; ++shape) {
    std::vector<InfoValues> info;
    for (std::size_t k = 0; k < e.needs().info.size(); ++k) {
      const std::size_t n = static_cast<std::size_t>(shape);  // 0 .. 3 values
      const char first = e.needs().info[k].empty() ? 'I' : e.needs().info[k][0];
      if (first == 'S')
        info.push_back({{}, std::span<const std::string>(strings.data(), n)});
      else
        info.push_back({std::span<const double>(numbers.data(), n), {}});
    }
    SiteFields s;
    s.chrom = "chr1";
    s.pos = 100 + shape;
    s.id = shape == 0 ? "." : "rs1";
    s.alleles = shape == 0   ? std::span<const std::string>(one)
                : shape == 1 ? std::span<const std::string>(two)
                             : std::span<const std::string>(many);
    s.qual = shape == 2 ? nan : 30.5;
    s.filters = std::span<const std::uint8_t>(flags.data(), static_cast<std::size_t>(shape % 4));
    s.info = info;
    s.allele_counts =
        shape == 3 ? std::span<const std::int32_t>(none) : std::span<const std::int32_t>(counts);
    s.genotypes = shape == 3 ? 0 : 10;
    s.missing = shape;
    (void)e.keep(s);
  }
  return 0;
}
