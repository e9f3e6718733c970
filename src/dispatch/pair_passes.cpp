// The variant-pair family in a run (pair_passes.hpp).

#include "dispatch/pair_passes.hpp"

#include <algorithm>

#include "vczstats/error.hpp"

namespace vczstats::dispatch {

std::vector<BandOf> bands_of(const Statistic& s) {
  std::vector<BandOf> out;
  if (const auto* banded = dynamic_cast<const stats::pairs::BandedPairs*>(&s)) {
    for (const auto* b : banded->pair_bands())
      out.push_back({&b->request, &b->mask, b->reducer.get(), b->rows_only});
  } else if (const PairRequest* r = s.pair_request()) {
    out.push_back({r, nullptr});
  }
  return out;
}

PairPasses::PairPasses(const Query& q, std::span<Statistic* const> statistics,
                       const RunOptions& run, bool gpu) {
  for (Statistic* s : statistics) {
    const std::vector<BandOf> bands = bands_of(*s);
    std::vector<backend::PairBandSpec> specs;
    for (std::size_t k = 0; k < bands.size(); ++k) {
      const PairRequest* r = bands[k].request;
      if (!q.store.has_genotypes()) throw FormatError(q.store.path() + ": no call_genotype");
      backend::PairBandSpec& spec = specs.emplace_back();
      spec.store = &q.store;
      spec.plan = &q.plan;
      spec.samples = q.samples.size();
      spec.ploidy = static_cast<int>(q.store.ploidy());
      spec.request = *r;
      spec.threads = run.threads;
      spec.device = run.device.index;
      if (bands[k].mask) spec.mask = *bands[k].mask;
      spec.reducer = bands[k].reducer;
      spec.rows_only = bands[k].rows_only;
    }
    // The bands whose pairs another band's reducer counts carry no pairs where that band
    // reduces: always on the CPU; on the GPU where the reducer runs on the device (else every
    // band hands over its pairs, summed by the statistic).
    const bool device_reduces = std::any_of(specs.begin(), specs.end(), backend::gpu_reduces);
    for (std::size_t k = 0; k < specs.size(); ++k) {
      if (gpu && !device_reduces) specs[k].rows_only = false;
      bands_.push_back(
          {s, dynamic_cast<stats::pairs::BandedPairs*>(s), k,
           gpu ? backend::make_pair_band_gpu(specs[k]) : backend::make_pair_band_cpu(specs[k]),
           specs[k].request.haplotypes()});
    }
  }
}

void PairPasses::hand(Band& b, PairBatch&& batch) {
  if (b.banded)
    b.banded->accumulate_band(b.index, std::move(batch));
  else
    b.statistic->accumulate_pairs(std::move(batch));
}

void PairPasses::deliver() {
  for (auto& x : bands_)
    for (auto& b : x.band->take()) hand(x, std::move(b));
}

void PairPasses::finish() {
  for (auto& x : bands_)
    for (auto& b : x.band->finish()) hand(x, std::move(b));
}

std::int64_t PairPasses::device_pairs() const {
  std::int64_t n = 0;
  for (const auto& b : bands_) n += b.band->device_pairs();
  return n;
}

double PairPasses::compute_seconds() const {
  double t = 0;
  for (const auto& b : bands_) t += b.band->compute_seconds();
  return t;
}

std::vector<backend::PackedSink*> PairPasses::packed_sinks() const {
  std::vector<backend::PackedSink*> out;
  for (const auto& b : bands_)
    if (!b.haplotypes) out.push_back(b.band.get());
  return out;
}

std::vector<backend::HaplotypeSink*> PairPasses::haplotype_sinks() const {
  std::vector<backend::HaplotypeSink*> out;
  for (const auto& b : bands_)
    if (b.haplotypes) out.push_back(b.band.get());
  return out;
}

}  // namespace vczstats::dispatch
