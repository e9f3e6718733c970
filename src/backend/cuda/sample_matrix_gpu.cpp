// The matrix family's heavy pass on a CUDA device (backend/sample_matrix_pass.hpp).
//
//   unit on lane stream s (the site pass's)         matrix stream m
//   slot info + int8 operand columns of its   ──▶   per full batch: its summary (kept variants,
//   kept rows, written into batch b's slots          weights, product slots; read by the host in
//   (after b's last GEMMs: event free[b])            batch order), int8 GEMMs of the operand
//                                                    pairs into int32 tiles (tensor cores,
//                                                    cuBLAS), FP64 GEMMs of the product values,
//                                                    then b is cleared and free[b] recorded
//
// Two batches alternate, so the lanes fill one while the GEMMs run on the other. The int32 sums
// stay on the device until finish(); the counts follow from them (stats/pair_operands.hpp) and
// equal the CPU's popcounts exactly. With a CellValue formula, finish() computes each cell's value
// there too and copies that one matrix of doubles, not the sums.
//
// Unlike the CPU pass (sample_matrix_cpu.cpp), nothing here makes a cell's FP64 product the same
// double whatever the stripe: cuBLAS may sum a cell's terms differently for other GEMM shapes,
// so the GRM's and distance's products of stripes (--rows-per-pass, MPI ranks) agree with one
// pass to rounding; the integer counts (KING) exactly.

#include <algorithm>
#include <array>
#include <cstring>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cuda/cublas_api.hpp"
#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/gpu_pipeline.hpp"
#include "backend/cuda/sample_matrix_kernels.cuh"
#include "backend/sample_matrix_pass.hpp"
#include "stats/pair_operands.hpp"
#include "vczstats/error.hpp"

namespace vczstats::backend {
namespace {

using cuda::DeviceBuffer;
using cuda::Event;
using cuda::PinnedBuffer;
namespace op = stats::pairs;

using Blas = cuda::BlasHandle;
#define VCZ_CUBLAS_CHECK(call) cuda::check_cublas((call), #call)

constexpr std::int64_t kTile = 8192;                 // samples per GEMM tile side
constexpr std::int64_t kOperandBytes = 1ll << 30;    // one batch's operands
constexpr std::int64_t kProductBytes = 512ll << 20;  // the product's values of a sub-batch
constexpr std::int64_t kMaxSlots = 16384;

std::int64_t round_up(std::int64_t n, std::int64_t a) {
  return (n + a - 1) / a * a;
}

class GpuSampleMatrix final : public SampleMatrixAccumulator {
 public:
  explicit GpuSampleMatrix(const SampleMatrixSpec& spec)
      : spec_(spec),
        ctx_(cuda::DeviceContext::get(spec.device)),
        n_(spec.samples),
        words_(packed_words(spec.samples)),
        shape_(SampleMatrixSums::zeros({0, PairProduct::None, 0, spec.request.row_begin,
                                        spec.request.row_end, CellValue::None},
                                       spec.samples)),
        products_(op::products_for(spec.request.counts)),
        operands_(op::operands_for(products_)),
        with_product_(spec.request.product != PairProduct::None) {
    // cuBLAS loads (and its handle is made) on another thread while this one allocates and the
    // pass starts: the first GEMMs come a batch later (blas()).
    blas_loading_ = std::async(std::launch::async, [device = spec.device] {
      VCZ_CUDA_CHECK(cudaSetDevice(device));
      return Blas::create();
    });
    // The host's matrix of values (first-touching 800 MB takes ~0.5 s at 10^4 samples) is made
    // beside the pass too, on huge pages where the kernel has them: the copy into it pins it
    // (copy_to_host), which costs a few times less so.
    if (spec_.request.value != CellValue::None)
      host_values_ = std::async(std::launch::async, [cells = shape_.rows() * shape_.cols()] {
        std::vector<double> v;
        v.reserve(static_cast<std::size_t>(cells));  // allocated, not yet touched
        cuda::advise_huge_pages(v.data(), v.capacity() * sizeof(double));
        v.resize(static_cast<std::size_t>(cells));
        return v;
      });
    cuda::DevicePool& pool = ctx_.pool();
    const cudaStream_t ms = matrix_.get();
    int used = 0;
    for (int o = 0; o < op::kOperands; ++o) used += (operands_ >> o) & 1;
    const std::int64_t per_slot = std::max<std::int64_t>(1, n_ * std::max(used, 1));
    k_cap_ = std::clamp<std::int64_t>(kOperandBytes / per_slot / 256 * 256, 256, kMaxSlots);
    ld_ = round_up(std::max<std::int64_t>(shape_.cols(), 1), 16);
    const std::int64_t cells = shape_.rows() * ld_;
    for (int p = 0; p < op::kProducts; ++p)
      if (products_ & (1u << p)) {
        sums_[p] = DeviceBuffer(pool, cells * 4, ms);
        VCZ_CUDA_CHECK(
            cudaMemsetAsync(sums_[p].data(), 0, static_cast<std::size_t>(cells * 4), ms));
      }
    if (with_product_) {
      product_ = DeviceBuffer(pool, cells * 8, ms);
      VCZ_CUDA_CHECK(cudaMemsetAsync(product_.data(), 0, static_cast<std::size_t>(cells * 8), ms));
      diagonal_ = DeviceBuffer(pool, std::max<std::int64_t>(shape_.cols(), 1) * 8, ms);
      VCZ_CUDA_CHECK(
          cudaMemsetAsync(diagonal_.data(), 0, static_cast<std::size_t>(diagonal_.size()), ms));
      kf_ = std::clamp<std::int64_t>(
          kProductBytes / (8 * std::max<std::int64_t>(n_, 1)) / 256 * 256, 256, k_cap_);
      values_ = DeviceBuffer(pool, n_ * kf_ * 8, ms);
    }
    for (auto& b : batches_) {
      for (int o = 0; o < op::kOperands; ++o)
        if (operands_ & (1u << o)) b.operands[o] = DeviceBuffer(pool, n_ * k_cap_, ms);
      b.info = DeviceBuffer(pool, k_cap_ * static_cast<std::int64_t>(sizeof(cuda::SlotInfo)), ms);
      b.product_slots = DeviceBuffer(pool, k_cap_ * 4, ms);
      b.summary = DeviceBuffer(pool, 3 * 8, ms);
      b.host_summary = PinnedBuffer(3 * 8);
      if (with_product_) b.rows = DeviceBuffer(pool, k_cap_ * words_ * 8, ms);
      clear(b);
    }
    // Rows [i0, i1) x columns [j0, j1) with j0 <= i0: the lower triangle of the stripe.
    for (std::int64_t i0 = shape_.row_begin; i0 < shape_.row_end; i0 += kTile)
      for (std::int64_t j0 = 0; j0 < std::min(i0 + kTile, shape_.row_end); j0 += kTile)
        tiles_.push_back(
            {i0, std::min(i0 + kTile, shape_.row_end), j0, std::min(j0 + kTile, shape_.row_end)});
    matrix_.synchronize();  // everything above is ready before any lane uses it
  }

