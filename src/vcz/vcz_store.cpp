// VczStore: the VCF Zarr schema on top of the Zarr layer, and query → chunk plan.

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <numeric>

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
  if (s.positions_.ndim() != 1)
    throw FormatError(s.path_ + ": variant_position must have one dimension");
  auto samples = zarr::Array::open(s.store_, "sample_id");
  if (samples.ndim() != 1) throw FormatError(s.path_ + ": sample_id must have one dimension");
  const auto t_samples = std::chrono::steady_clock::now();
  s.samples_ = std::make_shared<Samples>();
  s.samples_->ids = samples.read_string_table();
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
  }
  if (auto contigs = s.array("contig_id")) {
    s.contig_ids_ = contigs->read_region_strings(std::vector<std::int64_t>{0}, contigs->shape());
  } else if (auto it = s.attributes_.find("contigs"); it != s.attributes_.end() && it->is_array()) {
    // Stores written by sgkit before the VCF Zarr spec list contigs in a group attribute.
    for (const auto& c : *it) s.contig_ids_.push_back(c.get<std::string>());
  } else {
    throw FormatError(s.path_ +
                      ": not a VCF Zarr store: no contig_id array and no 'contigs' "
                      "attribute");
  }
  if (auto len = s.array("contig_length")) s.contig_lengths_ = len->read_all_as<std::int64_t>();
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

  // Candidate chunks: from region_index when present (no genotype-sized reads), else all.
  std::vector<std::uint8_t> candidate(static_cast<std::size_t>(nchunks), 0);
  bool have_index = false;
  if (auto ri = array("region_index"); ri && ri->ndim() == 2 && ri->shape()[1] >= 5) {
    auto rows = ri->read_all_as<std::int64_t>();
    const std::int64_t ncol = ri->shape()[1];
    // region_index rows: chunk, contig, first POS, last POS, max END, records. It is written
    // for the variant chunking of the store, which equals call_genotype's in bio2zarr stores;
    // use it only when that holds.
    if (positions_.chunks()[0] == csize) {
      have_index = true;
      for (std::size_t row = 0; row + static_cast<std::size_t>(ncol) <= rows.size();
           row += static_cast<std::size_t>(ncol)) {
        const std::int64_t chunk = rows[row], contig = rows[row + 1];
        const std::int64_t first = rows[row + 2], max_end = rows[row + 4];
        auto it = by_contig.find(contig);
        if (it == by_contig.end() || chunk < 0 || chunk >= nchunks) continue;
        const std::int64_t hi = overlap == RegionOverlap::Pos ? rows[row + 3] : max_end;
        if (it->second.overlaps(first, hi)) candidate[static_cast<std::size_t>(chunk)] = 1;
      }
    }
  }
  if (!have_index) std::fill(candidate.begin(), candidate.end(), std::uint8_t{1});

  auto contig_arr = array("variant_contig");
  auto len_arr = overlap == RegionOverlap::Record ? array("variant_length") : std::nullopt;
  std::optional<zarr::Array> allele_arr;
  if (overlap == RegionOverlap::Record && !len_arr) allele_arr = array("variant_allele");

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
      const std::int64_t last =
          len.empty() ? p : p + std::max<std::int64_t>(1, len[static_cast<std::size_t>(i)]) - 1;
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
