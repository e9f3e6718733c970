// The matrix family's heavy pass on CPU threads (backend/sample_matrix_pass.hpp).
//
//   consumer (the pass's calling thread)        crew (worker tasks of the shared pool)
//   each unit's kept rows are copied into  ──▶  batch b: bit planes (sample-major), the product's
//   batch b (variant-major packed words)        values (sample-major doubles), then every tile
//   while the crew works on batch 1 - b         (I, J >= I) of the stripe: popcount pair counts
//                                               and a BLAS product per tile
//
// Sparse rows skip BLAS: a product row whose samples nearly all share one value c (the value of
// its most common code: hom REF for rare variants, 0 for distance's missing-call weights) is
// x_i = c + y_i with few nonzero y_i, so that sum x_i x_j = T + U_i + U_j + sum y_i y_j over the
// batch's sparse rows, with T = sum c^2 and U_i = sum c y_i. Each row lists its nonzero
// (sample, y); each tile adds T + U_i + U_j to its cells and y_i y_j over the pairs of every
// row's list in order (also lock-free and independent of the threads).
//
// The same for the pairs' non-missing count alone (the GRM's, distance --flat-missing's) when
// missing calls are few: NonMissing = rows - M_i - M_j + the pairs of each row's missing calls,
// M_i the missing calls of sample i in the batch (exact integers; no planes, no popcounts).
//
// And for the other pair counts (KING's, distance's): a row whose calls are nearly all hom REF
// stays out of the planes; with C(a, b) the count's indicator of codes a, b (0 hom REF), its
// share of a count is C(0,0) + A_i + B_j + D(c_i, c_j) over the pairs of its non-REF calls, with
// A_i = C(c_i,0) - C(0,0), B_j = C(0,c_j) - C(0,0), D = C(a,b) - C(a,0) - C(0,b) + C(0,0).
//
// Tiles are disjoint, so the sums need no locks and do not depend on the number of threads
// (the product's doubles neither: each tile adds its batches in order).
//
// Nor on the stripe: the tiles lie on one grid of the whole matrix (rows and columns at multiples
// of kSampleMatrixTile), a stripe's first and last tile rows clipped to it. The integer counts are
// exact whatever the tile; the product's BLAS call is always made on the whole grid tile, the
// same shape in every stripe (its rows outside the stripe too), into a scratch tile that is then
// added to the stripe's cells. A BLAS's result for a cell may depend on the call's shape (edge
// kernels, small-matrix paths); so every cell is the same double in any stripe, in one pass or
// several (--rows-per-pass), and on any MPI rank.

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

/// The pair-count indicator of PairCount @p k for codes @p a (sample i) and @p b (sample j), as
/// the planes count it (pair_kernels.hpp).
constexpr int pair_indicator(int k, int a, int b) {
  const bool het_a = a == kPackedHet, het_b = b == kPackedHet;
  const bool hom_a = a == kPackedHomRef || a == kPackedHomAlt;
  const bool hom_b = b == kPackedHomRef || b == kPackedHomAlt;
  switch (static_cast<PairCount>(k)) {
    case PairCount::HetHet:
      return het_a && het_b;
    case PairCount::Ibs0:
      return hom_a && hom_b && a != b;
    case PairCount::HomHet:
      return hom_a && het_b;
    case PairCount::HetHom:
      return het_a && hom_b;
    case PairCount::NonMissing:
      return a != kPackedMissing && b != kPackedMissing;
  }
  return 0;
}

