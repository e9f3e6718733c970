// Per-variant fields of a range of variants.

#include "vczstats/variants.hpp"

#include <algorithm>

#include "vczstats/error.hpp"

namespace vczstats::vcz {

int VariantBlock::num_alleles(std::int64_t r) const {
  if (alleles.empty()) return max_alleles;
  int n = max_alleles;
  while (n > 1 && allele(r, n - 1).empty()) --n;
  return n;
}

int store_max_alleles(const VczStore& store) {
  auto a = store.array("variant_allele");
  if (!a || a->ndim() != 2) return 2;
  if (a->shape()[1] > kMaxAlleles)
    throw FormatError(store.path() + ": variant_allele has room for " +
                      std::to_string(a->shape()[1]) + " alleles per variant; at most " +
                      std::to_string(kMaxAlleles) + " are supported");
  return static_cast<int>(std::max<std::int64_t>(a->shape()[1], 1));
}

VariantReader::VariantReader(const VczStore& store, bool with_alleles, bool with_ids,
                             bool key_missing_ids)
    : store_(store) {
  if (key_missing_ids) with_alleles = with_ids = true;
  key_missing_ids_ = key_missing_ids;
  auto contig = store.variant_array("variant_contig", 1, ElementKind::Integer);
  if (!contig) throw FormatError(store.path() + ": variant_contig is missing");
  contig_ = *contig;
  position_ = *store.array("variant_position");
  max_alleles_ = store_max_alleles(store);
  if (with_alleles) alleles_ = store.variant_array("variant_allele", 2, ElementKind::String);
  with_ids_ = with_ids;
  if (with_ids) ids_ = store.variant_array("variant_id", 1, ElementKind::String);
}

namespace {

/// The keys of @p a's chunks holding rows [begin, end) (every chunk along its other dimensions).
void append_row_chunks(const zarr::Array& a, std::int64_t begin, std::int64_t end,
                       std::vector<std::string>& keys, std::unordered_set<std::string>& seen) {
  if (end <= begin || a.ndim() == 0) return;
  const std::int64_t rows = a.chunks()[0];
  std::vector<std::int64_t> index(a.chunks().size(), 0);
  std::int64_t inner = 1;  // chunks along the other dimensions
  for (int d = 1; d < a.ndim(); ++d) inner *= std::max<std::int64_t>(a.num_chunks(d), 1);
  for (std::int64_t c = begin / rows; c <= (end - 1) / rows; ++c) {
    for (std::int64_t i = 0; i < inner; ++i) {
      index[0] = c;
      for (std::int64_t r = i, d = a.ndim() - 1; d >= 1; --d) {
        const std::int64_t n = std::max<std::int64_t>(a.num_chunks(static_cast<int>(d)), 1);
        index[static_cast<std::size_t>(d)] = r % n;
        r /= n;
      }
      if (auto key = a.chunk_key(index); seen.insert(key).second) keys.push_back(std::move(key));
    }
  }
}

}  // namespace

void VariantReader::chunk_keys(std::int64_t begin, std::int64_t end, std::vector<std::string>& keys,
                               std::unordered_set<std::string>& seen) const {
  append_row_chunks(position_, begin, end, keys, seen);
  append_row_chunks(contig_, begin, end, keys, seen);
  if (alleles_) append_row_chunks(*alleles_, begin, end, keys, seen);
  if (ids_) append_row_chunks(*ids_, begin, end, keys, seen);
}

void VariantReader::prefetch(std::span<const WorkUnit> units) const {
  const zarr::Store& store = position_.store();
  if (!store.reads_ahead()) return;
  std::vector<std::string> keys;
  std::unordered_set<std::string> seen;
  for (const auto& unit : units)
    if (unit.size() > 0) chunk_keys(unit.begin, unit.end, keys, seen);
  store.prefetch(keys);
}

VariantBlock VariantReader::read(std::int64_t begin, std::int64_t end) const {
  VariantBlock b;
  b.begin = begin;
  b.end = end;
  const std::vector<std::int64_t> s1{begin}, e1{end};
  // Checked as read (64 bits), before narrowing: 2^32 must not pass for contig 0.
  const auto contig = contig_.read_region_as<std::int64_t>(s1, e1);
  b.position = position_.read_region_as<std::int64_t>(s1, e1);
  const auto ncontigs = static_cast<std::int64_t>(store_.contig_ids().size());
  b.contig.reserve(contig.size());
  for (auto c : contig) {
    if (c < 0 || c >= ncontigs)
      throw FormatError(store_.path() + ": variant_contig holds " + std::to_string(c) +
                        " in variants " + std::to_string(begin) + "-" + std::to_string(end) +
                        ", outside the " + std::to_string(ncontigs) + " contigs");
    b.contig.push_back(static_cast<std::int32_t>(c));
  }
  b.max_alleles = max_alleles_;
  if (alleles_) {  // else alleles stays empty: allele() reads "N" and every row has max_alleles
    const std::vector<std::int64_t> s2{begin, 0}, e2{end, max_alleles_};
    b.alleles = alleles_->read_region_strings(s2, e2);
  }
  if (ids_) {
    b.id = ids_->read_region_strings(s1, e1);
    for (auto& id : b.id)
      if (id.empty()) id.push_back('.');  // (assigning "" a literal trips GCC 12 -Wrestrict)
  } else if (with_ids_) {
    b.id.assign(static_cast<std::size_t>(end - begin), ".");
  }
  if (key_missing_ids_)
    for (std::int64_t r = 0; r < b.size(); ++r)
      if (b.id[static_cast<std::size_t>(r)] == ".")
        b.id[static_cast<std::size_t>(r)] = variant_key(store_, b, r);
  return b;
}

std::string variant_key(const VczStore& store, const VariantBlock& b, std::int64_t r) {
  const auto i = static_cast<std::size_t>(r);
  if (!b.id.empty() && !b.id[i].empty() && b.id[i] != ".") return b.id[i];
  std::string key = store.contig_ids()[static_cast<std::size_t>(b.contig[i])];
  key += ':';
  key += std::to_string(b.position[i]);
  key += ':';
  key += b.allele(r, 0);
  key += ':';
  const int n = b.num_alleles(r);
  if (n < 2) key += '.';
  for (int k = 1; k < n; ++k) {
    if (k > 1) key += ',';
    key += b.allele(r, k);
  }
  return key;
}

}  // namespace vczstats::vcz
