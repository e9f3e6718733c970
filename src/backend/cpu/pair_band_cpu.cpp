// The variant-pair band on CPU threads (backend/pair_band.hpp): each unit's rows become bit
// planes in a host buffer that also holds the halo; the unit's pairs are counted by the popcount
// kernels (ld_kernels.hpp) on the run's threads, blocks of rows handed out in order, and their
// batch is queued for the statistic. The same pairs, values and batches as the GPU band. With
// a mask, a row's planes hold only the masked samples (or slots), compacted in their order (a
// population's planes as a query of that population alone would have them), so the popcounts
// run over the population's words, not the selection's.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>

#include "backend/cpu/ld_kernels.hpp"
#include "backend/pair_band_rows.hpp"

namespace vczstats::backend {
namespace {

using Clock = std::chrono::steady_clock;

/// Bits [from, from + length) of a plane that a mask keeps, going to [to, to + length).
struct BitRun {
  std::int64_t from = 0, to = 0, length = 0;
};

/// How a band's mask compacts its planes: the runs of the bits it keeps, their number.
struct Compaction {
  bool on = false;  ///< off without a mask, or with one that keeps every bit
  std::vector<BitRun> runs;
  std::int64_t width = -1;  ///< bits kept (-1: off, the planes are the selection's)
};

/// The compaction of @p spec's mask. @throws Error for a mask narrower than the planes.
Compaction compaction(const PairBandSpec& spec) {
  const std::int64_t bits = spec.request.haplotypes() ? spec.samples * spec.ploidy : spec.samples;
  const std::vector<std::uint64_t>& mask = spec.mask;
  Compaction c;
  if (mask.empty()) return c;
  if (static_cast<std::int64_t>(mask.size()) < stats::ld::plane_words(bits))
    throw Error("variant pairs: a mask narrower than the selection");
  std::int64_t kept = 0;
  for (std::int64_t b = 0; b < bits; ++b) {
    if (!((mask[static_cast<std::size_t>(b / 64)] >> (b % 64)) & 1)) continue;
    if (c.runs.empty() || c.runs.back().from + c.runs.back().length != b)
      c.runs.push_back({b, kept, 0});
    ++c.runs.back().length;
    ++kept;
  }
  if (kept == bits) return {};  // every bit: the planes as they are
  c.on = true;
  c.width = kept;
  return c;
}

/// OR the bits of @p runs of the plane @p src into the zeroed plane @p dst.
void copy_runs(const std::vector<BitRun>& runs, const std::uint64_t* src, std::uint64_t* dst) {
  for (const BitRun& r : runs)
    for (std::int64_t done = 0; done < r.length;) {
      const std::int64_t n = std::min<std::int64_t>(64, r.length - done);
      const std::int64_t s = r.from + done, d = r.to + done, so = s % 64, dof = d % 64;
      std::uint64_t x = src[s / 64] >> so;
      if (so + n > 64) x |= src[s / 64 + 1] << (64 - so);
      if (n < 64) x &= (std::uint64_t{1} << n) - 1;
      dst[d / 64] |= x << dof;
      if (dof + n > 64) dst[d / 64 + 1] |= x >> (64 - dof);
      done += n;
    }
}

class CpuPairBand final : public PairBand {
 public:
  explicit CpuPairBand(const PairBandSpec& spec)
      : spec_(spec),
        compact_(compaction(spec)),
        rows_(spec, compact_.width),
        kernels_(ldk::best_kernels()),
        threads_(spec.threads ? spec.threads : hardware_threads()),
        prune_thr_(stats::ld::prune_threshold(spec.request.min_r2)) {
    if (const auto* r = spec.reducer) {
      if (!rows_.haplotypes() || compact_.on)
        throw Error("variant pairs: a reducer on a genotype band or a masked band");
      if (r->count_masks().size() > 3) throw Error("variant pairs: more than three count masks");
      for (const auto& m : r->count_masks()) {
        if (static_cast<std::int64_t>(m.size()) < rows_.plane_words())
          throw Error("variant pairs: a count mask narrower than the planes");
        count_masks_.push_back(m.data());
      }
    }
  }

