// Per-sample statistics: a two-phase pass per work unit. Phase 1 counts, per site and
// population, the alleles of complete diploid calls (all sample blocks of the unit, merged by
// the consumer), which gives each site's expected homozygosity sum_a p_a^2; phase 2 reads the
// unit's blocks again and adds each sample's observed and expected homozygosity and missing
// calls. The items of both phases go through one OrderedPrefetcher in the order
// (unit, phase, block): a phase-2 item waits on a board for its unit's weights, which the
// consumer posts once it has merged the unit's phase-1 items. Items are claimed in index order
// and phase-1 items never wait, so the wait always ends.

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>

#include "stats/counts_math.hpp"
#include "stats/element_type.hpp"
#include "stream/genotype_reader.hpp"
#include "stream/prefetcher.hpp"
#include "vczstats/error.hpp"
#include "vczstats/sample_stats.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::stats {
namespace {

/// Weights of a unit: per site and population, sum_a p_a^2 or a negative value when the site
/// is monomorphic (or empty) in that population.
using Weights = std::vector<double>;

class WeightsBoard {
 public:
  void post(std::int64_t unit, std::shared_ptr<const Weights> w) {
    {
      std::lock_guard lock(mutex_);
      board_[unit] = std::move(w);
    }
    cv_.notify_all();
  }
  std::shared_ptr<const Weights> wait(std::int64_t unit) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return stopped_ || board_.contains(unit); });
    if (stopped_) throw Error("sample pass stopped");
    return board_[unit];
  }
  void erase(std::int64_t unit) {
    std::lock_guard lock(mutex_);
    board_.erase(unit);
  }
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::int64_t, std::shared_ptr<const Weights>> board_;
  bool stopped_ = false;
};

/// Scan a call with the shared per-call rules, keeping its first two called alleles in @p a and
/// their number in @p n; returns the genotype class (counts::genotype_class).
template <class T>
int scan_two(const T* g, int ploidy, T (&a)[2], int& n) {
  n = 0;
  return counts::scan_call(g, ploidy, [&](T x) {
    if (n < 2) a[n] = x;
    ++n;
  });
}

/// Phase 1: alleles of complete diploid calls, per site × population × (alleles + 1: the
/// count of complete diploid calls last).
template <class T>
void count_complete(const GenotypeChunkView& b, const std::vector<std::int32_t>& pop_of,
                    int alleles, int pops, std::vector<std::int32_t>& out) {
  const int ploidy = static_cast<int>(b.ploidy), w = alleles + 1;
  out.assign(static_cast<std::size_t>(b.variants * pops * w), 0);
  for (std::int64_t v = 0; v < b.variants; ++v) {
    const T* row = b.row<T>(v);
    std::int32_t* site = out.data() + v * pops * w;
    for (std::int64_t i = 0; i < b.samples; ++i) {
      T a[2] = {};
      int n;
      const int cls = scan_two(row + i * ploidy, ploidy, a, n);
      if (cls < 0 || cls == kMissing || n != 2) continue;  // not a complete diploid call
      std::int32_t* c = site + pop_of[static_cast<std::size_t>(b.sample_offset + i)] * w;
      for (const T x : a)
        if (static_cast<std::int64_t>(x) < alleles) ++c[x];
      ++c[alleles];
    }
  }
}

/// Phase 2: per-sample sums of one block.
template <class T>
void sample_sums(const GenotypeChunkView& b, const std::vector<std::int32_t>& pop_of, int pops,
                 const Weights& weights, std::int64_t row0, const std::vector<std::uint8_t>& mask,
                 std::vector<SampleSums>& out) {
  const int ploidy = static_cast<int>(b.ploidy);
  out.assign(static_cast<std::size_t>(b.samples), SampleSums{});
  for (std::int64_t v = 0; v < b.variants; ++v) {
    if (!mask.empty() && !mask[static_cast<std::size_t>(row0 + v)]) continue;
    const T* row = b.row<T>(v);
    const double* wv = weights.data() + (row0 + v) * pops;
    for (std::int64_t i = 0; i < b.samples; ++i) {
      T a[2] = {};
      int n;
      const int cls = scan_two(row + i * ploidy, ploidy, a, n);
      SampleSums& s = out[static_cast<std::size_t>(i)];
      if (cls < 0) continue;  // no slot
      ++s.obs_ct;
      if (cls == kMissing) {
        ++s.missing_ct;
        continue;
      }
      const double w = wv[pop_of[static_cast<std::size_t>(b.sample_offset + i)]];
      if (n != 2 || w < 0) continue;
      ++s.het_sites;
      s.o_hom += a[0] == a[1] ? 1 : 0;
      s.e_hom += w;
    }
  }
}

}  // namespace

