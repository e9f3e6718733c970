#pragma once
// Kernels of the matrix family on the GPU (backend/cuda/sample_matrix_gpu.cpp runs them): a
// batch of variants' packed rows becomes int8 operand matrices (stats/pair_operands.hpp), one
// column of k_cap bytes per sample, which cuBLAS multiplies on the integer tensor cores; the
// product's doubles are gathered from the batch's product rows.

#include <cuda_runtime.h>

#include <cstdint>

#include "vczstats/sample_matrix.hpp"

namespace vczstats::cuda {

/// What the batch knows of one slot (variant).
struct SlotInfo {
  double value[4];  ///< the product's value of each code
  double weight;    ///< MissingWeight: u
  int keep;         ///< kept by the filter
  int product;      ///< has a nonzero value
};

/// A piece of a unit going into a batch: slots [slot0, slot0 + count) hold the unit's rows
/// rows[0 .. count).
struct PieceArgs {
  const std::uint64_t* words = nullptr;  ///< the unit's packed rows (device)
  std::int64_t words_per_row = 0;
  std::int64_t samples = 0;
  const std::int32_t* rows = nullptr;  ///< device: the unit row of each slot of the piece
  std::int64_t slot0 = 0, count = 0;
  double maf = 0;
  PairProduct product = PairProduct::None;
  SlotInfo* info = nullptr;             ///< the batch's slots
  std::uint64_t* batch_rows = nullptr;  ///< the batch's copy of its rows (product only)
  std::int8_t* operands[4] = {};        ///< per Operand (null when unused): samples x k_cap
  std::int64_t k_cap = 0;
};

/// Fill the slots' info (counts, filter, values) and, with a product, copy their rows: one warp
/// per slot. @throws CudaError.
void launch_slot_info(const PieceArgs& a, cudaStream_t stream);
/// Write the slots' operand bytes for every sample (after launch_slot_info on the same stream).
/// @throws CudaError.
void launch_operands(const PieceArgs& a, cudaStream_t stream);

/// The summary of a batch of @p slots slots: out[0] kept variants, out[1] product slots, out[2]
/// the summed weights (a double's bits; a fixed-shape reduction, the same every run), and the
/// product slots in order in @p product_slots. One block. @throws CudaError.
void launch_batch_summary(const SlotInfo* info, std::int64_t slots, std::int64_t* out,
                          std::int32_t* product_slots, cudaStream_t stream);

/// x (samples x kp, x[i * kp + p]) = the value of product slot slots[p0 + p] for sample i,
/// from the batch's rows. @throws CudaError.
void launch_product_values(const SlotInfo* info, const std::uint64_t* batch_rows,
                           std::int64_t words_per_row, const std::int32_t* slots, std::int64_t p0,
                           std::int64_t kp, std::int64_t samples, double* x, cudaStream_t stream);

/// diagonal[i] += sum_p x[i * kp + p]^2 for i < @p samples (one thread per sample, in order).
/// @throws CudaError.
void launch_add_squares(const double* x, std::int64_t kp, std::int64_t samples, double* diagonal,
                        cudaStream_t stream);

/// The int32 product sums of stats/pair_operands.hpp (kProducts pointers, null when not
/// computed), each rows x ld.
struct ProductSums {
  const std::int32_t* product[6] = {};
};

/// out (rows x cols, row-major) = pair count @p count of every cell (i, j) with j <= i, i =
/// row_begin + its row, from the product sums (pitch @p ld); cells above the diagonal are 0.
/// @throws CudaError.
void launch_counts_from_products(const ProductSums& sums, std::uint32_t products, PairCount count,
                                 std::int64_t row_begin, std::int64_t rows, std::int64_t cols,
                                 std::int64_t ld, std::int32_t* out, cudaStream_t stream);

/// What launch_cell_values reads: the sums of a stripe as they lie on the device.
struct CellValueArgs {
  ProductSums sums;                  ///< int32 product sums (pitch ld)
  std::uint32_t products = 0;        ///< which of them were computed
  std::uint32_t counts = 0;          ///< the request's PairCount bits
  const double* product = nullptr;   ///< the product's sums (pitch ld), or null
  const double* diagonal = nullptr;  ///< the product's diagonal (cols), or null
  CellValue formula = CellValue::None;
  bool weighted = false;  ///< the product is MissingWeight
  std::int64_t variants = 0;
  double weight_total = 0;
  std::int64_t row_begin = 0, rows = 0, cols = 0, ld = 0;
};

/// out (rows x cols, row-major) = stats/matrix_math.hpp's cell_value of every cell (i, j) of the
/// stripe, i = row_begin + its row: cells j <= i from their sums, those above the diagonal from
/// their mirror's (j, i), as the host's matrix holds them (sample_matrix_values.cu, compiled
/// without FMA contraction). @throws CudaError.
void launch_cell_values(const CellValueArgs& a, double* out, cudaStream_t stream);

}  // namespace vczstats::cuda
