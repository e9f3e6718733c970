// Kernels of the matrix family (sample_matrix_kernels.cuh). The per-variant math and the operand
// values are the host's (stats/matrix_math.hpp, stats/pair_operands.hpp).

#include <cstring>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/sample_matrix_kernels.cuh"
#include "stats/matrix_math.hpp"
#include "stats/pair_operands.hpp"

namespace vczstats::cuda {
namespace {

constexpr int kSlotsPerTile = 128;  // operand kernel: slots x samples of one block
constexpr int kSamplesPerTile = 256;

__device__ inline long long warp_sum(long long v) {
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
  return v;
}

__global__ void slot_info_kernel(PieceArgs a) {
  const std::int64_t warp = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= a.count) return;
  const std::int64_t slot = a.slot0 + warp;
  const std::uint64_t* row = a.words + a.rows[warp] * a.words_per_row;
  stats::matrix::RowCounts c;
  for (std::int64_t w = lane; w < a.words_per_row; w += 32) {
    const std::uint64_t word = row[w];
    stats::matrix::add_word(c, word, stats::matrix::valid_mask(w, a.samples));
    if (a.batch_rows) a.batch_rows[slot * a.words_per_row + w] = word;
  }
  c.het = warp_sum(c.het);
  c.hom_alt = warp_sum(c.hom_alt);
  c.missing = warp_sum(c.missing);
  if (lane != 0) return;
  const auto v = stats::matrix::variant_values(c, a.samples, a.maf, a.product);
  SlotInfo& s = a.info[slot];
  for (int k = 0; k < 4; ++k) s.value[k] = v.value[k];
  s.weight = v.weight;
  s.keep = v.keep ? 1 : 0;
  s.product = v.product ? 1 : 0;
}

/// One block: kSlotsPerTile slots x kSamplesPerTile samples; each thread writes one sample's
/// bytes of the slots, 16 at a time (pieces start at multiples of 16 slots, so the chunks of two
/// pieces never overlap).
__global__ void operands_kernel(PieceArgs a) {
  __shared__ std::uint64_t words[kSlotsPerTile][kSamplesPerTile / 32];
  __shared__ int keep[kSlotsPerTile];
  const std::int64_t p0 = static_cast<std::int64_t>(blockIdx.x) * kSlotsPerTile;
  const std::int64_t sample0 = static_cast<std::int64_t>(blockIdx.y) * kSamplesPerTile;
  const int t = threadIdx.x;
  for (int k = t; k < kSlotsPerTile * (kSamplesPerTile / 32); k += blockDim.x) {
    const int r = k / (kSamplesPerTile / 32), w = k % (kSamplesPerTile / 32);
    const std::int64_t p = p0 + r, gw = sample0 / 32 + w;
    words[r][w] =
        p < a.count && gw < a.words_per_row ? a.words[a.rows[p] * a.words_per_row + gw] : 0;
  }
  for (int r = t; r < kSlotsPerTile; r += blockDim.x)
    keep[r] = p0 + r < a.count ? a.info[a.slot0 + p0 + r].keep : 0;
  __syncthreads();
  const std::int64_t i = sample0 + t;
  if (i >= a.samples) return;
  const std::int64_t padded = (a.count + 15) / 16 * 16;  // this piece's chunks
  const int wl = t / 32, shift = 2 * (t % 32);
  for (int o = 0; o < stats::pairs::kOperands; ++o) {
    std::int8_t* dst = a.operands[o];
    if (!dst) continue;
    dst += i * a.k_cap + a.slot0;
    for (int c = 0; c < kSlotsPerTile / 16; ++c) {
      const std::int64_t q0 = p0 + 16 * c;
      if (q0 >= padded) break;
      union {
        int4 vec;
        std::int8_t bytes[16];
      } chunk;
      for (int k = 0; k < 16; ++k) {
        const int r = 16 * c + k;
        const int code = static_cast<int>((words[r][wl] >> shift) & 3);
        chunk.bytes[k] = stats::pairs::operand_value(o, code, keep[r] != 0 && p0 + r < a.count);
      }
      *reinterpret_cast<int4*>(dst + q0) = chunk.vec;
    }
  }
}

constexpr int kSummaryThreads = 1024;

__global__ void batch_summary_kernel(const SlotInfo* info, std::int64_t slots, std::int64_t* out,
                                     std::int32_t* product_slots) {
  __shared__ double weights[kSummaryThreads];
  __shared__ long long kept[kSummaryThreads];
  __shared__ int scan[kSummaryThreads];
  const int t = threadIdx.x;
  double w = 0;
  long long k = 0;
  for (std::int64_t s = t; s < slots; s += kSummaryThreads) {
    w += info[s].weight;
    k += info[s].keep;
  }
  weights[t] = w;
  kept[t] = k;
  __syncthreads();
  for (int d = kSummaryThreads / 2; d > 0; d /= 2) {
    if (t < d) {
      weights[t] += weights[t + d];
      kept[t] += kept[t + d];
    }
    __syncthreads();
  }
  // Product slots in order: a block-wide exclusive scan per chunk of kSummaryThreads slots.
  int base = 0;
  for (std::int64_t c0 = 0; c0 < slots; c0 += kSummaryThreads) {
    const std::int64_t s = c0 + t;
    const int flag = s < slots ? info[s].product : 0;
    scan[t] = flag;
    __syncthreads();
    for (int d = 1; d < kSummaryThreads; d *= 2) {
      const int add = t >= d ? scan[t - d] : 0;
      __syncthreads();
      scan[t] += add;
      __syncthreads();
    }
    if (flag) product_slots[base + scan[t] - 1] = static_cast<std::int32_t>(s);
    base += scan[kSummaryThreads - 1];
    __syncthreads();
  }
  if (t == 0) {
    out[0] = kept[0];
    out[1] = base;
    std::int64_t bits;
    const double total = weights[0];
    memcpy(&bits, &total, sizeof bits);
    out[2] = bits;
  }
}

__global__ void product_values_kernel(const SlotInfo* info, const std::uint64_t* batch_rows,
                                      std::int64_t words_per_row, const std::int32_t* slots,
                                      std::int64_t p0, std::int64_t kp, std::int64_t samples,
                                      double* x) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k >= kp * samples) return;
  const std::int64_t i = k / kp, p = k % kp;
  const std::int32_t slot = slots[p0 + p];
  const std::uint64_t word = batch_rows[slot * words_per_row + i / 32];
  x[k] = info[slot].value[(word >> (2 * (i % 32))) & 3];
}

