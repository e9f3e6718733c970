// Shares of a plan across ranks and the site cursors they begin at (shares.hpp).

#include "dist/shares.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "vczstats/variants.hpp"
#include "vczstats/zarr.hpp"

namespace vczstats::dist {

std::vector<std::int64_t> unit_weights(const Query& q) {
  const auto& units = q.plan.units;
  std::vector<std::int64_t> weights(units.size());
  for (std::size_t i = 0; i < units.size(); ++i) weights[i] = units[i].selected();
  if (!q.store.has_genotypes() || units.empty() || q.samples.size() == 0) return weights;

  const zarr::Array& gt = q.store.genotypes();
  std::unordered_map<std::string, std::uint64_t> stored;
  for (const auto& e : q.store.store().list(gt.path() + "/")) stored.emplace(e.key, e.stored_size);
  const std::int64_t variant_chunk = gt.chunks()[0], sample_chunk = gt.chunks()[1];
  std::vector<std::int64_t> sample_chunks;
  for (const std::int64_t s : q.samples.indices) sample_chunks.push_back(s / sample_chunk);
  std::sort(sample_chunks.begin(), sample_chunks.end());
  sample_chunks.erase(std::unique(sample_chunks.begin(), sample_chunks.end()), sample_chunks.end());

  std::vector<std::int64_t> index(static_cast<std::size_t>(gt.ndim()), 0);
  for (std::size_t i = 0; i < units.size(); ++i) {
    const vcz::WorkUnit& u = units[i];
    std::int64_t bytes = 0;
    index[0] = u.chunk;
    for (const std::int64_t s : sample_chunks) {
      index[1] = s;
      const auto it = stored.find(gt.chunk_key(index));
      if (it != stored.end()) bytes += static_cast<std::int64_t>(it->second);
    }
    const std::int64_t chunk_rows =
        std::min(variant_chunk, q.store.num_variants() - u.chunk * variant_chunk);
    if (chunk_rows > 0 && u.size() < chunk_rows)
      bytes = static_cast<std::int64_t>(static_cast<double>(bytes) * static_cast<double>(u.size()) /
                                        static_cast<double>(chunk_rows));
    weights[i] += bytes;
  }
  return weights;
}

std::vector<std::int64_t> balanced_cuts(std::span<const std::int64_t> weights, int parts) {
  if (parts < 1) parts = 1;
  const auto n = static_cast<std::int64_t>(weights.size());
  std::vector<std::int64_t> prefix(weights.size() + 1, 0);
  for (std::size_t i = 0; i < weights.size(); ++i)
    prefix[i + 1] = prefix[i] + std::max<std::int64_t>(weights[i], 0);
  const std::int64_t total = prefix.back();
  std::vector<std::int64_t> cuts(static_cast<std::size_t>(parts) + 1, 0);
  cuts.back() = n;
  for (int r = 1; r < parts; ++r) {
    // r / parts of the total, without overflow.
    const std::int64_t target = total / parts * r + total % parts * r / parts;
    auto i = static_cast<std::int64_t>(std::lower_bound(prefix.begin(), prefix.end(), target) -
                                       prefix.begin());  // first boundary at or past it
    if (i > 0 && target - prefix[static_cast<std::size_t>(i - 1)] <
                     prefix[static_cast<std::size_t>(i)] - target)
      --i;
    cuts[static_cast<std::size_t>(r)] = std::clamp(i, cuts[static_cast<std::size_t>(r - 1)], n);
  }
  return cuts;
}

SiteSpan summarise_sites(const Query& q, std::int64_t begin, std::int64_t end, bool with_alleles) {
  SiteSpan span;
  stats::SiteCursor& c = span.tail;
  const SiteFilter filter(q);
  const vcz::VariantReader reader(q.store, with_alleles, /*with_ids=*/false);
  for (std::int64_t u = begin; u < end; ++u) {
    const vcz::WorkUnit& unit = q.plan.units[static_cast<std::size_t>(u)];
    if (unit.size() <= 0 || unit.selected() == 0) continue;
    const auto vb = reader.read(unit.begin, unit.end);
    for (std::int64_t r = 0; r < unit.size(); ++r) {
      if (!unit.mask.empty() && !unit.mask[static_cast<std::size_t>(r)]) continue;
      const auto i = static_cast<std::size_t>(r);
      ++c.selected;
      if (with_alleles && vb.num_alleles(r) == 2) ++c.biallelic;
      const auto g = filter.group(vb.contig[i], vb.position[i],
                                  static_cast<std::int64_t>(vb.allele(r, 0).size()));
      if (!g) continue;
      if (c.any && g->key != c.group.key) {
        c.group_sites = 0;
        span.one_run = false;
      }
      c.any = true;
      c.group = *g;
      c.pos = vb.position[i];
      ++c.group_sites;
    }
  }
  return span;
}

stats::SiteCursor advance(const stats::SiteCursor& before, const SiteSpan& span) {
  stats::SiteCursor c = before;
  c.biallelic += span.tail.biallelic;
  c.selected += span.tail.selected;
  if (!span.tail.any) return c;
  const bool goes_on = before.any && span.one_run && before.group.key == span.tail.group.key;
  c.any = true;
  c.group = span.tail.group;
  c.pos = span.tail.pos;
  c.group_sites = goes_on ? before.group_sites + span.tail.group_sites : span.tail.group_sites;
  return c;
}

}  // namespace vczstats::dist
