// The count filters of a query (filters.hpp): decided row by row from the allele counts of all
// selected samples as one population (count_filter.hpp), either by one counting pass over the
// plan whose failing rows are masked in the plan (apply_count_filters), or inside compute()'s
// own pass (the fused path, compute.cpp), which needs the data spans of the filtered plan before
// it starts (filtered_data_spans).

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "dispatch/count_filter.hpp"
#include "vczstats/compute.hpp"
#include "vczstats/error.hpp"
#include "vczstats/filters.hpp"
#include "vczstats/matrix.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats {
namespace dispatch {

CountFilter::CountFilter(const Query& q)
    : f_(q.filters), expression_(q.expression_reads_counts() ? q.expression.get() : nullptr) {
  if (expression_) fields_.emplace(q.store, *expression_);
}

void CountFilter::decide(const vcz::WorkUnit& unit, std::span<const std::int32_t> counts,
                         int alleles, std::vector<std::uint8_t>& keep, unsigned threads) {
  const std::int64_t rows = unit.size();
  keep.assign(static_cast<std::size_t>(rows), 0);
  if (fields_) fields_->read(unit.begin, unit.end);
  // Rows are independent; an expression's fields are read through one buffer (SiteFieldReader::
  // site), so with an expression of fields they are decided on this thread alone.
  constexpr std::int64_t kBlock = 128;
  const std::int64_t blocks = (rows + kBlock - 1) / kBlock;
  auto block = [&](std::int64_t b) {
    decide_rows(unit, counts, alleles, b * kBlock, std::min(rows, (b + 1) * kBlock), keep);
  };
  if (threads > 1 && blocks > 1 && !fields_)
    ThreadPool::shared().run_claimed(threads, blocks, block);
  else
    for (std::int64_t b = 0; b < blocks; ++b) block(b);
}

void CountFilter::decide_rows(const vcz::WorkUnit& unit, std::span<const std::int32_t> counts,
                              int alleles, std::int64_t begin, std::int64_t end,
                              std::vector<std::uint8_t>& keep) {
  const int a = alleles;
  const std::int64_t width = a + stats::CountsLayout::kExtra;
  for (std::int64_t r = begin; r < end; ++r) {
    if (!unit.mask.empty() && !unit.mask[static_cast<std::size_t>(r)]) continue;
    const std::int32_t* c = counts.data() + r * width;
    const std::int64_t hom_ref = c[a + stats::kHomRef], het_ref = c[a + stats::kHetRef],
                       hom_other = c[a + stats::kHomAlt] + c[a + stats::kHetAlt],
                       missing = c[a + stats::kMissing];
    const std::int64_t genotypes = hom_ref + het_ref + hom_other + missing;
    bool pass =
        stats::passes_count_filters(f_, c, a, genotypes, missing, hom_ref, het_ref, hom_other);
    if (pass && expression_) {
      SiteFields site = fields_->site(r);
      site.allele_counts = std::span<const std::int32_t>(c, static_cast<std::size_t>(a));
      site.genotypes = genotypes;
      site.missing = missing;
      pass = expression_->keep(site);
    }
    keep[static_cast<std::size_t>(r)] = pass;
  }
}

bool populations_partition(const Query& q) {
  if (q.pops.of.size() != static_cast<std::size_t>(q.samples.size())) return false;
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(q.pops.count()), 0);
  for (const std::int32_t p : q.pops.of) {
    if (p < 0 || p >= q.pops.count()) return false;
    ++sizes[static_cast<std::size_t>(p)];
  }
  return sizes == q.pops.sizes;
}

void total_counts(std::span<const std::int32_t> counts, const stats::CountsLayout& layout,
                  std::int64_t rows, std::vector<std::int32_t>& out) {
  const std::int64_t width = layout.width();
  out.assign(static_cast<std::size_t>(rows * width), 0);
  for (std::int64_t r = 0; r < rows; ++r)
    for (int p = 0; p < layout.pops; ++p) {
      const std::int32_t* in = counts.data() + r * layout.site_width() + p * width;
      std::int32_t* o = out.data() + r * width;
      for (std::int64_t k = 0; k < width; ++k) o[k] += in[k];
    }
}

