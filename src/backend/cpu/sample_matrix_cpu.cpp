// The matrix family's heavy pass on CPU threads (backend/sample_matrix_pass.hpp).
//
//   consumer (the pass's calling thread)        crew (worker tasks of the shared pool)
//   each unit's kept rows are copied into  ──▶  batch b: bit planes (sample-major), the product's
//   batch b (variant-major packed words)        values (sample-major doubles), then every tile
//   while the crew works on batch 1 - b         (I, J >= I) of the stripe: popcount pair counts
//                                               and a BLAS product per tile
//
// A sparse product (few nonzero values: distance's missing-call weights, where only missing
// calls have one) skips BLAS: each row's nonzero (sample, value) list, and each tile adds
// x_i x_j over the pairs of every row's list in order (also lock-free and thread-independent).
//
// Tiles are disjoint, so the sums need no locks and do not depend on the number of threads
// (the product's doubles neither: each tile adds its batches in order).

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <memory>

#include "backend/cpu/pair_kernels.hpp"
#include "backend/cpu/worker_crew.hpp"
#include "backend/sample_matrix_pass.hpp"
#include "stats/linalg.hpp"
#include "stats/matrix_math.hpp"
#include "vczstats/error.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::backend {
namespace {

constexpr std::int64_t kTile = 256;                  // samples per tile side
constexpr std::int64_t kMaxBatch = 4096;             // variants per batch
constexpr std::int64_t kProductBytes = 256ll << 20;  // the product's values of one batch

class CpuSampleMatrix final : public SampleMatrixAccumulator {
 public:
  explicit CpuSampleMatrix(const SampleMatrixSpec& spec)
      : spec_(spec),
        n_(spec.samples),
        words_(packed_words(spec.samples)),
        sums_(SampleMatrixSums::zeros(spec.request, spec.samples)) {
    const bool product = spec.request.product != PairProduct::None;
    batch_ = kMaxBatch;
    if (product)  // the product's values are n x batch doubles
      batch_ = std::clamp<std::int64_t>(
          kProductBytes / (8 * std::max<std::int64_t>(n_, 1)) / 256 * 256, 256, kMaxBatch);
    for (auto& s : slots_) {
      s.rows.assign(static_cast<std::size_t>(batch_ * words_), 0);
      s.values.resize(static_cast<std::size_t>(batch_));
      if (product) s.product_rows.reserve(static_cast<std::size_t>(batch_));
    }
    for (int k = 0; k < kPairCounts; ++k)
      if (!sums_.counts[static_cast<std::size_t>(k)].empty()) {
        targets_.counts[k] = sums_.counts[static_cast<std::size_t>(k)].data();
      }
    targets_.row_offset = sums_.row_begin;
    targets_.ld = sums_.cols();
    // Tiles of the stripe: rows [row_begin, row_end), columns [0, row_end), lower triangle.
    for (std::int64_t i0 = sums_.row_begin; i0 < sums_.row_end; i0 += kTile)
      for (std::int64_t j0 = 0; j0 < std::min(i0 + kTile, sums_.row_end); j0 += kTile)
        tiles_.push_back(
            {i0, std::min(i0 + kTile, sums_.row_end), j0, std::min(j0 + kTile, sums_.row_end)});
  }

  ~CpuSampleMatrix() override = default;

