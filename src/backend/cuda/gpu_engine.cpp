// The statistics of the CUDA backend on the shared GPU site pass (gpu_pipeline.hpp):
//  - afdist: the heavy kernel per sample block into per-site AfdistSites on the device; at the
//    end of a unit its mask and the histogram kernel; only the histogram (bins × 8 bytes) comes
//    back, after the streams are joined.
//  - the allele-counts heavy pass: the counts kernel per sample block into the unit's counts on
//    the device (rows × pops × width int32, added block by block on the unit's stream); at the
//    end of a unit a D2H copy into the stream's pinned host buffer; the calling thread hands
//    finished units to the consumer in plan order, waiting only when a stream's host buffer is
//    needed again (a unit is consumed before the unit S later reuses its stream) or at the end.
// The population segments of each sample block are computed once and stay on the device.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <utility>

#include "backend/cuda/afdist_kernels.cuh"
#include "backend/cuda/counts_kernels.cuh"
#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/gpu_engine.hpp"
#include "backend/cuda/gpu_pipeline.hpp"

namespace vczstats {
namespace {

using Clock = std::chrono::steady_clock;
using cuda::GpuSitePass;
using cuda::StageTimer;
using stats::AfdistSite;

/// Bin edges of a histogram on the device, as the CPU accumulator defines them.
struct DeviceEdges {
  cuda::DeviceBuffer f, d;
  DeviceEdges(cuda::DevicePool& pool, const stats::AfdistResult& empty, cudaStream_t stream) {
    const std::size_t n = empty.edges.size();
    std::vector<float> ef(n);
    // bcftools edges are float32 values held in doubles: converting back is exact.
    for (std::size_t i = 0; i < n; ++i) ef[i] = static_cast<float>(empty.edges[i]);
    f = cuda::DeviceBuffer(pool, static_cast<std::int64_t>(n * sizeof(float)), stream);
    d = cuda::DeviceBuffer(pool, static_cast<std::int64_t>(n * sizeof(double)), stream);
    // Pageable sources: the calls return once the data is staged, so the vectors may go.
    VCZ_CUDA_CHECK(
        cudaMemcpyAsync(f.data(), ef.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
    VCZ_CUDA_CHECK(cudaMemcpyAsync(d.data(), empty.edges.data(), n * sizeof(double),
                                   cudaMemcpyHostToDevice, stream));
    VCZ_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
};

cuda::HistogramArgs histogram_args(const stats::AfdistOptions& options, std::int64_t num_samples,
                                   const DeviceEdges& edges, cuda::DeviceBuffer& hist) {
  cuda::HistogramArgs h;
  h.method = options.method;
  h.num_samples = num_samples;
  h.edges_f = edges.f.as<float>();
  h.edges_d = edges.d.as<double>();
  h.bins = options.bins;
  h.hist = hist.as<unsigned long long>();
  return h;
}

// ---- afdist
// --------------------------------------------------------------------------------------

class AfdistHooks final : public cuda::SitePassHooks {
 public:
  AfdistHooks(GpuSitePass& pass, const stats::AfdistOptions& options, std::int64_t num_samples,
              const stats::AfdistResult& empty)
      : pass_(pass),
        options_(options),
        bins_(static_cast<std::size_t>(options.bins)),
        hist_(pass.pool(), static_cast<std::int64_t>(bins_ * sizeof(unsigned long long)),
              pass.stream(0)),
        edges_(pass.pool(), empty, pass.stream(0)),  // synchronises stream 0
        host_hist_(static_cast<std::int64_t>(bins_ * sizeof(unsigned long long))) {
    const cudaStream_t s0 = pass.stream(0);
    VCZ_CUDA_CHECK(cudaMemsetAsync(hist_.data(), 0, bins_ * sizeof(unsigned long long), s0));
    VCZ_CUDA_CHECK(cudaStreamSynchronize(s0));  // every stream's histogram kernel adds to it
    hist_args_ = histogram_args(options, num_samples, edges_, hist_);
    for (unsigned l = 0; l < pass.lanes(); ++l)
      lanes_.push_back(std::make_unique<Lane>(pass.pool(), pass.max_rows(), pass.stream(l)));
  }

  void begin_unit(unsigned lane, std::int64_t, const vcz::WorkUnit& unit,
                  cudaStream_t st) override {
    VCZ_CUDA_CHECK(cudaMemsetAsync(lanes_[lane]->sites.data(), 0,
                                   static_cast<std::size_t>(unit.size()) * sizeof(AfdistSite), st));
  }

  void block(unsigned lane, std::int64_t, std::int64_t, const GenotypeChunkView& view,
             cudaStream_t st) override {
    cuda::HeavyArgs heavy;
    heavy.data = view.data;
    heavy.elem_bytes = view.elem_bytes;
    heavy.rows = view.variants;
    heavy.samples = view.samples;
    heavy.ploidy = static_cast<int>(view.ploidy);
    heavy.sites = lanes_[lane]->sites.as<AfdistSite>();
    heavy.method = options_.method;
    if (pass_.seed_baseline())
      cuda::launch_afdist_baseline(heavy, st);
    else
      cuda::launch_afdist_heavy(heavy, st);
  }

  void end_unit(unsigned lane_index, std::int64_t, const vcz::WorkUnit& unit,
                cudaStream_t st) override {
    // The unit's sites are complete: reduce them into the histogram.
    Lane& lane = *lanes_[lane_index];
    StageTimer& timer = pass_.timer();
    cuda::HistogramArgs h = hist_args_;
    h.sites = lane.sites.as<AfdistSite>();
    h.rows = unit.size();
    if (!unit.mask.empty()) {
      if (lane.mask_pending) lane.mask_copied.synchronize();  // its last copy read mask_host
      std::memcpy(lane.mask_host.data(), unit.mask.data(), unit.mask.size());
      const int t = timer.start(st);
      VCZ_CUDA_CHECK(cudaMemcpyAsync(lane.mask.data(), lane.mask_host.data(), unit.mask.size(),
                                     cudaMemcpyHostToDevice, st));
      timer.stop(t, st, StageTimer::kH2D);
      lane.mask_copied.record(st);
      lane.mask_pending = true;
      h.mask = lane.mask.as<std::uint8_t>();
    }
    const int t = timer.start(st);
    cuda::launch_afdist_histogram(h, st);
    timer.stop(t, st, StageTimer::kReduce);
  }

  /// Join the other streams into stream 0, bring the histogram back and wait for it.
  void finish(stats::AfdistResult& result) {
    const cudaStream_t s0 = pass_.stream(0);
    std::vector<cuda::Event> joins;
    for (unsigned s = 1; s < pass_.lanes(); ++s) {
      joins.emplace_back();
      joins.back().record(pass_.stream(s));
      VCZ_CUDA_CHECK(cudaStreamWaitEvent(s0, joins.back().get(), 0));
    }
    const int t = pass_.timer().start(s0);
    VCZ_CUDA_CHECK(cudaMemcpyAsync(host_hist_.data(), hist_.data(),
                                   bins_ * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s0));
    pass_.timer().stop(t, s0, StageTimer::kD2H);
    pass_.synchronize();
    const auto* counts = reinterpret_cast<const unsigned long long*>(host_hist_.data());
    for (std::size_t k = 0; k < bins_; ++k) result.counts[k] = counts[k];
  }

 private:
  /// The device buffers of the units queued on one stream.
  struct Lane {
    cuda::DeviceBuffer sites;  // AfdistSite per row of the unit
    cuda::DeviceBuffer mask;   // the unit's variant mask, when it has one
    cuda::PinnedBuffer mask_host;
    cuda::Event mask_copied;
    bool mask_pending = false;
    Lane(cuda::DevicePool& pool, std::int64_t max_rows, cudaStream_t st)
        : sites(pool, max_rows * static_cast<std::int64_t>(sizeof(AfdistSite)), st),
          mask(pool, max_rows, st),
          mask_host(max_rows) {}
  };

  GpuSitePass& pass_;
  const stats::AfdistOptions& options_;
  std::size_t bins_;
  cuda::DeviceBuffer hist_;
  DeviceEdges edges_;
  cuda::PinnedBuffer host_hist_;
  cuda::HistogramArgs hist_args_;
  std::vector<std::unique_ptr<Lane>> lanes_;
};

// ---- allele counts
// -------------------------------------------------------------------------------

/// The population segments of every sample block, on the device.
struct DeviceSegments {
  cuda::DeviceBuffer buffer;
  std::vector<std::int64_t> offset, count;  // per sample block

  DeviceSegments(cuda::DevicePool& pool, const stream::GenotypeReader& reader,
                 const stats::AlleleCountsPass& counts, cudaStream_t st) {
    std::vector<cuda::CountSegment> all;
    for (std::size_t b = 0; b < reader.num_blocks(); ++b) {
      GenotypeChunkView columns;
      columns.sample_offset = reader.block_first(b);
      columns.samples = reader.block_samples(b);
      offset.push_back(static_cast<std::int64_t>(all.size()));
      for (const auto& s : counts.segments(columns)) all.push_back({s.begin, s.end, s.pop, 0});
      count.push_back(static_cast<std::int64_t>(all.size()) - offset.back());
    }
    const auto bytes = static_cast<std::int64_t>(all.size() * sizeof(cuda::CountSegment));
    buffer = cuda::DeviceBuffer(pool, bytes, st);
    // Pageable source: the call returns once the data is staged.
    VCZ_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), all.data(), static_cast<std::size_t>(bytes),
                                   cudaMemcpyHostToDevice, st));
    VCZ_CUDA_CHECK(cudaStreamSynchronize(st));
  }
  const cuda::CountSegment* of_block(std::int64_t b) const {
    return buffer.as<cuda::CountSegment>() + offset[static_cast<std::size_t>(b)];
  }
};

class CountsHooks final : public cuda::SitePassHooks {
 public:
  CountsHooks(GpuSitePass& pass, const vcz::ChunkPlan& plan, const stats::AlleleCountsPass& counts,
              const CountsConsumer& consume)
      : pass_(pass),
        plan_(plan),
        layout_(counts.layout()),
        consume_(consume),
        segments_(pass.pool(), pass.reader(), counts, pass.stream(0)) {
    const std::int64_t bytes =
        pass.max_rows() * layout_.site_width() * static_cast<std::int64_t>(sizeof(std::int32_t));
    for (unsigned l = 0; l < pass.lanes(); ++l)
      lanes_.push_back(std::make_unique<Lane>(pass.pool(), bytes, pass.stream(l)));
  }

