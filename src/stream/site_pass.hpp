#pragma once
// The CPU site pass shared by every per-site statistic. Work items are (unit, sample block)
// pairs in plan order: producer threads decode an item's genotype block and run the
// accumulator's heavy pass on it (decode and count in one thread, while the chunk is in cache),
// giving per-site counts for that block's samples; the consumer merges a unit's blocks in order
// and reduces the finished counts. Items rather than units are the grain so that a store with
// few variant chunks but many sample chunks still keeps every thread busy. Merging and reducing
// in plan order makes the result independent of the number of threads.
//
// Acc provides: using Site; std::int64_t site_width() const (Sites per variant row);
//               void count_sites(const GenotypeChunkView&, std::span<Site>) const (rows × width);
//               static void merge_site(Site&, const Site&).
// consume(unit_index, unit, std::span<const Site> sites) receives each unit's finished sites in
// plan order, on the calling thread.

#include <chrono>
#include <vector>

#include "stream/genotype_reader.hpp"
#include "stream/prefetcher.hpp"
#include "vczstats/engine.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::stream {

template <class Acc, class Consume>
void run_site_pass_cpu(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                       const vcz::SampleSelection& samples, const Acc& acc, const RunOptions& run,
                       RunStats* stats, Consume&& consume) {
  using Site = typename Acc::Site;
  using Clock = std::chrono::steady_clock;
  auto ns_since = [](Clock::time_point t0) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
  };
  const auto start = Clock::now();
  GenotypeReader reader(store, samples);
  reader.prefetch(plan.units);  // remote stores: many requests in flight ahead of the readers
  const unsigned threads = run.threads ? run.threads : hardware_threads();
  const unsigned depth = run.prefetch ? run.prefetch : 2 * threads;
  const auto nunits = static_cast<std::int64_t>(plan.units.size());
  const auto nblocks = static_cast<std::int64_t>(reader.num_blocks());
  const auto width = static_cast<std::size_t>(acc.site_width());

  std::vector<BlockBuffers> buffers(threads);
  std::vector<ReadCounters> counters(threads);
  std::vector<std::int64_t> compute_ns(threads, 0);

  OrderedPrefetcher<std::vector<Site>> prefetcher(
      nunits * nblocks, threads, depth, [&](std::int64_t item, unsigned p) {
        const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(item / nblocks)];
        std::vector<Site> sites(static_cast<std::size_t>(unit.size()) * width);
        const GenotypeChunkView view =
            reader.read(unit, static_cast<std::size_t>(item % nblocks), buffers[p], &counters[p]);
        const auto t0 = Clock::now();
        acc.count_sites(view, sites);
        compute_ns[p] += ns_since(t0);
        return sites;
      });

  std::int64_t reduce_ns = 0, done_variants = 0, calls = 0;
  std::vector<Site> unit_sites;
  for (std::int64_t u = 0; u < nunits; ++u) {
    const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(u)];
    unit_sites.assign(static_cast<std::size_t>(unit.size()) * width, Site{});
    for (std::int64_t b = 0; b < nblocks; ++b) {
      auto sites = prefetcher.next();
      const auto t0 = Clock::now();
      for (std::size_t i = 0; i < unit_sites.size(); ++i)
        Acc::merge_site(unit_sites[i], (*sites)[i]);
      reduce_ns += ns_since(t0);
    }
    const auto t0 = Clock::now();
    consume(u, unit, std::span<const Site>(unit_sites));
    reduce_ns += ns_since(t0);
    done_variants += unit.selected();
    calls += unit.size() * reader.num_samples() * reader.ploidy();
    if (run.progress) run.progress(u + 1, nunits, done_variants);
  }

  if (stats) {
    stats->device = "cpu, " + std::to_string(threads) + " threads";
    stats->wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    for (unsigned p = 0; p < threads; ++p) {
      stats->read_decode_seconds += static_cast<double>(counters[p].read_decode_ns) * 1e-9;
      stats->gather_seconds += static_cast<double>(counters[p].gather_ns) * 1e-9;
      stats->compute_seconds += static_cast<double>(compute_ns[p]) * 1e-9;
      stats->decoded_bytes += counters[p].decoded_bytes;
    }
    stats->reduce_seconds = static_cast<double>(reduce_ns) * 1e-9;
    stats->calls = calls;
    stats->variants = done_variants;
    stats->units = nunits;
  }
}

}  // namespace vczstats::stream
