// The GPU pipeline of afdist.
//
//   producers (run.threads)            consumer (calling thread)                 GPU, S streams
//   acquire a pinned slab ──▶ decode  ──▶ in plan order: H2D copy on the unit's ──▶ copy | heavy
//   (waits for a free slab whose          stream, event → slab back to the ring,     kernel per
//    last copy has finished)              heavy kernel; after a unit's last block:   block; hist
//                                         its mask and the histogram kernel          per unit
//
// Items are (unit, sample block) pairs in plan order, produced ahead by an OrderedPrefetcher
// (depth = run.prefetch or 2 × threads). Each unit runs on stream (unit mod S) with that
// stream's own device input buffer and site array, so a unit's blocks are counted in order and
// units on different streams overlap (decode of k+2, copy of k+1 and compute of k). The ring
// holds depth + S + 1 slabs, allocated once: every claimed-but-unconsumed item holds one (at most
// depth), the rest are free or wait for their copy to finish, so producers never wait forever.
// Only the histogram (bins × 8 bytes) comes back. Errors of producers reach the consumer through
// the prefetcher; on any exception the guard below stops the slab ring (waking producers), waits
// for the streams, and RAII frees the rest in a safe order.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "backend/cuda/afdist_kernels.cuh"
#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/gpu_engine.hpp"
#include "stream/genotype_reader.hpp"
#include "stream/prefetcher.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats {
namespace {

using Clock = std::chrono::steady_clock;
using stats::AfdistSite;

constexpr unsigned kDefaultStreams = 3;

// ---- pinned slab ring ------------------------------------------------------------------------

/// A bounded ring of pinned host slabs, each holding one decoded chunk and one gather buffer.
/// acquire() hands out a slab only once the copy that last read it has finished.
class SlabPool {
 public:
  /// A slab held by one producer or item; returned to the pool when destroyed unless
  /// release_after() queued its return behind a copy.
  class Lease {
   public:
    Lease() = default;
    Lease(SlabPool* pool, int index) : pool_(pool), index_(index) {}
    Lease(Lease&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)), index_(o.index_) {}
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { reset(); }
    std::span<std::byte> decoded() const { return pool_->slab(index_).decoded; }
    std::span<std::byte> gathered() const { return pool_->slab(index_).gathered; }

   private:
    friend class SlabPool;
    void reset() noexcept {
      if (pool_) std::exchange(pool_, nullptr)->give_back(index_);
    }
    SlabPool* pool_ = nullptr;
    int index_ = 0;
  };

  /// Up to @p count slabs, pinned lazily: a slab is allocated the first time no free one is
  /// left, so pinning overlaps decoding and a run pins only what it keeps in flight.
  SlabPool(int count, std::int64_t decoded_bytes, std::int64_t gathered_bytes)
      : decoded_bytes_(decoded_bytes),
        gathered_bytes_(gathered_bytes),
        slabs_(static_cast<std::size_t>(count)) {}