  void host_unit(std::int64_t u, const PackedGenotypeView& view) override {
    if (rows_.haplotypes()) return;  // fed by host_haplotypes
    const std::int64_t all = stats::ld::plane_words(view.samples);
    if (compact_.on) scratch_.resize(static_cast<std::size_t>(3 * all));
    add_unit(u, [&](std::int64_t r, std::uint64_t* out) {
      const std::uint64_t* codes = view.words + r * view.words_per_row;
      const std::int64_t w = rows_.plane_words();
      // Without a mask the planes are written in place, else into scratch_ and compacted.
      std::uint64_t* full = compact_.on ? scratch_.data() : out;
      const std::int64_t fw = compact_.on ? all : w;
      for (std::int64_t k = 0; k < fw; ++k)
        stats::ld::genotype_plane_word(codes, view.words_per_row, view.samples, k, full[k],
                                       full[fw + k], full[2 * fw + k]);
      if (!compact_.on) return;
      std::fill(out, out + 3 * w, std::uint64_t{0});
      for (std::int64_t p = 0; p < 3; ++p) copy_runs(compact_.runs, full + p * fw, out + p * w);
    });
  }

  void host_haplotypes(std::int64_t u, const PackedHaplotypeView& view) override {
    if (!rows_.haplotypes()) return;
    add_unit(u, [&](std::int64_t r, std::uint64_t* out) {
      const std::uint64_t* row = view.words + r * 2 * view.words_per_plane;
      if (!compact_.on) {
        std::memcpy(out, row, static_cast<std::size_t>(rows_.row_words()) * 8);
        return;
      }
      // The planes are non-REF then called, view.words_per_plane apart.
      const std::int64_t w = rows_.plane_words();
      std::fill(out, out + 2 * w, std::uint64_t{0});
      copy_runs(compact_.runs, row, out);
      copy_runs(compact_.runs, row + view.words_per_plane, out + w);
    });
  }

  void device_unit(std::int64_t, const PackedGenotypeView&, void*) override {
    throw Error("variant pairs: the CPU band was given device words");
  }
  void device_haplotypes(std::int64_t, const PackedHaplotypeView&, void*) override {
    throw Error("variant pairs: the CPU band was given device words");
  }

  std::vector<PairBatch> take() override { return std::exchange(ready_, {}); }

  std::vector<PairBatch> finish() override {
    std::vector<PairBatch> out = take();
    PairBatch last;
    const std::vector<std::int64_t> tail = rows_.tail();
    for (const std::int64_t o : tail) add_planes(last.planes, o);
    last.planes.words_per_row = rows_.row_words();
    out.push_back(std::move(last));
    return out;
  }

  double compute_seconds() const override { return static_cast<double>(compute_ns_) * 1e-9; }

 private:
  std::uint64_t* planes(std::int64_t o) {
    return planes_.data() + (o - planes_front_) * rows_.row_words();
  }

  void add_planes(PairPlanes& p, std::int64_t o) {
    p.words_per_row = rows_.row_words();
    p.variants.push_back(rows_.at(o).variant);
    const std::uint64_t* w = planes(o);
    p.words.insert(p.words.end(), w, w + rows_.row_words());
  }