  void host_unit(std::int64_t unit, const PackedGenotypeView& view) override {
    const vcz::WorkUnit& u = spec_.plan->units[static_cast<std::size_t>(unit)];
    for (std::int64_t r = 0; r < view.variants; ++r) {
      if (!u.mask.empty() && !u.mask[static_cast<std::size_t>(r)]) continue;
      const std::uint64_t* row = view.words + r * view.words_per_row;
      const auto counts = stats::matrix::row_counts(row, words_, n_);
      const auto values =
          stats::matrix::variant_values(counts, n_, spec_.request.maf, spec_.request.product);
      if (!values.keep) continue;
      ++sums_.variants;
      sums_.weight_total += values.weight;
      Slot& s = slots_[current_];
      std::memcpy(s.rows.data() + s.fill * words_, row, static_cast<std::size_t>(words_) * 8);
      if (values.product) {
        const std::int64_t hom_ref = n_ - counts.het - counts.hom_alt - counts.missing;
        const std::int64_t nonzero = (values.value[kPackedHomRef] != 0 ? hom_ref : 0) +
                                     (values.value[kPackedHet] != 0 ? counts.het : 0) +
                                     (values.value[kPackedHomAlt] != 0 ? counts.hom_alt : 0) +
                                     (values.value[kPackedMissing] != 0 ? counts.missing : 0);
        s.nonzero_pairs += static_cast<double>(nonzero) * static_cast<double>(nonzero);
        s.product_rows.push_back(s.fill);
        std::copy(values.value, values.value + 4,
                  s.values[static_cast<std::size_t>(s.fill)].begin());
      }
      if (++s.fill == batch_) dispatch();
    }
  }

  void device_unit(std::int64_t, const PackedGenotypeView&, void*) override {
    throw Error("sample matrix: the CPU accumulator was handed device memory");
  }

  SampleMatrixSums finish() override {
    if (slots_[current_].fill > 0) dispatch();
    if (crew_) crew_->wait();
    // Diagonal tiles' products also filled the cells above the diagonal: clear them.
    if (!sums_.product.empty())
      for (std::int64_t i = sums_.row_begin; i < sums_.row_end; ++i)
        std::fill(sums_.product.begin() + (i - sums_.row_begin) * sums_.cols() + i + 1,
                  sums_.product.begin() + (i - sums_.row_begin + 1) * sums_.cols(), 0.0);
    return std::move(sums_);
  }

 private:
  struct Slot {
    std::vector<std::uint64_t> rows;            // fill x words, variant-major
    std::vector<std::array<double, 4>> values;  // per row: value of each code
    std::vector<std::int64_t> product_rows;     // rows with a nonzero value
    std::vector<std::uint64_t> planes;          // samples x stride
    std::vector<double> x;                      // samples x product rows
    std::int64_t fill = 0;
    double nonzero_pairs = 0;  // sum over product rows of (nonzero values)^2
    // Sparse product: per product row, its nonzero samples (ascending) and their values.
    std::vector<std::vector<std::int32_t>> nz_sample;
    std::vector<std::vector<double>> nz_value;
  };
  struct Tile {
    std::int64_t i0, i1, j0, j1;
  };

