// The CPU products of stats/packed_product.hpp. X is expanded to doubles a tile at a time
// (1 MiB: it stays in L2 while OpenBLAS reads it), two genotypes per table lookup; X G runs a
// task per band of 128 rows (tiles 128 x 1,024 samples), X^T H a task per band of 512 samples
// (tiles 256 rows x 512, narrower so that 10^4 samples still make 20 tasks), so no two tasks write
// the same output and each sum runs over the tiles in one fixed order whatever the number of
// threads.

#include <algorithm>
#include <cstring>
#include <vector>

#include "stats/linalg.hpp"
#include "stats/packed_product.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::stats {
namespace {

// Samples: multiples of 32 (tiles start at a word).
constexpr std::int64_t kRowsOfXG = 128, kSamplesOfXG = 1024;
constexpr std::int64_t kRowsOfXtH = 256, kSamplesOfXtH = 512;

std::int64_t blocks(std::int64_t n, std::int64_t b) {
  return (n + b - 1) / b;
}

/// Samples [s0, s1) of row @p v of X into @p out (s0 a multiple of 32).
void expand_row(const PackedMatrixView& x, std::int64_t v, std::int64_t s0, std::int64_t s1,
                double* out) {
  const std::uint64_t* row = x.rows + v * x.words;
  const double* value = x.values + 4 * v;
  // The values of the 16 codes of two genotypes (a nibble), lower genotype first.
  alignas(16) double pair[16][2];
  for (int c = 0; c < 16; ++c) {
    pair[c][0] = value[c & 3];
    pair[c][1] = value[c >> 2];
  }
  const std::int64_t full = (s1 - s0) / 32;
  const std::uint64_t* w = row + s0 / 32;
  for (std::int64_t k = 0; k < full; ++k) {
    std::uint64_t bits = w[k];
    double* o = out + 32 * k;
    for (int j = 0; j < 16; ++j, bits >>= 4) std::memcpy(o + 2 * j, pair[bits & 15], 16);
  }
  for (std::int64_t i = s0 + 32 * full; i < s1; ++i)
    out[i - s0] = value[(row[i / 32] >> (2 * (i % 32))) & 3];
}

/// Rows [r0, r1) x samples [s0, s1) of X, row-major (stride s1 - s0).
void expand_tile(const PackedMatrixView& x, std::int64_t r0, std::int64_t r1, std::int64_t s0,
                 std::int64_t s1, double* out) {
  for (std::int64_t v = r0; v < r1; ++v) expand_row(x, v, s0, s1, out + (v - r0) * (s1 - s0));
}

class CpuPackedProduct final : public PackedProduct {
 public:
  explicit CpuPackedProduct(const PackedMatrixView& x) : x_(x) {}

  void x_times(const double* g, std::int64_t l, double* h, std::int64_t ldh,
               std::int64_t col) override {
    linalg::set_threads(1);
    const std::int64_t m = x_.variants, n = x_.samples;
    ThreadPool::shared().parallel_for(blocks(m, kRowsOfXG), [&](std::int64_t b) {
      const std::int64_t r0 = b * kRowsOfXG, r1 = std::min(m, r0 + kRowsOfXG);
      double* out = h + r0 * ldh + col;
      if (n == 0) {
        for (std::int64_t v = r0; v < r1; ++v)
          std::fill(out + (v - r0) * ldh, out + (v - r0) * ldh + l, 0.0);
        return;
      }
      std::vector<double> tile(static_cast<std::size_t>(kRowsOfXG * kSamplesOfXG));
      for (std::int64_t s0 = 0; s0 < n; s0 += kSamplesOfXG) {
        const std::int64_t s1 = std::min(n, s0 + kSamplesOfXG);
        expand_tile(x_, r0, r1, s0, s1, tile.data());
        linalg::ab(r1 - r0, l, s1 - s0, 1.0, tile.data(), s1 - s0, g + s0 * l, l,
                   s0 == 0 ? 0.0 : 1.0, out, ldh);
      }
    });
  }

  void xt_times(const double* h, std::int64_t ldh, std::int64_t col, std::int64_t l,
                double* g) override {
    linalg::set_threads(1);
    const std::int64_t m = x_.variants, n = x_.samples;
    std::fill(g, g + n * l, 0.0);
    ThreadPool::shared().parallel_for(blocks(n, kSamplesOfXtH), [&](std::int64_t b) {
      const std::int64_t s0 = b * kSamplesOfXtH, s1 = std::min(n, s0 + kSamplesOfXtH);
      std::vector<double> tile(static_cast<std::size_t>(kRowsOfXtH * kSamplesOfXtH));
      for (std::int64_t r0 = 0; r0 < m; r0 += kRowsOfXtH) {
        const std::int64_t r1 = std::min(m, r0 + kRowsOfXtH);
        expand_tile(x_, r0, r1, s0, s1, tile.data());
        linalg::atb(s1 - s0, l, r1 - r0, 1.0, tile.data(), s1 - s0, h + r0 * ldh + col, ldh, 1.0,
                    g + s0 * l, l);
      }
    });
  }

  std::string describe() const override { return "cpu"; }

 private:
  PackedMatrixView x_;
};

}  // namespace

std::unique_ptr<PackedProduct> make_cpu_packed_product(const PackedMatrixView& x) {
  return std::make_unique<CpuPackedProduct>(x);
}

}  // namespace vczstats::stats
