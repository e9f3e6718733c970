// VczStore: the VCF Zarr schema on top of the Zarr layer, and query → chunk plan.

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "vcz/sample_index.hpp"
#include "vczstats/error.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats::vcz {

std::int64_t WorkUnit::selected() const {
  if (mask.empty()) return size();
  return std::count(mask.begin(), mask.end(), std::uint8_t{1});
}

std::int64_t ChunkPlan::selected_variants() const {
  std::int64_t n = 0;
  for (const auto& u : units) n += u.selected();
  return n;
}

namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string shape_text(const zarr::Array& a) {
  std::string out;
  for (auto n : a.shape()) out += (out.empty() ? "" : " x ") + std::to_string(n);
  return "[" + out + "]";
}

bool is_kind(const zarr::Array& a, ElementKind kind) {
  const auto k = a.dtype().kind;
  switch (kind) {
    case ElementKind::Integer:
      return k == zarr::DataKind::Int || k == zarr::DataKind::UInt || k == zarr::DataKind::Bool;
    case ElementKind::Number:
      return k != zarr::DataKind::String;
    case ElementKind::String:
      return k == zarr::DataKind::String;
  }
  return false;
}

const char* kind_name(ElementKind kind) {
  switch (kind) {
    case ElementKind::Integer:
      return "integers";
    case ElementKind::Number:
      return "numbers";
    case ElementKind::String:
      break;
  }
  return "strings";
}

/// @throws FormatError unless @p a has @p ndim dimensions and elements of @p kind.
void require(const std::string& path, const std::string& name, const zarr::Array& a, int ndim,
             ElementKind kind) {
  if (a.ndim() != ndim)
    throw FormatError(fmt::format("{}: {} must have {} dimension{}, found {}", path, name, ndim,
                                  ndim == 1 ? "" : "s", shape_text(a)));
  if (!is_kind(a, kind))
    throw FormatError(fmt::format("{}: {} must hold {}, found {}", path, name, kind_name(kind),
                                  a.dtype().name()));
}

/// The position of the first byte that is not part of valid UTF-8, or npos.
std::size_t invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      n = 1, cp = c & 0x1Fu;
    } else if ((c & 0xF0) == 0xE0) {
      n = 2, cp = c & 0x0Fu;
    } else if ((c & 0xF8) == 0xF0) {
      n = 3, cp = c & 0x07u;
    } else {
      return i;
    }
    if (s.size() - i <= n) return i;
    for (std::size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (d & 0x3Fu);
    }
    const std::uint32_t min = n == 1 ? 0x80 : n == 2 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;  // overlong etc.
    i += n + 1;
  }
  return std::string_view::npos;
}

/// Ids are written to JSON and TSV as they are: they must be UTF-8, as VCF Zarr's vlen-utf8
/// strings are.
template <class Ids>
void require_utf8(const std::string& path, const std::string& name, const Ids& ids) {
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(ids.size()); ++i)
    if (const auto at = invalid_utf8(ids[i]); at != std::string_view::npos)
      throw FormatError(
          fmt::format("{}: {} entry {} is not valid UTF-8 (byte {})", path, name, i, at));
}

/// @throws FormatError when the first dimension of @p a is longer than @p max entries.
void require_at_most(const std::string& path, const std::string& name, const zarr::Array& a,
                     std::int64_t max) {
  if (a.ndim() > 0 && a.shape()[0] > max)
    throw FormatError(fmt::format("{}: {} has {} entries; at most {} are supported", path, name,
                                  a.shape()[0], max));
}

/// @throws FormatError when @p a has more variant chunks than a chunk plan may hold.
void require_variant_chunks(const std::string& path, const std::string& name,
                            const zarr::Array& a) {
  if (a.num_chunks(0) > kMaxVariantChunks)
    throw FormatError(fmt::format(
        "{}: {} has {} variant chunks (shape {}, {} variants per chunk); at most {} are "
        "supported: rechunk with larger variant chunks",
        path, name, a.num_chunks(0), shape_text(a), a.chunks()[0], kMaxVariantChunks));
}

}  // namespace

// sample_id, and the index of its names built on first use.
struct VczStore::Samples {
  StringTable ids;
  std::once_flag indexed;
  std::optional<SampleIndex> index;
};

const StringTable& VczStore::sample_ids() const {
  return samples_->ids;
}

