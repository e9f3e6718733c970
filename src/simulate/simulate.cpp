// vczstats simulate: the model of SimulateOptions (simulate.hpp), generated chunk by chunk.
//
// Work is split into (variant chunk, sample chunk) tasks run on a thread pool. The only state
// carried along the genome is each population's haplotype order; a planner thread advances it
// site by site (recombination moves a few haplotypes) and gives every variant chunk the order
// at its start plus the moves at each of its sites, so tasks need nothing from each other.
// Every random draw comes from a counter-based stream keyed by (seed, purpose, site or
// population), so the store is the same for any thread count. Memory: two batches of chunk
// plans (an int32 per haplotype each, plus the moves) and one genotype chunk per thread.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "simulate/genotype_store.hpp"
#include "simulate/random.hpp"
#include "vczstats/error.hpp"
#include "vczstats/simulate.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::simulate {
namespace {

using namespace detail;

// Purposes of the random streams (part of every key).
enum : std::uint64_t { kInitialOrder = 1, kRecombination, kPosition, kSite, kMissing, kTree };

constexpr std::uint64_t kGamma = 0x9e3779b97f4a7c15ull;
constexpr std::int64_t kRecentSites = 16;  ///< sites whose branches a new site may share

/// Harmonic number a_H = sum_{i=1}^{H-1} 1/i.
double harmonic(std::int64_t haplotypes) {
  double a = 0;
  for (std::int64_t i = haplotypes - 1; i >= 1; --i) a += 1.0 / static_cast<double>(i);
  return a;
}

struct Population {
  std::int64_t first_sample = 0, samples = 0;
  std::int64_t first_hap = 0, haps = 0;
};

/// A variant chunk ready to be generated: sites, carriers, and the haplotype order.
struct ChunkPlan {
  std::int64_t index = 0, v0 = 0, rows = 0;
  std::vector<std::int32_t> start_rank;  ///< by haplotype: rank before the chunk's first site
  /// per row: (haplotype, new rank) moves made by recombination before that site, by haplotype
  std::vector<std::vector<std::pair<std::int64_t, std::int32_t>>> moves;
  std::vector<std::int32_t> contig, position;
  std::vector<char> ref, alt;
  std::vector<std::int32_t> carrier_start, carriers;  ///< rows x populations
};

class Simulator {
 public:
  Simulator(const std::filesystem::path& root, const SimulateOptions& o) : o_(o) {
    if (o.samples < 1 || o.samples > 100'000'000)
      throw UsageError(fmt::format("--samples {} (expected 1 to 10^8)", o.samples));
    if (o.ploidy < 1 || o.ploidy > 64)
      throw UsageError(fmt::format("--ploidy {} (expected 1 to 64)", o.ploidy));
    if (o.samples * o.ploidy > std::numeric_limits<std::int32_t>::max())
      throw UsageError("--samples x --ploidy must stay below 2^31 haplotypes");
    if (o.populations < 1 || o.populations > o.samples)
      throw UsageError(fmt::format("--pops {} (expected 1 to the number of samples, {})",
                                   o.populations, o.samples));
    if (!(o.fst >= 0 && o.fst < 1))
      throw UsageError(fmt::format("--fst {} (expected [0, 1))", o.fst));
    if (!(o.missing >= 0 && o.missing <= 1))
      throw UsageError(fmt::format("--missing {} (expected [0, 1])", o.missing));
    if (!(o.ld_length > 0))
      throw UsageError(fmt::format("--ld-length {} (expected > 0)", o.ld_length));
    if (!(o.shared_branches >= 0 && o.shared_branches <= 1))
      throw UsageError(fmt::format("--shared-branches {} (expected [0, 1])", o.shared_branches));
    std::tie(variants_, length_) = simulated_extent(o);
    haps_ = o.samples * o.ploidy;
    for (int k = 0; k < o.populations; ++k) {
      Population p;
      p.first_sample = o.samples * k / o.populations;
      p.samples = o.samples * (k + 1) / o.populations - p.first_sample;
      p.first_hap = p.first_sample * o.ploidy;
      p.haps = p.samples * o.ploidy;
      pops_.push_back(p);
    }
    // The initial order of each population: a random permutation.
    rank_.resize(static_cast<std::size_t>(haps_));
    hap_at_.resize(pops_.size());
    for (std::size_t k = 0; k < pops_.size(); ++k) {
      auto& at = hap_at_[k];
      at.resize(static_cast<std::size_t>(pops_[k].haps));
      std::iota(at.begin(), at.end(), 0);
      Stream s(hash_key({o.seed, kInitialOrder, k}));
      for (std::size_t i = at.size(); i > 1; --i) std::swap(at[i - 1], at[s.below(i)]);
      for (std::size_t r = 0; r < at.size(); ++r)
        rank_[static_cast<std::size_t>(pops_[k].first_hap + at[r])] = static_cast<std::int32_t>(r);
    }
    marks_.assign(static_cast<std::size_t>(haps_), 0);
    recent_.assign(static_cast<std::size_t>(kRecentSites * 2) * pops_.size(), 0);
    missing_threshold_ = o.missing >= 1 ? std::numeric_limits<std::uint64_t>::max()
                                        : static_cast<std::uint64_t>(std::ldexp(o.missing, 64));

    GenotypeStoreSpec spec;
    spec.samples = o.samples;
    spec.variants = variants_;
    spec.ploidy = o.ploidy;
    spec.variants_chunk = o.variants_chunk_size;
    spec.samples_chunk = o.samples_chunk_size;
    spec.zarr_format = o.zarr_format;
    spec.contigs = {o.contig};
    spec.contig_lengths = {length_};
    spec.source = "vczstats simulate 0.1.0";
    spec.quality = o.quality;
    spec.seed = o.seed;
    spec.extra_attributes = {
        {"vczstats_simulate",
         {{"model",
           "neutral spectrum (ancestral p ~ 1/p, Binomial counts), Balding-Nichols "
           "populations, haplotype-order copying with recombination"},
          {"seed", o.seed},
          {"samples", o.samples},
          {"variants", variants_},
          {"length", length_},
          {"theta", o.theta},
          {"ploidy", o.ploidy},
          {"populations", o.populations},
          {"fst", o.fst},
          {"missing", o.missing},
          {"ld_length", o.ld_length},
          {"shared_branches", o.shared_branches}}}};
    writer_ = std::make_unique<GenotypeStoreWriter>(root, spec);
  }

