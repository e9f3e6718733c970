// The one dispatch place: collects what the statistics need, picks the backend from the device
// request, runs the heavy pass once for all of them and feeds each statistic every unit in plan
// order (with its variant fields and ancestral alleles).

#include "vczstats/compute.hpp"

#include <chrono>
#include <memory>

#include "backend/site_pass.hpp"
#include "stats/haplo_runner.hpp"
#include "vczstats/ancestral.hpp"
#include "vczstats/device.hpp"
#include "vczstats/error.hpp"
#include "vczstats/variants.hpp"

namespace vczstats {

PassNeeds PassNeeds::operator|(const PassNeeds& o) const {
  PassNeeds n;
  n.counts = counts || o.counts;
  if (afdist && o.afdist && *afdist != *o.afdist)
    throw UsageError("one run cannot compute afdist with two methods");
  n.afdist = afdist ? afdist : o.afdist;
  n.sample_sums = sample_sums || o.sample_sums;
  n.positions = positions || o.positions;
  n.alleles = alleles || o.alleles;
  n.ids = ids || o.ids;
  n.ancestral = ancestral || o.ancestral;
  n.haplotypes = haplotypes || o.haplotypes;
  return n;
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

}  // namespace

RunStats compute(const Query& q, std::span<Statistic* const> statistics, const RunOptions& run,
                 const ComputeHooks& hooks) {
  PassNeeds needs = hooks.needs;
  for (Statistic* s : statistics) needs = needs | s->needs();
  const bool ancestral = needs.ancestral && q.ancestral != "ref";
  const bool any_fields = needs.positions || needs.alleles || needs.ids || needs.ancestral;

  // The heavy passes.
  const int alleles = vcz::store_max_alleles(q.store);
  stats::AlleleCountsPass counts;
  if (needs.counts) counts.init({alleles, q.pops.count()}, q.pops.of);
  stats::AfdistAccumulator afdist;
  if (needs.afdist)
    afdist.init({*needs.afdist, 1}, q.samples.size(),
                q.store.has_genotypes() ? q.store.ploidy() : 2);
  const backend::SampleSumsRequest sums{&q.pops.of, q.pops.count(), std::max(alleles, 1)};
  const backend::HaplotypeRequest haplotypes{std::max(alleles, 1)};
  std::unique_ptr<vcz::VariantReader> reader;
  if (any_fields)
    reader = std::make_unique<vcz::VariantReader>(q.store, needs.alleles || ancestral, needs.ids);
  // Read once per run (a FASTA is scanned once), used by the consumer alone.
  std::unique_ptr<vcz::AncestralAlleles> polarise;
  if (needs.ancestral) polarise = std::make_unique<vcz::AncestralAlleles>(q.store, q.ancestral);

  RunStats rs;
  const auto start = std::chrono::steady_clock::now();
  backend::SitePassSpec spec;
  spec.store = &q.store;
  spec.plan = &q.plan;
  spec.samples = &q.samples;
  spec.run = &run;
  spec.device = run.device.index;
  spec.counts = needs.counts ? &counts : nullptr;
  spec.afdist = needs.afdist ? &afdist : nullptr;
  spec.sample_sums = needs.sample_sums ? &sums : nullptr;
  spec.variants = reader.get();
  spec.haplotypes = needs.haplotypes ? &haplotypes : nullptr;

  const stats::CountsLayout layout = needs.counts ? counts.layout() : stats::CountsLayout{};
  std::vector<int> anc;
  auto deliver = [&](const backend::UnitOutput& out) {
    UnitData u;
    u.index = out.index;
    u.unit = &q.plan.units[static_cast<std::size_t>(out.index)];
    u.layout = layout;
    u.counts = out.counts;
    u.afdist = out.afdist;
    u.variants = out.variants.get();
    if (out.haplotypes.words) u.haplotypes = &out.haplotypes;
    if (polarise) {
      anc = polarise->indices(*out.variants);
      u.ancestral = anc;
    }
    for (Statistic* s : statistics) s->accumulate(u);
    if (hooks.after_unit) hooks.after_unit(u);
  };

  std::vector<stats::SampleSums> sample_totals;
  const bool gpu = use_gpu(run.device, rs);  // validates --device gpu even for empty plans
  ExecutionContext context;
  context.gpu = gpu;
  context.device = run.device.index;
  context.threads = run.threads;
  if (gpu)
    context.gpu_segment_runner = [index = run.device.index] {
      return backend::make_gpu_segment_runner(index);
    };
  for (Statistic* s : statistics) s->attach(context);
  if (!q.store.has_genotypes() || q.plan.units.empty() || q.samples.size() == 0) {
    // Nothing to read, on either backend: every site has no called allele, as bcftools sees a
    // sites-only store.
    std::vector<std::int32_t> zero_counts;
    std::vector<stats::AfdistSite> zero_afdist;
    for (std::size_t i = 0; i < q.plan.units.size(); ++i) {
      const auto& unit = q.plan.units[i];
      backend::UnitOutput out;
      out.index = static_cast<std::int64_t>(i);
      zero_counts.assign(static_cast<std::size_t>(unit.size() * layout.site_width()), 0);
      zero_afdist.assign(static_cast<std::size_t>(unit.size()), {});
      if (needs.counts) out.counts = zero_counts;
      if (needs.afdist) out.afdist = zero_afdist;
      if (reader)
        out.variants = std::make_shared<vcz::VariantBlock>(reader->read(unit.begin, unit.end));
      deliver(out);
    }
    sample_totals.assign(static_cast<std::size_t>(q.samples.size()), {});
    rs.device = "none (nothing to read)";
    if (!q.store.has_genotypes())
      rs.warnings.push_back(q.store.path() + " has no call_genotype (sites only): every " +
                            (needs.afdist ? "bin" : "count") + " is 0");
  } else if (gpu) {
    backend::run_site_pass_gpu(spec, deliver, &sample_totals, &rs);
  } else {
    backend::run_site_pass_cpu(spec, deliver, &sample_totals, &rs);
  }
  if (needs.sample_sums)
    for (Statistic* s : statistics)
      if (s->needs().sample_sums) s->accumulate_samples(sample_totals);
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