std::vector<std::int64_t> VczStore::find_samples(const StringTable& names) const {
  Samples& s = *samples_;
  std::call_once(s.indexed, [&] { s.index.emplace(s.ids, path_); });
  std::vector<std::int64_t> found(static_cast<std::size_t>(names.size()));
  s.index->find(s.ids, names, found);
  return found;
}

VczStore VczStore::open(const std::string& path, const zarr::StoreOptions& options,
                        SetupTimes* times) {
  const auto t0 = std::chrono::steady_clock::now();
  VczStore s;
  s.path_ = path;
  s.store_ = zarr::open_store(path, options);
  if (s.store_->reads_ahead()) {
    // Before the group is opened (a zip's documents are still in flight): the format from the
    // root's documents, which a zip lists and a directory store has asked for already.
    s.zarr_format_ = s.store_->contains("zarr.json") ? 3 : 2;
    // A remote store: ask for the metadata of the arrays opened below and by the readers all
    // at once, not one round trip (or three) per array as each is opened. Stores with
    // consolidated metadata, and zips, skip the documents they hold.
    std::vector<std::string> keys;
    for (const char* name :
         {"sample_id", "variant_position", "call_genotype", "call_genotype_mask",
          "call_genotype_phased", "contig_id", "contig_length", "variant_contig", "variant_allele",
          "variant_id", "variant_id_mask", "variant_length", "region_index", "variant_AA",
          "variant_filter", "filter_id", "variant_quality"}) {
      const std::string n(name);
      if (s.zarr_format_ == 3) {
        keys.push_back(n + "/zarr.json");
      } else {
        keys.push_back(n + "/.zarray");
        keys.push_back(n + "/.zattrs");
      }
    }
    // The first chunk of the small arrays read whole at open (the samples' names, the contigs,
    // the filters): one chunk each in the stores VCF Zarr writers make (absent keys cost an
    // answer in flight with the others).
    for (const char* name : {"sample_id", "contig_id", "contig_length", "filter_id"})
      keys.push_back(std::string(name) + (s.zarr_format_ == 3 ? "/c/0" : "/0"));
    // region_index (2-D, one chunk): the plan of regions and the windows' data spans read it.
    keys.push_back(s.zarr_format_ == 3 ? "region_index/c/0/0" : "region_index/0.0");
    s.store_->prefetch(keys);
  }
  auto group = zarr::open_group(*s.store_);
  s.zarr_format_ = group.zarr_format;
  s.attributes_ = group.attributes;
  if (auto it = s.attributes_.find("vcf_zarr_version");
      it != s.attributes_.end() && it->is_string())
    s.vcf_zarr_version_ = it->get<std::string>();

  for (const char* required : {"sample_id", "variant_position"}) {
    if (!s.array(required))
      throw FormatError(s.path_ + ": not a VCF Zarr store: array '" + required + "' is missing");
  }
  s.positions_ = zarr::Array::open(s.store_, "variant_position");
  require(s.path_, "variant_position", s.positions_, 1, ElementKind::Integer);
  require_variant_chunks(s.path_, "variant_position", s.positions_);
  auto samples = zarr::Array::open(s.store_, "sample_id");
  require(s.path_, "sample_id", samples, 1, ElementKind::String);
  require_at_most(s.path_, "sample_id", samples, kMaxSamples);
  const auto t_samples = std::chrono::steady_clock::now();
  s.samples_ = std::make_shared<Samples>();
  s.samples_->ids = samples.read_string_table();
  require_utf8(s.path_, "sample_id", s.samples_->ids);
  const double read_samples = seconds_since(t_samples);
  const std::int64_t num_samples = s.samples_->ids.size();

  if (auto g = s.array("call_genotype")) {
    s.has_genotypes_ = true;
    s.genotypes_ = *g;
    if (g->ndim() != 3)
      throw FormatError(s.path_ +
                        ": call_genotype must have 3 dimensions (variants, samples, "
                        "ploidy), found " +
                        std::to_string(g->ndim()));
    if (g->dtype().kind != zarr::DataKind::Int)
      throw FormatError(s.path_ + ": call_genotype must hold signed integers, found " +
                        g->dtype().name());
    if (num_samples != g->shape()[1])
      throw FormatError(s.path_ + ": sample_id has " + std::to_string(num_samples) +
                        " entries but call_genotype has " + std::to_string(g->shape()[1]) +
                        " samples");
    if (g->shape()[0] != s.positions_.shape()[0])
      throw FormatError(
          s.path_ + ": variant_position has " + std::to_string(s.positions_.shape()[0]) +
          " entries but call_genotype has " + std::to_string(g->shape()[0]) + " variants");
    if (g->shape()[2] > kMaxPloidy)
      throw FormatError(fmt::format("{}: call_genotype has ploidy {}; at most {} is supported",
                                    s.path_, g->shape()[2], kMaxPloidy));
    require_variant_chunks(s.path_, "call_genotype", *g);
  }
  if (auto contigs = s.array("contig_id")) {
    require(s.path_, "contig_id", *contigs, 1, ElementKind::String);
    require_at_most(s.path_, "contig_id", *contigs, kMaxSamples);
    s.contig_ids_ = contigs->read_region_strings(std::vector<std::int64_t>{0}, contigs->shape());
  } else if (auto it = s.attributes_.find("contigs"); it != s.attributes_.end() && it->is_array()) {
    // Stores written by sgkit before the VCF Zarr spec list contigs in a group attribute.
    for (const auto& c : *it) {
      if (!c.is_string())
        throw FormatError(fmt::format("{}: the 'contigs' attribute must list strings, found {}",
                                      s.path_, c.dump()));
      s.contig_ids_.push_back(c.get<std::string>());
    }
  } else {
    throw FormatError(s.path_ +
                      ": not a VCF Zarr store: no contig_id array and no 'contigs' "
                      "attribute");
  }
  require_utf8(s.path_, "contig_id", s.contig_ids_);
  if (auto len = s.array("contig_length")) {
    require(s.path_, "contig_length", *len, 1, ElementKind::Number);
    if (len->shape()[0] != static_cast<std::int64_t>(s.contig_ids_.size()))
      throw FormatError(fmt::format("{}: contig_length has {} entries but contig_id has {}",
                                    s.path_, len->shape()[0], s.contig_ids_.size()));
    s.contig_lengths_ = len->read_all_as<std::int64_t>();
  }
  for (std::size_t i = 0; i < s.contig_ids_.size(); ++i)
    s.contig_index_.emplace(s.contig_ids_[i], static_cast<std::int32_t>(i));
  if (times) {
    times->read_samples = read_samples;
    times->open_store = seconds_since(t0) - read_samples;
  }
  return s;
}

