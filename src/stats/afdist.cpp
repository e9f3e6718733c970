// afdist accumulator: bin edges, reduction of per-site counts into the histogram, merge.

#include <fmt/format.h>

#include "stats/afdist_math.hpp"
#include "vczstats/afdist.hpp"
#include "vczstats/error.hpp"

namespace vczstats::stats {

AfdistMethod parse_afdist_method(const std::string& name) {
  if (name == "bcftools") return AfdistMethod::Bcftools;
  if (name == "zarr-afdist") return AfdistMethod::ZarrAfdist;
  throw UsageError("unknown afdist method '" + name + "' (expected bcftools or zarr-afdist)");
}

std::string to_string(AfdistMethod m) {
  return m == AfdistMethod::Bcftools ? "bcftools" : "zarr-afdist";
}

std::string AfdistResult::edge_text(std::size_t i) const {
  // Shortest text that reads back as the same number in the method's precision.
  if (method == AfdistMethod::Bcftools) return fmt::format("{}", static_cast<float>(edges[i]));
  return fmt::format("{}", edges[i]);
}

void AfdistAccumulator::init(const AfdistOptions& options, std::int64_t num_samples,
                             std::int64_t ploidy) {
  if (options.bins < 1 || options.bins > 1000000)
    throw UsageError("--bins must be between 1 and 1000000, got " + std::to_string(options.bins));
  if (options.method == AfdistMethod::ZarrAfdist && ploidy != 2)
    throw UsageError(
        "--method zarr-afdist is defined for diploid genotypes only; this store "
        "has ploidy " +
        std::to_string(ploidy) + " (use --method bcftools)");
  options_ = options;
  num_samples_ = num_samples;
  const int n = options.bins;
  edges_f_.resize(static_cast<std::size_t>(n) + 1);
  edges_d_.resize(static_cast<std::size_t>(n) + 1);
  // bcftools: the edges are parsed from decimal text with strtod and stored as float, i.e. the
  // double i/n rounded to float. zarr_afdist: np.linspace(0, 1, n + 1) is i * (1/n) with the
  // last edge exactly 1, then 0.0125 added to it.
  const double step = 1.0 / n;
  for (int i = 0; i <= n; ++i) {
    edges_f_[static_cast<std::size_t>(i)] = static_cast<float>(static_cast<double>(i) / n);
    edges_d_[static_cast<std::size_t>(i)] = static_cast<double>(i) * step;
  }
  edges_d_.back() = 1.0 + 0.0125;
  counts_.assign(static_cast<std::size_t>(n), 0);
  sites_ = 0;
}

void AfdistAccumulator::accumulate(std::span<const Site> sites,
                                   std::span<const std::uint8_t> mask) {
  const int n = options_.bins;
  auto add = [&](int bin, std::int64_t w) {
    if (bin >= 0 && bin < n)
      counts_[static_cast<std::size_t>(bin)] += static_cast<std::uint64_t>(w);
  };
  for (std::size_t i = 0; i < sites.size(); ++i) {
    if (!mask.empty() && !mask[i]) continue;
    ++sites_;
    const auto c = options_.method == AfdistMethod::Bcftools
                       ? afdist::bcftools_site(sites[i], edges_f_.data(), n)
                       : afdist::zarr_site(sites[i], num_samples_, edges_d_.data(), n);
    add(c.bin_ra, c.n_ra);
    add(c.bin_aa, c.n_aa);
  }
}

void AfdistAccumulator::merge_site(Site& into, const Site& from) {
  afdist::merge_site(into, from);
}

void AfdistAccumulator::merge(const AfdistAccumulator& other) {
  if (other.counts_.size() != counts_.size() || other.options_.method != options_.method)
    throw UsageError("cannot merge afdist accumulators with different options");
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  sites_ += other.sites_;
}

void AfdistAccumulator::set_state(std::vector<std::uint64_t> counts, std::int64_t sites) {
  if (counts.size() != counts_.size())
    throw FormatError("afdist state: " + std::to_string(counts.size()) + " bins, expected " +
                      std::to_string(counts_.size()));
  counts_ = std::move(counts);
  sites_ = sites;
}

AfdistResult AfdistAccumulator::finalize() const {
  AfdistResult r;
  r.method = options_.method;
  r.counts = counts_;
  r.sites = sites_;
  if (options_.method == AfdistMethod::Bcftools)
    r.edges.assign(edges_f_.begin(), edges_f_.end());
  else
    r.edges = edges_d_;
  return r;
}

}  // namespace vczstats::stats