  ~GpuSampleMatrix() override {
    cudaStreamSynchronize(aux_.get());
    cudaStreamSynchronize(matrix_.get());
    if (blas_loading_.valid()) try {  // never used (an error before the first batch)
        if (const cublasHandle_t h = blas_loading_.get()) Blas::blas().destroy(h);
      } catch (...) {
      }
  }

  void host_unit(std::int64_t, const PackedGenotypeView&) override {
    throw Error("sample matrix: the GPU accumulator was handed host memory");
  }

  void device_unit(std::int64_t unit, const PackedGenotypeView& view, void* stream) override {
    ctx_.make_current();
    const auto st = static_cast<cudaStream_t>(stream);
    const vcz::WorkUnit& u = spec_.plan->units[static_cast<std::size_t>(unit)];
    selected_.clear();
    for (std::int64_t r = 0; r < view.variants; ++r)
      if (u.mask.empty() || u.mask[static_cast<std::size_t>(r)])
        selected_.push_back(static_cast<std::int32_t>(r));
    Scratch& scratch = scratch_[st];
    for (std::size_t pos = 0; pos < selected_.size();) {
      fill_ = round_up(fill_, 16);  // pieces start on 16-slot boundaries (whole int4 stores)
      if (fill_ >= k_cap_) {
        flush();
        continue;
      }
      Batch& b = batches_[current_];
      const std::int64_t take =
          std::min<std::int64_t>(static_cast<std::int64_t>(selected_.size() - pos), k_cap_ - fill_);
      if (scratch.rows.size() < take * 4) {
        // Allocated (and freed) in the order of our own stream, which outlives the lanes; the
        // lane's earlier pieces may still read the old buffer, the new one must be ready first.
        VCZ_CUDA_CHECK(cudaStreamSynchronize(st));
        scratch.rows =
            DeviceBuffer(ctx_.pool(), std::max<std::int64_t>(take, 1024) * 4, aux_.get());
        aux_.synchronize();
      }
      // Pageable source: the call returns once the rows are staged, so selected_ may change.
      VCZ_CUDA_CHECK(cudaMemcpyAsync(scratch.rows.data(), selected_.data() + pos,
                                     static_cast<std::size_t>(take * 4), cudaMemcpyHostToDevice,
                                     st));
      VCZ_CUDA_CHECK(cudaStreamWaitEvent(st, b.free.get(), 0));  // its last GEMMs are done
      cuda::PieceArgs a;
      a.words = view.words;
      a.words_per_row = view.words_per_row;
      a.samples = n_;
      a.rows = scratch.rows.as<std::int32_t>();
      a.slot0 = fill_;
      a.count = take;
      a.maf = spec_.request.maf;
      a.product = spec_.request.product;
      a.info = b.info.as<cuda::SlotInfo>();
      a.batch_rows = with_product_ ? b.rows.as<std::uint64_t>() : nullptr;
      for (int o = 0; o < op::kOperands; ++o)
        a.operands[o] = (operands_ & (1u << o)) ? b.operands[o].as<std::int8_t>() : nullptr;
      a.k_cap = k_cap_;
      cuda::launch_slot_info(a, st);
      if (operands_) cuda::launch_operands(a, st);
      scratch.written.record(st);
      VCZ_CUDA_CHECK(cudaStreamWaitEvent(aux_.get(), scratch.written.get(), 0));
      fill_ += take;
      pos += static_cast<std::size_t>(take);
      if (fill_ == k_cap_) flush();
    }
  }