  void begin_unit(unsigned lane, std::int64_t, const vcz::WorkUnit& unit,
                  cudaStream_t st) override {
    // The stream's host buffer still holds the counts of the unit before it on this stream.
    while (lanes_[lane]->pending) consume_front(true);
    VCZ_CUDA_CHECK(cudaMemsetAsync(lanes_[lane]->counts.data(), 0, unit_bytes(unit), st));
  }

  void block(unsigned lane, std::int64_t, std::int64_t b, const GenotypeChunkView& view,
             cudaStream_t st) override {
    const cuda::CountsArgs a = cuda::counts_args(view, layout_, segments_.of_block(b),
                                                 segments_.count[static_cast<std::size_t>(b)],
                                                 lanes_[lane]->counts.as<std::int32_t>());
    if (pass_.seed_baseline())
      cuda::launch_allele_counts_baseline(a, st);
    else
      cuda::launch_allele_counts(a, st);
  }

  void end_unit(unsigned lane_index, std::int64_t u, const vcz::WorkUnit& unit,
                cudaStream_t st) override {
    Lane& lane = *lanes_[lane_index];
    const int t = pass_.timer().start(st);
    if (pass_.seed_baseline()) {  // pageable: returns when the copy is done
      lane.pageable.resize(static_cast<std::size_t>(unit.size() * layout_.site_width()));
      VCZ_CUDA_CHECK(cudaMemcpyAsync(lane.pageable.data(), lane.counts.data(), unit_bytes(unit),
                                     cudaMemcpyDeviceToHost, st));
    } else {
      VCZ_CUDA_CHECK(cudaMemcpyAsync(lane.host.data(), lane.counts.data(), unit_bytes(unit),
                                     cudaMemcpyDeviceToHost, st));
    }
    pass_.timer().stop(t, st, StageTimer::kD2H);
    lane.copied.record(st);
    lane.pending = true;
    pending_.push_back({u, lane_index});
    // Hand over what is already back, without waiting.
    while (!pending_.empty() && consume_front(false)) {
    }
  }