  /// Hand the current slot to the crew and switch to the other one (free once the crew's job
  /// on it, two batches ago, is done: submit() waits for it).
  void dispatch() {
    Slot& s = slots_[current_];
    if (!crew_) {
      const unsigned threads = spec_.threads ? spec_.threads : hardware_threads();
      if (spec_.request.product != PairProduct::None) stats::linalg::set_threads(1);
      crew_ = std::make_unique<WorkerCrew>(threads);
    }
    pairs::PlaneBatch pb;
    pb.rows = s.rows.data();
    pb.fill = s.fill;
    pb.words_per_row = words_;
    pb.samples = n_;
    pb.variants = (s.fill + 255) / 256 * 256;
    s.planes.resize(static_cast<std::size_t>(n_ * pb.stride()));
    pb.planes = s.planes.data();
    const std::int64_t kp = static_cast<std::int64_t>(s.product_rows.size());
    // Sparse when the pairs of nonzero values are few against the dense product's n^2 kp
    // multiply-adds (a scattered add costs about as much as 32 of BLAS's).
    const bool sparse =
        kp > 0 && s.nonzero_pairs * 32 <
                      static_cast<double>(n_) * static_cast<double>(n_) * static_cast<double>(kp);
    if (kp > 0 && !sparse) s.x.resize(static_cast<std::size_t>(n_ * kp));
    if (sparse && static_cast<std::int64_t>(s.nz_sample.size()) < kp) {
      s.nz_sample.resize(static_cast<std::size_t>(kp));
      s.nz_value.resize(static_cast<std::size_t>(kp));
    }

    std::vector<WorkerCrew::Phase> phases;
    const std::uint32_t mask = spec_.request.counts;
    constexpr std::int64_t kWordsPerItem = 8;  // 256 samples: one cache line of each row
    // Only the stripe's columns [0, row_end) take part.
    const std::int64_t used_words = packed_words(sums_.cols());
    const std::int64_t items = (used_words + kWordsPerItem - 1) / kWordsPerItem;
    if (mask)
      phases.push_back({items, [pb, used_words](std::int64_t item, unsigned) {
                          pairs::make_planes(pb, item * kWordsPerItem,
                                             std::min(used_words, (item + 1) * kWordsPerItem));
                        }});
    if (kp > 0 && !sparse)
      phases.push_back({items, [&s, kp, used_words, this](std::int64_t item, unsigned) {
                          expand(s, kp, item * kWordsPerItem,
                                 std::min(used_words, (item + 1) * kWordsPerItem));
                        }});
    constexpr std::int64_t kRowsPerItem = 16;
    if (sparse) {
      phases.push_back({(kp + kRowsPerItem - 1) / kRowsPerItem,
                        [&s, kp, used_words, this](std::int64_t item, unsigned) {
                          for (std::int64_t p = item * kRowsPerItem;
                               p < std::min(kp, (item + 1) * kRowsPerItem); ++p)
                            nonzeros(s, p, used_words);
                        }});
      // The diagonal, 256 samples an item, every row in order.
      phases.push_back(
          {(sums_.cols() + kTile - 1) / kTile, [&s, kp, this](std::int64_t item, unsigned) {
             sparse_diagonal(s, kp, item * kTile, std::min(sums_.cols(), (item + 1) * kTile));
           }});
    }
    phases.push_back(
        {static_cast<std::int64_t>(tiles_.size()),
         [pb, mask, kp, sparse, &s, this](std::int64_t t, unsigned) {
           const Tile& tile = tiles_[static_cast<std::size_t>(t)];
           if (mask) pairs::count_pairs(pb, mask, tile.i0, tile.i1, tile.j0, tile.j1, targets_);
           if (sparse) {
             sparse_tile(s, kp, tile);
           } else if (kp > 0) {
             const std::int64_t ld = sums_.cols();
             stats::linalg::add_abt(
                 tile.i1 - tile.i0, tile.j1 - tile.j0, kp, s.x.data() + tile.i0 * kp, kp,
                 s.x.data() + tile.j0 * kp, kp,
                 sums_.product.data() + (tile.i0 - sums_.row_begin) * ld + tile.j0, ld);
           }
         }});
    crew_->submit(std::move(phases));
    current_ = 1 - current_;
    // The other slot's job finished before submit() returned: reuse it.
    Slot& next = slots_[current_];
    next.fill = 0;
    next.nonzero_pairs = 0;
    next.product_rows.clear();
  }

  /// Product row @p p's nonzero values over the stripe's columns (packed words [0, words)).
  void nonzeros(Slot& s, std::int64_t p, std::int64_t words) {
    const std::int64_t r = s.product_rows[static_cast<std::size_t>(p)];
    const std::uint64_t* row = s.rows.data() + r * words_;
    const auto& value = s.values[static_cast<std::size_t>(r)];
    auto& samples = s.nz_sample[static_cast<std::size_t>(p)];
    auto& values = s.nz_value[static_cast<std::size_t>(p)];
    samples.clear();
    values.clear();
    const std::uint64_t even = stats::matrix::kEvenBits;
    for (std::int64_t w = 0; w < words; ++w) {
      const std::uint64_t valid = stats::matrix::valid_mask(w, sums_.cols());
      const std::uint64_t lo = row[w] & valid, hi = (row[w] >> 1) & valid;
      std::uint64_t bits = 0;  // bit 2k: sample k's value is nonzero
      if (value[kPackedHomRef] != 0) bits |= ~lo & ~hi & valid;
      if (value[kPackedHet] != 0) bits |= lo & ~hi;
      if (value[kPackedHomAlt] != 0) bits |= hi & ~lo;
      if (value[kPackedMissing] != 0) bits |= lo & hi;
      bits &= even;
      while (bits) {
        const int b = __builtin_ctzll(bits);
        bits &= bits - 1;
        samples.push_back(static_cast<std::int32_t>(32 * w + b / 2));
        values.push_back(value[(row[w] >> b) & 3]);
      }
    }
  }