  /// Add unit @p u's selected rows (@p fill(r, out) writes unit row r's planes), count its pairs
  /// and queue its batch.
  template <class Fill>
  void add_unit(std::int64_t u, Fill&& fill) {
    const std::int64_t begin = rows_.end();
    const std::vector<std::int64_t>& unit_rows = rows_.add_unit(u);
    const std::int64_t end = rows_.end(), rw = rows_.row_words();
    // Drop planes of evicted rows once they are half the buffer, then append the new rows.
    if (rows_.front() - planes_front_ > (end - planes_front_) / 2) {
      const std::int64_t keep = begin - rows_.front();
      std::memmove(planes_.data(), planes(rows_.front()), static_cast<std::size_t>(keep * rw) * 8);
      planes_.resize(static_cast<std::size_t>(keep * rw));
      if (spec_.reducer)
        reduced_.erase(reduced_.begin(), reduced_.begin() + static_cast<std::ptrdiff_t>(
                                                                rows_.front() - planes_front_));
      planes_front_ = rows_.front();
    }
    planes_.resize(static_cast<std::size_t>((end - planes_front_) * rw));
    if (spec_.reducer) reduced_.resize(static_cast<std::size_t>(end - planes_front_));
    const std::int64_t words = rows_.plane_words();
    for (std::int64_t o = begin; o < end; ++o) {
      std::uint64_t* p = planes(o);
      fill(unit_rows[static_cast<std::size_t>(o - begin)], p);
      BandRows::Row& row = rows_.at(o);
      if (rows_.haplotypes()) {
        for (std::int64_t w = 0; w < words; ++w) {
          row.alt += stats::ld::popcount64(p[w]);
          row.n += stats::ld::popcount64(p[words + w]);
        }
        if (const auto* r = spec_.reducer) {  // the row's totals within the count masks
          row.coord = r->coordinate(row.place.contig, row.place.pos);
          for (std::size_t k = 0; k < count_masks_.size(); ++k)
            for (std::int64_t w = 0; w < words; ++w)
              row.masked_alt[k] += stats::ld::popcount64(p[w] & count_masks_[k][w]);
          reduced_[static_cast<std::size_t>(o - planes_front_)] = {
              row.variant, row.place.pos, row.place.contig, row.coord,
              row.n,       row.alt,       row.masked_alt};
        }
      } else {
        const auto t = stats::ld::genotype_totals(p, words);
        row.n = t.n;
        row.het = t.het;
        row.alt = t.alt;
      }
    }

    PairBatch batch;
    batch.unit = u;
    for (std::int64_t o = begin; o < end; ++o) {
      batch.rows.push_back(rows_.batch_row(o));
      if (rows_.at(o).head) add_planes(batch.planes, o);
    }
    batch.planes.words_per_row = rw;
    if (spec_.reducer)
      batch.reduced = reduce_pairs(begin, end);
    else if (!spec_.rows_only)
      count_pairs(begin, end, batch.pairs);
    ready_.push_back(std::move(batch));
    rows_.evict();
  }

  /// The pairs of the rows [begin, end) with their partners, on the run's threads: blocks of
  /// rows handed out in order, each block's pairs kept apart and joined in order.
  void count_pairs(std::int64_t begin, std::int64_t end, std::vector<PairValue>& out) {
    constexpr std::int64_t kBlock = 16;
    std::atomic<std::int64_t> ns{0};
    pairs_in_blocks(
        threads_, (end - begin + kBlock - 1) / kBlock, out,
        [&](std::int64_t b, std::vector<PairValue>& part) {
          const auto t0 = Clock::now();
          const std::int64_t j0 = begin + b * kBlock, j1 = std::min(end, j0 + kBlock);
          for (std::int64_t j = j0; j < j1; ++j) pairs_of(j, part);
          ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
        });
    compute_ns_ += ns.load();
  }

  /// The reducer's sum of the pairs of the rows [begin, end) with their partners, on the run's
  /// threads: a sum per part, added together (exact sums: the same for any split). Row j has
  /// j - first partners, so the rows are cut into parts of about equal pairs (blocks of rows in
  /// order left the last, heaviest ones to few threads).
  std::shared_ptr<const stats::pairs::PairSum> reduce_pairs(std::int64_t begin, std::int64_t end) {
    std::shared_ptr<stats::pairs::PairSum> total = spec_.reducer->start();
    if (end <= begin) return total;
    std::vector<std::int64_t> cuts{begin};  // part p: rows [cuts[p], cuts[p + 1])
    {
      constexpr std::int64_t kMinPairs = 1 << 12, kPartsPerThread = 4;
      std::int64_t pairs = 0;
      for (std::int64_t j = begin; j < end; ++j) pairs += j - rows_.at(j).first + 1;
      const std::int64_t parts = std::clamp<std::int64_t>(
          pairs / kMinPairs, 1, kPartsPerThread * static_cast<std::int64_t>(threads_));
      std::int64_t seen = 0;
      for (std::int64_t j = begin; j < end; ++j) {
        seen += j - rows_.at(j).first + 1;
        if (seen * parts >= pairs * static_cast<std::int64_t>(cuts.size()) && j + 1 < end)
          cuts.push_back(j + 1);
      }
      cuts.push_back(end);
    }
    const auto parts = static_cast<std::int64_t>(cuts.size()) - 1;
    std::vector<std::unique_ptr<stats::pairs::PairSum>> sums(static_cast<std::size_t>(parts));
    std::atomic<std::int64_t> ns{0};
    ThreadPool::shared().run_claimed(threads_, parts, [&](std::int64_t b) {
      const auto t0 = Clock::now();
      auto sum = spec_.reducer->start();
      std::vector<std::int64_t> counts;
      for (std::int64_t j = cuts[static_cast<std::size_t>(b)];
           j < cuts[static_cast<std::size_t>(b) + 1]; ++j)
        reduce_of(j, *sum, counts);
      sums[static_cast<std::size_t>(b)] = std::move(sum);
      ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
    });
    for (const auto& p : sums) total->merge(*p);
    compute_ns_ += ns.load();
    return total;
  }

