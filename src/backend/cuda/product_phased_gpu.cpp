// Site-pass product kPhasedHaplotypes on the GPU: every unit's bit-packed phased haplotypes
// (backend/cpu/product_phased.cpp on the CPU), packed on the lane, copied back and delivered with
// the unit in its slot (a PhasedHaplotypeView, host memory). The producers check
// call_genotype_phased: against the host-decoded block, or with device decode from the flags
// alone (stream::PhasedReader::check_encoded: the host decodes a block only when one of its flags
// is false).

#include "backend/cuda/gpu_product.hpp"
#include "backend/cuda/haplo_kernels.cuh"
#include "stream/genotype_reader.hpp"
#include "stream/phased_reader.hpp"
#include "vczstats/packed_haplotypes.hpp"

namespace vczstats::backend {
namespace {

class PhasedGpu final : public CopiedRowsProduct<std::uint64_t> {
 public:
  explicit PhasedGpu(const GpuProductContext& ctx)
      : CopiedRowsProduct(ctx,
                          phased_planes(*ctx.spec->store) *
                              haplotype_words(ctx.spec->samples->size() * ctx.reader->ploidy())),
        planes_(phased_planes(*ctx.spec->store)),
        ploidy_(ctx.reader->ploidy()),
        haplotypes_(ctx.spec->samples->size() * ploidy_),
        plane_words_(haplotype_words(haplotypes_)),
        reader_(*ctx.spec->store, *ctx.spec->samples, *ctx.reader),
        buffers_(ctx.workers),
        scratch_(ctx.workers) {}

  void check_block(const vcz::WorkUnit& unit, std::int64_t block, const GenotypeChunkView& view,
                   unsigned worker) override {
    reader_.check(unit, static_cast<std::size_t>(block), view, buffers_[worker]);
  }
  void check_encoded(const vcz::WorkUnit& unit, std::int64_t block, unsigned worker) override {
    reader_.check_encoded(unit, static_cast<std::size_t>(block), buffers_[worker],
                          scratch_[worker]);
  }
  void launch(int phase, unsigned lane, std::int64_t, const GenotypeChunkView& dv,
              const vcz::WorkUnit&, cudaStream_t st) override {
    if (phase == 0) cuda::launch_pack_haplotypes(dv, planes_, rows_.device(lane), plane_words_, st);
  }
  void deliver(unsigned lane, const vcz::WorkUnit& unit, UnitOutput& out) override {
    out.products.push_back(
        {kPhasedHaplotypes, phased_unit_view(rows_.host(lane, unit.size()).data(), unit,
                                             haplotypes_, ploidy_, planes_, plane_words_)});
  }

 private:
  const int planes_;
  const std::int64_t ploidy_, haplotypes_, plane_words_;
  stream::PhasedReader reader_;
  std::vector<std::vector<std::byte>> buffers_;  // one per producer
  std::vector<stream::BlockBuffers> scratch_;    // a host decode for check_encoded, per producer
};

}  // namespace

std::unique_ptr<GpuSiteProduct> make_phased_gpu(const GpuProductContext& ctx, const ProductNeed&) {
  return std::make_unique<PhasedGpu>(ctx);
}

}  // namespace vczstats::backend