constexpr std::int64_t kTile = kSampleMatrixTile;    // samples per tile side
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
    split_counts_ = (spec.request.counts & ~pair_bit(PairCount::NonMissing)) != 0;
    for (auto& s : slots_) {
      s.rows.assign(static_cast<std::size_t>(batch_ * words_), 0);
      if (split_counts_) s.dense.assign(static_cast<std::size_t>(batch_ * words_), 0);
      s.values.resize(static_cast<std::size_t>(batch_));
      if (product) s.product_rows.reserve(static_cast<std::size_t>(batch_));
    }
    for (int k = 0; k < kPairCounts; ++k)
      if (!sums_.counts[static_cast<std::size_t>(k)].empty()) {
        targets_.counts[k] = sums_.counts[static_cast<std::size_t>(k)].data();
      }
    targets_.row_offset = sums_.row_begin;
    targets_.ld = sums_.cols();
    // Tiles of the stripe: rows [row_begin, row_end), columns [0, row_end), lower triangle, the
    // whole matrix's grid tiles clipped to the stripe.
    grid_row_ = sums_.row_begin / kTile * kTile;
    x_end_ = std::min(n_, (sums_.row_end + kTile - 1) / kTile * kTile);
    for (std::int64_t g = grid_row_; g < sums_.row_end; g += kTile) {
      const std::int64_t i0 = std::max(g, sums_.row_begin), i1 = std::min(g + kTile, sums_.row_end);
      for (std::int64_t j0 = 0; j0 < i1; j0 += kTile)
        tiles_.push_back({i0, i1, j0, std::min(j0 + kTile, sums_.row_end), g,
                          std::min(g + kTile, n_), std::min(j0 + kTile, n_)});
    }
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
      s.missing_pairs += static_cast<double>(counts.missing) * static_cast<double>(counts.missing);
      std::memcpy(s.rows.data() + s.fill * words_, row, static_cast<std::size_t>(words_) * 8);
      if (split_counts_) {
        // Sparse when the pairs of non-REF calls are few against the n^2 / 2 pairs of
        // popcounts: the AVX-512 kernel counts about 1000 pairs' calls in the time of one
        // scattered add of every count (measured: 2000 samples, KING, 15% less CPU time).
        const std::int64_t other = counts.het + counts.hom_alt + counts.missing;
        if (other * other * 1024 < n_ * n_) {
          s.count_rows.push_back(s.fill);
        } else {
          std::memcpy(s.dense.data() + s.dense_fill * words_, row,
                      static_cast<std::size_t>(words_) * 8);
          ++s.dense_fill;
        }
      }
      if (values.product) {
        const std::int64_t count[4] = {n_ - counts.het - counts.hom_alt - counts.missing,
                                       counts.het, counts.hom_alt, counts.missing};
        const int base = static_cast<int>(std::max_element(count, count + 4) - count);
        std::int64_t others = 0;  // samples whose value differs from the base code's
        for (int c = 0; c < 4; ++c)
          if (values.value[c] != values.value[base]) others += count[c];
        // Sparse when the pairs of other values are few against the dense row's n^2
        // multiply-adds (a scattered add costs about as much as 32 of BLAS's).
        if (others * others * 32 < n_ * n_) {
          s.sparse_rows.push_back(s.fill);
          s.sparse_base.push_back(values.value[base]);
        } else {
          s.product_rows.push_back(s.fill);
        }
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
    return std::move(sums_);  // (the tiles add to cells j <= i alone: those above stay 0)
  }

 private:
  struct Slot {
    std::vector<std::uint64_t> rows;            // fill x words, variant-major
    std::vector<std::array<double, 4>> values;  // per row: value of each code
    std::vector<std::int64_t> product_rows;     // rows with a nonzero value
    std::vector<std::uint64_t> planes;          // samples x stride
    std::vector<double> x;                      // samples x product rows
    std::int64_t fill = 0;
    // Sparse rows: the row, its base value c, its nonzero samples y_i != 0 (ascending) and y_i,
    // and where the tiles' row blocks (grid_row_ + kTile a) and column blocks (kTile b) start
    // in that list.
    std::vector<std::int64_t> sparse_rows;
    std::vector<double> sparse_base;
    std::vector<std::vector<std::int32_t>> nz_sample;
    std::vector<std::vector<double>> nz_value;
    std::vector<std::vector<std::int32_t>> nz_row_block, nz_col_block;
    double t = 0;           // sum of c^2 over the sparse rows
    std::vector<double> u;  // per column: sum of c y_i over the sparse rows
    // Sparse non-missing counts: every row's missing samples and block starts, as above.
    double missing_pairs = 0;  // sum over rows of (missing calls)^2
    std::vector<std::vector<std::int32_t>> miss_sample, miss_row_block, miss_col_block;
    std::vector<std::int32_t> m;  // per column: missing calls of the batch
    // Sparse pair counts: the dense rows (copied for the planes), the sparse rows, their non-REF
    // calls (sample, code) and block starts, and per count A then B per column.
    std::vector<std::uint64_t> dense;
    std::int64_t dense_fill = 0;
    std::vector<std::int64_t> count_rows;
    std::vector<std::vector<std::int32_t>> cs_sample, cs_row_block, cs_col_block;
    std::vector<std::vector<std::uint8_t>> cs_code;
    std::vector<std::int32_t> ab;  // [k][0 A, 1 B][column]
  };
  struct Tile {
    std::int64_t i0, i1, j0, j1;  // the stripe's cells of the tile
    std::int64_t g0, g1, gj1;     // the grid tile: rows [g0, g1), columns [j0, gj1)
  };

  /// Hand the current slot to the crew and switch to the other one (free once the crew's job
  /// on it, two batches ago, is done: submit() waits for it).
  void dispatch() {
    Slot& s = slots_[current_];
    if (!crew_) {
      // A worker per item of the widest phase at most: the tiles, or the batch's rows in items
      // of 16 (a small store on many cores starts a few).
      const std::int64_t rows = std::min(batch_, spec_.plan->selected_variants());
      const unsigned threads = threads_for_work(
          spec_.threads,
          std::max<std::int64_t>(static_cast<std::int64_t>(tiles_.size()), (rows + 15) / 16));
      if (spec_.request.product != PairProduct::None) {
        stats::linalg::set_threads(1);
        scratch_.resize(threads);
      }
      crew_ = std::make_unique<WorkerCrew>(threads);
    }
    pairs::PlaneBatch pb;
    pb.rows = split_counts_ ? s.dense.data() : s.rows.data();
    pb.fill = split_counts_ ? s.dense_fill : s.fill;
    pb.words_per_row = words_;
    pb.samples = n_;
    pb.variants = (pb.fill + 255) / 256 * 256;
    const std::int64_t kc = static_cast<std::int64_t>(s.count_rows.size());
    if (kc > 0) {
      if (static_cast<std::int64_t>(s.cs_sample.size()) < kc) {
        for (auto* v : {&s.cs_sample, &s.cs_row_block, &s.cs_col_block})
          v->resize(static_cast<std::size_t>(kc));
        s.cs_code.resize(static_cast<std::size_t>(kc));
      }
      s.ab.assign(static_cast<std::size_t>(2 * kPairCounts * sums_.cols()), 0);
    }
    s.planes.resize(static_cast<std::size_t>(n_ * pb.stride()));
    pb.planes = s.planes.data();
    const std::int64_t kp = static_cast<std::int64_t>(s.product_rows.size());
    const std::int64_t ks = static_cast<std::int64_t>(s.sparse_rows.size());
    if (kp > 0) s.x.resize(static_cast<std::size_t>(n_ * kp));
    if (ks > 0) {
      if (static_cast<std::int64_t>(s.nz_sample.size()) < ks) {
        for (auto* v : {&s.nz_sample, &s.nz_row_block, &s.nz_col_block})
          v->resize(static_cast<std::size_t>(ks));
        s.nz_value.resize(static_cast<std::size_t>(ks));
      }
      s.t = 0;
      for (const double c : s.sparse_base) s.t += c * c;
      s.u.assign(static_cast<std::size_t>(sums_.cols()), 0.0);
    }

    std::vector<WorkerCrew::Phase> phases;
    std::uint32_t mask = spec_.request.counts;
    // Non-missing counts alone from the missing calls, when those are few against the n^2 / 2
    // pairs of popcounts over the batch (about 64 pairs a scattered add).
    const bool sparse_missing =
        mask == pair_bit(PairCount::NonMissing) &&
        s.missing_pairs * 64 <
            static_cast<double>(n_) * static_cast<double>(n_) * static_cast<double>(s.fill);
    if (split_counts_ && pb.fill == 0) mask = 0;  // every row sparse: no planes
    if (sparse_missing) {
      mask = 0;
      if (static_cast<std::int64_t>(s.miss_sample.size()) < s.fill)
        for (auto* v : {&s.miss_sample, &s.miss_row_block, &s.miss_col_block})
          v->resize(static_cast<std::size_t>(s.fill));
      s.m.assign(static_cast<std::size_t>(sums_.cols()), 0);
    }
    constexpr std::int64_t kWordsPerItem = 8;  // 256 samples: one cache line of each row
    // Only the stripe's columns [0, row_end) take part (the product's values: up to the end of
    // the stripe's last grid tile).
    const std::int64_t used_words = packed_words(sums_.cols());
    const std::int64_t items = (used_words + kWordsPerItem - 1) / kWordsPerItem;
    const std::int64_t x_words = packed_words(x_end_);
    const std::int64_t x_items = (x_words + kWordsPerItem - 1) / kWordsPerItem;
    if (mask)
      phases.push_back({items, [pb, used_words](std::int64_t item, unsigned) {
                          pairs::make_planes(pb, item * kWordsPerItem,
                                             std::min(used_words, (item + 1) * kWordsPerItem));
                        }});
    if (kp > 0)
      phases.push_back({x_items, [&s, kp, x_words, this](std::int64_t item, unsigned) {
                          expand(s, kp, item * kWordsPerItem,
                                 std::min(x_words, (item + 1) * kWordsPerItem));
                        }});
    constexpr std::int64_t kRowsPerItem = 16;
    if (ks > 0) {
      phases.push_back({(ks + kRowsPerItem - 1) / kRowsPerItem,
                        [&s, ks, used_words, this](std::int64_t item, unsigned) {
                          for (std::int64_t p = item * kRowsPerItem;
                               p < std::min(ks, (item + 1) * kRowsPerItem); ++p)
                            nonzeros(s, p, used_words);
                        }});
    }
    if (sparse_missing) {
      phases.push_back({(s.fill + kRowsPerItem - 1) / kRowsPerItem,
                        [&s, used_words, this](std::int64_t item, unsigned) {
                          for (std::int64_t r = item * kRowsPerItem;
                               r < std::min(s.fill, (item + 1) * kRowsPerItem); ++r)
                            missing_calls(s, r, used_words);
                        }});
      phases.push_back({(sums_.cols() + kTile - 1) / kTile,
                        [&s, this](std::int64_t item, unsigned) { missing_columns(s, item); }});
    }
    if (kc > 0) {
      phases.push_back({(kc + kRowsPerItem - 1) / kRowsPerItem,
                        [&s, kc, used_words, this](std::int64_t item, unsigned) {
                          for (std::int64_t q = item * kRowsPerItem;
                               q < std::min(kc, (item + 1) * kRowsPerItem); ++q)
                            non_ref_calls(s, q, used_words);
                        }});
      phases.push_back(
          {(sums_.cols() + kTile - 1) / kTile,
           [&s, kc, this](std::int64_t item, unsigned) { count_columns(s, kc, item); }});
    }
    if (ks > 0) {
      // U and the diagonal, a column block an item, every row in order.
      phases.push_back(
          {(sums_.cols() + kTile - 1) / kTile,
           [&s, ks, this](std::int64_t item, unsigned) { sparse_columns(s, ks, item); }});
    }
    phases.push_back(
        {static_cast<std::int64_t>(tiles_.size()),
         [pb, mask, kp, ks, kc, sparse_missing, &s, this](std::int64_t t, unsigned worker) {
           const Tile& tile = tiles_[static_cast<std::size_t>(t)];
           if (mask) pairs::count_pairs(pb, mask, tile.i0, tile.i1, tile.j0, tile.j1, targets_);
           if (sparse_missing) missing_tile(s, tile);
           if (kc > 0) count_tile(s, kc, tile);
           if (ks > 0) sparse_tile(s, ks, tile);
           if (kp > 0) product_tile(s, kp, tile, scratch_[worker]);
         }});
    crew_->submit(std::move(phases));
    current_ = 1 - current_;
    // The other slot's job finished before submit() returned: reuse it.
    Slot& next = slots_[current_];
    next.fill = 0;
    next.missing_pairs = 0;
    next.dense_fill = 0;
    next.count_rows.clear();
    next.product_rows.clear();
    next.sparse_rows.clear();
    next.sparse_base.clear();
  }

  /// The dense product rows' share of one tile: BLAS on the whole grid tile (its shape is the
  /// same in every stripe) into @p scratch, whose cells j <= i of the stripe are then added.
  void product_tile(Slot& s, std::int64_t kp, const Tile& t, std::vector<double>& scratch) {
    scratch.assign(static_cast<std::size_t>(kTile * kTile), 0.0);
    stats::linalg::add_abt(t.g1 - t.g0, t.gj1 - t.j0, kp, s.x.data() + t.g0 * kp, kp,
                           s.x.data() + t.j0 * kp, kp, scratch.data(), kTile);
    const std::int64_t ld = sums_.cols();
    for (std::int64_t i = t.i0; i < t.i1; ++i) {
      double* out = sums_.product.data() + (i - sums_.row_begin) * ld;
      const double* in = scratch.data() + (i - t.g0) * kTile - t.j0;
      for (std::int64_t j = t.j0; j < std::min(t.j1, i + 1); ++j) out[j] += in[j];
    }
  }

  /// Sparse row @p p's nonzero y over the stripe's columns (packed words [0, words)), and where
  /// each block of the tiles starts in its list.
  void nonzeros(Slot& s, std::int64_t p, std::int64_t words) {
    const std::int64_t r = s.sparse_rows[static_cast<std::size_t>(p)];
    const std::uint64_t* row = s.rows.data() + r * words_;
    const double c = s.sparse_base[static_cast<std::size_t>(p)];
    std::array<double, 4> y = s.values[static_cast<std::size_t>(r)];
    for (double& v : y) v -= c;
    auto& samples = s.nz_sample[static_cast<std::size_t>(p)];
    auto& values = s.nz_value[static_cast<std::size_t>(p)];
    samples.clear();
    values.clear();
    for (std::int64_t w = 0; w < words; ++w) {
      const std::uint64_t valid = stats::matrix::valid_mask(w, sums_.cols());
      const std::uint64_t lo = row[w] & valid, hi = (row[w] >> 1) & valid;
      std::uint64_t bits = 0;  // bit 2k: sample k's y is nonzero
      if (y[kPackedHomRef] != 0) bits |= ~lo & ~hi & valid;
      if (y[kPackedHet] != 0) bits |= lo & ~hi;
      if (y[kPackedHomAlt] != 0) bits |= hi & ~lo;
      if (y[kPackedMissing] != 0) bits |= lo & hi;
      while (bits) {
        const int b = __builtin_ctzll(bits);
        bits &= bits - 1;
        samples.push_back(static_cast<std::int32_t>(32 * w + b / 2));
        values.push_back(y[(row[w] >> b) & 3]);
      }
    }
    block_starts(samples, s.nz_row_block[static_cast<std::size_t>(p)],
                 s.nz_col_block[static_cast<std::size_t>(p)]);
  }

  /// Where the tiles' row blocks (grid rows grid_row_ + kTile a, the first from row_begin) and
  /// column blocks (kTile b) start in an ascending list of samples.
  void block_starts(const std::vector<std::int32_t>& samples, std::vector<std::int32_t>& rows,
                    std::vector<std::int32_t>& cols) const {
    auto starts = [&samples](std::vector<std::int32_t>& at, std::int64_t grid, std::int64_t first,
                             std::int64_t end) {
      at.clear();
      std::size_t k = 0;
      for (std::int64_t b = grid; b < end + kTile; b += kTile) {
        const std::int64_t from = std::max(b, first);
        while (k < samples.size() && samples[k] < from) ++k;
        at.push_back(static_cast<std::int32_t>(k));
      }
    };
    starts(rows, grid_row_, sums_.row_begin, sums_.row_end);
    starts(cols, 0, 0, sums_.cols());
  }

  /// Row @p r's missing samples over the stripe's columns (packed words [0, words)).
  void missing_calls(Slot& s, std::int64_t r, std::int64_t words) {
    const std::uint64_t* row = s.rows.data() + r * words_;
    auto& samples = s.miss_sample[static_cast<std::size_t>(r)];
    samples.clear();
    for (std::int64_t w = 0; w < words; ++w) {
      const std::uint64_t valid = stats::matrix::valid_mask(w, sums_.cols());
      std::uint64_t bits = row[w] & (row[w] >> 1) & valid;
      while (bits) {
        samples.push_back(static_cast<std::int32_t>(32 * w + __builtin_ctzll(bits) / 2));
        bits &= bits - 1;
      }
    }
    block_starts(samples, s.miss_row_block[static_cast<std::size_t>(r)],
                 s.miss_col_block[static_cast<std::size_t>(r)]);
  }

  /// Sparse count row @p q's non-REF calls over the stripe's columns (packed words [0, words)).
  void non_ref_calls(Slot& s, std::int64_t q, std::int64_t words) {
    const std::uint64_t* row = s.rows.data() + s.count_rows[static_cast<std::size_t>(q)] * words_;
    auto& samples = s.cs_sample[static_cast<std::size_t>(q)];
    auto& codes = s.cs_code[static_cast<std::size_t>(q)];
    samples.clear();
    codes.clear();
    for (std::int64_t w = 0; w < words; ++w) {
      const std::uint64_t valid = stats::matrix::valid_mask(w, sums_.cols());
      std::uint64_t bits = (row[w] | (row[w] >> 1)) & valid;
      while (bits) {
        const int b = __builtin_ctzll(bits);
        bits &= bits - 1;
        samples.push_back(static_cast<std::int32_t>(32 * w + b / 2));
        codes.push_back(static_cast<std::uint8_t>((row[w] >> b) & 3));
      }
    }
    block_starts(samples, s.cs_row_block[static_cast<std::size_t>(q)],
                 s.cs_col_block[static_cast<std::size_t>(q)]);
  }

  /// A and B of column block @p b's samples, for every requested count.
  void count_columns(Slot& s, std::int64_t kc, std::int64_t b) {
    const std::uint32_t mask = spec_.request.counts;
    const std::int64_t cols = sums_.cols();
    for (std::int64_t q = 0; q < kc; ++q) {
      const auto& samples = s.cs_sample[static_cast<std::size_t>(q)];
      const auto& codes = s.cs_code[static_cast<std::size_t>(q)];
      const auto& at = s.cs_col_block[static_cast<std::size_t>(q)];
      for (std::int32_t l = at[static_cast<std::size_t>(b)];
           l < at[static_cast<std::size_t>(b) + 1]; ++l) {
        const std::int64_t i = samples[static_cast<std::size_t>(l)];
        const int c = codes[static_cast<std::size_t>(l)];
        for (int k = 0; k < kPairCounts; ++k) {
          if (!(mask & (1u << k))) continue;
          std::int32_t* ab = s.ab.data() + 2 * k * cols;
          ab[i] += pair_indicator(k, c, 0) - pair_indicator(k, 0, 0);
          ab[cols + i] += pair_indicator(k, 0, c) - pair_indicator(k, 0, 0);
        }
      }
    }
  }

  /// The sparse count rows' share of one tile (cells j <= i).
  void count_tile(Slot& s, std::int64_t kc, const Tile& t) {
    const std::uint32_t mask = spec_.request.counts;
    const std::int64_t cols = sums_.cols(), ld = targets_.ld;
    std::int32_t d[kPairCounts][4][4];
    for (int k = 0; k < kPairCounts; ++k)
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b)
          d[k][a][b] = pair_indicator(k, a, b) - pair_indicator(k, a, 0) - pair_indicator(k, 0, b) +
                       pair_indicator(k, 0, 0);
    for (int k = 0; k < kPairCounts; ++k) {
      if (!(mask & (1u << k))) continue;
      const auto base = static_cast<std::int32_t>(kc * pair_indicator(k, 0, 0));
      const std::int32_t* a_of = s.ab.data() + 2 * k * cols;
      const std::int32_t* b_of = a_of + cols;
      for (std::int64_t i = t.i0; i < t.i1; ++i) {
        std::int32_t* out = targets_.counts[k] + (i - targets_.row_offset) * ld;
        const std::int32_t ai = base + a_of[i];
        for (std::int64_t j = t.j0; j < std::min(t.j1, i + 1); ++j) out[j] += ai + b_of[j];
      }
    }
    const auto a = static_cast<std::size_t>((t.g0 - grid_row_) / kTile);
    const auto b = static_cast<std::size_t>(t.j0 / kTile);
    for (std::int64_t q = 0; q < kc; ++q) {
      const auto& row_at = s.cs_row_block[static_cast<std::size_t>(q)];
      const auto& col_at = s.cs_col_block[static_cast<std::size_t>(q)];
      const std::int32_t a0 = row_at[a], a1 = row_at[a + 1], b0 = col_at[b], b1 = col_at[b + 1];
      if (a0 == a1 || b0 == b1) continue;
      const std::int32_t* samples = s.cs_sample[static_cast<std::size_t>(q)].data();
      const std::uint8_t* codes = s.cs_code[static_cast<std::size_t>(q)].data();
      for (std::int32_t x = a0; x < a1; ++x) {
        const std::int64_t i = samples[x];
        const int ci = codes[x];
        const std::int64_t at = (i - targets_.row_offset) * ld;
        for (std::int32_t y = b0; y < b1 && samples[y] <= i; ++y) {
          const int cj = codes[y];
          for (int k = 0; k < kPairCounts; ++k)
            if (targets_.counts[k] && d[k][ci][cj])
              targets_.counts[k][at + samples[y]] += d[k][ci][cj];
        }
      }
    }
  }

  /// M of column block @p b's samples.
  void missing_columns(Slot& s, std::int64_t b) {
    for (std::int64_t r = 0; r < s.fill; ++r) {
      const auto& samples = s.miss_sample[static_cast<std::size_t>(r)];
      const auto& at = s.miss_col_block[static_cast<std::size_t>(r)];
      for (std::int32_t k = at[static_cast<std::size_t>(b)];
           k < at[static_cast<std::size_t>(b) + 1]; ++k)
        ++s.m[static_cast<std::size_t>(samples[static_cast<std::size_t>(k)])];
    }
  }

  /// The batch's non-missing counts of one tile (cells j <= i).
  void missing_tile(Slot& s, const Tile& t) {
    std::int32_t* counts = targets_.counts[static_cast<int>(PairCount::NonMissing)];
    const std::int64_t ld = targets_.ld;
    const auto rows = static_cast<std::int32_t>(s.fill);
    for (std::int64_t i = t.i0; i < t.i1; ++i) {
      std::int32_t* out = counts + (i - targets_.row_offset) * ld;
      const std::int32_t ri = rows - s.m[static_cast<std::size_t>(i)];
      for (std::int64_t j = t.j0; j < std::min(t.j1, i + 1); ++j)
        out[j] += ri - s.m[static_cast<std::size_t>(j)];
    }
    const auto a = static_cast<std::size_t>((t.g0 - grid_row_) / kTile);
    const auto b = static_cast<std::size_t>(t.j0 / kTile);
    for (std::int64_t r = 0; r < s.fill; ++r) {
      const auto& row_at = s.miss_row_block[static_cast<std::size_t>(r)];
      const auto& col_at = s.miss_col_block[static_cast<std::size_t>(r)];
      const std::int32_t a0 = row_at[a], a1 = row_at[a + 1], b0 = col_at[b], b1 = col_at[b + 1];
      if (a0 == a1 || b0 == b1) continue;
      const std::int32_t* samples = s.miss_sample[static_cast<std::size_t>(r)].data();
      for (std::int32_t k = a0; k < a1; ++k) {
        const std::int32_t i = samples[k];
        std::int32_t* out = counts + (i - targets_.row_offset) * ld;
        for (std::int32_t l = b0; l < b1 && samples[l] <= i; ++l) ++out[samples[l]];
      }
    }
  }

  /// U of column block @p b's samples, and their diagonal: T + 2 U_i + sum y_i^2.
  void sparse_columns(Slot& s, std::int64_t ks, std::int64_t b) {
    const std::int64_t i0 = b * kTile, i1 = std::min(sums_.cols(), i0 + kTile);
    std::array<double, kTile> squares{};
    for (std::int64_t p = 0; p < ks; ++p) {
      const auto& samples = s.nz_sample[static_cast<std::size_t>(p)];
      const auto& values = s.nz_value[static_cast<std::size_t>(p)];
      const auto& at = s.nz_col_block[static_cast<std::size_t>(p)];
      const double c = s.sparse_base[static_cast<std::size_t>(p)];
      for (std::int32_t k = at[static_cast<std::size_t>(b)];
           k < at[static_cast<std::size_t>(b) + 1]; ++k) {
        const auto i = static_cast<std::size_t>(samples[static_cast<std::size_t>(k)]);
        const double y = values[static_cast<std::size_t>(k)];
        s.u[i] += c * y;
        squares[i - static_cast<std::size_t>(i0)] += y * y;
      }
    }
    for (std::int64_t i = i0; i < i1; ++i)
      sums_.diagonal[static_cast<std::size_t>(i)] +=
          s.t + 2 * s.u[static_cast<std::size_t>(i)] + squares[static_cast<std::size_t>(i - i0)];
  }

  /// The sparse rows' share of one tile (cells j <= i): T + U_i + U_j, then y_i y_j row by row.
  void sparse_tile(Slot& s, std::int64_t ks, const Tile& t) {
    const std::int64_t ld = sums_.cols();
    for (std::int64_t i = t.i0; i < t.i1; ++i) {
      double* out = sums_.product.data() + (i - sums_.row_begin) * ld;
      const double ti = s.t + s.u[static_cast<std::size_t>(i)];
      for (std::int64_t j = t.j0; j < std::min(t.j1, i + 1); ++j)
        out[j] += ti + s.u[static_cast<std::size_t>(j)];
    }
    const auto a = static_cast<std::size_t>((t.g0 - grid_row_) / kTile);
    const auto b = static_cast<std::size_t>(t.j0 / kTile);
    for (std::int64_t p = 0; p < ks; ++p) {
      const auto& rows = s.nz_row_block[static_cast<std::size_t>(p)];
      const auto& cols = s.nz_col_block[static_cast<std::size_t>(p)];
      const std::int32_t a0 = rows[a], a1 = rows[a + 1], b0 = cols[b], b1 = cols[b + 1];
      if (a0 == a1 || b0 == b1) continue;
      const std::int32_t* samples = s.nz_sample[static_cast<std::size_t>(p)].data();
      const double* values = s.nz_value[static_cast<std::size_t>(p)].data();
      for (std::int32_t k = a0; k < a1; ++k) {
        const std::int32_t i = samples[k];
        double* out = sums_.product.data() + (i - sums_.row_begin) * ld;
        const double yi = values[k];
        for (std::int32_t l = b0; l < b1 && samples[l] <= i; ++l) out[samples[l]] += yi * values[l];
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
        const std::int64_t first = 32 * w, n = std::min<std::int64_t>(32, x_end_ - first);
        for (std::int64_t k = 0; k < n; ++k)
          s.x[static_cast<std::size_t>((first + k) * kp + p)] = value[(word >> (2 * k)) & 3];
      }
    }
    // Sample by sample, rows in order: the same sums whatever the threads (the stripe's columns).
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
  std::int64_t grid_row_ = 0;                 // the grid row of the stripe's first tile
  std::int64_t x_end_ = 0;                    // samples whose product values the tiles read
  std::vector<std::vector<double>> scratch_;  // per worker: a grid tile of BLAS products
  pairs::CountTargets targets_;
  std::unique_ptr<WorkerCrew> crew_;
  bool split_counts_ = false;  // pair counts besides NonMissing: sparse rows leave the planes
};

}  // namespace

std::unique_ptr<SampleMatrixAccumulator> make_sample_matrix_cpu(const SampleMatrixSpec& spec) {
  return std::make_unique<CpuSampleMatrix>(spec);
}

}  // namespace vczstats::backend