  /// A free slab whose last copy has finished (or a new one); blocks while all are in use.
  /// @throws Error after shutdown(), CudaError when the copy or the allocation failed.
  Lease acquire() {
    int index;
    bool fresh = false;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] {
        return shutdown_ || !free_.empty() || allocated_ < static_cast<int>(slabs_.size());
      });
      if (shutdown_) throw Error("GPU pipeline stopped");
      if (!free_.empty()) {
        index = free_.front();  // oldest first: its copy is the most likely to be done
        free_.pop_front();
      } else {
        index = allocated_++;
        fresh = true;
      }
    }
    if (fresh) {  // only this thread touches slabs_[index] until it is given back
      const std::int64_t dec = cuda::align_up(decoded_bytes_, 256);
      const std::int64_t gat = cuda::align_up(gathered_bytes_, 256);
      auto sl = std::make_unique<Slab>();
      sl->memory = cuda::PinnedBuffer(dec + gat);
      sl->decoded = {sl->memory.data(), static_cast<std::size_t>(decoded_bytes_)};
      sl->gathered = {sl->memory.data() + dec, static_cast<std::size_t>(gathered_bytes_)};
      slabs_[static_cast<std::size_t>(index)] = std::move(sl);
    }
    Lease lease(this, index);
    Slab& s = slab(index);
    if (s.copy_pending) {
      s.copy_pending = false;
      s.copied.synchronize();
    }
    return lease;
  }

  /// Return the slab once the work queued so far on @p stream (its H2D copy) has run.
  void release_after(Lease& lease, cudaStream_t stream) {
    if (!lease.pool_) return;
    Slab& s = slab(lease.index_);
    s.copied.record(stream);
    s.copy_pending = true;
    lease.pool_ = nullptr;
    give_back(lease.index_);
  }

  /// Wake every waiting producer and make acquire() throw from now on.
  void shutdown() noexcept {
    {
      std::lock_guard lock(mutex_);
      shutdown_ = true;
    }
    cv_.notify_all();
  }

 private:
  struct Slab {
    cuda::PinnedBuffer memory;
    std::span<std::byte> decoded, gathered;
    cuda::Event copied;         // recorded after the H2D copy that reads this slab
    bool copy_pending = false;  // touched only by the slab's current holder
  };
  Slab& slab(int i) { return *slabs_[static_cast<std::size_t>(i)]; }
  void give_back(int index) noexcept {
    {
      std::lock_guard lock(mutex_);
      free_.push_back(index);
    }
    cv_.notify_one();
  }

  std::int64_t decoded_bytes_, gathered_bytes_;
  std::vector<std::unique_ptr<Slab>> slabs_;  // allocated_ leading entries are set
  int allocated_ = 0;
  std::deque<int> free_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool shutdown_ = false;
};

// ---- stage timing with CUDA events -------------------------------------------------------------

/// Times stages queued on streams with event pairs; the elapsed times of each stage are summed
/// over all streams. Event pairs are recycled; at most kMaxPending wait to be read.
class StageTimer {
 public:
  enum Stage { kH2D, kHeavy, kHistogram, kD2H, kStages };

  int start(cudaStream_t stream) {
    const int k = take();
    pairs_[static_cast<std::size_t>(k)].first.record(stream);
    return k;
  }
  void stop(int k, cudaStream_t stream, Stage stage) {
    pairs_[static_cast<std::size_t>(k)].second.record(stream);
    pending_.emplace_back(k, stage);
  }
  /// Read every pending pair (waits for the work timed).
  void drain() {
    while (!pending_.empty()) collect_front();
  }
  double seconds(Stage stage) const { return ms_[stage] * 1e-3; }

 private:
  static constexpr std::size_t kMaxPending = 512;
  int take() {
    if (free_.empty() && pending_.size() >= kMaxPending) collect_front();
    if (!free_.empty()) {
      const int k = free_.back();
      free_.pop_back();
      return k;
    }
    pairs_.emplace_back(std::piecewise_construct, std::forward_as_tuple(true),
                        std::forward_as_tuple(true));
    return static_cast<int>(pairs_.size() - 1);
  }
  void collect_front() {
    const auto [k, stage] = pending_.front();
    pending_.pop_front();
    auto& [begin, end] = pairs_[static_cast<std::size_t>(k)];
    end.synchronize();
    float ms = 0;
    VCZ_CUDA_CHECK(cudaEventElapsedTime(&ms, begin.get(), end.get()));
    ms_[stage] += static_cast<double>(ms);
    free_.push_back(k);
  }
  std::deque<std::pair<cuda::Event, cuda::Event>> pairs_;  // deque: elements never move
  std::deque<std::pair<int, Stage>> pending_;
  std::vector<int> free_;
  double ms_[kStages] = {};
};

// ---- per-stream resources ----------------------------------------------------------------------

/// One CUDA stream and the device buffers of the units queued on it. The stream is declared first
/// so the buffers (freed in its order) go before it.
struct StreamLane {
  cuda::Stream stream;
  cuda::DeviceBuffer input;  // one sample block of a unit
  cuda::DeviceBuffer sites;  // AfdistSite per row of the unit
  cuda::DeviceBuffer mask;   // the unit's variant mask, when it has one
  cuda::PinnedBuffer mask_host;
  cuda::Event mask_copied;
  bool mask_pending = false;

