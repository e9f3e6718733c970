// The site pass on CPU threads (backend/site_pass.hpp) over the one scheduler
// (stream/scheduler.hpp): producers decode an item's genotype block and run the heavy passes on
// it while it is in cache; the consumer adds a unit's blocks in order and hands the unit over.
// Items rather than units are the grain, so a store with few variant chunks but many sample
// chunks still keeps every thread busy; merging in plan order makes every result independent
// of the number of threads. Per-sample sums take a second phase per unit (the genotypes are
// decoded again), whose producers wait for the unit's per-site weights.

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "backend/site_pass.hpp"
#include "backend/site_product.hpp"
#include "stats/element_type.hpp"
#include "stats/haplo_pack.hpp"
#include "stats/haplotype_planes.hpp"
#include "stats/packed_math.hpp"
#include "stats/sample_math.hpp"
#include "stream/genotype_reader.hpp"
#include "stream/phased_reader.hpp"
#include "stream/scheduler.hpp"
#include "vczstats/error.hpp"
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
  std::vector<std::uint64_t> phased;  // phase 0: the block's phased haplotype planes
  std::int64_t sample_offset = 0;
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
  const unsigned threads = run.threads ? run.threads : hardware_threads();
  const auto nunits = static_cast<std::int64_t>(plan.units.size());
  const auto nblocks = static_cast<std::int64_t>(reader.num_blocks());

  ProductContext ctx;
  ctx.spec = &spec;
  ctx.reader = &reader;
  ctx.workers = threads;
  ctx.sample_sums = sample_sums_out;
  const std::vector<std::unique_ptr<SiteProduct>> products = make_cpu_site_products(ctx);
  int phases = 1;
  for (const auto& product : products) phases = std::max(phases, product->phases());
  std::vector<stream::BlockBuffers> buffers(threads);
  std::unique_ptr<stream::PhasedReader> phased_reader;
  if (spec.phased)
    phased_reader = std::make_unique<stream::PhasedReader>(*spec.store, *spec.samples, reader);
  std::vector<std::vector<std::byte>> phased_buffers(threads);
  const int planes = spec.phased ? spec.phased->planes : 0;
  const std::int64_t phased_words = haplotype_words(spec.samples->size() * reader.ploidy());
  std::vector<std::uint64_t> unit_phased;
  std::vector<stream::ReadCounters> counters(threads);
  std::vector<std::int64_t> compute_ns(threads, 0);

  // The unit being merged by the consumer.
  std::shared_ptr<const vcz::VariantBlock> unit_variants;
  std::int64_t reduce_ns = 0, done_variants = 0, calls = 0;

  stream::ScheduleHooks<Payload> hooks;
  hooks.produce = [&](const stream::WorkItem& item, unsigned p) {
    const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(item.unit)];
    Payload out;
    if (item.phase == 0 && item.block == 0 && spec.variants)
      out.variants = std::make_shared<vcz::VariantBlock>(spec.variants->read(unit.begin, unit.end));
    const GenotypeChunkView view =
        reader.read(unit, static_cast<std::size_t>(item.block), buffers[p], &counters[p]);
    out.sample_offset = view.sample_offset;
    const auto t0 = Clock::now();
    out.blocks.reserve(products.size());
    for (const auto& product : products)
      out.blocks.push_back(product->phases() > item.phase
                               ? product->produce(item.phase, item.unit, item.block, view, p)
                               : nullptr);
    if (item.phase == 0) {
      if (spec.phased) {
        phased_reader->check(unit, static_cast<std::size_t>(item.block), view, phased_buffers[p]);
        const int shift = static_cast<int>(view.sample_offset * view.ploidy % 64);
        if (!with_element_type(view.elem_bytes, [&](auto t) {
              stats::haplo::pack_block_planes<decltype(t)>(view, planes, shift, out.phased);
            }))
          throw Error("packed haplotypes: unsupported genotype width");
      }
    }
    compute_ns[p] += ns_since(t0);
    return out;
  };

  hooks.consume = [&](const stream::WorkItem& item, Payload& in) {
    const auto t0 = Clock::now();
    for (std::size_t k = 0; k < products.size(); ++k)
      if (in.blocks[k]) products[k]->merge(item.phase, item.unit, item.block, *in.blocks[k]);
    if (item.phase == 0) {
      if (item.block == 0) {  // the first block's output becomes the unit's
        unit_variants = std::move(in.variants);
      } else {
      }
      if (spec.phased) {  // OR the block's phased planes into the unit's rows
        const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(item.unit)];
        if (item.block == 0)
          unit_phased.assign(static_cast<std::size_t>(unit.size() * planes * phased_words), 0);
        stats::haplo::or_rows(unit_phased, phased_words, in.phased, unit.size() * planes,
                              in.sample_offset * reader.ploidy() / 64);
      }
    }
    reduce_ns += ns_since(t0);
  };

  hooks.phase_done = [&](std::int64_t u, int phase) {
    const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(u)];
    UnitOutput out;
    out.index = u;
    for (const auto& product : products)
      if (product->phases() > phase) product->finish(phase, u, out);
    if (phase == 0) {
      if (spec.phased) {
        out.phased.words = unit_phased.data();
        out.phased.variants = unit.size();
        out.phased.haplotypes = spec.samples->size() * reader.ploidy();
        out.phased.ploidy = static_cast<int>(reader.ploidy());
        out.phased.planes = planes;
        out.phased.words_per_plane = phased_words;
        out.phased.variant_offset = unit.begin;
      }
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