__global__ void add_squares_kernel(const double* x, std::int64_t kp, std::int64_t samples,
                                   double* diagonal) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= samples) return;
  double d = 0;
  for (std::int64_t p = 0; p < kp; ++p) d += x[i * kp + p] * x[i * kp + p];
  diagonal[i] += d;
}

__global__ void counts_from_products_kernel(ProductSums sums, std::uint32_t products,
                                            PairCount count, std::int64_t row_begin,
                                            std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                            std::int32_t* out) {
  const std::int64_t k = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (k >= rows * cols) return;
  const std::int64_t r = k / cols, j = k % cols;
  if (j > row_begin + r) {
    out[k] = 0;
    return;
  }
  std::int32_t v[stats::pairs::kProducts] = {};
  for (int p = 0; p < stats::pairs::kProducts; ++p)
    if (sums.product[p]) v[p] = sums.product[p][r * ld + j];
  out[k] = stats::pairs::count_from_products(count, v, products);
}

unsigned grid_of(std::int64_t threads, int block) {
  return static_cast<unsigned>((threads + block - 1) / block);
}

}  // namespace

void launch_slot_info(const PieceArgs& a, cudaStream_t stream) {
  if (a.count <= 0) return;
  slot_info_kernel<<<grid_of(a.count * 32, 256), 256, 0, stream>>>(a);
  VCZ_CUDA_CHECK_LAUNCH("slot_info_kernel");
}

void launch_operands(const PieceArgs& a, cudaStream_t stream) {
  if (a.count <= 0 || a.samples <= 0) return;
  const dim3 grid(grid_of(a.count, kSlotsPerTile), grid_of(a.samples, kSamplesPerTile));
  operands_kernel<<<grid, kSamplesPerTile, 0, stream>>>(a);
  VCZ_CUDA_CHECK_LAUNCH("operands_kernel");
}

void launch_batch_summary(const SlotInfo* info, std::int64_t slots, std::int64_t* out,
                          std::int32_t* product_slots, cudaStream_t stream) {
  batch_summary_kernel<<<1, kSummaryThreads, 0, stream>>>(info, slots, out, product_slots);
  VCZ_CUDA_CHECK_LAUNCH("batch_summary_kernel");
}

void launch_product_values(const SlotInfo* info, const std::uint64_t* batch_rows,
                           std::int64_t words_per_row, const std::int32_t* slots, std::int64_t p0,
                           std::int64_t kp, std::int64_t samples, double* x, cudaStream_t stream) {
  if (kp <= 0 || samples <= 0) return;
  product_values_kernel<<<grid_of(kp * samples, 256), 256, 0, stream>>>(
      info, batch_rows, words_per_row, slots, p0, kp, samples, x);
  VCZ_CUDA_CHECK_LAUNCH("product_values_kernel");
}

void launch_counts_from_products(const ProductSums& sums, std::uint32_t products, PairCount count,
                                 std::int64_t row_begin, std::int64_t rows, std::int64_t cols,
                                 std::int64_t ld, std::int32_t* out, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  counts_from_products_kernel<<<grid_of(rows * cols, 256), 256, 0, stream>>>(
      sums, products, count, row_begin, rows, cols, ld, out);
  VCZ_CUDA_CHECK_LAUNCH("counts_from_products_kernel");
}

void launch_add_squares(const double* x, std::int64_t kp, std::int64_t samples, double* diagonal,
                        cudaStream_t stream) {
  if (kp <= 0 || samples <= 0) return;
  add_squares_kernel<<<grid_of(samples, 256), 256, 0, stream>>>(x, kp, samples, diagonal);
  VCZ_CUDA_CHECK_LAUNCH("add_squares_kernel");
}

}  // namespace vczstats::cuda
