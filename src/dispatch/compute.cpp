// The one dispatch place: collects what the statistics need, picks the backend from the device
// request, runs the heavy pass once for all of them and feeds each statistic every unit in plan
// order (with its variant fields and ancestral alleles).

#include "vczstats/compute.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <future>
#include <memory>
#include <optional>

#include "backend/sample_matrix_pass.hpp"
#include "backend/site_pass.hpp"
#include "dispatch/count_filter.hpp"
#include "dispatch/pair_passes.hpp"
#include "stats/haplo_runner.hpp"
#include "stats/packed_product.hpp"
#include "vczstats/ancestral.hpp"
#include "vczstats/device.hpp"
#include "vczstats/error.hpp"
#include "vczstats/testing.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/variants.hpp"
#include "vczstats/zarr.hpp"

namespace vczstats {

PassNeeds PassNeeds::operator|(const PassNeeds& o) const {
  PassNeeds n;
  n.counts = counts || o.counts;
  n.tallies = tallies || o.tallies;
  n.sample_sums = sample_sums || o.sample_sums;
  n.positions = positions || o.positions;
  n.alleles = alleles || o.alleles;
  n.ids = ids || o.ids;
  n.ancestral = ancestral || o.ancestral;
  n.packed = packed || o.packed;
  n.products = products;
  for (const ProductNeed& need : o.products) n.need(need);
  n.data_spans = data_spans || o.data_spans;
  return n;
}

PassNeeds& PassNeeds::need(ProductNeed need) {
  for (const ProductNeed& p : products)
    if (p.key() == need.key()) {
      if (!p.same_request(need))
        throw UsageError("one run cannot compute the " + std::string(need.key().name) +
                         " with two different parameters");
      return *this;
    }
  products.push_back(std::move(need));
  return *this;
}

bool PassNeeds::wants(const ProductKey& key) const {
  for (const ProductNeed& p : products)
    if (p.key() == key) return true;
  return false;
}

namespace {

/// Resolve the device request: the GPU when asked for (an error without one), auto = the GPU
/// when one is usable; the reason for falling back goes to the run's note.
bool use_gpu(const DeviceSpec& wanted, RunStats& stats) {
  if (wanted.kind == DeviceKind::Cpu) return false;
  std::string reason;
  const bool gpu = gpu_available(&reason, wanted.index);
  if (wanted.kind == DeviceKind::Gpu) {
    if (!gpu)
      throw UsageError("--device " + wanted.to_string() + ": no usable GPU (" + reason + ")");
    return true;
  }
  if (!gpu) stats.note = "no usable GPU (" + reason + "); using the CPU";
  return gpu;
}

/// The work of this run as `--device auto` weighs it (device.hpp): the site pass's calls, the
/// matrix family's pair-variants and the variant-pair family's pair words.
AutoDeviceWork auto_work(const Query& q, std::span<Statistic* const> statistics,
                         const RunOptions& run) {
  AutoDeviceWork w;
  const double variants = static_cast<double>(q.plan.selected_variants());
  const double n = static_cast<double>(q.samples.size());
  w.calls = variants * n;
  for (const Statistic* s : statistics)
    if (const SampleMatrixRequest* r = s->sample_matrix()) {
      const double r0 = static_cast<double>(r->row_begin);
      const double r1 = r->row_end < 0 ? n : static_cast<double>(r->row_end);
      w.pair_variants += (r1 * (r1 + 1) - r0 * (r0 + 1)) / 2 * variants;  // rows r0..r1-1, j <= i
    }
  for (const Statistic* s : statistics)
    for (const dispatch::BandOf& band : dispatch::bands_of(*s)) {
      const PairRequest* r = band.request;
      // Pairs of the band (at most max_variants partners a row; a bp window is not known here),
      // each counted over the words of two rows.
      double partners = std::min(static_cast<double>(r->max_variants), variants);
      if (r->focal_only)  // the pairs of the focal rows only
        partners = std::min(partners, 2 * partners * static_cast<double>(r->focal.size()) /
                                          std::max(variants, 1.0));
      const double bits = r->haplotypes() ? n * static_cast<double>(q.store.ploidy()) : n;
      const double words = (r->haplotypes() ? 2 : 3) * std::ceil(bits / 64);
      w.pair_words += variants * partners * words;
      if (band.reducer) {
        w.reduced_pairs += variants * partners;
        if (band.reducer->device()) w.device_reduced_pairs += variants * partners;
      }
    }
  w.threads = run.threads ? run.threads : hardware_threads();
  return w;
}

}  // namespace

bool fuses_count_filters(const Query& q, std::span<Statistic* const> statistics,
                         const PassNeeds& extra) {
  if (!q.count_filters_pending() || statistics.empty() || !q.store.has_genotypes() ||
      !dispatch::populations_partition(q) || !q.pending_extract.empty())
    return false;
  const detail::DataSpans& spans = *q.data_span_cache;
  // A partition of a plan (its spans are those of the whole), or spans of the unfiltered plan.
  if ((spans.plan && spans.plan->units.size() != q.plan.units.size()) ||
      (spans.computed && !spans.count_filtered))
    return false;
  PassNeeds needs = extra;
  for (const Statistic* s : statistics) {
    const PassNeeds n = s->needs();
    if (!n.counts || s->pair_request() || s->sample_matrix() || !dispatch::bands_of(*s).empty())
      return false;
    needs = needs | n;
  }
  // Tallies are per site too (complete diploid tallies beside the counts); with per-sample sums
  // they weigh a second phase over every row. A keyed product is not known here: no fusing.
  return !needs.sample_sums && !needs.packed && needs.products.empty();
}

bool prepare_count_filters(Query& q, std::span<Statistic* const> statistics, const RunOptions& run,
                           const PassNeeds& extra) {
  if (!q.count_filters_pending()) return false;
  // A test and benchmark hook (vczstats/testing.hpp, the CLI's hidden --two-pass-filters): the
  // counting pass first even where the run would fuse, to compare the two paths.
  const bool two_pass = hooks::two_pass_count_filters();
  if (!two_pass && fuses_count_filters(q, statistics, extra)) return false;
  apply_count_filters(q, run);
  return true;
}

RunStats compute(const Query& q, std::span<Statistic* const> statistics, const RunOptions& run,
                 const ComputeHooks& hooks) {
  if (run.device.several())
    throw UsageError("--device " + run.device.to_string() +
                     ": several GPUs share a run through vczstats::Runner (runner.hpp); "
                     "compute() runs on one device");
  // Count filters pending: applied here, from this pass's own counts (the fused path).
  const bool fused = q.count_filters_pending();
  if (fused) dispatch::require_genotypes_for_count_filters(q);
  if (fused && !fuses_count_filters(q, statistics, hooks.needs))
    throw UsageError("the query's count filters (" + q.filters.describe() +
                     ") were not applied: call apply_count_filters (or prepare_count_filters) "
                     "before compute");
  PassNeeds needs = hooks.needs;
  for (Statistic* s : statistics) needs = needs | s->needs();
  // Before the pass's read-ahead (see PassNeeds); the fused count filters set them below.
  if (needs.data_spans && !fused) (void)q.data_spans();
  if (!q.store.has_genotypes() && (needs.counts || needs.tallies || needs.sample_sums ||
                                   needs.packed || !needs.products.empty())) {
    // A statistic of genotype calls: a sites-only store would give a table of zeros.
    std::string names;
    for (Statistic* s : statistics) names += (names.empty() ? "" : ", ") + s->name();
    throw FormatError(q.store.path() + " has no call_genotype (a sites-only store): " +
                      (names.empty() ? std::string("the statistic") : names) +
                      " needs genotype calls");
  }
  const bool ancestral = needs.ancestral && q.ancestral != "ref";
  const bool any_fields = needs.positions || needs.alleles || needs.ids || needs.ancestral;

  // The heavy passes.
  const int alleles = vcz::store_max_alleles(q.store);
  stats::AlleleCountsPass counts;
  if (needs.counts) counts.init({alleles, q.pops.count()}, q.pops.of);
  backend::TalliesRequest tallies;
  tallies.population_of = &q.pops.of;
  tallies.pops = q.pops.count();
  tallies.alleles = std::max(alleles, 1);
  tallies.deliver = needs.tallies;
  std::unique_ptr<vcz::VariantReader> reader;
  if (any_fields)
    reader = std::make_unique<vcz::VariantReader>(q.store, needs.alleles || ancestral, needs.ids);
  // Read once per run (a FASTA is scanned once), used by the consumer alone.
  std::unique_ptr<vcz::AncestralAlleles> polarise;
  if (needs.ancestral) polarise = std::make_unique<vcz::AncestralAlleles>(q.store, q.ancestral);

  RunStats rs;
  rs.setup = q.setup;
  const auto start = std::chrono::steady_clock::now();

  // The fused count filters: each unit's rows that fail them are hidden from the statistics (a
  // copy of the unit with them masked; a unit left without a row is not delivered), as if
  // apply_count_filters had masked them in the plan: units are numbered as in that plan, the
  // progress counts the variants kept, and the data spans of windows are those of the kept
  // sites (found first by counting only the units at either end of each group).
  std::optional<dispatch::CountFilter> count_filter;
  std::vector<std::int32_t> total;
  std::vector<std::uint8_t> keep;
  vcz::WorkUnit kept_unit;
  std::int64_t kept_units = 0, kept_variants = 0;
  RunOptions pass_run = run;
  // The windows' data spans of the kept sites are found on another thread while the pass starts
  // (a GPU's context, the first reads): the statistics need them from their first unit on, so
  // the first delivery waits for them. A remote store finds them first, so that their reads do
  // not take the chunks the pass has asked for ahead (see PassNeeds::data_spans).
  std::future<std::vector<std::pair<std::int64_t, std::int64_t>>> spans;
  auto take_spans = [&] {
    if (spans.valid()) (void)detail::set_count_filtered_data_spans(q, spans.get());
  };
  if (fused) {
    count_filter.emplace(q);
    // Only statistics whose groups span the data ask for the spans (PassNeeds::data_spans): a
    // site table reads no variant field and counts no end chunk for them.
    if (needs.data_spans && !q.data_span_cache->computed) {
      spans = std::async(std::launch::async,
                         [&q, &run] { return dispatch::filtered_data_spans(q, run); });
      if (zarr::is_remote_url(q.store.path())) take_spans();
    }
    if (run.progress)
      pass_run.progress = [&](std::int64_t done, std::int64_t units, std::int64_t) {
        run.progress(done, units, kept_variants);
      };
  }
  backend::SitePassSpec spec;
  spec.store = &q.store;
  spec.min_gq = q.filters.min_gq;
  spec.min_dp = q.filters.min_dp;
  spec.plan = &q.plan;
  spec.samples = &q.samples;
  spec.run = &pass_run;
  spec.device = run.device.index;
  spec.counts = needs.counts ? &counts : nullptr;
  spec.tallies = needs.tallies || needs.sample_sums ? &tallies : nullptr;
  spec.sample_sums = needs.sample_sums;
  spec.variants = reader.get();
  spec.products = needs.products;

  // The layout of the counts, and of the tallies (same alleles and populations).
  const stats::CountsLayout layout{needs.counts ? counts.layout().alleles : tallies.alleles,
                                   q.pops.count()};
  std::unique_ptr<backend::PackedHostUnits> host_units;  // UnitData::packed (set below)
  std::vector<int> anc;
  std::unique_ptr<dispatch::PairPasses> pairs;  // variant-pair family (set below)
  auto deliver = [&](const backend::UnitOutput& out) {
    take_spans();
    UnitData u;
    u.index = out.index;
    u.unit = &q.plan.units[static_cast<std::size_t>(out.index)];
    if (count_filter) {
      dispatch::total_counts(out.counts, layout, u.unit->size(), total);
      count_filter->decide(*u.unit, total, layout.alleles, keep,
                           run.threads ? run.threads : hardware_threads());
      kept_unit = *u.unit;
      if (kept_unit.mask.empty()) kept_unit.mask.assign(keep.size(), 1);
      bool any = false, all = true;
      for (std::size_t r = 0; r < keep.size(); ++r) {
        auto& m = kept_unit.mask[r];
        if (m && !keep[r]) m = 0;
        any = any || m;
        all = all && m;
      }
      if (!any) return;  // apply_count_filters drops the unit
      if (all) kept_unit.mask.clear();
      u.unit = &kept_unit;
      u.index = kept_units++;
      kept_variants += kept_unit.selected();
    }
    u.layout = layout;
    u.counts = out.counts;
    u.tallies = out.tallies;
    u.variants = out.variants.get();
    if (host_units) u.packed = host_units->view(out.index);
    u.products = out.products;
    if (polarise) {
      anc = polarise->indices(*out.variants);
      u.ancestral = anc;
    }
    if (pairs) pairs->deliver();
    for (Statistic* s : statistics) s->accumulate(u);
    if (hooks.after_unit) hooks.after_unit(u);
  };

  std::vector<stats::SampleSums> sample_totals;
  // --gpu-decode on with an array the device cannot decode fails before any GPU is looked for.
  if (run.gpu_decode == GpuDecode::On && run.device.kind != DeviceKind::Cpu)
    (void)choose_gpu_decode(q.store, GpuDecode::On);
  bool gpu = use_gpu(run.device, rs);  // validates --device gpu even for empty plans
  // auto leaves the GPU when its setup would cost more than the CPU needs for the whole run
  // (small stores); --gpu-decode on asks for the GPU's decoders, so it keeps the GPU.
  if (gpu && run.device.kind == DeviceKind::Auto && run.gpu_decode != GpuDecode::On) {
    const AutoDeviceWork work = auto_work(q, statistics, run);
    const AutoDeviceEstimate e = estimate_auto_device(work);
    if (!e.gpu()) {
      gpu = false;
      rs.note = fmt::format(
          "auto: the CPU ({} threads) is estimated quicker for this run: {:.2g} s against {:.2g} "
          "s on the GPU, most of it the GPU's setup (--device gpu uses the GPU anyway)",
          work.threads, e.cpu_seconds, e.gpu_seconds);
    }
  }
  pairs = std::make_unique<dispatch::PairPasses>(q, statistics, run, gpu);
  // The pass's sinks, in the order they are called: the variant-pair bands, the matrix family's
  // accumulators, then the host copies of the packed units (UnitData::packed).
  spec.packed = pairs->packed_sinks();
  spec.haplotypes = pairs->haplotype_sinks();

  // The matrix family: an accumulator per statistic that asks for sums over pairs of samples.
  std::vector<std::pair<Statistic*, std::unique_ptr<backend::SampleMatrixAccumulator>>> matrices;
  for (Statistic* s : statistics)
    if (const SampleMatrixRequest* r = s->sample_matrix()) {
      backend::SampleMatrixSpec m{*r, &q.plan, q.samples.size(), run.threads, run.device.index};
      if (run.keep_matrix_sums) m.request.value = CellValue::None;
      matrices.emplace_back(
          s, gpu ? backend::make_sample_matrix_gpu(m) : backend::make_sample_matrix_cpu(m));
    }
  for (auto& m : matrices) spec.packed.push_back(m.second.get());
  if (needs.packed) {
    host_units = std::make_unique<backend::PackedHostUnits>(
        gpu ? backend::make_packed_host_mirror_gpu(q.samples.size(), run.device.index) : nullptr);
    spec.packed.push_back(host_units.get());
  }
  const Backend chosen =
      gpu ? Backend::cuda(run.device.index, run.threads) : Backend::cpu(run.threads);
  for (Statistic* s : statistics) s->attach(chosen);
  if (q.plan.units.empty() || q.samples.size() == 0) {
    // Nothing to read, on either backend (no selected site or sample). The keyed products have
    // no slot: their statistics find none (UnitData::product).
    std::vector<std::int32_t> zero_counts;
    std::vector<std::int32_t> zero_tallies;
    for (std::size_t i = 0; i < q.plan.units.size(); ++i) {
      const auto& unit = q.plan.units[i];
      backend::UnitOutput out;
      out.index = static_cast<std::int64_t>(i);
      zero_counts.assign(static_cast<std::size_t>(unit.size() * layout.site_width()), 0);
      if (needs.counts) out.counts = zero_counts;
      zero_tallies.assign(static_cast<std::size_t>(unit.size() * tallies.site_width()), 0);
      if (needs.tallies) out.tallies = zero_tallies;
      if (reader)
        out.variants = std::make_shared<vcz::VariantBlock>(reader->read(unit.begin, unit.end));
      deliver(out);
    }
    sample_totals.assign(static_cast<std::size_t>(q.samples.size()), {});
    rs.device = "none (nothing to read)";
  } else if (gpu) {
    backend::run_site_pass_gpu(spec, deliver, &sample_totals, &rs);
  } else {
    backend::run_site_pass_cpu(spec, deliver, &sample_totals, &rs);
  }
  take_spans();  // no unit was delivered
  pairs->finish();
  rs.compute_seconds += pairs->compute_seconds();
  rs.device_pairs += pairs->device_pairs();
  if (fused) {
    rs.variants = kept_variants;
    rs.note += std::string(rs.note.empty() ? "" : "; ") + "the count filters " +
               q.filters.describe() + " were applied in this pass (no counting pass first)";
    if (!q.plan.units.empty() && kept_units == 0)
      rs.warnings.push_back(dispatch::no_sites_kept(q, q.plan.selected_variants()));
  }
  if (needs.sample_sums)
    for (Statistic* s : statistics)
      if (s->needs().sample_sums) s->accumulate_samples(sample_totals);
  for (auto& [s, acc] : matrices) s->accumulate_sample_matrix(acc->finish());
  if (rs.wall_seconds == 0)
    rs.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rs;
}

Table compute_table(const Query& q, Statistic& statistic, const RunOptions& run, RunStats* stats) {
  Statistic* list[] = {&statistic};
  const RunStats rs = compute(q, list, run);
  if (stats) *stats = rs;
  Table t = statistic.take_rows();
  t.append(statistic.finish());
  return t;
}

}  // namespace vczstats