std::optional<std::int32_t> VczStore::find_contig(std::string_view name) const {
  auto it = contig_index_.find(std::string(name));
  if (it == contig_index_.end()) return std::nullopt;
  return it->second;
}

const zarr::Array& VczStore::genotypes() const {
  if (!has_genotypes_) throw FormatError(path_ + ": the store has no call_genotype (sites only)");
  return genotypes_;
}

std::int64_t VczStore::num_variants() const {
  return positions_.shape()[0];
}
std::int64_t VczStore::num_samples_total() const {
  return samples_->ids.size();
}
std::int64_t VczStore::ploidy() const {
  return has_genotypes_ ? genotypes_.shape()[2] : 0;
}

std::optional<zarr::Array> VczStore::array(const std::string& name) const {
  const bool present = zarr_format_ == 3 ? store_->contains(name + "/zarr.json")
                                         : store_->contains(name + "/.zarray");
  if (!present) return std::nullopt;
  return zarr::Array::open(store_, name);
}

std::optional<zarr::Array> VczStore::variant_array(const std::string& name, int ndim,
                                                   ElementKind kind) const {
  auto a = array(name);
  if (!a) return a;
  require(path_, name, *a, ndim, kind);
  if (a->shape()[0] != num_variants())
    throw FormatError(fmt::format("{}: {} has {} entries but variant_position has {}", path_, name,
                                  a->shape()[0], num_variants()));
  return a;
}

std::vector<std::string> VczStore::array_names() const {
  return zarr::list_arrays(*store_);
}

SampleSelection VczStore::all_samples() const {
  const StringTable& ids = sample_ids();
  SampleSelection sel;
  sel.indices.reserve(static_cast<std::size_t>(ids.size()));
  for (std::int64_t i = 0; i < ids.size(); ++i)
    if (!ids[i].empty()) sel.indices.push_back(i);
  return sel;
}