  WriteReport run() {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::string> ids;
    ids.reserve(static_cast<std::size_t>(o_.samples));
    for (const auto& [sample, pop] : simulated_samples(o_)) ids.push_back(sample);
    writer_->write_samples(ids);
    ids = {};

    const unsigned threads = o_.threads ? o_.threads : hardware_threads();
    ThreadPool pool(std::max(1u, threads - 1));  // the calling thread works too
    const std::int64_t chunks = writer_->variant_chunks(), sample_chunks = writer_->sample_chunks();
    const std::int64_t batch =
        std::clamp<std::int64_t>((2 * threads + sample_chunks - 1) / sample_chunks, 1, chunks);
    auto plan_batch = [this, batch, chunks](std::int64_t first) {
      std::vector<ChunkPlan> plans;
      for (std::int64_t c = first; c < std::min(chunks, first + batch); ++c)
        plans.push_back(plan_chunk(c));
      return plans;
    };
    std::future<std::vector<ChunkPlan>> next;
    if (chunks > 0) next = std::async(std::launch::async, plan_batch, 0);
    for (std::int64_t first = 0; first < chunks; first += batch) {
      const std::vector<ChunkPlan> plans = next.get();
      if (first + batch < chunks) next = std::async(std::launch::async, plan_batch, first + batch);
      const auto n = static_cast<std::int64_t>(plans.size());
      pool.parallel_for(n * (sample_chunks + 1), [&](std::int64_t t) {
        if (o_.cancelled && o_.cancelled->load()) throw IoError("simulation interrupted");
        const ChunkPlan& plan = plans[static_cast<std::size_t>(t / (sample_chunks + 1))];
        const std::int64_t sc = t % (sample_chunks + 1);
        if (sc == sample_chunks)
          writer_->write_variants(plan.index, {plan.contig, plan.position, plan.ref, plan.alt});
        else
          generate(plan, sc);
      });
      if (o_.progress)
        o_.progress(std::min(variants_, (first + batch) * writer_->spec().variants_chunk),
                    variants_);
    }
    writer_->finish();
    WriteReport r;
    r.variants = variants_;
    r.samples = o_.samples;
    r.ploidy = o_.ploidy;
    r.contigs = 1;
    r.length = length_;
    r.calls = variants_ * o_.samples * o_.ploidy;
    r.stored_bytes = writer_->stored_bytes();
    r.genotype_stored_bytes = writer_->genotype_stored_bytes();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

 private:
  /// Site v's position: one site per length/variants bp, uniform within its interval.
  std::int32_t position(std::int64_t v) const {
    const std::int64_t lo = v * length_ / variants_, hi = (v + 1) * length_ / variants_;
    Stream s(hash_key({o_.seed, kPosition, static_cast<std::uint64_t>(v)}));
    return static_cast<std::int32_t>(
        lo + static_cast<std::int64_t>(s.below(static_cast<std::uint64_t>(hi - lo))) + 1);
  }

  /// Draw site v's alleles and, per population, its carriers (row @p row of @p plan). Sites
  /// are drawn in order: a site may reuse the carriers of a recent one.
  void draw_site(std::int64_t v, ChunkPlan& plan, std::int64_t row) {
    Stream s(hash_key({o_.seed, kSite, static_cast<std::uint64_t>(v)}));
    static constexpr char kBases[] = "ACGT";  // A C G T: transitions are A<->G and C<->T
    const auto r = s.below(4);
    const char alt = s.uniform() < 2.0 / 3.0 ? kBases[r ^ 2] : kBases[(r + 1 + 2 * s.below(2)) % 4];
    plan.ref[static_cast<std::size_t>(row)] = kBases[r];
    plan.alt[static_cast<std::size_t>(row)] = alt;
    // Neutral ancestral frequency (density 1/p), population frequencies, counts; redrawn until
    // the site segregates in the sample.
    const double log_eps = std::log(1e-3 / static_cast<double>(haps_));
    const double f = o_.fst;
    const std::size_t k_pops = pops_.size();
    std::int32_t* counts = plan.carriers.data() + row * static_cast<std::int64_t>(k_pops);
    std::int32_t* starts = plan.carrier_start.data() + row * static_cast<std::int64_t>(k_pops);
    // A mutation on the branch of a recent site: the same clade of the (since recombined)
    // order. Its count has the distribution of every site's, so the spectrum is unchanged.
    const double share = s.uniform();
    const auto window = std::min<std::int64_t>(kRecentSites, v);
    if (window > 0 && share < o_.shared_branches) {
      const std::int64_t from =
          (v - 1 - static_cast<std::int64_t>(s.below(static_cast<std::uint64_t>(window)))) %
          kRecentSites;
      std::copy_n(recent_.begin() + from * 2 * static_cast<std::int64_t>(k_pops), k_pops, starts);
      std::copy_n(recent_.begin() + (from * 2 + 1) * static_cast<std::int64_t>(k_pops), k_pops,
                  counts);
      remember(v, starts, counts);
      return;
    }
    for (int attempt = 0;; ++attempt) {
      const double p = std::exp(s.uniform_pos() * log_eps);
      std::int64_t total = 0;
      for (std::size_t k = 0; k < k_pops; ++k) {
        const double pk =
            (k_pops == 1 || f == 0) ? p : s.beta(p * (1 - f) / f, (1 - p) * (1 - f) / f);
        counts[k] = static_cast<std::int32_t>(s.binomial(pops_[k].haps, pk));
        total += counts[k];
      }
      if (total > 0 && total < haps_) break;
      if (attempt == 10000) {  // practically unreachable; keep the site segregating
        std::fill_n(counts, k_pops, 0);
        counts[0] = 1;
        break;
      }
    }
    for (std::size_t k = 0; k < k_pops; ++k)
      starts[k] = carrier_start(k, counts[k], s.below(static_cast<std::uint64_t>(pops_[k].haps)));
    remember(v, starts, counts);
  }

  void remember(std::int64_t v, const std::int32_t* starts, const std::int32_t* counts) {
    const auto k_pops = static_cast<std::int64_t>(pops_.size());
    const std::int64_t slot = v % kRecentSites;
    std::copy_n(starts, k_pops, recent_.begin() + slot * 2 * k_pops);
    std::copy_n(counts, k_pops, recent_.begin() + (slot * 2 + 1) * k_pops);
  }

  /// The first rank of a site's @p count carriers in population @p k, placed on the split tree
  /// of the order: the smallest clade holding rank @p leaf and at least @p count leaves, whose
  /// leaves (when it has exactly @p count) or whose end beside the leaf's child (else) carry it.
  /// The tree over ranks [0, H_k) splits every clade [lo, hi) at a uniform point, which is the
  /// distribution of Kingman's coalescent topology; sites of nearby positions thus fall on
  /// shared or nested clades, as mutations on the branches of one local genealogy do.
  std::int32_t carrier_start(std::size_t k, std::int64_t count, std::uint64_t leaf) const {
    if (count <= 0) return 0;  // no carriers in this population
    const std::uint64_t key = hash_key({o_.seed, kTree, k});
    std::int64_t lo = 0, hi = pops_[k].haps;
    const auto r = static_cast<std::int64_t>(leaf);
    for (;;) {
      if (hi - lo <= count) return static_cast<std::int32_t>(lo);
      Stream split(hash_key({key, static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi)}));
      const std::int64_t mid =
          lo + 1 + static_cast<std::int64_t>(split.below(static_cast<std::uint64_t>(hi - lo - 1)));
      if (r < mid) {
        if (mid - lo < count) return static_cast<std::int32_t>(lo);
        hi = mid;
      } else {
        if (hi - mid < count) return static_cast<std::int32_t>(lo);
        lo = mid;
      }
    }
  }