namespace {

/// Decides, unit by unit, which selected rows pass the count filters (a pass whose query has
/// one population: all selected samples).
class CountFilterPass final : public Statistic {
 public:
  CountFilterPass(const Query& q, std::size_t units) : filter_(q), keep_(units) {}
  std::string name() const override { return "site filters"; }
  PassNeeds needs() const override {
    PassNeeds n;
    n.counts = true;
    return n;
  }
  void accumulate(const UnitData& u) override {
    filter_.decide(*u.unit, u.counts, u.layout.alleles, keep_[static_cast<std::size_t>(u.index)]);
  }
  void merge(Statistic&) override { throw Error("site filters: not merged"); }
  Table finish() override { return {}; }
  void save(ByteWriter&) const override { throw Error("site filters: not saved"); }
  void load(ByteReader&) override { throw Error("site filters: not loaded"); }
  std::vector<std::vector<std::uint8_t>>& keep() { return keep_; }

 private:
  CountFilter filter_;
  std::vector<std::vector<std::uint8_t>> keep_;
};

/// @p q as one population of all its selected samples, its count filters not to be applied
/// again (the query of the counting pass).
Query counting_query(const Query& q) {
  Query all = q;
  all.pops = vcz::single_population(q.samples);
  all.count_filters_applied = true;
  return all;
}

std::vector<std::vector<std::uint8_t>> count_pass(const Query& q, Query& all,
                                                  const RunOptions& run) {
  CountFilterPass pass(q, all.plan.units.size());
  RunOptions r = run;
  r.progress = {};
  Statistic* list[] = {&pass};
  (void)compute(all, list, r);
  return std::move(pass.keep());
}

}  // namespace

std::vector<std::vector<std::uint8_t>> count_filter_units(const Query& q,
                                                          std::span<const std::int64_t> units,
                                                          const RunOptions& run) {
  Query all = counting_query(q);
  all.plan.units.clear();
  for (const std::int64_t u : units)
    all.plan.units.push_back(q.plan.units[static_cast<std::size_t>(u)]);
  RunOptions r = run;
  r.device = DeviceSpec{};
  r.device.kind = DeviceKind::Cpu;  // a few units: not worth a device's setup
  return count_pass(q, all, r);
}

std::string no_sites_kept(const Query& q, std::int64_t selected) {
  return "the site filters " + q.filters.describe() + " keep none of the " +
         std::to_string(selected) + " variants left of " + q.store.path();
}