SampleSelection VczStore::select_samples(const StringTable& names, bool ignore_missing) const {
  const bool exclude = !names.empty() && names[0].starts_with('^');
  auto found = find_samples(names);
  if (exclude) found[0] = find_samples({names[0].substr(1)})[0];
  const StringTable& ids = sample_ids();
  std::vector<std::uint8_t> chosen(static_cast<std::size_t>(ids.size()), 0);
  for (std::int64_t k = 0; k < names.size(); ++k) {
    const std::int64_t i = found[static_cast<std::size_t>(k)];
    if (i >= 0) {
      chosen[static_cast<std::size_t>(i)] = 1;
    } else if (!ignore_missing) {
      throw UsageError("sample '" + std::string(names[k].substr(k == 0 && exclude ? 1 : 0)) +
                       "' is not in " + path_ + " (use --force-samples to ignore unknown samples)");
    }
  }
  SampleSelection sel;
  for (std::int64_t i = 0; i < ids.size(); ++i)
    if (!ids[i].empty() && (chosen[static_cast<std::size_t>(i)] != 0) != exclude)
      sel.indices.push_back(i);
  if (sel.indices.empty()) throw UsageError("the sample selection is empty");
  return sel;
}

namespace {

// Disjoint, sorted intervals of one contig.
struct Intervals {
  std::vector<std::int64_t> starts, ends;  // 1-based inclusive

  void add(std::int64_t s, std::int64_t e) {
    starts.push_back(s);
    ends.push_back(e);
  }
  void normalise() {
    std::vector<std::size_t> order(starts.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return starts[a] < starts[b]; });
    std::vector<std::int64_t> s, e;
    for (auto i : order) {
      if (!s.empty() && starts[i] <= e.back()) {
        e.back() = std::max(e.back(), ends[i]);
      } else {
        s.push_back(starts[i]);
        e.push_back(ends[i]);
      }
    }
    starts = std::move(s);
    ends = std::move(e);
  }
  // Whether [lo, hi] overlaps any interval.
  bool overlaps(std::int64_t lo, std::int64_t hi) const {
    auto it = std::lower_bound(ends.begin(), ends.end(), lo);  // first interval ending >= lo
    if (it == ends.end()) return false;
    return starts[static_cast<std::size_t>(it - ends.begin())] <= hi;
  }
  std::int64_t min_start() const { return starts.front(); }
  std::int64_t max_end() const { return ends.back(); }
};

void add_units(ChunkPlan& plan, std::int64_t chunk, std::int64_t begin, std::int64_t end,
               const std::vector<std::uint8_t>* mask, std::int64_t max_unit) {
  // mask (when given) covers [begin, end) and has its first and last entries set.
  const std::int64_t step = max_unit > 0 ? max_unit : end - begin;
  for (std::int64_t b = begin; b < end; b += step) {
    WorkUnit u;
    u.chunk = chunk;
    u.begin = b;
    u.end = std::min(end, b + step);
    if (mask) {
      auto first = mask->begin() + (u.begin - begin);
      auto last = mask->begin() + (u.end - begin);
      if (std::find(first, last, std::uint8_t{0}) != last) u.mask.assign(first, last);
      if (std::find(first, last, std::uint8_t{1}) == last) continue;  // nothing selected
    }
    plan.units.push_back(std::move(u));
  }
}

}  // namespace

std::vector<VczStore::RegionIndexRow> VczStore::region_index() const {
  const std::int64_t most_rows =
      4 * (positions_.num_chunks(0) + static_cast<std::int64_t>(contig_ids_.size())) + 4096;
  const auto ri = array("region_index");
  if (!ri || ri->ndim() != 2 || ri->shape()[1] < 5 || ri->shape()[1] > 64 ||
      ri->shape()[0] > most_rows || !is_kind(*ri, ElementKind::Integer))
    return {};
  const auto values = ri->read_all_as<std::int64_t>();
  const auto ncol = static_cast<std::size_t>(ri->shape()[1]);
  std::vector<RegionIndexRow> rows;
  for (std::size_t r = 0; r + ncol <= values.size(); r += ncol)
    rows.push_back({values[r], values[r + 1], values[r + 2], values[r + 3], values[r + 4],
                    ncol > 5 ? values[r + 5] : -1});
  return rows;
}

