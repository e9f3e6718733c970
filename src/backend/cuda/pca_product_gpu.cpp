// The randomized PCA's products on a CUDA device (stats/packed_product.hpp). The packed rows
// and the per-variant values go to the device once (2 bits a genotype: 2.5 GB for 10^5 x 10^5);
// each product expands tiles of rows to doubles (pca_kernels.cu) and multiplies them with cuBLAS
// DGEMM; only the thin dense operands cross the bus. cuBLAS is column-major: a row-major tile of
// t rows of X is the column-major samples x t matrix X_t^T, a row-major G (samples x l) the
// column-major l x samples G^T, so
//   X G:    H_t^T (l x t)        = G^T (l x n)  X_t^T (n x t)      (one GEMM a tile)
//   X^T H:  G^T (l x n)         += H_t^T (l x t) X_t (t x n)       (summed over the tiles)

#include <algorithm>

#include "backend/cuda/cublas_api.hpp"
#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/gpu_pipeline.hpp"
#include "backend/cuda/pca_kernels.cuh"
#include "backend/site_pass.hpp"
#include "stats/packed_product.hpp"

namespace vczstats::backend {
namespace {

using cuda::DeviceBuffer;

constexpr std::int64_t kTileBytes = 512ll << 20;  // one expanded tile of rows
constexpr std::int64_t kMaxTileRows = 1024;

class GpuPackedProduct final : public stats::PackedProduct {
 public:
  GpuPackedProduct(const stats::PackedMatrixView& x, int device)
      : x_(x), ctx_(cuda::DeviceContext::get(device)) {
    ctx_.make_current();
    const cudaStream_t st = stream_.get();
    const std::int64_t n = std::max<std::int64_t>(x.samples, 1);
    tile_rows_ = std::clamp<std::int64_t>(kTileBytes / (8 * n), 1, kMaxTileRows);
    rows_ = upload(x.rows, x.variants * x.words * 8);
    values_ = upload(x.values, x.variants * 4 * 8);
    tile_ = DeviceBuffer(ctx_.pool(),
                         std::min(tile_rows_, std::max<std::int64_t>(x.variants, 1)) * n * 8, st);
    blas_ = std::make_unique<cuda::BlasHandle>(ctx_.pool(), st);
    stream_.synchronize();
  }

  ~GpuPackedProduct() override { cudaStreamSynchronize(stream_.get()); }

  void x_times(const double* g, std::int64_t l, double* h, std::int64_t ldh,
               std::int64_t col) override {
    const std::int64_t m = x_.variants, n = x_.samples;
    if (m == 0 || l == 0) return;
    ctx_.make_current();
    const cudaStream_t st = stream_.get();
    DeviceBuffer& dg = reserve(g_, n * l * 8);
    DeviceBuffer& dh = reserve(h_, m * l * 8);
    if (n > 0)
      VCZ_CUDA_CHECK(cudaMemcpyAsync(dg.data(), g, static_cast<std::size_t>(n * l * 8),
                                     cudaMemcpyHostToDevice, st));
    const double one = 1.0, zero = 0.0;
    for (std::int64_t r0 = 0; r0 < m; r0 += tile_rows_) {
      const std::int64_t t = std::min(tile_rows_, m - r0);
      cuda::launch_expand_rows(rows_.as<std::uint64_t>(), x_.words, values_.as<double>(), r0, t, n,
                               tile_.as<double>(), st);
      cuda::check_cublas(
          blas_->blas().dgemm(blas_->get(), CUBLAS_OP_N, CUBLAS_OP_N, as_int(l), as_int(t),
                              as_int(n), &one, dg.as<double>(), as_int(l), tile_.as<double>(),
                              as_int(std::max<std::int64_t>(n, 1)), &zero, dh.as<double>() + r0 * l,
                              as_int(l)),
          "cublasDgemm (X G)");
    }
    VCZ_CUDA_CHECK(cudaMemcpy2DAsync(
        h + col, static_cast<std::size_t>(ldh * 8), dh.data(), static_cast<std::size_t>(l * 8),
        static_cast<std::size_t>(l * 8), static_cast<std::size_t>(m), cudaMemcpyDeviceToHost, st));
    stream_.synchronize();
  }