std::vector<std::pair<std::int64_t, std::int64_t>> filtered_data_spans(const Query& q,
                                                                       const RunOptions& run) {
  const SiteFilter raw(q, /*raw=*/true);
  const vcz::VariantReader reader(q.store, raw.needs_ref_length(), /*with_ids=*/false);
  const std::size_t keys = std::max(q.store.contig_ids().size(), q.regions.size());
  // The group of every selected row of a unit (-1: none).
  auto groups_of = [&](const vcz::WorkUnit& unit, std::vector<std::int64_t>& key,
                       std::vector<std::int64_t>& pos) {
    key.assign(static_cast<std::size_t>(unit.size()), -1);
    pos.assign(static_cast<std::size_t>(unit.size()), 0);
    if (unit.size() <= 0 || unit.selected() == 0) return;
    const auto vb = reader.read(unit.begin, unit.end);
    for (std::int64_t r = 0; r < unit.size(); ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (!unit.mask.empty() && !unit.mask[i]) continue;
      const std::int64_t ref_length =
          raw.needs_ref_length() ? static_cast<std::int64_t>(vb.allele(r, 0).size()) : 1;
      if (const auto g = raw.group(vb.contig[i], vb.position[i], ref_length)) {
        key[i] = g->key;
        pos[i] = vb.position[i];
      }
    }
  };
  // The units of each group in plan order, and whether its positions never decrease (then its
  // first and last passing rows are its span; otherwise every unit of it is counted).
  std::vector<std::vector<std::int64_t>> units_of(keys);
  std::vector<std::uint8_t> sorted(keys, 1);
  std::vector<std::int64_t> last_pos(keys, std::numeric_limits<std::int64_t>::min());
  std::vector<std::int64_t> key, pos;
  for (std::size_t u = 0; u < q.plan.units.size(); ++u) {
    groups_of(q.plan.units[u], key, pos);
    for (std::size_t i = 0; i < key.size(); ++i) {
      if (key[i] < 0) continue;
      const auto k = static_cast<std::size_t>(key[i]);
      if (units_of[k].empty() || units_of[k].back() != static_cast<std::int64_t>(u))
        units_of[k].push_back(static_cast<std::int64_t>(u));
      if (pos[i] < last_pos[k]) sorted[k] = 0;
      last_pos[k] = pos[i];
    }
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> spans(
      keys, {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()});
  // Per group: the units not yet ruled out at either end, [lo, hi) of units_of.
  std::vector<std::size_t> lo(keys, 0), hi(keys);
  std::vector<std::uint8_t> front(keys, 0), back(keys, 0);  // found
  for (std::size_t k = 0; k < keys; ++k) hi[k] = units_of[k].size();
  std::map<std::int64_t, std::vector<std::uint8_t>> kept;  // counted units: rows that pass
  // Counted units' groups and positions, read once however many groups they hold.
  std::map<std::int64_t, std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> rows_of;
  auto add = [&](std::size_t k, std::int64_t u) {  // the passing rows of group k in unit u
    auto it = rows_of.find(u);
    if (it == rows_of.end()) {
      it = rows_of.try_emplace(u).first;
      groups_of(q.plan.units[static_cast<std::size_t>(u)], it->second.first, it->second.second);
    }
    const auto& [unit_key, unit_pos] = it->second;
    const auto& keep = kept.at(u);
    bool any = false;
    for (std::size_t i = 0; i < unit_key.size(); ++i)
      if (unit_key[i] == static_cast<std::int64_t>(k) && keep[i]) {
        spans[k].first = std::min(spans[k].first, unit_pos[i]);
        spans[k].second = std::max(spans[k].second, unit_pos[i]);
        any = true;
      }
    return any;
  };
  for (;;) {
    std::vector<std::int64_t> wanted;
    for (std::size_t k = 0; k < keys; ++k) {
      if (lo[k] >= hi[k]) continue;
      if (!sorted[k]) {
        for (std::size_t i = lo[k]; i < hi[k]; ++i) wanted.push_back(units_of[k][i]);
      } else {
        if (!front[k]) wanted.push_back(units_of[k][lo[k]]);
        if (!back[k]) wanted.push_back(units_of[k][hi[k] - 1]);
      }
    }
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    std::erase_if(wanted, [&](std::int64_t u) { return kept.count(u) != 0; });
    if (wanted.empty()) break;
    auto keep = count_filter_units(q, wanted, run);
    for (std::size_t i = 0; i < wanted.size(); ++i) kept[wanted[i]] = std::move(keep[i]);
    for (std::size_t k = 0; k < keys; ++k) {
      if (!sorted[k]) {
        for (; lo[k] < hi[k]; ++lo[k]) (void)add(k, units_of[k][lo[k]]);
        continue;
      }
      // Units at the front with no passing row of the group are ruled out, then the back's.
      while (!front[k] && lo[k] < hi[k] && kept.count(units_of[k][lo[k]])) {
        if (add(k, units_of[k][lo[k]]))
          front[k] = 1;
        else
          ++lo[k];
      }
      while (!back[k] && lo[k] < hi[k] && kept.count(units_of[k][hi[k] - 1])) {
        if (add(k, units_of[k][hi[k] - 1]))
          back[k] = 1;
        else
          --hi[k];
      }
      if (front[k] && back[k]) lo[k] = hi[k];  // resolved
    }
  }
  return spans;
}

}  // namespace dispatch

namespace dispatch {

void require_genotypes_for_count_filters(const Query& q) {
  if (!q.store.has_genotypes())
    throw FormatError(q.store.path() + " has no call_genotype (a sites-only store): " +
                      q.filters.describe() + " need genotype calls");
}

void keep_counted_rows(Query& q, const std::vector<std::vector<std::uint8_t>>& keep) {
  const bool had_units = !q.plan.units.empty();
  const std::int64_t selected = q.plan.selected_variants();
  filter_plan(q, [&keep](std::size_t u, std::int64_t row) {
    const auto& k = keep[u];
    return static_cast<std::size_t>(row) < k.size() && k[static_cast<std::size_t>(row)];
  });
  q.count_filters_applied = true;
  if (had_units && q.plan.units.empty()) q.warnings.push_back(no_sites_kept(q, selected));
  if (!q.pending_extract.empty()) extract_variants(q, std::exchange(q.pending_extract, {}));
}

}  // namespace dispatch

void apply_count_filters(Query& q, const RunOptions& run) {
  if (!q.count_filters_pending()) return;
  dispatch::require_genotypes_for_count_filters(q);
  // The counts over every selected sample (one population), whatever -P groups.
  Query all = dispatch::counting_query(q);
  dispatch::keep_counted_rows(q, dispatch::count_pass(q, all, run));
}

}  // namespace vczstats