ChunkPlan VczStore::plan(const std::vector<Region>& regions, RegionOverlap overlap,
                         std::int64_t max_unit_variants,
                         std::vector<std::string>* missing_contigs) const {
  ChunkPlan plan;
  const std::int64_t nvar = num_variants();
  // Work units follow call_genotype's variant chunks (variant_position's for a sites-only store).
  const zarr::Array& axis = has_genotypes_ ? genotypes_ : positions_;
  const std::int64_t csize = axis.chunks()[0];
  const std::int64_t nchunks = axis.num_chunks(0);
  if (regions.empty()) {
    for (std::int64_t c = 0; c < nchunks; ++c)
      add_units(plan, c, c * csize, std::min(nvar, (c + 1) * csize), nullptr, max_unit_variants);
    return plan;
  }

  // Resolve contig names; a spec that is itself a contig name means the whole contig.
  std::map<std::int64_t, Intervals> by_contig;
  for (const auto& r : regions) {
    if (auto whole = find_contig(r.spec); !r.spec.empty() && r.spec != r.contig && whole) {
      by_contig[*whole].add(1, std::numeric_limits<std::int64_t>::max());
      continue;
    }
    const auto c = find_contig(r.contig);
    if (!c) {
      if (missing_contigs) missing_contigs->push_back(r.contig);
      continue;
    }
    by_contig[*c].add(r.start, r.end);
  }
  for (auto& [c, iv] : by_contig) iv.normalise();
  if (by_contig.empty()) return plan;

  // Candidate chunks: from region_index when present (no genotype-sized reads), else all. The
  // index is written for the variant chunking of the store, which equals call_genotype's in
  // bio2zarr stores; it is used only when that holds.
  std::vector<std::uint8_t> candidate(static_cast<std::size_t>(nchunks), 0);
  std::vector<RegionIndexRow> index;
  if (positions_.chunks()[0] == csize) index = region_index();
  for (const RegionIndexRow& row : index) {
    auto it = by_contig.find(row.contig);
    if (it == by_contig.end() || row.chunk < 0 || row.chunk >= nchunks) continue;
    const std::int64_t hi = overlap == RegionOverlap::Pos ? row.last : row.max_end;
    if (it->second.overlaps(row.first, hi)) candidate[static_cast<std::size_t>(row.chunk)] = 1;
  }
  if (index.empty()) std::fill(candidate.begin(), candidate.end(), std::uint8_t{1});

  auto contig_arr = variant_array("variant_contig", 1, ElementKind::Integer);
  auto len_arr = overlap == RegionOverlap::Record
                     ? variant_array("variant_length", 1, ElementKind::Integer)
                     : std::nullopt;
  std::optional<zarr::Array> allele_arr;
  if (overlap == RegionOverlap::Record && !len_arr)
    allele_arr = variant_array("variant_allele", 2, ElementKind::String);

  for (std::int64_t c = 0; c < nchunks; ++c) {
    if (!candidate[static_cast<std::size_t>(c)]) continue;
    const std::int64_t b = c * csize, e = std::min(nvar, (c + 1) * csize);
    const std::vector<std::int64_t> start{b}, stop{e};
    std::vector<std::int64_t> contig(static_cast<std::size_t>(e - b), 0);
    if (contig_arr) contig = contig_arr->read_region_as<std::int64_t>(start, stop);
    auto pos = positions_.read_region_as<std::int64_t>(start, stop);
    std::vector<std::int64_t> len;
    if (len_arr) {
      len = len_arr->read_region_as<std::int64_t>(start, stop);
    } else if (allele_arr) {
      const std::vector<std::int64_t> astart{b, 0}, astop{e, 1};
      auto ref = allele_arr->read_region_strings(astart, astop);
      for (auto& r : ref) len.push_back(std::max<std::int64_t>(1, std::ssize(r)));
    }
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(e - b), 0);
    for (std::int64_t i = 0; i < e - b; ++i) {
      auto it = by_contig.find(contig[static_cast<std::size_t>(i)]);
      if (it == by_contig.end()) continue;
      const std::int64_t p = pos[static_cast<std::size_t>(i)];
      // POS + rlen - 1, saturated: a record near INT64_MAX must not wrap around out of its region.
      std::int64_t last = p;
      if (!len.empty() &&
          __builtin_add_overflow(p, std::max<std::int64_t>(1, len[static_cast<std::size_t>(i)]) - 1,
                                 &last))
        last = std::numeric_limits<std::int64_t>::max();
      mask[static_cast<std::size_t>(i)] = it->second.overlaps(p, last) ? 1 : 0;
    }
    auto first = std::find(mask.begin(), mask.end(), std::uint8_t{1});
    if (first == mask.end()) continue;
    auto last = std::find(mask.rbegin(), mask.rend(), std::uint8_t{1}).base();
    const std::vector<std::uint8_t> sub(first, last);
    add_units(plan, c, b + (first - mask.begin()), b + (last - mask.begin()), &sub,
              max_unit_variants);
  }
  return plan;
}

}  // namespace vczstats::vcz
