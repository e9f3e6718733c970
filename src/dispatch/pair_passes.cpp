// The variant-pair family in a run (pair_passes.hpp).

#include "dispatch/pair_passes.hpp"

#include "vczstats/error.hpp"

namespace vczstats::dispatch {

PairPasses::PairPasses(const Query& q, std::span<Statistic* const> statistics,
                       const RunOptions& run, bool gpu) {
  for (Statistic* s : statistics) {
    const PairRequest* r = s->pair_request();
    if (!r) continue;
    if (!q.store.has_genotypes()) throw FormatError(q.store.path() + ": no call_genotype");
    backend::PairBandSpec spec;
    spec.store = &q.store;
    spec.plan = &q.plan;
    spec.samples = q.samples.size();
    spec.ploidy = static_cast<int>(q.store.ploidy());
    spec.request = *r;
    spec.threads = run.threads;
    spec.device = run.device.index;
    bands_.emplace_back(
        s, gpu ? backend::make_pair_band_gpu(spec) : backend::make_pair_band_cpu(spec));
    (r->haplotypes() ? haplotypes_ : genotypes_) = true;
  }
}

void PairPasses::deliver() {
  for (auto& [s, band] : bands_)
    for (auto& b : band->take()) s->accumulate_pairs(std::move(b));
}

void PairPasses::finish() {
  for (auto& [s, band] : bands_)
    for (auto& b : band->finish()) s->accumulate_pairs(std::move(b));
}

double PairPasses::compute_seconds() const {
  double t = 0;
  for (const auto& b : bands_) t += b.second->compute_seconds();
  return t;
}

void PairPasses::host_unit(std::int64_t unit, const PackedGenotypeView& view) {
  for (auto& b : bands_) b.second->host_unit(unit, view);
}
void PairPasses::device_unit(std::int64_t unit, const PackedGenotypeView& view, void* stream) {
  for (auto& b : bands_) b.second->device_unit(unit, view, stream);
}
void PairPasses::host_haplotypes(std::int64_t unit, const backend::PackedHaplotypeView& view) {
  for (auto& b : bands_) b.second->host_haplotypes(unit, view);
}
void PairPasses::device_haplotypes(std::int64_t unit, const backend::PackedHaplotypeView& view,
                                   void* stream) {
  for (auto& b : bands_) b.second->device_haplotypes(unit, view, stream);
}

}  // namespace vczstats::dispatch
