// Queries: the store, plan, samples, populations, windows, mask and ancestral source of a run;
// the site filter that groups sites into windows; partitions of a plan and their cursors.

#include "vczstats/query.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <utility>

#include "stats/site_fields.hpp"
#include "vczstats/error.hpp"
#include "vczstats/testing.hpp"
#include "vczstats/variants.hpp"

namespace vczstats {

// ---- accessible mask ------------------------------------------------------------------------

AccessibleMask::AccessibleMask(const vcz::VczStore& store, const std::string& path) {
  if (path.empty()) return;
  active_ = true;
  intervals_.resize(store.contig_ids().size());
  for (const auto& r : vcz::read_regions_file(path))
    if (const auto c = store.find_contig(r.contig))
      intervals_[static_cast<std::size_t>(*c)].emplace_back(r.start, r.end);
  for (auto& iv : intervals_) {  // sort and merge
    std::sort(iv.begin(), iv.end());
    std::vector<std::pair<std::int64_t, std::int64_t>> merged;
    for (const auto& [a, b] : iv) {
      // Adjacent or overlapping: a <= end + 1, written so that an end of 2^63 - 1 cannot wrap.
      if (!merged.empty() && a - 1 <= merged.back().second)
        merged.back().second = std::max(merged.back().second, b);
      else
        merged.emplace_back(a, b);
    }
    iv = std::move(merged);
  }
}

bool AccessibleMask::contains(std::int32_t contig, std::int64_t pos) const {
  if (!active_) return true;
  const auto& iv = intervals_[static_cast<std::size_t>(contig)];
  auto it = std::upper_bound(iv.begin(), iv.end(),
                             std::make_pair(pos, std::numeric_limits<std::int64_t>::max()));
  return it != iv.begin() && std::prev(it)->second >= pos;
}

double AccessibleMask::length(std::int32_t contig, std::int64_t start, std::int64_t end) const {
  // Counted in double: a span near 2^63 bases does not fit an int64 difference plus one.
  if (!active_) return static_cast<double>(end) - static_cast<double>(start) + 1.0;
  double n = 0;
  for (const auto& [a, b] : intervals_[static_cast<std::size_t>(contig)]) {
    if (a > end) break;
    const std::int64_t lo = std::max(a, start), hi = std::min(b, end);
    if (lo <= hi) n += static_cast<double>(hi) - static_cast<double>(lo) + 1.0;
  }
  return n;
}

// ---- query --------------------------------------------------------------------------------

namespace {

stats::WindowSpec window_spec(const WindowOptions& o, const vcz::VczStore& store) {
  const int kinds = (o.variants > 0) + (o.size > 0) + !o.file.empty();
  if (kinds > 1)
    throw UsageError("give one of --window-size, --window-variants and --windows-file");
  if (o.size < 0 || o.step < 0 || o.variants < 0)
    throw UsageError("window sizes and steps must be positive");
  if (o.step > 0 && o.size == 0) throw UsageError("--window-step needs --window-size");
  stats::WindowSpec spec{o.size, o.step, o.variants, {}, o.span};
  if (!o.file.empty()) {
    spec.intervals.resize(store.contig_ids().size());
    std::int64_t n = 0;
    for (const auto& r : vcz::read_regions_file(o.file)) {
      const auto c = store.find_contig(r.contig);
      if (!c) continue;  // a contig the store does not have
      spec.intervals[static_cast<std::size_t>(*c)].emplace_back(r.start, r.end);
      ++n;
    }
    if (n == 0) throw UsageError(o.file + ": no window on a contig of " + store.path());
    for (auto& iv : spec.intervals) std::stable_sort(iv.begin(), iv.end());
  }
  return spec;
}

}  // namespace

namespace {

// make_query, with work units of at most max_unit_variants variants (0: one chunk).
Query build(const QueryOptions& o, std::int64_t max_unit_variants) {
  vcz::SetupTimes setup;
  Query q{vcz::VczStore::open(o.store, o.store_options, &setup),
          {},
          {},
          {},
          {},
          o.overlap,
          o.windows,
          {},
          {},
          {},
          {},
          {},
          {},
          std::make_shared<detail::DataSpans>(),
          {},
          false,
          0,
          nullptr,
          {}};
  if (!o.regions.empty() && !o.regions_file.empty())
    throw UsageError("give either -r/--regions or -R/--regions-file, not both");
  if (!o.regions.empty()) q.regions = vcz::parse_regions(o.regions);
  if (!o.regions_file.empty()) q.regions = vcz::read_regions_file(o.regions_file);
  std::vector<std::string> missing;
  q.plan = q.store.plan(q.regions, q.overlap, max_unit_variants, &missing);
  q.data_span_cache->plan = q.plan;  // partitions of the plan share the spans of the whole
  for (const auto& c : missing)
    q.warnings.push_back("contig '" + c + "' is not in " + o.store +
                         "; its regions select nothing");

  using clock = std::chrono::steady_clock;
  auto t = clock::now();
  auto lap = [&t] {
    const auto now = clock::now();
    return std::chrono::duration<double>(now - std::exchange(t, now)).count();
  };
  if (!o.samples.empty() && !o.samples_file.empty())
    throw UsageError("give either -s/--samples or -S/--samples-file, not both");
  if (!o.samples.empty())
    q.samples = q.store.select_samples(StringTable::from(o.samples), o.force_samples);
  else if (!o.samples_file.empty())
    q.samples = q.store.select_samples(vcz::read_samples_file(o.samples_file), o.force_samples);
  else
    q.samples = q.store.all_samples();
  if (q.samples.size() == 0) throw UsageError(o.store + ": no samples to analyse");
  setup.selection = lap();
  if (!o.pop_column.empty() && o.pops_file.empty())
    throw UsageError("a population column was named, but no populations file was given");
  if (!o.pops_file.empty() && !o.pops.empty())
    throw UsageError("give populations either as a file or in memory, not both");
  if (!o.pops_file.empty())
    q.pops = vcz::apply_populations(q.store, vcz::read_populations_file(o.pops_file, o.pop_column),
                                    q.samples, o.force_samples);
  else if (!o.pops.empty())
    q.pops =
        vcz::apply_populations(q.store, vcz::population_file(o.pops), q.samples, o.force_samples);
  else
    q.pops = vcz::single_population(q.samples);
  setup.populations = lap();
  q.setup = setup;

  q.windows = window_spec(o.windows, q.store);
  q.accessible = std::make_shared<const AccessibleMask>(q.store, o.accessible);
  q.accessible_path = o.accessible;
  q.ancestral = o.ancestral.empty() ? "ref" : o.ancestral;
  q.filters = o.filters;
  q.filters.validate();
  if (q.filters.expression()) {
    SiteExpression e = stats::bind_site_expression(
        q.store, q.filters.include ? *q.filters.include : *q.filters.exclude, !q.filters.include);
    // FMT/GQ and FMT/DP conditions are the genotype masks of --min-gq and --min-dp.
    q.filters.min_gq = std::max(q.filters.min_gq, e.genotype_mask().min_gq);
    q.filters.min_dp = std::max(q.filters.min_dp, e.genotype_mask().min_dp);
    if (e.selects_sites()) q.expression = std::make_shared<const SiteExpression>(std::move(e));
  }
  q.unfiltered_sites = q.plan.selected_variants();
  if (q.filters.metadata() || (q.expression && !q.expression_reads_counts())) {
    detail::apply_metadata_filters(q);
    if (q.unfiltered_sites > 0 && q.plan.units.empty())
      q.warnings.push_back("the site filters " + q.filters.describe() + " keep none of the " +
                           std::to_string(q.unfiltered_sites) + " selected variants of " + o.store);
  }
  return q;
}

}  // namespace

Query make_query(const QueryOptions& o) {
  return build(o, 0);
}

Query hooks::make_query(const QueryOptions& o, std::int64_t max_unit_variants) {
  return build(o, max_unit_variants);
}

int Query::population(const std::string& name, const char* option) const {
  for (int i = 0; i < pops.count(); ++i)
    if (pops.names[static_cast<std::size_t>(i)] == name) return i;
  throw UsageError(std::string(option) + ": population '" + name + "' is not among " +
                   (pops.count() == 1 && pops.names[0] == "all" ? "the populations (give -P)"
                                                                : "the -P populations"));
}

std::vector<int> Query::population_list(const std::string& spec, std::size_t expected,
                                        const char* option) const {
  const auto names = vcz::split_list(spec);
  if (names.size() != expected)
    throw UsageError(std::string(option) + ": expected " + std::to_string(expected) +
                     " comma-separated populations, got '" + spec + "'");
  std::vector<int> out;
  for (const auto& n : names) out.push_back(population(n, option));
  return out;
}

std::vector<std::pair<int, int>> Query::population_pairs(const std::string& spec,
                                                         const char* option) const {
  std::vector<std::pair<int, int>> pairs;
  if (spec.empty()) {
    for (int i = 0; i < pops.count(); ++i)
      for (int j = i + 1; j < pops.count(); ++j) pairs.emplace_back(i, j);
  } else {
    for (const auto& item : vcz::split_list(spec, ';')) {
      const auto two = vcz::split_list(item, ',');
      if (two.size() != 2)
        throw UsageError(std::string(option) + ": expected A,B;C,D, got '" + item + "'");
      pairs.emplace_back(population(two[0], option), population(two[1], option));
    }
  }
  if (pairs.empty()) throw UsageError("divergence needs at least two populations (-P/--pops FILE)");
  return pairs;
}

// ---- site filter --------------------------------------------------------------------------

SiteFilter::SiteFilter(const Query& q, bool raw)
    : q_(q),
      store_(q.store),
      regions_(q.regions),
      mask_(*q.accessible),
      pos_overlap_(q.overlap == vcz::RegionOverlap::Pos),
      per_contig_(!q.windows.intervals.empty()),
      data_span_(!raw && q.windows.span == stats::WindowSpan::Data && q.windows.variants == 0 &&
                 q.windows.intervals.empty()) {
  by_contig_.resize(store_.contig_ids().size());
  for (std::size_t k = 0; k < regions_.size(); ++k) {
    auto c = store_.find_contig(regions_[k].contig);
    if (!c) c = store_.find_contig(regions_[k].spec);
    if (c)
      by_contig_[static_cast<std::size_t>(*c)].entries.push_back(
          {regions_[k].start, regions_[k].end, k});
  }
  for (auto& idx : by_contig_) {
    std::sort(idx.entries.begin(), idx.entries.end(),
              [](const Entry& a, const Entry& b) { return a.start < b.start; });
    std::int64_t m = std::numeric_limits<std::int64_t>::min();
    for (const auto& e : idx.entries) idx.max_end.push_back(m = std::max(m, e.end));
  }
}

std::optional<stats::WindowGroup> SiteFilter::group(std::int32_t contig, std::int64_t pos,
                                                    std::int64_t ref_length) const {
  if (!mask_.contains(contig, pos)) return std::nullopt;
  const auto& lengths = store_.contig_lengths();
  // A length of 0 (or less) means unknown: writers fill it for header lines without one.
  const bool has_length = lengths && static_cast<std::size_t>(contig) < lengths->size() &&
                          (*lengths)[static_cast<std::size_t>(contig)] > 0;
  stats::WindowGroup g;
  g.contig = contig;
  if (regions_.empty()) {
    g.key = contig;
    g.start = 1;
    if (data_span_) {  // the first to the last site of the contig
      const auto& [first, last] = span_of(g.key);
      g.start = first;
      g.end = last;
      g.known_end = true;
    } else if (has_length) {
      g.end = (*lengths)[static_cast<std::size_t>(contig)];
      g.known_end = true;
    }
    return g;
  }
  // Regions selecting the site: start <= (POS, or the record's end) and end >= POS. The
  // record's end saturates: a POS near 2^63 plus REF's length must not wrap.
  const std::int64_t len = std::max<std::int64_t>(ref_length, 1);
  const std::int64_t last =
      pos_overlap_ || pos > std::numeric_limits<std::int64_t>::max() - (len - 1) ? pos
                                                                                 : pos + (len - 1);
  const auto& idx = by_contig_[static_cast<std::size_t>(contig)];
  auto it = std::upper_bound(idx.entries.begin(), idx.entries.end(), last,
                             [](std::int64_t v, const Entry& e) { return v < e.start; });
  std::size_t best = regions_.size();
  for (auto i = it - idx.entries.begin();
       i-- > 0 && idx.max_end[static_cast<std::size_t>(i)] >= pos;)
    if (idx.entries[static_cast<std::size_t>(i)].end >= pos)
      best = std::min(best, idx.entries[static_cast<std::size_t>(i)].k);
  if (best == regions_.size()) return std::nullopt;
  const auto& r = regions_[best];
  g.key = per_contig_ ? contig : static_cast<std::int64_t>(best);
  g.start = r.start;
  constexpr auto kOpen = std::numeric_limits<std::int64_t>::max();
  if (data_span_ && r.end == kOpen) {
    // A region without an end ends at its last site; one without coordinates (chr, chr:1-)
    // starts at its first.
    const auto& [first_site, last_site] = span_of(g.key);
    if (r.start == 1) g.start = first_site;
    g.end = std::max(last_site, g.start);
    g.known_end = true;
  } else if (r.end != kOpen) {
    g.end = r.end;
    g.known_end = true;
  } else if (has_length) {
    g.end = (*lengths)[static_cast<std::size_t>(contig)];
    g.known_end = true;
  }
  return g;
}

bool SiteFilter::uses_data_spans() const {
  // As group(): every group without regions, those of regions without an end with them.
  return data_span_ && (regions_.empty() ||
                        std::any_of(regions_.begin(), regions_.end(), [](const vcz::Region& r) {
                          return r.end == std::numeric_limits<std::int64_t>::max();
                        }));
}

const std::pair<std::int64_t, std::int64_t>& SiteFilter::span_of(std::int64_t key) const {
  if (!spans_) spans_ = &q_.data_spans();
  return (*spans_)[static_cast<std::size_t>(key)];
}

namespace {

/// One row of region_index: the first and last POS of a contig's records in a variant chunk.
struct ChunkSpan {
  std::int64_t contig, first, last;
};

/// The rows of @p store's region_index (VczStore::region_index) by variant chunk of
/// variant_position, keeping only the chunks whose rows account for each of their records (a
/// count per row, summing to the chunk's length) and name contigs of the store; empty without a
/// usable index.
std::vector<std::vector<ChunkSpan>> region_index_spans(const vcz::VczStore& store) {
  const auto pos = store.array("variant_position");
  if (!pos) return {};
  const auto rows = store.region_index();
  if (rows.empty()) return {};
  const std::int64_t csize = pos->chunks()[0], nchunks = pos->num_chunks(0);
  const std::int64_t nvar = store.num_variants();
  std::vector<std::vector<ChunkSpan>> by_chunk(static_cast<std::size_t>(nchunks));
  std::vector<std::int64_t> records(static_cast<std::size_t>(nchunks), 0);
  const auto ncontigs = static_cast<std::int64_t>(store.contig_ids().size());
  std::vector<std::uint8_t> bad(static_cast<std::size_t>(nchunks), 0);
  for (const auto& row : rows) {
    if (row.chunk < 0 || row.chunk >= nchunks) continue;
    const auto c = static_cast<std::size_t>(row.chunk);
    if (row.contig < 0 || row.contig >= ncontigs || row.first > row.last || row.records <= 0 ||
        row.records > csize) {
      bad[c] = 1;
      continue;
    }
    by_chunk[c].push_back({row.contig, row.first, row.last});
    records[c] += row.records;
  }
  for (std::int64_t c = 0; c < nchunks; ++c) {
    const auto i = static_cast<std::size_t>(c);
    if (bad[i] || records[i] != std::min(nvar, (c + 1) * csize) - c * csize) by_chunk[i].clear();
  }
  return by_chunk;
}

}  // namespace

const std::vector<std::pair<std::int64_t, std::int64_t>>& Query::data_spans() const {
  auto& cache = *data_span_cache;
  std::call_once(cache.once, [this, &cache] {
    const SiteFilter raw(*this, /*raw=*/true);
    std::vector<std::pair<std::int64_t, std::int64_t>> spans(
        std::max(store.contig_ids().size(), regions.size()),
        {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()});
    const vcz::VariantReader reader(store, raw.needs_ref_length(), /*with_ids=*/false);
    // Without regions or a mask a group is a contig, and the span of every whole variant chunk
    // the plan selects all of is in region_index: only the other units read their positions.
    std::vector<std::vector<ChunkSpan>> index;
    if (regions.empty() && !accessible->active()) index = region_index_spans(store);
    const std::int64_t csize = index.empty() ? 0 : store.array("variant_position")->chunks()[0];
    std::vector<vcz::WorkUnit> units;
    for (const vcz::WorkUnit& unit : cache.plan ? cache.plan->units : plan.units) {
      if (unit.size() <= 0 || unit.selected() == 0) continue;
      const std::int64_t c = csize > 0 ? unit.begin / csize : -1;
      if (c >= 0 && c < static_cast<std::int64_t>(index.size()) && unit.mask.empty() &&
          unit.begin == c * csize && unit.end == std::min(store.num_variants(), (c + 1) * csize) &&
          !index[static_cast<std::size_t>(c)].empty()) {
        for (const ChunkSpan& cs : index[static_cast<std::size_t>(c)]) {
          auto& [first, last] = spans[static_cast<std::size_t>(cs.contig)];
          first = std::min(first, cs.first);
          last = std::max(last, cs.last);
        }
        continue;
      }
      units.push_back(unit);
    }
    // A remote store fetches the positions many at a time, not one round trip per chunk.
    reader.prefetch(units);
    for (const vcz::WorkUnit& unit : units) {
      const auto vb = reader.read(unit.begin, unit.end);
      for (std::int64_t r = 0; r < unit.size(); ++r) {
        if (!unit.mask.empty() && !unit.mask[static_cast<std::size_t>(r)]) continue;
        const auto i = static_cast<std::size_t>(r);
        const std::int64_t ref_length =
            raw.needs_ref_length() ? static_cast<std::int64_t>(vb.allele(r, 0).size()) : 1;
        const auto g = raw.group(vb.contig[i], vb.position[i], ref_length);
        if (!g) continue;
        auto& [first, last] = spans[static_cast<std::size_t>(g->key)];
        first = std::min(first, vb.position[i]);
        last = std::max(last, vb.position[i]);
      }
    }
    cache.by_key = std::move(spans);
    cache.computed = true;
  });
  return cache.by_key;
}

bool detail::set_count_filtered_data_spans(
    const Query& q, std::vector<std::pair<std::int64_t, std::int64_t>> spans) {
  auto& cache = *q.data_span_cache;
  bool set = false;
  std::call_once(cache.once, [&] {
    cache.by_key = std::move(spans);
    cache.computed = true;
    cache.count_filtered = true;
    set = true;
  });
  return set;
}

// ---- site filters -------------------------------------------------------------------------

void filter_plan(Query& q, const std::function<bool(std::size_t unit, std::int64_t row)>& keep) {
  std::vector<vcz::WorkUnit> kept;
  for (std::size_t u = 0; u < q.plan.units.size(); ++u) {
    vcz::WorkUnit& unit = q.plan.units[u];
    if (unit.mask.empty()) unit.mask.assign(static_cast<std::size_t>(unit.size()), 1);
    bool any = false;
    for (std::int64_t r = 0; r < unit.size(); ++r) {
      auto& m = unit.mask[static_cast<std::size_t>(r)];
      if (m && !keep(u, r)) m = 0;
      any = any || m;
    }
    if (std::find(unit.mask.begin(), unit.mask.end(), std::uint8_t{0}) == unit.mask.end())
      unit.mask.clear();
    if (any) kept.push_back(std::move(unit));
  }
  q.plan.units = std::move(kept);
  // The spans of windows over the data are those of the filtered sites (as in a filtered store).
  q.data_span_cache = std::make_shared<detail::DataSpans>();
  q.data_span_cache->plan = q.plan;
}

// ---- partitions ---------------------------------------------------------------------------

vcz::ChunkPlan partition_plan(const vcz::ChunkPlan& plan, PlanCut begin, PlanCut end) {
  const auto n = static_cast<std::int64_t>(plan.units.size());
  auto normal = [&](PlanCut c) {
    if (c.unit < 0 || c.unit > n || c.row < 0 ||
        (c.unit < n && c.row > plan.units[static_cast<std::size_t>(c.unit)].size()) ||
        (c.unit == n && c.row != 0))
      throw UsageError("partition cut outside the plan");
    return c.unit < n && c.row == plan.units[static_cast<std::size_t>(c.unit)].size()
               ? PlanCut{c.unit + 1, 0}
               : c;
  };
  begin = normal(begin);
  end = normal(end);
  vcz::ChunkPlan out;
  for (std::int64_t u = begin.unit; u <= std::min(end.unit, n - 1); ++u) {
    if (u == end.unit && end.row == 0) break;
    vcz::WorkUnit w = plan.units[static_cast<std::size_t>(u)];
    const std::int64_t lo = u == begin.unit ? begin.row : 0;
    const std::int64_t hi = u == end.unit ? end.row : w.size();
    if (lo > 0 || hi < w.size()) {
      if (w.mask.empty()) w.mask.assign(static_cast<std::size_t>(w.size()), 1);
      for (std::int64_t r = 0; r < w.size(); ++r)
        if (r < lo || r >= hi) w.mask[static_cast<std::size_t>(r)] = 0;
    }
    out.units.push_back(std::move(w));
  }
  return out;
}

stats::SiteCursor site_cursor(const Query& q, PlanCut cut) {
  stats::SiteCursor c;
  const SiteFilter filter(q);
  const vcz::VariantReader reader(q.store, /*with_alleles=*/true, /*with_ids=*/false);
  const auto n = static_cast<std::int64_t>(q.plan.units.size());
  reader.prefetch(std::span(q.plan.units)
                      .first(static_cast<std::size_t>(
                          std::clamp<std::int64_t>(cut.unit + (cut.row > 0 ? 1 : 0), 0, n))));
  for (std::int64_t u = 0; u <= std::min(cut.unit, n - 1); ++u) {
    const vcz::WorkUnit& unit = q.plan.units[static_cast<std::size_t>(u)];
    const std::int64_t rows = u == cut.unit ? std::min(cut.row, unit.size()) : unit.size();
    if (rows <= 0) continue;
    const auto vb = reader.read(unit.begin, unit.begin + rows);
    for (std::int64_t r = 0; r < rows; ++r) {
      if (!unit.mask.empty() && !unit.mask[static_cast<std::size_t>(r)]) continue;
      const auto i = static_cast<std::size_t>(r);
      ++c.selected;
      if (vb.num_alleles(r) == 2) ++c.biallelic;
      const auto g = filter.group(vb.contig[i], vb.position[i],
                                  static_cast<std::int64_t>(vb.allele(r, 0).size()));
      if (!g) continue;
      if (!c.any || g->key != c.group.key) c.group_sites = 0;
      c.any = true;
      c.group = *g;
      c.pos = vb.position[i];
      ++c.group_sites;
    }
  }
  return c;
}

}  // namespace vczstats
