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

/// The complete diploid tallies of one block per site × pop (stats/tallies_math.hpp).
template <class T>
void count_tallies(const GenotypeChunkView& b, const TalliesRequest& r,
                   std::vector<std::int32_t>& out) {
  const int ploidy = static_cast<int>(b.ploidy), w = stats::tallies::width(r.alleles);
  out.assign(static_cast<std::size_t>(b.variants * r.site_width()), 0);
  for (std::int64_t v = 0; v < b.variants; ++v) {
    const T* row = b.row<T>(v);
    std::int32_t* site = out.data() + v * r.site_width();
    for (std::int64_t i = 0; i < b.samples; ++i)
      stats::tallies::add_call(
          site + (*r.population_of)[static_cast<std::size_t>(b.sample_offset + i)] * w,
          row + i * ploidy, ploidy, r.alleles);
  }
}

/// Phase 1 on one block: every sample's sums over the unit's selected rows.
template <class T>
void sample_sums(const GenotypeChunkView& b, const TalliesRequest& r,
                 const std::vector<double>& weights, const std::vector<std::uint8_t>& mask,
                 std::vector<stats::SampleSums>& out) {
  const int ploidy = static_cast<int>(b.ploidy);
  std::vector<stats::sample::CallSums> sums(static_cast<std::size_t>(b.samples));
  for (std::int64_t v = 0; v < b.variants; ++v) {
    if (!mask.empty() && !mask[static_cast<std::size_t>(v)]) continue;
    const T* row = b.row<T>(v);
    const double* wv = weights.data() + v * r.pops;
    for (std::int64_t i = 0; i < b.samples; ++i)
      stats::sample::add_sample(
          sums[static_cast<std::size_t>(i)], row + i * ploidy, ploidy,
          wv[(*r.population_of)[static_cast<std::size_t>(b.sample_offset + i)]]);
  }
  out.resize(sums.size());
  for (std::size_t i = 0; i < sums.size(); ++i)
    out[i] = {sums[i].obs, sums[i].missing, sums[i].het_sites, sums[i].o_hom, sums[i].e_hom};
}

/// Pack a block's calls (vczstats/packed.hpp) into rows of words whose first sample sits
/// @p shift samples into the first word (so the words OR into the unit's rows at word
/// sample_offset / 32).
template <class T>
void pack_block(const GenotypeChunkView& b, int shift, std::vector<std::uint64_t>& out) {
  const std::int64_t nw = packed_words(shift + b.samples);
  out.assign(static_cast<std::size_t>(b.variants * nw), 0);
  const int ploidy = static_cast<int>(b.ploidy);
  for (std::int64_t v = 0; v < b.variants; ++v)
    for (std::int64_t w = 0; w < nw; ++w)
      out[static_cast<std::size_t>(v * nw + w)] =
          stats::packed::pack_word(b.row<T>(v), b.samples, ploidy, w, shift);
}

/// Haplotype planes of a block's rows (backend/site_pass.hpp), the block's first slot placed
/// @p shift slots into the first word: per row, the non-REF words then the called words.
template <class T>
void pack_haplotype_block(const GenotypeChunkView& b, int shift, std::vector<std::uint64_t>& out) {
  const int ploidy = static_cast<int>(b.ploidy);
  const std::int64_t nw = (shift + b.samples * ploidy + 63) / 64;
  out.assign(static_cast<std::size_t>(b.variants * 2 * nw), 0);
  for (std::int64_t v = 0; v < b.variants; ++v)
    for (std::int64_t w = 0; w < nw; ++w) {
      std::uint64_t* row = out.data() + v * 2 * nw;
      stats::packed::haplotype_words(b.row<T>(v), b.samples, ploidy, w, shift, row[w], row[nw + w]);
    }
}

/// What a producer hands to the consumer for one item.
struct Payload {
  std::vector<std::int32_t> counts;       // phase 0: allele counts (rows × site width)
  std::vector<stats::AfdistSite> afdist;  // phase 0: rows
  std::vector<std::int32_t> tallies;      // phase 0: complete diploid tallies
  std::vector<stats::SampleSums> sums;    // phase 1: the block's samples
  std::vector<std::uint64_t> packed;      // phase 0: the block's packed calls
  std::vector<std::uint64_t> haplotypes;  // phase 0: the block's haplotype planes
  std::vector<std::uint64_t> phased;      // phase 0: the block's phased haplotype planes
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
  const auto nunits = static_cast<std::int64_t>(plan.units.size());
  const auto nblocks = static_cast<std::int64_t>(reader.num_blocks());
  const TalliesRequest* tallies_req = spec.tallies;
  if (spec.sample_sums && !tallies_req) throw Error("per-sample sums need the tallies");
  const TalliesRequest* sums_req = spec.sample_sums ? tallies_req : nullptr;
  // One producer per work item at most (units x blocks x phases).
  const unsigned threads = threads_for_work(run.threads, nunits * nblocks * (sums_req ? 2 : 1));
  const std::int64_t counts_width = spec.counts ? spec.counts->site_width() : 0;
  if (sample_sums_out && sums_req)
    sample_sums_out->assign(static_cast<std::size_t>(spec.samples->size()), {});

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
  // Per-site weights of the units whose phase 1 runs (the consumer writes, producers read).
  std::mutex weights_mutex;
  std::map<std::int64_t, std::shared_ptr<const std::vector<double>>> weights;