std::vector<SampleSums> run_sample_stats(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                                         const vcz::SampleSelection& samples,
                                         const vcz::Populations& pops, int alleles,
                                         const RunOptions& run, RunStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<SampleSums> result(static_cast<std::size_t>(samples.size()));
  if (stats) stats->device = "cpu";
  if (!store.has_genotypes() || plan.units.empty() || samples.size() == 0) return result;
  if (run.device == Device::Gpu)
    throw UsageError("--device gpu: per-sample statistics run on the CPU only");
  if (alleles < 1) alleles = 1;
  const int npops = pops.count();
  stream::GenotypeReader reader(store, samples);
  reader.prefetch(plan.units);  // remote stores: many requests in flight ahead of the readers
  const unsigned threads = run.threads ? run.threads : hardware_threads();
  const unsigned depth = run.prefetch ? run.prefetch : 2 * threads;
  const auto nunits = static_cast<std::int64_t>(plan.units.size());
  const auto nblocks = static_cast<std::int64_t>(reader.num_blocks());
  const std::int64_t per_unit = 2 * nblocks;

  struct ItemResult {
    std::vector<std::int32_t> counts;  // phase 1
    std::vector<SampleSums> sums;      // phase 2
    std::int64_t sample_offset = 0;
  };
  std::vector<stream::BlockBuffers> buffers(threads);
  std::vector<stream::ReadCounters> counters(threads);
  WeightsBoard board;
  stream::OrderedPrefetcher<ItemResult> prefetcher(
      nunits * per_unit, threads, depth, [&](std::int64_t item, unsigned p) {
        const std::int64_t u = item / per_unit, phase = (item % per_unit) / nblocks,
                           b = item % nblocks;
        const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(u)];
        std::shared_ptr<const Weights> weights;
        if (phase == 1) weights = board.wait(u);  // before decoding: keeps memory bounded
        const GenotypeChunkView view =
            reader.read(unit, static_cast<std::size_t>(b), buffers[p], &counters[p]);
        ItemResult r;
        r.sample_offset = view.sample_offset;
        const bool known = with_element_type(view.elem_bytes, [&](auto t) {
          using T = decltype(t);
          if (phase == 0)
            count_complete<T>(view, pops.of, alleles, npops, r.counts);
          else
            sample_sums<T>(view, pops.of, npops, *weights, 0, unit.mask, r.sums);
        });
        if (!known) throw Error("sample pass: unsupported genotype width");
        return r;
      });
  struct Stop {
    WeightsBoard& board;
    ~Stop() { board.stop(); }
  } stop{board};

  std::vector<std::int32_t> merged;
  std::int64_t done_variants = 0;
  const int w = alleles + 1;
  for (std::int64_t u = 0; u < nunits; ++u) {
    const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(u)];
    merged.assign(static_cast<std::size_t>(unit.size() * npops * w), 0);
    for (std::int64_t b = 0; b < nblocks; ++b) {
      auto r = prefetcher.next();
      for (std::size_t i = 0; i < merged.size(); ++i) merged[i] += r->counts[i];
    }
    auto weights = std::make_shared<Weights>(static_cast<std::size_t>(unit.size() * npops), -1.0);
    for (std::int64_t v = 0; v < unit.size(); ++v)
      for (int p = 0; p < npops; ++p) {
        const std::int32_t* c = merged.data() + (v * npops + p) * w;
        const double n = 2.0 * c[alleles];
        int present = 0;
        double sum = 0;
        for (int a = 0; a < alleles; ++a) {
          present += c[a] > 0 ? 1 : 0;
          sum += (c[a] / n) * (c[a] / n);
        }
        if (present >= 2) (*weights)[static_cast<std::size_t>(v * npops + p)] = sum;
      }
    board.post(u, std::move(weights));
    for (std::int64_t b = 0; b < nblocks; ++b) {
      auto r = prefetcher.next();
      for (std::size_t i = 0; i < r->sums.size(); ++i) {
        SampleSums& s = result[static_cast<std::size_t>(r->sample_offset) + i];
        const SampleSums& t = r->sums[i];
        s.obs_ct += t.obs_ct;
        s.missing_ct += t.missing_ct;
        s.het_sites += t.het_sites;
        s.o_hom += t.o_hom;
        s.e_hom += t.e_hom;
      }
    }
    board.erase(u);
    done_variants += unit.selected();
    if (run.progress) run.progress(u + 1, nunits, done_variants);
  }
  if (stats) {
    stats->device = "cpu, " + std::to_string(threads) + " threads (two passes per unit)";
    stats->wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const auto& c : counters) {
      stats->read_decode_seconds += static_cast<double>(c.read_decode_ns) * 1e-9;
      stats->gather_seconds += static_cast<double>(c.gather_ns) * 1e-9;
      stats->decoded_bytes += c.decoded_bytes;
    }
    stats->variants = done_variants;
    stats->units = nunits;
    stats->calls = 2 * plan.selected_variants() * samples.size() * reader.ploidy();
  }
  return result;
}

}  // namespace vczstats::stats