  SampleMatrixSums finish() override {
    ctx_.make_current();
    if (fill_ > 0) flush();
    matrix_.synchronize();
    const bool values = spec_.request.value != CellValue::None;
    // With a formula, its values alone: no sum is copied (the shape's request has none).
    SampleMatrixSums out = values ? shape_ : SampleMatrixSums::zeros(spec_.request, n_);
    out.variants = variants_;
    out.weight_total = weight_total_;
    const std::int64_t rows = shape_.rows(), cols = shape_.cols();
    if (rows == 0) return out;
    cuda::ProductSums ps;
    for (int p = 0; p < op::kProducts; ++p)
      if (products_ & (1u << p)) ps.product[p] = sums_[p].as<std::int32_t>();
    if (values) {
      out.values = host_values_.get();
      cuda::CellValueArgs a;
      a.sums = ps;
      a.products = products_;
      a.counts = spec_.request.counts;
      a.product = with_product_ ? product_.as<double>() : nullptr;
      a.diagonal = with_product_ ? diagonal_.as<double>() : nullptr;
      a.formula = spec_.request.value;
      a.weighted = spec_.request.product == PairProduct::MissingWeight;
      a.variants = variants_;
      a.weight_total = weight_total_;
      a.row_begin = shape_.row_begin;
      a.rows = rows;
      a.cols = cols;
      a.ld = ld_;
      DeviceBuffer cells(ctx_.pool(), rows * cols * 8, matrix_.get());
      cuda::launch_cell_values(a, cells.as<double>(), matrix_.get());
      copy_to_host(out.values.data(), cols * 8, cells.data(), cols * 8, cols * 8, rows);
      return out;
    }
    // Each count from the product sums on the device, then straight into the output.
    DeviceBuffer counts;
    for (int c = 0; c < kPairCounts; ++c) {
      auto& dst = out.counts[static_cast<std::size_t>(c)];
      if (dst.empty()) continue;
      if (!counts.data()) counts = DeviceBuffer(ctx_.pool(), rows * cols * 4, matrix_.get());
      cuda::launch_counts_from_products(ps, products_, static_cast<PairCount>(c), shape_.row_begin,
                                        rows, cols, ld_, counts.as<std::int32_t>(), matrix_.get());
      copy_to_host(dst.data(), cols * 4, counts.data(), cols * 4, cols * 4, rows);
    }
    matrix_.synchronize();
    if (with_product_) {
      copy_to_host(out.product.data(), cols * 8, product_.data(), ld_ * 8, cols * 8, rows);
      VCZ_CUDA_CHECK(cudaMemcpy(out.diagonal.data(), diagonal_.data(),
                                static_cast<std::size_t>(cols * 8), cudaMemcpyDeviceToHost));
      for (std::int64_t i = shape_.row_begin; i < shape_.row_end; ++i)  // above the diagonal
        std::fill(out.product.begin() + (i - shape_.row_begin) * cols + i + 1,
                  out.product.begin() + (i - shape_.row_begin + 1) * cols, 0.0);
    }
    return out;
  }