  /// Recombination before site v (v > 0): in each population a Binomial(H_k, fraction) set of
  /// haplotypes, chosen at random, exchange their places in the order at random.
  void recombine(std::int64_t v, double fraction,
                 std::vector<std::pair<std::int64_t, std::int32_t>>& moves) {
    for (std::size_t k = 0; k < pops_.size(); ++k) {
      const Population& pop = pops_[k];
      Stream s(hash_key({o_.seed, kRecombination, k, static_cast<std::uint64_t>(v)}));
      const std::int64_t n = s.binomial(pop.haps, fraction);
      if (n < 2) continue;
      // n distinct ranks: rejection while they are few, else a partial Fisher-Yates.
      chosen_.clear();
      if (4 * n < pop.haps) {
        while (static_cast<std::int64_t>(chosen_.size()) < n) {
          const auto r = static_cast<std::int32_t>(s.below(static_cast<std::uint64_t>(pop.haps)));
          if (marks_[static_cast<std::size_t>(r)]) continue;
          marks_[static_cast<std::size_t>(r)] = 1;
          chosen_.push_back(r);
        }
        for (auto r : chosen_) marks_[static_cast<std::size_t>(r)] = 0;
      } else {
        chosen_.resize(static_cast<std::size_t>(pop.haps));
        std::iota(chosen_.begin(), chosen_.end(), 0);
        for (std::int64_t i = 0; i < n; ++i)
          std::swap(chosen_[static_cast<std::size_t>(i)],
                    chosen_[static_cast<std::size_t>(
                        i + static_cast<std::int64_t>(
                                s.below(static_cast<std::uint64_t>(pop.haps - i))))]);
        chosen_.resize(static_cast<std::size_t>(n));
      }
      auto& at = hap_at_[k];
      haps_moved_.clear();
      for (auto r : chosen_) haps_moved_.push_back(at[static_cast<std::size_t>(r)]);
      for (std::size_t i = haps_moved_.size(); i > 1; --i)
        std::swap(haps_moved_[i - 1], haps_moved_[s.below(i)]);
      for (std::size_t i = 0; i < chosen_.size(); ++i) {
        const std::int32_t r = chosen_[i], h = haps_moved_[i];
        if (at[static_cast<std::size_t>(r)] == h) continue;
        at[static_cast<std::size_t>(r)] = h;
        rank_[static_cast<std::size_t>(pop.first_hap + h)] = r;
        moves.emplace_back(pop.first_hap + h, r);
      }
    }
    std::sort(moves.begin(), moves.end());
  }