  /// Consume every unit still pending, in plan order (after GpuSitePass::run).
  void finish() {
    while (!pending_.empty()) consume_front(true);
  }

  double consume_seconds() const { return consume_seconds_; }

 private:
  struct Lane {
    cuda::DeviceBuffer counts;  // the unit's rows × site_width
    cuda::PinnedBuffer host;
    std::vector<std::int32_t> pageable;  // seed-style baseline
    cuda::Event copied;
    bool pending = false;
    Lane(cuda::DevicePool& pool, std::int64_t bytes, cudaStream_t st)
        : counts(pool, bytes, st), host(bytes) {}
  };
  struct Pending {
    std::int64_t unit;
    unsigned lane;
  };

  std::size_t unit_bytes(const vcz::WorkUnit& unit) const {
    return static_cast<std::size_t>(unit.size() * layout_.site_width()) * sizeof(std::int32_t);
  }

  /// Hand the oldest pending unit to the consumer; @p wait: wait for its copy, else return false
  /// when it is not back yet.
  bool consume_front(bool wait) {
    const Pending p = pending_.front();
    Lane& lane = *lanes_[p.lane];
    if (wait) {
      lane.copied.synchronize();
    } else {
      const cudaError_t e = cudaEventQuery(lane.copied.get());
      if (e == cudaErrorNotReady) return false;
      VCZ_CUDA_CHECK(e);
    }
    const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(p.unit)];
    const auto n = static_cast<std::size_t>(unit.size() * layout_.site_width());
    const std::int32_t* data = pass_.seed_baseline()
                                   ? lane.pageable.data()
                                   : reinterpret_cast<const std::int32_t*>(lane.host.data());
    const auto t0 = Clock::now();
    consume_(p.unit, unit, std::span<const std::int32_t>(data, n));
    consume_seconds_ += std::chrono::duration<double>(Clock::now() - t0).count();
    lane.pending = false;
    pending_.pop_front();
    return true;
  }