  /// Every wanted pair (i, j), i from j's first partner to j itself, into @p sum: the counts of
  /// all of them in one kernel call into @p counts, then one add_row (the pairs of a focal
  /// request one at a time).
  void reduce_of(std::int64_t j, stats::pairs::PairSum& sum, std::vector<std::int64_t>& counts) {
    const std::int64_t first = rows_.at(j).first, words = rows_.plane_words();
    const int nm = static_cast<int>(count_masks_.size());
    auto row = [this](std::int64_t o) -> const stats::pairs::ReducedRow& {
      return reduced_[static_cast<std::size_t>(o - planes_front_)];
    };
    if (!spec_.request.focal_only) {  // every pair but (j, j)
      const std::int64_t n = j - first;
      if (n <= 0) return;
      counts.resize(static_cast<std::size_t>(4 * n));
      kernels_.masked_both_non_ref_rows(planes(first), n, rows_.row_words(), planes(j), words,
                                        count_masks_.data(), nm, counts.data());
      sum.add_row(&row(first), n, row(j), counts.data());
      return;
    }
    for (std::int64_t i = first; i <= j; ++i) {
      if (!rows_.wanted(i, j)) continue;
      std::int64_t x[4] = {0, 0, 0, 0};
      kernels_.masked_both_non_ref(planes(i), planes(j), words, count_masks_.data(), nm, x);
      sum.add(row(i), row(j), x[0], {x[1], x[2], x[3]});
    }
  }

  /// Every wanted pair (i, j), i from j's first partner to j itself.
  void pairs_of(std::int64_t j, std::vector<PairValue>& out) {
    const BandRows::Row& rj = rows_.at(j);
    const std::uint64_t* pj = planes(j);
    const std::int64_t words = rows_.plane_words();
    const auto& r = spec_.request;
    for (std::int64_t i = rj.first; i <= j; ++i) {
      if (!rows_.wanted(i, j)) continue;
      const BandRows::Row& ri = rows_.at(i);
      PairValue v;
      if (!stats::ld::evaluate_pair(r, prune_thr_, rows_.width(), {ri.n, ri.het, ri.alt},
                                    {rj.n, rj.het, rj.alt}, planes(i), pj, words, kernels_, v))
        continue;
      v.a = ri.variant;
      v.b = rj.variant;
      out.push_back(v);
    }
  }

  PairBandSpec spec_;
  Compaction compact_;  // the mask's bits
  BandRows rows_;
  const ldk::Kernels& kernels_;
  unsigned threads_;
  double prune_thr_;
  std::vector<std::uint64_t> planes_;  // rows [planes_front_, rows_.end())
  std::int64_t planes_front_ = 0;
  std::vector<PairBatch> ready_;
  std::int64_t compute_ns_ = 0;
  std::vector<std::uint64_t> scratch_;  // a masked genotype row's planes before compaction
  std::vector<const std::uint64_t*> count_masks_;  // the reducer's
  std::vector<stats::pairs::ReducedRow> reduced_;  // (a reducer) rows [planes_front_, end)
};

}  // namespace

std::unique_ptr<PairBand> make_pair_band_cpu(const PairBandSpec& spec) {
  return std::make_unique<CpuPairBand>(spec);
}

}  // namespace vczstats::backend