  // The unit being merged by the consumer.
  std::vector<std::int32_t> unit_counts, unit_tallies;
  std::vector<std::uint64_t> unit_packed, unit_haplotypes;
  const std::int64_t packed_row_words = packed_words(spec.samples->size());
  const std::int64_t hap_plane_words = (spec.samples->size() * reader.ploidy() + 63) / 64;
  std::vector<stats::AfdistSite> unit_afdist;
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
    if (item.phase == 0) {
      if (spec.counts) {
        out.counts.assign(static_cast<std::size_t>(unit.size() * counts_width), 0);
        spec.counts->count_sites(view, out.counts);
      }
      if (spec.afdist) {
        out.afdist.assign(static_cast<std::size_t>(unit.size()), {});
        spec.afdist->count_sites(view, out.afdist);
      }
      if (tallies_req && !with_element_type(view.elem_bytes, [&](auto t) {
            count_tallies<decltype(t)>(view, *tallies_req, out.tallies);
          }))
        throw Error("sample pass: unsupported genotype width");
      if (spec.packed && !with_element_type(view.elem_bytes, [&](auto t) {
            pack_block<decltype(t)>(view, static_cast<int>(view.sample_offset % 32), out.packed);
          }))
        throw Error("packed genotypes: unsupported genotype width");
      if (spec.haplotypes && !with_element_type(view.elem_bytes, [&](auto t) {
            pack_haplotype_block<decltype(t)>(
                view, static_cast<int>(view.sample_offset * view.ploidy % 64), out.haplotypes);
          }))
        throw Error("haplotype planes: unsupported genotype width");
      if (spec.phased) {
        phased_reader->check(unit, static_cast<std::size_t>(item.block), view, phased_buffers[p]);
        const int shift = static_cast<int>(view.sample_offset * view.ploidy % 64);
        if (!with_element_type(view.elem_bytes, [&](auto t) {
              stats::haplo::pack_block_planes<decltype(t)>(view, planes, shift, out.phased);
            }))
          throw Error("packed haplotypes: unsupported genotype width");
      }
    } else {
      std::shared_ptr<const std::vector<double>> w;
      {
        std::lock_guard lock(weights_mutex);
        w = weights.at(item.unit);
      }
      if (!with_element_type(view.elem_bytes, [&](auto t) {
            sample_sums<decltype(t)>(view, *sums_req, *w, unit.mask, out.sums);
          }))
        throw Error("sample pass: unsupported genotype width");
    }
    compute_ns[p] += ns_since(t0);
    return out;
  };

  hooks.consume = [&](const stream::WorkItem& item, Payload& in) {
    const auto t0 = Clock::now();
    if (item.phase == 0) {
      if (item.block == 0) {  // the first block's output becomes the unit's
        unit_counts = std::move(in.counts);
        unit_afdist = std::move(in.afdist);
        unit_tallies = std::move(in.tallies);
        unit_variants = std::move(in.variants);
      } else {
        for (std::size_t i = 0; i < unit_counts.size(); ++i) unit_counts[i] += in.counts[i];
        for (std::size_t i = 0; i < unit_afdist.size(); ++i)
          stats::AfdistAccumulator::merge_site(unit_afdist[i], in.afdist[i]);
        for (std::size_t i = 0; i < unit_tallies.size(); ++i) unit_tallies[i] += in.tallies[i];
      }
      if (spec.packed) {  // OR the block's words into the unit's rows
        const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(item.unit)];
        if (item.block == 0)
          unit_packed.assign(static_cast<std::size_t>(unit.size() * packed_row_words), 0);
        const std::int64_t nw =
            static_cast<std::int64_t>(in.packed.size()) / std::max<std::int64_t>(unit.size(), 1);
        const std::int64_t w0 = in.sample_offset / 32;
        for (std::int64_t v = 0; v < unit.size(); ++v)
          for (std::int64_t w = 0; w < nw; ++w)
            unit_packed[static_cast<std::size_t>(v * packed_row_words + w0 + w)] |=
                in.packed[static_cast<std::size_t>(v * nw + w)];
      }
      if (spec.haplotypes) {  // OR the block's planes into the unit's rows
        const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(item.unit)];
        const std::int64_t row = 2 * hap_plane_words;
        if (item.block == 0) unit_haplotypes.assign(static_cast<std::size_t>(unit.size() * row), 0);
        const std::int64_t nw = static_cast<std::int64_t>(in.haplotypes.size()) /
                                std::max<std::int64_t>(2 * unit.size(), 1);
        const std::int64_t w0 = in.sample_offset * reader.ploidy() / 64;
        for (std::int64_t v = 0; v < unit.size(); ++v)
          for (std::int64_t p = 0; p < 2; ++p)
            for (std::int64_t w = 0; w < nw; ++w)
              unit_haplotypes[static_cast<std::size_t>(v * row + p * hap_plane_words + w0 + w)] |=
                  in.haplotypes[static_cast<std::size_t>((2 * v + p) * nw + w)];
      }
      if (spec.phased) {  // OR the block's phased planes into the unit's rows
        const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(item.unit)];
        if (item.block == 0)
          unit_phased.assign(static_cast<std::size_t>(unit.size() * planes * phased_words), 0);
        stats::haplo::or_rows(unit_phased, phased_words, in.phased, unit.size() * planes,
                              in.sample_offset * reader.ploidy() / 64);
      }
    } else {
      for (std::size_t i = 0; i < in.sums.size(); ++i)
        (*sample_sums_out)[static_cast<std::size_t>(in.sample_offset) + i].merge(in.sums[i]);
    }
    reduce_ns += ns_since(t0);
  };

  hooks.phase_done = [&](std::int64_t u, int phase) {
    const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(u)];
    if (phase == 0) {
      if (sums_req) {  // the weights phase 1 needs
        auto w = std::make_shared<std::vector<double>>(
            static_cast<std::size_t>(unit.size() * sums_req->pops));
        const int width = stats::tallies::width(sums_req->alleles);
        for (std::size_t i = 0; i < w->size(); ++i)
          (*w)[i] = stats::sample::site_weight(unit_tallies.data() + i * width, sums_req->alleles);
        std::lock_guard lock(weights_mutex);
        weights[u] = std::move(w);
      }
      if (spec.packed) {
        PackedGenotypeView view;
        view.words = unit_packed.data();
        view.variants = unit.size();
        view.samples = spec.samples->size();
        view.words_per_row = packed_row_words;
        view.variant_offset = unit.begin;
        spec.packed->host_unit(u, view);
      }
      if (spec.haplotypes) {
        PackedHaplotypeView view;
        view.words = unit_haplotypes.data();
        view.variants = unit.size();
        view.haplotypes = spec.samples->size() * reader.ploidy();
        view.words_per_plane = hap_plane_words;
        view.variant_offset = unit.begin;
        spec.haplotypes->host_haplotypes(u, view);
      }
      UnitOutput out;
      out.index = u;
      if (spec.phased) {
        out.phased.words = unit_phased.data();
        out.phased.variants = unit.size();
        out.phased.haplotypes = spec.samples->size() * reader.ploidy();
        out.phased.ploidy = static_cast<int>(reader.ploidy());
        out.phased.planes = planes;
        out.phased.words_per_plane = phased_words;
        out.phased.variant_offset = unit.begin;
      }
      out.counts = unit_counts;
      out.afdist = unit_afdist;
      if (tallies_req && tallies_req->deliver) out.tallies = unit_tallies;
      out.variants = unit_variants;
      const auto t0 = Clock::now();
      deliver(out);
      reduce_ns += ns_since(t0);
    } else {
      std::lock_guard lock(weights_mutex);
      weights.erase(u);
    }
    calls += unit.size() * reader.num_samples() * reader.ploidy();
    if (phase == (sums_req ? 1 : 0)) {
      done_variants += unit.selected();
      if (run.progress) run.progress(u + 1, nunits, done_variants);
    }
  };

  stream::Schedule s;
  s.units = nunits;
  s.blocks = nblocks;
  s.phases = sums_req ? 2 : 1;
  s.workers = threads;
  s.depth = run.prefetch ? run.prefetch : 2 * threads;
  stream::run_schedule(s, hooks);

  if (stats) {
    stats->device =
        "cpu, " + std::to_string(threads) + " threads" + (sums_req ? " (two passes per unit)" : "");
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
