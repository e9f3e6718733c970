// Test hooks of the CUDA kernels (gpu_kernel_hooks.hpp).

#include "backend/gpu_kernel_hooks.hpp"

#include <vector>

#include "backend/cuda/afdist_kernels.cuh"
#include "backend/cuda/counts_kernels.cuh"
#include "backend/cuda/cuda_util.cuh"
#include "vczstats/error.hpp"

namespace gputest::kernels {

using namespace vczstats;
using namespace vczstats::cuda;
using stats::AfdistSite;

namespace {
/// Copy @p block and @p sites to the device, queue @p launch(pool, device block, device sites,
/// stream), copy the sites back and wait.
template <class Launch>
void on_device(const GenotypeChunkView& block, std::span<std::byte> sites, Launch&& launch) {
  VCZ_CUDA_CHECK(cudaSetDevice(0));
  DevicePool pool(0);
  Stream stream;
  const cudaStream_t st = stream.get();
  {
    DeviceBuffer data(pool, block.bytes(), st);
    DeviceBuffer dsites(pool, static_cast<std::int64_t>(sites.size()), st);
    VCZ_CUDA_CHECK(cudaMemcpyAsync(data.data(), block.data, static_cast<std::size_t>(block.bytes()),
                                   cudaMemcpyHostToDevice, st));
    VCZ_CUDA_CHECK(
        cudaMemcpyAsync(dsites.data(), sites.data(), sites.size(), cudaMemcpyHostToDevice, st));
    GenotypeChunkView device_block = block;
    device_block.data = data.data();
    launch(pool, device_block, dsites.data(), st);
    VCZ_CUDA_CHECK(
        cudaMemcpyAsync(sites.data(), dsites.data(), sites.size(), cudaMemcpyDeviceToHost, st));
    stream.synchronize();
  }  // buffers freed on the stream before it is destroyed
  stream.synchronize();
}
}  // namespace

void count_sites(const GenotypeChunkView& block, stats::AfdistMethod method, HeavyPath path,
                 std::span<AfdistSite> sites) {
  if (static_cast<std::int64_t>(sites.size()) != block.variants)
    throw UsageError("count_sites: one site per row expected");
  if (!heavy_path_fits(path, block.elem_bytes, static_cast<int>(block.ploidy)))
    throw UsageError("count_sites: the path does not fit the layout");
  on_device(block, std::as_writable_bytes(sites),
            [&](DevicePool&, const GenotypeChunkView& b, std::byte* dsites, cudaStream_t st) {
              HeavyArgs a;
              a.data = b.data;
              a.elem_bytes = b.elem_bytes;
              a.rows = b.variants;
              a.samples = b.samples;
              a.ploidy = static_cast<int>(b.ploidy);
              a.sites = reinterpret_cast<AfdistSite*>(dsites);
              a.method = method;
              launch_afdist_heavy(a, st, path);
            });
}

void allele_counts(const GenotypeChunkView& block, const stats::CountsLayout& layout,
                   std::span<const stats::AlleleCountsPass::Segment> segments, CountsPath path,
                   std::span<std::int32_t> sites, bool seed_baseline, int swar_row_lanes,
                   int swar_words) {
  if (static_cast<std::int64_t>(sites.size()) != block.variants * layout.site_width())
    throw UsageError("allele_counts: rows × site width counts expected");
  std::vector<CountSegment> segs;
  for (const auto& s : segments) segs.push_back({s.begin, s.end, s.pop, 0});
  on_device(block, std::as_writable_bytes(sites),
            [&](DevicePool& pool, const GenotypeChunkView& b, std::byte* dsites, cudaStream_t st) {
              const auto bytes = segs.size() * sizeof(CountSegment);
              DeviceBuffer dsegs(pool, static_cast<std::int64_t>(bytes), st);  // freed in order
              VCZ_CUDA_CHECK(
                  cudaMemcpyAsync(dsegs.data(), segs.data(), bytes, cudaMemcpyHostToDevice, st));
              const CountsArgs a = counts_args(b, layout, dsegs.as<CountSegment>(),
                                               static_cast<std::int64_t>(segs.size()),
                                               reinterpret_cast<std::int32_t*>(dsites));
              if (seed_baseline)
                launch_allele_counts_baseline(a, st);
              else if (swar_row_lanes > 0)
                launch_swar(a, st, swar_row_lanes, swar_words);
              else
                launch_allele_counts(a, st, path);
            });
}

}  // namespace gputest::kernels
