#pragma once
// The variant-pair family in a run (dispatch/compute.cpp): one band per statistic that asks for
// pairs (Statistic::pair_request), or one per band of a statistic that asks for several
// (stats::pairs::BandedPairs), on the run's device, fed by the heavy pass's packed genotypes
// or haplotype planes, its batches handed to the statistic in plan order.

#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "backend/pair_band.hpp"
#include "stats/banded_pairs.hpp"
#include "vczstats/query.hpp"
#include "vczstats/run.hpp"
#include "vczstats/statistic.hpp"

namespace vczstats::dispatch {

/// One band a statistic asks for: its request and its mask of plane bits (null: every bit).
struct BandOf {
  const PairRequest* request = nullptr;
  const std::vector<std::uint64_t>* mask = nullptr;
  const stats::pairs::PairReducer* reducer = nullptr;  ///< (stats/banded_pairs.hpp)
  bool rows_only = false;
};
/// The bands of @p s: its BandedPairs bands, or its pair_request(), or none.
std::vector<BandOf> bands_of(const Statistic& s);

class PairPasses final {
 public:
  PairPasses(const Query& q, std::span<Statistic* const> statistics, const RunOptions& run,
             bool gpu);
  /// The bands as the heavy pass's sinks (backend/site_pass.hpp: SitePassSpec::packed and
  /// ::haplotypes): those of genotypes, those of haplotypes, in band order.
  std::vector<backend::PackedSink*> packed_sinks() const;
  std::vector<backend::HaplotypeSink*> haplotype_sinks() const;
  /// Hand the batches finished so far to their statistics (after unit @p unit was delivered).
  void deliver();
  /// After the pass: the remaining batches and the final ones.
  void finish();
  /// Seconds the bands spent on pairs.
  double compute_seconds() const;
  /// Pairs the bands summed on the device (PairBand::device_pairs).
  std::int64_t device_pairs() const;

 private:
  struct Band {
    Statistic* statistic = nullptr;
    stats::pairs::BandedPairs* banded = nullptr;  // the statistic, when it has several bands
    std::size_t index = 0;                        // in its pair_bands()
    std::unique_ptr<backend::PairBand> band;
    bool haplotypes = false;  // fed the haplotype planes, else the packed genotypes
  };
  /// Hand @p batch of band @p b to its statistic.
  static void hand(Band& b, PairBatch&& batch);
  std::vector<Band> bands_;
};

}  // namespace vczstats::dispatch