 private:
  struct Batch {
    std::array<DeviceBuffer, op::kOperands> operands;  // samples x k_cap int8 each
    DeviceBuffer info, rows, product_slots, summary;
    PinnedBuffer host_summary;
    Event free, summarized;
  };
  struct Scratch {  // per lane stream: the unit rows of the piece being written
    DeviceBuffer rows;
    Event written;
  };
  struct Tile {
    std::int64_t i0, i1, j0, j1;
  };

  /// Copy @p rows rows of @p width bytes from the device to pageable host memory: pinned for the
  /// copy where the driver allows it (a pageable copy of these sizes runs at ~1.5 GB/s, a pinned
  /// one at the link's speed), else as is.
  void copy_to_host(void* dst, std::int64_t dst_pitch, const void* src, std::int64_t src_pitch,
                    std::int64_t width, std::int64_t rows) {
    const auto bytes = static_cast<std::size_t>(dst_pitch * rows);
    const bool pinned = cudaHostRegister(dst, bytes, cudaHostRegisterDefault) == cudaSuccess;
    if (!pinned) (void)cudaGetLastError();  // not fatal: the copy below works without
    const cudaError_t e =
        cudaMemcpy2DAsync(dst, static_cast<std::size_t>(dst_pitch), src,
                          static_cast<std::size_t>(src_pitch), static_cast<std::size_t>(width),
                          static_cast<std::size_t>(rows), cudaMemcpyDeviceToHost, matrix_.get());
    const cudaError_t sync = e == cudaSuccess ? cudaStreamSynchronize(matrix_.get()) : e;
    if (pinned) cudaHostUnregister(dst);
    VCZ_CUDA_CHECK(sync);
  }

  /// The cuBLAS handle (waits for the thread that made it, the first time).
  cublasHandle_t blas() {
    if (!blas_) blas_ = std::make_unique<Blas>(blas_loading_.get(), ctx_.pool(), matrix_.get());
    return blas_->get();
  }

  /// Zero a batch's slots (after its GEMMs, on the matrix stream) and mark it free.
  void clear(Batch& b) {
    const cudaStream_t ms = matrix_.get();
    for (auto& o : b.operands)
      if (o.data())
        VCZ_CUDA_CHECK(cudaMemsetAsync(o.data(), 0, static_cast<std::size_t>(o.size()), ms));
    VCZ_CUDA_CHECK(cudaMemsetAsync(b.info.data(), 0, static_cast<std::size_t>(b.info.size()), ms));
    b.free.record(ms);
  }