  /// The plan of variant chunk @p c (chunks must be planned in order: it advances the order).
  ChunkPlan plan_chunk(std::int64_t c) {
    ChunkPlan p;
    p.index = c;
    p.v0 = c * writer_->spec().variants_chunk;
    p.rows = std::min(writer_->spec().variants_chunk, variants_ - p.v0);
    const auto rows = static_cast<std::size_t>(p.rows);
    p.start_rank = rank_;
    p.moves.resize(rows);
    p.contig.assign(rows, 0);
    p.position.resize(rows);
    p.ref.resize(rows);
    p.alt.resize(rows);
    p.carrier_start.resize(rows * pops_.size());
    p.carriers.resize(rows * pops_.size());
    std::int32_t previous = p.v0 > 0 ? position(p.v0 - 1) : 0;
    for (std::int64_t row = 0; row < p.rows; ++row) {
      const std::int64_t v = p.v0 + row;
      const std::int32_t pos = position(v);
      p.position[static_cast<std::size_t>(row)] = pos;
      if (v > 0)
        recombine(v, -std::expm1(-static_cast<double>(pos - previous) / o_.ld_length),
                  p.moves[static_cast<std::size_t>(row)]);
      previous = pos;
      draw_site(v, p, row);
    }
    return p;
  }

  /// Generate and write genotype chunk (plan.index, sc).
  void generate(const ChunkPlan& plan, std::int64_t sc) const {
    thread_local std::vector<std::int8_t> gt;
    thread_local std::vector<std::uint8_t> scratch;
    thread_local std::vector<std::int32_t> ranks;
    const auto& spec = writer_->spec();
    const std::int64_t P = spec.ploidy, SC = spec.samples_chunk;
    const std::int64_t s0 = sc * SC, s1 = std::min(o_.samples, s0 + SC);
    const std::int64_t g0 = s0 * P, g1 = s1 * P;
    gt.resize(static_cast<std::size_t>(writer_->genotype_chunk_elements()));
    ranks.assign(plan.start_rank.begin() + g0, plan.start_rank.begin() + g1);
    const std::size_t k_pops = pops_.size();
    for (std::int64_t row = 0; row < plan.rows; ++row) {
      const auto& moves = plan.moves[static_cast<std::size_t>(row)];
      auto it = std::lower_bound(
          moves.begin(), moves.end(),
          std::pair<std::int64_t, std::int32_t>{g0, std::numeric_limits<std::int32_t>::min()});
      for (; it != moves.end() && it->first < g1; ++it)
        ranks[static_cast<std::size_t>(it->first - g0)] = it->second;
      std::int8_t* out = gt.data() + row * SC * P;
      for (std::size_t k = 0; k < k_pops; ++k) {
        const Population& pop = pops_[k];
        const std::int64_t a = std::max(s0, pop.first_sample) * P,
                           b = std::min(s1, pop.first_sample + pop.samples) * P;
        if (a >= b) continue;
        const std::size_t cell = static_cast<std::size_t>(row) * k_pops + k;
        const std::int32_t start = plan.carrier_start[cell], n = plan.carriers[cell];
        const auto m = static_cast<std::int32_t>(pop.haps);
        const std::int32_t* r = ranks.data() + (a - g0);
        std::int8_t* o = out + (a - g0);
        for (std::int64_t i = 0; i < b - a; ++i) {
          std::int32_t d = r[i] - start;
          d += d < 0 ? m : 0;
          o[i] = static_cast<std::int8_t>(d < n);
        }
      }
      if (missing_threshold_ > 0) {
        const std::uint64_t key = hash_key({o_.seed, kMissing}),
                            base = static_cast<std::uint64_t>((plan.v0 + row) * o_.samples);
        for (std::int64_t s = s0; s < s1; ++s)
          if (mix64(key + (base + static_cast<std::uint64_t>(s) + 1) * kGamma) < missing_threshold_)
            std::fill_n(out + (s - s0) * P, P, std::int8_t{-1});
      }
    }
    writer_->write_genotypes(plan.index, sc, gt, scratch);
  }