  GpuSitePass& pass_;
  const vcz::ChunkPlan& plan_;
  stats::CountsLayout layout_;
  const CountsConsumer& consume_;
  DeviceSegments segments_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::deque<Pending> pending_;
  double consume_seconds_ = 0;
};

}  // namespace

stats::AfdistResult run_afdist_gpu(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                                   const vcz::SampleSelection& samples,
                                   const stats::AfdistAccumulator& acc, const RunOptions& run,
                                   RunStats* run_stats) {
  GpuSitePass pass(store, plan, samples, run);
  stats::AfdistResult result = acc.finalize();  // edges and empty counts
  AfdistHooks hooks(pass, acc.options(), samples.size(), result);
  pass.run(hooks);
  hooks.finish(result);
  result.sites = plan.selected_variants();
  pass.report(run_stats);
  return result;
}

bool gpu_has_allele_counts() {
  return true;
}

void run_allele_counts_gpu(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                           const vcz::SampleSelection& samples,
                           const stats::AlleleCountsPass& counts, const RunOptions& run,
                           RunStats* run_stats, const CountsConsumer& consume) {
  GpuSitePass pass(store, plan, samples, run);
  CountsHooks hooks(pass, plan, counts, consume);
  pass.run(hooks);
  hooks.finish();
  pass.synchronize();
  pass.report(run_stats, hooks.consume_seconds());
}

// ---- testing hooks
// -------------------------------------------------------------------------------

namespace cuda::testing {

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
                   std::span<std::int32_t> sites, bool seed_baseline) {
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
              else
                launch_allele_counts(a, st, path);
            });
}

std::vector<std::uint64_t> histogram(std::span<const AfdistSite> sites,
                                     std::span<const std::uint8_t> mask,
                                     const stats::AfdistOptions& options,
                                     std::int64_t num_samples) {
  stats::AfdistAccumulator acc;
  acc.init(options, num_samples, 2);
  const stats::AfdistResult empty = acc.finalize();
  const auto bins = static_cast<std::size_t>(options.bins);
  std::vector<std::uint64_t> out(bins);
  VCZ_CUDA_CHECK(cudaSetDevice(0));
  DevicePool pool(0);
  Stream stream;
  const cudaStream_t st = stream.get();
  {
    DeviceBuffer hist(pool, static_cast<std::int64_t>(bins * sizeof(unsigned long long)), st);
    DeviceBuffer dsites(pool, static_cast<std::int64_t>(sites.size_bytes()), st);
    DeviceBuffer dmask(pool, static_cast<std::int64_t>(mask.size()), st);
    VCZ_CUDA_CHECK(cudaMemsetAsync(hist.data(), 0, bins * sizeof(unsigned long long), st));
    VCZ_CUDA_CHECK(cudaMemcpyAsync(dsites.data(), sites.data(), sites.size_bytes(),
                                   cudaMemcpyHostToDevice, st));
    if (!mask.empty())
      VCZ_CUDA_CHECK(
          cudaMemcpyAsync(dmask.data(), mask.data(), mask.size(), cudaMemcpyHostToDevice, st));
    const DeviceEdges edges(pool, empty, st);
    HistogramArgs h = histogram_args(options, num_samples, edges, hist);
    h.sites = dsites.as<AfdistSite>();
    h.rows = static_cast<std::int64_t>(sites.size());
    h.mask = mask.empty() ? nullptr : dmask.as<std::uint8_t>();
    launch_afdist_histogram(h, st);
    static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));
    VCZ_CUDA_CHECK(cudaMemcpyAsync(out.data(), hist.data(), bins * sizeof(std::uint64_t),
                                   cudaMemcpyDeviceToHost, st));
    stream.synchronize();
  }
  stream.synchronize();
  return out;
}

}  // namespace cuda::testing
}  // namespace vczstats
