// The store side of site expressions (site_fields.hpp): which arrays hold the fields an
// expression names, their kinds, and their values unit by unit.

#include "stats/site_fields.hpp"

#include <cmath>
#include <limits>

#include "vczstats/error.hpp"

namespace vczstats::stats {

namespace {

std::string missing_array(const vcz::VczStore& store, const SiteExpression& e,
                          const std::string& array, const std::string& field) {
  return store.path() + ": " + e.describe() + " reads " + field + ", and the store has no " + array;
}

// A variant_<NAME> array of an INFO field: one dimension, or two (a value per allele, ...).
zarr::Array info_array(const vcz::VczStore& store, const SiteExpression& e,
                       const std::string& name) {
  const std::string array = "variant_" + name;
  const auto a = store.array(array);
  if (!a) throw UsageError(missing_array(store, e, array, "INFO/" + name));
  const int ndim = a->ndim();
  if (ndim != 1 && ndim != 2)
    throw FormatError(store.path() + ": " + array + " has " + std::to_string(ndim) +
                      " dimensions; an INFO field has one or two");
  const bool text = a->dtype().kind == zarr::DataKind::String;
  return *store.variant_array(array, ndim,
                              text ? vcz::ElementKind::String : vcz::ElementKind::Number);
}

SiteSchema::Kind kind_of(const zarr::Array& a) {
  switch (a.dtype().kind) {
    case zarr::DataKind::Bool:
      return SiteSchema::Kind::Flag;
    case zarr::DataKind::Float:
      return SiteSchema::Kind::Float;
    case zarr::DataKind::String:
      return SiteSchema::Kind::String;
    default:
      return SiteSchema::Kind::Integer;
  }
}

}  // namespace

SiteExpression bind_site_expression(const vcz::VczStore& store, std::string_view text,
                                    bool exclude) {
  SiteExpression e = SiteExpression::parse(text, exclude);
  SiteSchema schema;
  for (const auto& name : e.needs().info)
    schema.info.push_back(kind_of(info_array(store, e, name)));
  if (e.needs().filters) {
    const auto ids = store.array("filter_id");
    if (!ids || !store.array("variant_filter"))
      throw FormatError(missing_array(store, e, "variant_filter and filter_id", "FILTER"));
    const std::vector<std::int64_t> s{0}, end{ids->shape()[0]};
    schema.filters = ids->read_region_strings(s, end);
  }
  e.bind(schema);
  return e;
}

SiteFieldReader::SiteFieldReader(const vcz::VczStore& store, const SiteExpression& expression)
    : store_(store),
      needs_(expression.needs()),
      reader_(store, expression.needs().alleles, expression.needs().id) {
  const auto& n = needs_;
  if (n.alleles && !store.array("variant_allele"))
    throw FormatError(missing_array(store, expression, "variant_allele", "the alleles"));
  if (n.qual) {
    quality_ = store.variant_array("variant_quality", 1, vcz::ElementKind::Number);
    if (!quality_) throw FormatError(missing_array(store, expression, "variant_quality", "QUAL"));
  }
  if (n.filters) {
    filters_ = store.variant_array("variant_filter", 2, vcz::ElementKind::Integer);
    if (!filters_) throw FormatError(missing_array(store, expression, "variant_filter", "FILTER"));
    filter_columns_ = filters_->shape()[1];
  }
  for (const auto& name : n.info) {
    Info f;
    f.array = info_array(store, expression, name);
    f.width = f.array.ndim() == 2 ? f.array.shape()[1] : 1;
    f.text = f.array.dtype().kind == zarr::DataKind::String;
    f.integer = f.array.dtype().kind == zarr::DataKind::Int;
    info_.push_back(std::move(f));
  }
  values_.resize(info_.size());
}

void SiteFieldReader::read(std::int64_t begin, std::int64_t end) {
  block_ = reader_.read(begin, end);
  const std::vector<std::int64_t> s1{begin}, e1{end};
  if (quality_) qual_ = quality_->read_region_as<double>(s1, e1);
  if (filters_) {
    const std::vector<std::int64_t> s{begin, 0}, e{end, filter_columns_};
    filter_flags_ = filters_->read_region_as<std::uint8_t>(s, e);
  }
  for (auto& f : info_) {
    std::vector<std::int64_t> s{begin}, e{end};
    if (f.array.ndim() == 2) {
      s.push_back(0);
      e.push_back(f.width);
    }
    if (f.text) {
      f.strings = f.array.read_region_strings(s, e);
    } else {
      f.numbers = f.array.read_region_as<double>(s, e);
      // VCF Zarr: an integer field's missing value is -1 and its padding -2.
      if (f.integer)
        for (auto& v : f.numbers)
          if (v == -1 || v == -2) v = std::numeric_limits<double>::quiet_NaN();
    }
  }
}

SiteFields SiteFieldReader::site(std::int64_t r) {
  SiteFields s;
  const auto i = static_cast<std::size_t>(r);
  if (needs_.chrom) s.chrom = store_.contig_ids()[static_cast<std::size_t>(block_.contig[i])];
  s.pos = block_.position[i];
  if (needs_.id) s.id = block_.id[i];
  if (needs_.alleles && !block_.alleles.empty())
    s.alleles = std::span<const std::string>(block_.alleles.data() + r * block_.max_alleles,
                                             static_cast<std::size_t>(block_.num_alleles(r)));
  if (quality_) s.qual = qual_[i];
  if (filters_)
    s.filters = std::span<const std::uint8_t>(filter_flags_.data() + r * filter_columns_,
                                              static_cast<std::size_t>(filter_columns_));
  for (std::size_t k = 0; k < info_.size(); ++k) {
    const auto w = static_cast<std::size_t>(info_[k].width);
    values_[k] =
        info_[k].text
            ? InfoValues{{}, std::span<const std::string>(info_[k].strings.data() + i * w, w)}
            : InfoValues{std::span<const double>(info_[k].numbers.data() + i * w, w), {}};
  }
  s.info = values_;
  return s;
}

}  // namespace vczstats::stats
