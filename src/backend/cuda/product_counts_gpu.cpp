// Site-pass product on the GPU: allele counts per site and population (backend/cpu/
// product_counts.cpp on the CPU), summed on the lane over a unit's blocks, copied back to the
// lane's host buffer and delivered with the unit (UnitOutput::counts).

#include "backend/cuda/counts_kernels.cuh"
#include "backend/cuda/gpu_product.hpp"
#include "stream/genotype_reader.hpp"

namespace vczstats::backend {
namespace {

class CountsGpu final : public CopiedRowsProduct<std::int32_t> {
 public:
  explicit CountsGpu(const GpuProductContext& ctx)
      : CopiedRowsProduct(ctx, ctx.spec->counts->site_width()), pass_(*ctx.spec->counts) {}

  /// The population segments of every sample block.
  void setup(cudaStream_t s0) override {
    const stream::GenotypeReader& reader = *ctx_.reader;
    std::vector<cuda::CountSegment> all;
    for (std::size_t b = 0; b < reader.num_blocks(); ++b) {
      GenotypeChunkView columns;
      columns.sample_offset = reader.block_first(b);
      columns.samples = reader.block_samples(b);
      offset_.push_back(static_cast<std::int64_t>(all.size()));
      for (const auto& s : pass_.segments(columns)) all.push_back({s.begin, s.end, s.pop, 0});
      count_.push_back(static_cast<std::int64_t>(all.size()) - offset_.back());
    }
    const auto bytes = static_cast<std::int64_t>(all.size() * sizeof(cuda::CountSegment));
    segments_ = cuda::DeviceBuffer(*ctx_.pool, bytes, s0);
    // Pageable source: the call returns once the data is staged.
    VCZ_CUDA_CHECK(cudaMemcpyAsync(segments_.data(), all.data(), static_cast<std::size_t>(bytes),
                                   cudaMemcpyHostToDevice, s0));
  }

  void launch(int phase, unsigned lane, std::int64_t block, const GenotypeChunkView& dv,
              const vcz::WorkUnit&, cudaStream_t st) override {
    if (phase != 0) return;
    const auto b = static_cast<std::size_t>(block);
    const cuda::CountsArgs a =
        cuda::counts_args(dv, pass_.layout(), segments_.as<cuda::CountSegment>() + offset_[b],
                          count_[b], rows_.device(lane));
    if (ctx_.seed)
      cuda::launch_allele_counts_baseline(a, st);
    else
      cuda::launch_allele_counts(a, st);
  }

  void deliver(unsigned lane, const vcz::WorkUnit& unit, UnitOutput& out) override {
    out.counts = rows_.host(lane, unit.size());
  }

 private:
  const stats::AlleleCountsPass& pass_;
  cuda::DeviceBuffer segments_;
  std::vector<std::int64_t> offset_, count_;  // per sample block, into segments_
};

}  // namespace

std::unique_ptr<GpuSiteProduct> make_counts_gpu(const GpuProductContext& ctx) {
  return std::make_unique<CountsGpu>(ctx);
}

}  // namespace vczstats::backend