  SimulateOptions o_;
  std::int64_t variants_ = 0, length_ = 0, haps_ = 0;
  std::vector<Population> pops_;
  std::vector<std::int32_t> rank_;                 ///< by haplotype: rank in its population
  std::vector<std::vector<std::int32_t>> hap_at_;  ///< per population: haplotype at each rank
  std::vector<std::uint8_t> marks_;
  std::vector<std::int32_t> chosen_, haps_moved_;
  /// (starts, counts) of the last kRecentSites sites, by site modulo kRecentSites
  std::vector<std::int32_t> recent_;
  std::uint64_t missing_threshold_ = 0;
  std::unique_ptr<GenotypeStoreWriter> writer_;
};

}  // namespace

std::pair<std::int64_t, std::int64_t> simulated_extent(const SimulateOptions& o) {
  if (!(o.theta > 0)) throw UsageError(fmt::format("--theta {} (expected > 0)", o.theta));
  const double density = o.theta * harmonic(std::max<std::int64_t>(2, o.samples * o.ploidy));
  std::int64_t variants = o.variants, length = o.length;
  if (variants <= 0 && length <= 0) throw UsageError("give --variants or --length");
  if (length <= 0)
    length = std::max(
        variants, static_cast<std::int64_t>(std::llround(static_cast<double>(variants) / density)));
  if (variants <= 0)
    variants = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::llround(static_cast<double>(length) * density)));
  if (variants > length)
    throw UsageError(
        fmt::format("{} variants do not fit in {} bp (one site per bp at most)", variants, length));
  if (length > std::numeric_limits<std::int32_t>::max() - 1)
    throw UsageError(fmt::format("--length {} exceeds variant_position's int32", length));
  return {variants, length};
}

std::vector<std::pair<std::string, std::string>> simulated_samples(const SimulateOptions& o) {
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(static_cast<std::size_t>(std::max<std::int64_t>(o.samples, 0)));
  const int k_pops = std::max(1, o.populations);
  for (int k = 0; k < k_pops; ++k) {
    const std::int64_t a = o.samples * k / k_pops, b = o.samples * (k + 1) / k_pops;
    for (std::int64_t i = a; i < b; ++i) {
      if (k_pops == 1)
        out.emplace_back(fmt::format("s{}", i), "all");
      else
        out.emplace_back(fmt::format("pop{}_s{}", k, i), fmt::format("pop{}", k));
    }
  }
  return out;
}

WriteReport simulate(const std::filesystem::path& store_dir, const SimulateOptions& options) {
  Simulator s(store_dir, options);
  return s.run();
}

}  // namespace vczstats::simulate