  StreamLane(cuda::DevicePool& pool, std::int64_t input_bytes, std::int64_t max_rows)
      : input(pool, input_bytes, stream.get()),
        sites(pool, max_rows * static_cast<std::int64_t>(sizeof(AfdistSite)), stream.get()),
        mask(pool, max_rows, stream.get()),
        mask_host(max_rows) {}
};

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

/// Pinned memory the ring may take: a quarter of physical memory, at most 16 GiB.
std::int64_t pinned_budget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const std::int64_t phys =
      pages > 0 && page > 0 ? std::int64_t{pages} * page : std::int64_t{8} << 30;
  return std::min<std::int64_t>(phys / 4, std::int64_t{16} << 30);
}

}  // namespace

stats::AfdistResult run_afdist_gpu(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                                   const vcz::SampleSelection& samples,
                                   const stats::AfdistAccumulator& acc, const RunOptions& run,
                                   RunStats* run_stats) {
  const auto start = Clock::now();
  const stats::AfdistOptions& options = acc.options();
  stream::GenotypeReader reader(store, samples);
  const auto nunits = static_cast<std::int64_t>(plan.units.size());
  const auto nblocks = static_cast<std::int64_t>(reader.num_blocks());
  if (nunits == 0 || nblocks == 0)
    throw Error("run_afdist_gpu: nothing to read (run_afdist handles empty plans)");

  const unsigned threads = run.threads ? run.threads : hardware_threads();
  const unsigned nstreams = run.gpu_streams ? run.gpu_streams : kDefaultStreams;
  std::int64_t max_rows = 0;
  for (const auto& unit : plan.units) max_rows = std::max(max_rows, unit.size());
  const std::int64_t decoded_bytes = reader.chunk_bytes();
  const std::int64_t gathered_bytes = reader.gathered_bytes(max_rows);
  // A view lies in the decoded chunk (whole sample chunk) or the gather buffer (subset).
  const std::int64_t input_bytes = std::max(decoded_bytes, gathered_bytes);
  const std::int64_t slab_bytes =
      cuda::align_up(decoded_bytes, 256) + cuda::align_up(gathered_bytes, 256);
  std::int64_t depth = run.prefetch ? run.prefetch : 2 * std::int64_t{threads};
  // Huge chunks: fewer items ahead rather than pinning most of the host's memory.
  const std::int64_t fit =
      pinned_budget() / std::max<std::int64_t>(slab_bytes, 1) - std::int64_t{nstreams} - 1;
  depth = std::max<std::int64_t>(1, std::min(depth, fit));
  const int ring = static_cast<int>(depth + nstreams + 1);

  VCZ_CUDA_CHECK(cudaSetDevice(0));
  const cuda::DeviceInfo info = cuda::device_info(0);
  stats::AfdistResult result = acc.finalize();  // edges and empty counts
  const auto bins = static_cast<std::size_t>(options.bins);

  // Declaration order is destruction order reversed: pool last, streams after their buffers,
  // pinned memory after the streams that read it are idle (guard below).
  cuda::DevicePool pool(0);
  std::vector<std::unique_ptr<StreamLane>> lanes;
  for (unsigned s = 0; s < nstreams; ++s)
    lanes.push_back(std::make_unique<StreamLane>(pool, input_bytes, max_rows));
  cudaStream_t s0 = lanes[0]->stream.get();
  cuda::DeviceBuffer hist(pool, static_cast<std::int64_t>(bins * sizeof(unsigned long long)), s0);
  VCZ_CUDA_CHECK(cudaMemsetAsync(hist.data(), 0, bins * sizeof(unsigned long long), s0));
  const DeviceEdges edges(pool, result, s0);  // synchronises s0: hist and edges are ready
  cuda::PinnedBuffer host_hist(static_cast<std::int64_t>(bins * sizeof(unsigned long long)));
  cuda::HistogramArgs hist_args = histogram_args(options, samples.size(), edges, hist);

  SlabPool slabs(ring, decoded_bytes, gathered_bytes);
  StageTimer timer;
  std::vector<stream::ReadCounters> counters(threads);

  struct Item {
    SlabPool::Lease lease;
    GenotypeChunkView view;
  };
  const std::int64_t nitems = nunits * nblocks;
  stream::OrderedPrefetcher<Item> prefetcher(
      nitems, threads, static_cast<unsigned>(depth), [&](std::int64_t i, unsigned p) {
        const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(i / nblocks)];
        SlabPool::Lease lease = slabs.acquire();
        const GenotypeChunkView view = reader.read(unit, static_cast<std::size_t>(i % nblocks),
                                                   lease.decoded(), lease.gathered(), &counters[p]);
        return Item{std::move(lease), view};
      });
  // Runs first on the way out, normal or not: wake producers waiting for a slab (the prefetcher
  // then joins them) and let queued GPU work finish before buffers and pinned memory go.
  struct Guard {
    SlabPool& slabs;
    std::vector<std::unique_ptr<StreamLane>>& lanes;
    ~Guard() {
      slabs.shutdown();
      for (auto& lane : lanes) cudaStreamSynchronize(lane->stream.get());
    }
  } guard{slabs, lanes};

  std::int64_t done_variants = 0, calls = 0, h2d_bytes = 0;
  for (std::int64_t i = 0; i < nitems; ++i) {
    std::optional<Item> item = prefetcher.next();
    const std::int64_t u = i / nblocks, b = i % nblocks;
    const vcz::WorkUnit& unit = plan.units[static_cast<std::size_t>(u)];
    StreamLane& lane = *lanes[static_cast<std::size_t>(u % nstreams)];
    const cudaStream_t st = lane.stream.get();
    const GenotypeChunkView& view = item->view;
    if (b == 0)
      VCZ_CUDA_CHECK(cudaMemsetAsync(
          lane.sites.data(), 0, static_cast<std::size_t>(unit.size()) * sizeof(AfdistSite), st));

    int t = timer.start(st);
    VCZ_CUDA_CHECK(cudaMemcpyAsync(lane.input.data(), view.data,
                                   static_cast<std::size_t>(view.bytes()), cudaMemcpyHostToDevice,
                                   st));
    timer.stop(t, st, StageTimer::kH2D);
    h2d_bytes += view.bytes();
    slabs.release_after(item->lease, st);

    cuda::HeavyArgs heavy;
    heavy.data = lane.input.data();
    heavy.elem_bytes = view.elem_bytes;
    heavy.rows = view.variants;
    heavy.samples = view.samples;
    heavy.ploidy = static_cast<int>(view.ploidy);
    heavy.sites = lane.sites.as<AfdistSite>();
    heavy.method = options.method;
    t = timer.start(st);
    cuda::launch_afdist_heavy(heavy, st);
    timer.stop(t, st, StageTimer::kHeavy);
    calls += view.calls();

    if (b == nblocks - 1) {  // the unit's sites are complete: reduce them into the histogram
      cuda::HistogramArgs h = hist_args;
      h.sites = lane.sites.as<AfdistSite>();
      h.rows = unit.size();
      if (!unit.mask.empty()) {
        if (lane.mask_pending) lane.mask_copied.synchronize();  // its last copy read mask_host
        std::memcpy(lane.mask_host.data(), unit.mask.data(), unit.mask.size());
        t = timer.start(st);
        VCZ_CUDA_CHECK(cudaMemcpyAsync(lane.mask.data(), lane.mask_host.data(), unit.mask.size(),
                                       cudaMemcpyHostToDevice, st));
        timer.stop(t, st, StageTimer::kH2D);
        lane.mask_copied.record(st);
        lane.mask_pending = true;
        h.mask = lane.mask.as<std::uint8_t>();
      }
      t = timer.start(st);
      cuda::launch_afdist_histogram(h, st);
      timer.stop(t, st, StageTimer::kHistogram);
      done_variants += unit.selected();
      if (run.progress) run.progress(u + 1, nunits, done_variants);
    }
  }

  // Join the other streams into stream 0, then bring the histogram back.
  std::vector<cuda::Event> joins;
  for (std::size_t s = 1; s < lanes.size(); ++s) {
    joins.emplace_back();
    joins.back().record(lanes[s]->stream.get());
    VCZ_CUDA_CHECK(cudaStreamWaitEvent(s0, joins.back().get(), 0));
  }
  const int t = timer.start(s0);
  VCZ_CUDA_CHECK(cudaMemcpyAsync(host_hist.data(), hist.data(), bins * sizeof(unsigned long long),
                                 cudaMemcpyDeviceToHost, s0));
  timer.stop(t, s0, StageTimer::kD2H);
  lanes[0]->stream.synchronize();
  timer.drain();

  const auto* counts = reinterpret_cast<const unsigned long long*>(host_hist.data());
  for (std::size_t k = 0; k < bins; ++k) result.counts[k] = counts[k];
  result.sites = plan.selected_variants();

  if (run_stats) {
    run_stats->device = "gpu (" + info.name + ", " + std::to_string(nstreams) + " streams)";
    run_stats->wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    for (const auto& c : counters) {
      run_stats->read_decode_seconds += static_cast<double>(c.read_decode_ns) * 1e-9;
      run_stats->gather_seconds += static_cast<double>(c.gather_ns) * 1e-9;
      run_stats->decoded_bytes += c.decoded_bytes;
    }
    run_stats->compute_seconds = timer.seconds(StageTimer::kHeavy);
    run_stats->reduce_seconds = timer.seconds(StageTimer::kHistogram);
    run_stats->h2d_seconds = timer.seconds(StageTimer::kH2D);
    run_stats->d2h_seconds = timer.seconds(StageTimer::kD2H);
    run_stats->h2d_bytes = h2d_bytes;
    run_stats->calls = calls;
    run_stats->variants = done_variants;
    run_stats->units = nunits;
  }
  return result;
}