  /// The sparse product's squares for samples [i0, i1) added to the diagonal, rows in order.
  void sparse_diagonal(Slot& s, std::int64_t kp, std::int64_t i0, std::int64_t i1) {
    for (std::int64_t p = 0; p < kp; ++p) {
      const auto& samples = s.nz_sample[static_cast<std::size_t>(p)];
      const auto& values = s.nz_value[static_cast<std::size_t>(p)];
      const auto a = std::lower_bound(samples.begin(), samples.end(), i0) - samples.begin();
      for (auto k = a; k < static_cast<std::ptrdiff_t>(samples.size()) && samples[k] < i1; ++k)
        sums_.diagonal[static_cast<std::size_t>(samples[k])] += values[k] * values[k];
    }
  }

  /// The sparse product of one tile (cells j <= i), rows in order.
  void sparse_tile(Slot& s, std::int64_t kp, const Tile& t) {
    const std::int64_t ld = sums_.cols();
    for (std::int64_t p = 0; p < kp; ++p) {
      const auto& samples = s.nz_sample[static_cast<std::size_t>(p)];
      if (samples.empty()) continue;
      const auto& values = s.nz_value[static_cast<std::size_t>(p)];
      const auto end = static_cast<std::ptrdiff_t>(samples.size());
      const auto a0 = std::lower_bound(samples.begin(), samples.end(), t.i0) - samples.begin();
      if (a0 == end || samples[a0] >= t.i1) continue;
      const auto b0 = std::lower_bound(samples.begin(), samples.end(), t.j0) - samples.begin();
      for (auto a = a0; a < end && samples[a] < t.i1; ++a) {
        const std::int64_t i = samples[a];
        double* out = sums_.product.data() + (i - sums_.row_begin) * ld;
        const double xi = values[a];
        for (auto b = b0; b < end && samples[b] < t.j1 && samples[b] <= i; ++b)
          out[samples[b]] += xi * values[b];
      }
    }
  }

  /// The product's values of the stripe's columns in packed words [w0, w1): x[i][p] = value of
  /// row product_rows[p] for sample i's code; and their squares added to the diagonal.
  void expand(Slot& s, std::int64_t kp, std::int64_t w0, std::int64_t w1) {
    for (std::int64_t p = 0; p < kp; ++p) {
      const std::int64_t r = s.product_rows[static_cast<std::size_t>(p)];
      const std::uint64_t* row = s.rows.data() + r * words_;
      const auto& value = s.values[static_cast<std::size_t>(r)];
      for (std::int64_t w = w0; w < w1; ++w) {
        const std::uint64_t word = row[w];
        const std::int64_t first = 32 * w, n = std::min<std::int64_t>(32, sums_.cols() - first);
        for (std::int64_t k = 0; k < n; ++k)
          s.x[static_cast<std::size_t>((first + k) * kp + p)] = value[(word >> (2 * k)) & 3];
      }
    }
    // Sample by sample, rows in order: the same sums whatever the threads.
    const std::int64_t end = std::min(sums_.cols(), 32 * w1);
    for (std::int64_t i = 32 * w0; i < end; ++i) {
      double d = 0;
      for (std::int64_t p = 0; p < kp; ++p) {
        const double x = s.x[static_cast<std::size_t>(i * kp + p)];
        d += x * x;
      }
      sums_.diagonal[static_cast<std::size_t>(i)] += d;
    }
  }

  SampleMatrixSpec spec_;
  std::int64_t n_, words_;
  SampleMatrixSums sums_;
  std::int64_t batch_ = kMaxBatch;
  std::array<Slot, 2> slots_;
  int current_ = 0;
  std::vector<Tile> tiles_;
  pairs::CountTargets targets_;
  std::unique_ptr<WorkerCrew> crew_;
};

}  // namespace

std::unique_ptr<SampleMatrixAccumulator> make_sample_matrix_cpu(const SampleMatrixSpec& spec) {
  return std::make_unique<CpuSampleMatrix>(spec);
}

}  // namespace vczstats::backend
