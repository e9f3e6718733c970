// The matrix statistics' final values on the device (sample_matrix_kernels.cuh's
// launch_cell_values): the host's formulas (stats/matrix_math.hpp's cell_value) on the sums
// where they lie. CMakeLists.txt compiles this file with -fmad=false: nvcc would otherwise fuse a
// multiply and an add into one FMA, rounded once where the host rounds twice, and the values
// must be the host's to the bit.

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/sample_matrix_kernels.cuh"
#include "stats/matrix_math.hpp"
#include "stats/pair_operands.hpp"

namespace vczstats::cuda {
namespace {

__global__ void cell_values_kernel(CellValueArgs a, double* out) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k >= a.rows * a.cols) return;
  const std::int64_t r = k / a.cols, col = k % a.cols;
  // The cell (i, j), j <= i, whose value this one holds: itself, or its mirror in the stripe.
  std::int64_t i = a.row_begin + r, j = col;
  if (j > i) {
    const std::int64_t t = i;
    i = j;
    j = t;
  }
  const std::int64_t at = (i - a.row_begin) * a.ld + j;
  std::int32_t v[stats::pairs::kProducts] = {};
  for (int p = 0; p < stats::pairs::kProducts; ++p)
    if (a.sums.product[p]) v[p] = a.sums.product[p][at];
  stats::matrix::CellSums c;
  for (int n = 0; n < kPairCounts; ++n)
    if (a.counts & pair_bit(static_cast<PairCount>(n)))
      c.count[n] = stats::pairs::count_from_products(static_cast<PairCount>(n), v, a.products);
  if (a.product) {
    c.product = a.product[at];
    c.diagonal_i = a.diagonal[i];
    c.diagonal_j = a.diagonal[j];
  }
  c.diagonal = i == j;
  out[k] = stats::matrix::cell_value(a.formula, c, a.variants, a.weight_total, a.weighted);
}

}  // namespace

void launch_cell_values(const CellValueArgs& a, double* out, cudaStream_t stream) {
  if (a.rows <= 0 || a.cols <= 0) return;
  const auto blocks = static_cast<unsigned>((a.rows * a.cols + 255) / 256);
  cell_values_kernel<<<blocks, 256, 0, stream>>>(a, out);
  VCZ_CUDA_CHECK_LAUNCH("cell_values_kernel");
}

}  // namespace vczstats::cuda
