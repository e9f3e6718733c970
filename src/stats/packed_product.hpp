#pragma once
// Products of the standardised genotype matrix X (variants x samples, kept as packed 2-bit
// codes and the value of each code per variant) with thin dense matrices: X G and X^T H, the
// heavy arithmetic of the randomized PCA (pca.cpp). On the CPU: cache-sized tiles of X expanded
// to doubles through a per-variant byte table, then OpenBLAS; on a GPU
// (backend/cuda/pca_product_gpu.cpp): the packed rows uploaded once, tiles expanded by a kernel,
// cuBLAS DGEMM, only the thin results copied back.

#include <cstdint>
#include <memory>
#include <string>

namespace vczstats::stats {

/// @brief X as packed rows: variant v, sample i has code (rows[v * words + i / 32] >> 2 (i % 32))
/// & 3 and value values[4 v + code]. Host memory, borrowed.
struct PackedMatrixView {
  const std::uint64_t* rows = nullptr;
  std::int64_t words = 0;  ///< per row
  const double* values = nullptr;
  std::int64_t variants = 0;
  std::int64_t samples = 0;
};

/// @brief X G and X^T H over one packed matrix (its view must outlive the object). Dense
/// matrices are host memory, row-major.
class PackedProduct {
 public:
  virtual ~PackedProduct() = default;
  /// @brief H[:, col, col + l) = X G, G: samples x l; H: variants rows of stride ldh.
  virtual void x_times(const double* g, std::int64_t l, double* h, std::int64_t ldh,
                       std::int64_t col) = 0;
  /// @brief G (samples x l) = X^T H[:, col, col + l), H: variants rows of stride ldh.
  virtual void xt_times(const double* h, std::int64_t ldh, std::int64_t col, std::int64_t l,
                        double* g) = 0;
  /// @brief For messages: "cpu" or "gpu 0 (...)".
  virtual std::string describe() const = 0;
};

/// @brief The CPU products, on the shared thread pool.
std::unique_ptr<PackedProduct> make_cpu_packed_product(const PackedMatrixView& x);

}  // namespace vczstats::stats
