// Backend selection and the statistics' entry points.

#include "vczstats/engine.hpp"
#include "backend/cuda/gpu_engine.hpp"
#include "stream/site_pass.hpp"
#include "vczstats/error.hpp"

namespace vczstats {

Device parse_device(const std::string& name) {
  if (name == "cpu") return Device::Cpu;
  if (name == "gpu") return Device::Gpu;
  if (name == "auto") return Device::Auto;
  throw UsageError("unknown device '" + name + "' (expected cpu, gpu or auto)");
}

namespace {
// Resolve --device: GPU when asked for (error if absent), auto = GPU when one
// is usable. Statistics without a CUDA implementation yet run on the CPU and
// say so.
Device resolve_device(Device wanted, bool has_gpu_implementation, RunStats* stats) {
  std::string reason;
  if (wanted == Device::Cpu) return Device::Cpu;
  const bool gpu = gpu_available(&reason);
  if (wanted == Device::Gpu) {
    if (!gpu) throw UsageError("--device gpu: no usable GPU (" + reason + ")");
    if (!has_gpu_implementation)
      throw UsageError("--device gpu: this statistic has no GPU implementation yet");
    return Device::Gpu;
  }
  if (gpu && has_gpu_implementation) return Device::Gpu;
  if (stats)
    stats->note = gpu ? "no GPU implementation of this statistic yet; using the CPU"
                      : "no usable GPU (" + reason + "); using the CPU";
  return Device::Cpu;
}
}  // namespace

stats::AfdistResult run_afdist(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                               const vcz::SampleSelection& samples,
                               const stats::AfdistOptions& options, const RunOptions& run,
                               RunStats* run_stats) {
  stats::AfdistAccumulator acc;
  acc.init(options, samples.size(), store.has_genotypes() ? store.ploidy() : 2);
  const Device device = resolve_device(run.device, /*has_gpu_implementation=*/true, run_stats);
  if (!store.has_genotypes() || plan.units.empty() || samples.size() == 0) {
    // Nothing to read, on either backend: every site has no called allele, as bcftools sees a
    // sites-only store.
    for (const auto& unit : plan.units)
      acc.accumulate(std::vector<stats::AfdistSite>(static_cast<std::size_t>(unit.size())),
                     unit.mask);
    if (run_stats) {
      run_stats->device = "none (nothing to read)";
      if (!store.has_genotypes())
        run_stats->warnings.push_back(store.path() +
                                      " has no call_genotype (sites only): every bin is 0");
    }
    return acc.finalize();
  }
  if (device == Device::Gpu) return run_afdist_gpu(store, plan, samples, acc, run, run_stats);
  stream::run_site_pass_cpu(
      store, plan, samples, acc, run, run_stats,
      [&](std::int64_t, const vcz::WorkUnit& unit, std::span<const stats::AfdistSite> sites) {
        acc.accumulate(sites, unit.mask);
      });
  return acc.finalize();
}

void run_allele_counts(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                       const vcz::SampleSelection& samples, const stats::AlleleCountsPass& pass,
                       const RunOptions& run, RunStats* run_stats, const CountsConsumer& consume) {
  const Device device = resolve_device(run.device, gpu_has_allele_counts(), run_stats);
  if (!store.has_genotypes() || plan.units.empty() || samples.size() == 0) {
    std::vector<std::int32_t> zeros;
    for (std::size_t u = 0; u < plan.units.size(); ++u) {
      const auto& unit = plan.units[u];
      zeros.assign(static_cast<std::size_t>(unit.size() * pass.site_width()), 0);
      consume(static_cast<std::int64_t>(u), unit, zeros);
    }
    if (run_stats) {
      run_stats->device = "none (nothing to read)";
      if (!store.has_genotypes())
        run_stats->warnings.push_back(store.path() +
                                      " has no call_genotype (sites only): every count is 0");
    }
    return;
  }
  if (device == Device::Gpu)
    return run_allele_counts_gpu(store, plan, samples, pass, run, run_stats, consume);
  stream::run_site_pass_cpu(store, plan, samples, pass, run, run_stats, consume);
}

}  // namespace vczstats
