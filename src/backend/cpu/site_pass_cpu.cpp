// The site pass on CPU threads (backend/site_pass.hpp) over the one scheduler
// (stream/scheduler.hpp): producers decode an item's genotype block and run the products
// (backend/site_product.hpp) on it while it is in cache; the consumer merges a unit's blocks into
// each product in order, lets each finish the unit and hands the unit over. Items rather than
// units are the grain, so a store with few variant chunks but many sample chunks still keeps
// every thread busy; merging in plan order makes every result independent of the number of
// threads. A product with a second phase (the per-sample sums) gets a second read of each unit,
// once every product has finished the unit's first.

#include <algorithm>
#include <chrono>
#include <memory>

#include "backend/site_pass.hpp"
#include "backend/site_product.hpp"
#include "stream/genotype_reader.hpp"
#include "stream/scheduler.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::backend {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t ns_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

/// What a producer hands to the consumer for one item.
struct Payload {
  std::vector<std::unique_ptr<ProductBlock>> blocks;  // per product (null: none this phase)
  std::shared_ptr<const vcz::VariantBlock> variants;  // block 0 of phase 0
};

}  // namespace

void run_site_pass_cpu(const SitePassSpec& spec, const Deliver& deliver,
                       std::vector<stats::SampleSums>* sample_sums_out, RunStats* stats) {
  const auto start = Clock::now();
  const vcz::ChunkPlan& plan = *spec.plan;
  const RunOptions& run = *spec.run;
  stream::GenotypeReader reader(*spec.store, *spec.samples, {spec.min_gq, spec.min_dp});
  // Remote stores: many requests in flight ahead of the readers (genotypes and variant fields).
  reader.prefetch(plan.units, spec.variants);
  const auto nunits = static_cast<std::int64_t>(plan.units.size());
  const auto nblocks = static_cast<std::int64_t>(reader.num_blocks());
  // One producer per work item at most (units x blocks x phases: per-sample sums take two).
  const unsigned threads =
      threads_for_work(run.threads, nunits * nblocks * (spec.sample_sums ? 2 : 1));

  ProductContext ctx;
  ctx.spec = &spec;
  ctx.reader = &reader;
  ctx.workers = threads;
  ctx.sample_sums = sample_sums_out;
  const std::vector<std::unique_ptr<SiteProduct>> products = make_cpu_site_products(ctx);
  int phases = 1;
  for (const auto& product : products) phases = std::max(phases, product->phases());
  std::vector<stream::BlockBuffers> buffers(threads);
  std::vector<stream::ReadCounters> counters(threads);
  std::vector<std::int64_t> compute_ns(threads, 0);
  std::shared_ptr<const vcz::VariantBlock> unit_variants;  // of the unit being merged
  std::int64_t reduce_ns = 0, done_variants = 0, calls = 0;

  stream::ScheduleHooks<Payload> hooks;
  hooks.produce = [&](const stream::WorkItem& item, unsigned p) {
    const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(item.unit)];
    Payload out;
    if (item.phase == 0 && item.block == 0 && spec.variants)
      out.variants = std::make_shared<vcz::VariantBlock>(spec.variants->read(unit.begin, unit.end));
    const GenotypeChunkView view =
        reader.read(unit, static_cast<std::size_t>(item.block), buffers[p], &counters[p]);
    const auto t0 = Clock::now();
    out.blocks.reserve(products.size());
    for (const auto& product : products)
      out.blocks.push_back(product->phases() > item.phase
                               ? product->produce(item.phase, item.unit, item.block, view, p)
                               : nullptr);
    compute_ns[p] += ns_since(t0);
    return out;
  };

  hooks.consume = [&](const stream::WorkItem& item, Payload& in) {
    const auto t0 = Clock::now();
    if (item.phase == 0 && item.block == 0) unit_variants = std::move(in.variants);
    for (std::size_t k = 0; k < products.size(); ++k)
      if (in.blocks[k]) products[k]->merge(item.phase, item.unit, item.block, *in.blocks[k]);
    reduce_ns += ns_since(t0);
  };

  hooks.phase_done = [&](std::int64_t u, int phase) {
    const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(u)];
    UnitOutput out;
    out.index = u;
    for (const auto& product : products)
      if (product->phases() > phase) product->finish(phase, u, out);
    if (phase == 0) {
      out.variants = unit_variants;
      const auto t0 = Clock::now();
      deliver(out);
      reduce_ns += ns_since(t0);
    }
    calls += unit.size() * reader.num_samples() * reader.ploidy();
    if (phase == phases - 1) {
      done_variants += unit.selected();
      if (run.progress) run.progress(u + 1, nunits, done_variants);
    }
  };

  stream::Schedule s;
  s.units = nunits;
  s.blocks = nblocks;
  s.phases = phases;
  s.workers = threads;
  s.depth = run.prefetch ? run.prefetch : 2 * threads;
  stream::run_schedule(s, hooks);

  if (stats) {
    stats->device = "cpu, " + std::to_string(threads) + " threads" +
                    (phases > 1 ? " (two passes per unit)" : "");
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

}  // namespace vczstats::backend
