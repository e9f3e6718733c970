// The matrix family's heavy pass on CPU threads (backend/sample_matrix_pass.hpp).
//
//   consumer (the pass's calling thread)        crew (worker tasks of the shared pool)
//   each unit's kept rows are copied into  ──▶  batch b: bit planes (sample-major), the product's
//   batch b (variant-major packed words)        values (sample-major doubles), then every tile
//   while the crew works on batch 1 - b         (I, J >= I) of the stripe: popcount pair counts
//                                               and a BLAS product per tile
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
    if (kp > 0) s.x.resize(static_cast<std::size_t>(n_ * kp));

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
    if (kp > 0)
      phases.push_back({items, [&s, kp, used_words, this](std::int64_t item, unsigned) {
                          expand(s, kp, item * kWordsPerItem,
                                 std::min(used_words, (item + 1) * kWordsPerItem));
                        }});
    phases.push_back(
        {static_cast<std::int64_t>(tiles_.size()),
         [pb, mask, kp, &s, this](std::int64_t t, unsigned) {
           const Tile& tile = tiles_[static_cast<std::size_t>(t)];
           if (mask) pairs::count_pairs(pb, mask, tile.i0, tile.i1, tile.j0, tile.j1, targets_);
           if (kp > 0) {
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
    next.product_rows.clear();
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