  void xt_times(const double* h, std::int64_t ldh, std::int64_t col, std::int64_t l,
                double* g) override {
    const std::int64_t m = x_.variants, n = x_.samples;
    if (n == 0 || l == 0) return;
    ctx_.make_current();
    const cudaStream_t st = stream_.get();
    DeviceBuffer& dg = reserve(g_, n * l * 8);
    DeviceBuffer& dh = reserve(h_, std::max<std::int64_t>(m, 1) * l * 8);
    if (m == 0) {
      std::fill(g, g + n * l, 0.0);
      return;
    }
    VCZ_CUDA_CHECK(cudaMemcpy2DAsync(
        dh.data(), static_cast<std::size_t>(l * 8), h + col, static_cast<std::size_t>(ldh * 8),
        static_cast<std::size_t>(l * 8), static_cast<std::size_t>(m), cudaMemcpyHostToDevice, st));
    const double one = 1.0, zero = 0.0;
    for (std::int64_t r0 = 0; r0 < m; r0 += tile_rows_) {
      const std::int64_t t = std::min(tile_rows_, m - r0);
      cuda::launch_expand_rows(rows_.as<std::uint64_t>(), x_.words, values_.as<double>(), r0, t, n,
                               tile_.as<double>(), st);
      cuda::check_cublas(blas_->blas().dgemm(blas_->get(), CUBLAS_OP_N, CUBLAS_OP_T, as_int(l),
                                             as_int(n), as_int(t), &one, dh.as<double>() + r0 * l,
                                             as_int(l), tile_.as<double>(), as_int(n),
                                             r0 == 0 ? &zero : &one, dg.as<double>(), as_int(l)),
                         "cublasDgemm (X^T H)");
    }
    VCZ_CUDA_CHECK(cudaMemcpyAsync(g, dg.data(), static_cast<std::size_t>(n * l * 8),
                                   cudaMemcpyDeviceToHost, st));
    stream_.synchronize();
  }

  std::string describe() const override {
    return "gpu " + std::to_string(ctx_.index()) + " (" + ctx_.info().name + ")";
  }

 private:
  static int as_int(std::int64_t v) {
    if (v > 2147483647)
      throw UsageError("pca --approx on the GPU: a dimension of " + std::to_string(v) +
                       " exceeds cuBLAS's 32-bit sizes");
    return static_cast<int>(v);
  }

  DeviceBuffer upload(const void* host, std::int64_t bytes) {
    DeviceBuffer b(ctx_.pool(), std::max<std::int64_t>(bytes, 256), stream_.get());
    if (bytes > 0)
      VCZ_CUDA_CHECK(cudaMemcpyAsync(b.data(), host, static_cast<std::size_t>(bytes),
                                     cudaMemcpyHostToDevice, stream_.get()));
    return b;
  }

  /// @p buffer grown to at least @p bytes (its contents are not kept).
  DeviceBuffer& reserve(DeviceBuffer& buffer, std::int64_t bytes) {
    if (buffer.size() < bytes) {
      buffer = DeviceBuffer();
      buffer = DeviceBuffer(ctx_.pool(), std::max<std::int64_t>(bytes, 256), stream_.get());
    }
    return buffer;
  }

  stats::PackedMatrixView x_;
  cuda::DeviceContext& ctx_;
  cuda::Stream stream_;
  std::int64_t tile_rows_ = 1;
  DeviceBuffer rows_, values_, tile_, g_, h_;
  std::unique_ptr<cuda::BlasHandle> blas_;
};

}  // namespace

std::unique_ptr<stats::PackedProduct> make_gpu_packed_product(const stats::PackedMatrixView& x,
                                                              int device) {
  return std::make_unique<GpuPackedProduct>(x, device);
}

}  // namespace vczstats::backend