bool gpu_has_allele_counts() { return false; }

void run_allele_counts_gpu(const vcz::VczStore&, const vcz::ChunkPlan&,
                           const vcz::SampleSelection&, const stats::AlleleCountsPass&,
                           const RunOptions&, RunStats*, const CountsConsumer&) {
  throw UsageError("--device gpu: the allele-counts pass has no GPU implementation yet");
}

// ---- testing hooks
// -------------------------------------------------------------------------------

namespace cuda::testing {

void count_sites(const GenotypeChunkView& block, stats::AfdistMethod method, HeavyPath path,
                 std::span<AfdistSite> sites) {
  if (static_cast<std::int64_t>(sites.size()) != block.variants)
    throw UsageError("count_sites: one site per row expected");
  if (!heavy_path_fits(path, block.elem_bytes, static_cast<int>(block.ploidy)))
    throw UsageError("count_sites: the path does not fit the layout");
  VCZ_CUDA_CHECK(cudaSetDevice(0));
  DevicePool pool(0);
  Stream stream;
  const cudaStream_t st = stream.get();
  {
    DeviceBuffer data(pool, block.bytes(), st);
    DeviceBuffer dsites(pool, static_cast<std::int64_t>(sites.size_bytes()), st);
    VCZ_CUDA_CHECK(cudaMemcpyAsync(data.data(), block.data, static_cast<std::size_t>(block.bytes()),
                                   cudaMemcpyHostToDevice, st));
    VCZ_CUDA_CHECK(cudaMemcpyAsync(dsites.data(), sites.data(), sites.size_bytes(),
                                   cudaMemcpyHostToDevice, st));
    HeavyArgs a;
    a.data = data.data();
    a.elem_bytes = block.elem_bytes;
    a.rows = block.variants;
    a.samples = block.samples;
    a.ploidy = static_cast<int>(block.ploidy);
    a.sites = dsites.as<AfdistSite>();
    a.method = method;
    launch_afdist_heavy(a, st, path);
    VCZ_CUDA_CHECK(cudaMemcpyAsync(sites.data(), dsites.data(), sites.size_bytes(),
                                   cudaMemcpyDeviceToHost, st));
    stream.synchronize();
  }  // buffers freed on the stream before it is destroyed
  stream.synchronize();
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