  /// The current batch's GEMMs; then it is cleared and the other batch becomes current.
  void flush() {
    Batch& b = batches_[current_];
    const cudaStream_t ms = matrix_.get(), aux = aux_.get();
    const std::int64_t slots = round_up(fill_, 16);
    // Its summary, once every piece is written (aux waited for each piece's event).
    cuda::launch_batch_summary(b.info.as<cuda::SlotInfo>(), slots, b.summary.as<std::int64_t>(),
                               b.product_slots.as<std::int32_t>(), aux);
    VCZ_CUDA_CHECK(
        cudaMemcpyAsync(b.host_summary.data(), b.summary.data(), 24, cudaMemcpyDeviceToHost, aux));
    b.summarized.record(aux);
    b.summarized.synchronize();
    std::int64_t summary[3];
    std::memcpy(summary, b.host_summary.data(), sizeof summary);
    double weight;
    std::memcpy(&weight, &summary[2], sizeof weight);
    variants_ += summary[0];
    weight_total_ += weight;
    const std::int64_t kp = summary[1];
    VCZ_CUDA_CHECK(cudaStreamWaitEvent(ms, b.summarized.get(), 0));

    // Pair counts: int8 x int8 -> int32 on the tensor cores, C(i, j) += sum_k L[i][k] R[j][k]
    // (column-major for cuBLAS: C^T = R^T-block x L-block, i.e. the row-major C).
    const std::int64_t k = round_up(fill_, 32);
    const int one = 1;
    for (int p = 0; p < op::kProducts; ++p) {
      if (!(products_ & (1u << p))) continue;
      const auto* left = b.operands[op::kLeft[p]].as<std::int8_t>();
      const auto* right = b.operands[op::kRight[p]].as<std::int8_t>();
      for (const Tile& t : tiles_)
        VCZ_CUBLAS_CHECK(Blas::blas().gemm_ex(
            blas(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(t.j1 - t.j0),
            static_cast<int>(t.i1 - t.i0), static_cast<int>(k), &one, right + t.j0 * k_cap_,
            CUDA_R_8I, static_cast<int>(k_cap_), left + t.i0 * k_cap_, CUDA_R_8I,
            static_cast<int>(k_cap_), &one,
            sums_[p].as<std::int32_t>() + (t.i0 - shape_.row_begin) * ld_ + t.j0, CUDA_R_32I,
            static_cast<int>(ld_), CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
    }
    // The product: FP64 GEMMs over the product slots, kf_ at a time.
    const double done = 1.0;
    for (std::int64_t p0 = 0; p0 < kp; p0 += kf_) {
      const std::int64_t kb = std::min(kf_, kp - p0);
      cuda::launch_product_values(b.info.as<cuda::SlotInfo>(), b.rows.as<std::uint64_t>(), words_,
                                  b.product_slots.as<std::int32_t>(), p0, kb, n_,
                                  values_.as<double>(), ms);
      const double* x = values_.as<double>();
      cuda::launch_add_squares(x, kb, shape_.cols(), diagonal_.as<double>(), ms);
      for (const Tile& t : tiles_)
        VCZ_CUBLAS_CHECK(Blas::blas().dgemm(
            blas(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(t.j1 - t.j0),
            static_cast<int>(t.i1 - t.i0), static_cast<int>(kb), &done, x + t.j0 * kb,
            static_cast<int>(kb), x + t.i0 * kb, static_cast<int>(kb), &done,
            product_.as<double>() + (t.i0 - shape_.row_begin) * ld_ + t.j0, static_cast<int>(ld_)));
    }
    clear(b);
    current_ = 1 - current_;
    fill_ = 0;
  }

  SampleMatrixSpec spec_;
  cuda::DeviceContext& ctx_;
  std::int64_t n_, words_;
  SampleMatrixSums shape_;  // rows and columns only
  std::uint32_t products_, operands_;
  bool with_product_;
  cuda::Stream matrix_, aux_;                 // declared before the buffers: they go first
  std::future<cublasHandle_t> blas_loading_;  // until blas() takes it
  std::unique_ptr<Blas> blas_;
  std::future<std::vector<double>> host_values_;
  std::int64_t k_cap_ = 0, kf_ = 0, ld_ = 0;
  std::array<DeviceBuffer, op::kProducts> sums_;
  DeviceBuffer product_, values_, diagonal_;
  std::array<Batch, 2> batches_;
  int current_ = 0;
  std::int64_t fill_ = 0;
  std::vector<Tile> tiles_;
  std::vector<std::int32_t> selected_;
  std::map<cudaStream_t, Scratch> scratch_;
  std::int64_t variants_ = 0;
  double weight_total_ = 0;
};

/// Host copies of the device units, one pinned buffer per lane stream.
class GpuHostMirror final : public PackedHostMirror {
 public:
  GpuHostMirror(std::int64_t samples, int device)
      : ctx_(cuda::DeviceContext::get(device)), words_(packed_words(samples)) {}
  void host_unit(std::int64_t, const PackedGenotypeView&) override {
    throw Error("packed mirror: handed host memory");
  }
  void device_unit(std::int64_t unit, const PackedGenotypeView& view, void* stream) override {
    // The lane's previous unit was delivered before this one started: its buffer is free.
    Copy& c = copies_[static_cast<cudaStream_t>(stream)];
    const std::int64_t bytes = view.variants * view.words_per_row * 8;
    if (c.buffer.size() < bytes) c.buffer = PinnedBuffer(bytes);
    VCZ_CUDA_CHECK(cudaMemcpyAsync(c.buffer.data(), view.words, static_cast<std::size_t>(bytes),
                                   cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(stream)));
    c.unit = unit;
    c.view = view;
    c.view.words = reinterpret_cast<const std::uint64_t*>(c.buffer.data());
  }
  const PackedGenotypeView* view(std::int64_t unit) const override {
    for (const auto& [stream, c] : copies_)
      if (c.unit == unit) return &c.view;
    return nullptr;
  }

 private:
  struct Copy {
    PinnedBuffer buffer;
    std::int64_t unit = -1;
    PackedGenotypeView view;
  };
  cuda::DeviceContext& ctx_;
  std::int64_t words_;
  std::map<cudaStream_t, Copy> copies_;
};

}  // namespace

std::unique_ptr<SampleMatrixAccumulator> make_sample_matrix_gpu(const SampleMatrixSpec& spec) {
  return std::make_unique<GpuSampleMatrix>(spec);
}

std::unique_ptr<PackedHostMirror> make_packed_host_mirror_gpu(std::int64_t samples, int device) {
  return std::make_unique<GpuHostMirror>(samples, device);
}

}  // namespace vczstats::backend
