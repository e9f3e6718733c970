// The GPU site pass (gpu_pipeline.hpp): pinned slab ring, prefetcher, streams, stage timing.

#include "backend/cuda/gpu_pipeline.hpp"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

#include "stream/prefetcher.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::cuda {
namespace {

using Clock = std::chrono::steady_clock;

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
      const std::int64_t dec = align_up(decoded_bytes_, 256);
      const std::int64_t gat = align_up(gathered_bytes_, 256);
      auto sl = std::make_unique<Slab>();
      sl->memory = PinnedBuffer(dec + gat);
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
    PinnedBuffer memory;
    std::span<std::byte> decoded, gathered;
    Event copied;               // recorded after the H2D copy that reads this slab
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

/// Pinned memory the ring may take: a quarter of physical memory, at most 16 GiB.
std::int64_t pinned_budget() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const std::int64_t phys =
      pages > 0 && page > 0 ? std::int64_t{pages} * page : std::int64_t{8} << 30;
  return std::min<std::int64_t>(phys / 4, std::int64_t{16} << 30);
}

DeviceInfo select_device() {
  VCZ_CUDA_CHECK(cudaSetDevice(0));
  return device_info(0);
}

}  // namespace

bool seed_baseline_requested() {
  const char* v = std::getenv("VCZSTATS_GPU_SEED_BASELINE");
  return v && *v && std::strcmp(v, "0") != 0;
}

// ---- stage timing with CUDA events -------------------------------------------------------------

int StageTimer::start(cudaStream_t stream) {
  const int k = take();
  pairs_[static_cast<std::size_t>(k)].first.record(stream);
  return k;
}

void StageTimer::stop(int k, cudaStream_t stream, Stage stage) {
  pairs_[static_cast<std::size_t>(k)].second.record(stream);
  pending_.emplace_back(k, stage);
}

void StageTimer::drain() {
  while (!pending_.empty()) collect_front();
}

int StageTimer::take() {
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

void StageTimer::collect_front() {
  const auto [k, stage] = pending_.front();
  pending_.pop_front();
  auto& [begin, end] = pairs_[static_cast<std::size_t>(k)];
  end.synchronize();
  float ms = 0;
  VCZ_CUDA_CHECK(cudaEventElapsedTime(&ms, begin.get(), end.get()));
  ms_[stage] += static_cast<double>(ms);
  free_.push_back(k);
}

// ---- the pass ----------------------------------------------------------------------------------

/// One CUDA stream and the device buffer of the sample blocks queued on it. The stream is
/// declared first so the buffer (freed in its order) goes before it.
struct GpuSitePass::Lane {
  Stream stream;
  DeviceBuffer input;
  Lane(DevicePool& pool, std::int64_t input_bytes) : input(pool, input_bytes, stream.get()) {}
};

GpuSitePass::GpuSitePass(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
                         const vcz::SampleSelection& samples, const RunOptions& run)
    : plan_(plan),
      run_(run),
      reader_(store, samples),
      start_(Clock::now()),
      seed_baseline_(seed_baseline_requested()),
      info_(select_device()),
      pool_(0) {
  nunits_ = static_cast<std::int64_t>(plan.units.size());
  nblocks_ = static_cast<std::int64_t>(reader_.num_blocks());
  if (nunits_ == 0 || nblocks_ == 0)
    throw Error("GPU site pass: nothing to read (callers handle empty plans)");
  threads_ = run.threads ? run.threads : hardware_threads();
  const unsigned nstreams = seed_baseline_    ? 1
                            : run.gpu_streams ? run.gpu_streams
                                              : kDefaultStreams;
  for (const auto& unit : plan.units) max_rows_ = std::max(max_rows_, unit.size());
  decoded_bytes_ = reader_.chunk_bytes();
  gathered_bytes_ = reader_.gathered_bytes(max_rows_);
  // A view lies in the decoded chunk (whole sample chunk) or the gather buffer (subset).
  const std::int64_t input_bytes = std::max(decoded_bytes_, gathered_bytes_);
  const std::int64_t slab_bytes = align_up(decoded_bytes_, 256) + align_up(gathered_bytes_, 256);
  // Items ahead: every producer busy plus one per stream. The GPU takes items as fast as they
  // come, so a deeper queue (the CPU's 2 × threads) would only pin more memory, which costs
  // time at the start of every run (pinning a 20 MB chunk slab takes milliseconds).
  depth_ = run.prefetch ? run.prefetch : std::int64_t{threads_} + nstreams;
  // Huge chunks: fewer items ahead rather than pinning most of the host's memory.
  const std::int64_t fit =
      pinned_budget() / std::max<std::int64_t>(slab_bytes, 1) - std::int64_t{nstreams} - 1;
  depth_ = std::max<std::int64_t>(1, std::min(depth_, fit));
  ring_ = static_cast<int>(depth_ + nstreams + 1);
  for (unsigned s = 0; s < nstreams; ++s)
    lanes_.push_back(std::make_unique<Lane>(pool_, input_bytes));
  counters_.resize(seed_baseline_ ? 1 : threads_);
}

cudaStream_t GpuSitePass::stream(unsigned lane) const {
  return lanes_[lane]->stream.get();
}

GpuSitePass::~GpuSitePass() {
  for (auto& lane : lanes_) cudaStreamSynchronize(lane->stream.get());
}

void GpuSitePass::run(SitePassHooks& hooks) {
  if (seed_baseline_)
    run_seed_baseline(hooks);
  else
    run_pipelined(hooks);
}

void GpuSitePass::run_pipelined(SitePassHooks& hooks) {
  SlabPool slabs(ring_, decoded_bytes_, gathered_bytes_);
  struct Item {
    SlabPool::Lease lease;
    GenotypeChunkView view;
  };
  const std::int64_t nitems = nunits_ * nblocks_;
  stream::OrderedPrefetcher<Item> prefetcher(
      nitems, threads_, static_cast<unsigned>(depth_), [&](std::int64_t i, unsigned p) {
        const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(i / nblocks_)];
        SlabPool::Lease lease = slabs.acquire();
        const GenotypeChunkView view =
            reader_.read(unit, static_cast<std::size_t>(i % nblocks_), lease.decoded(),
                         lease.gathered(), &counters_[p]);
        return Item{std::move(lease), view};
      });
  // Runs first on the way out, normal or not: wake producers waiting for a slab (the prefetcher
  // then joins them) and let queued GPU work finish before the pinned slabs go.
  struct Guard {
    SlabPool& slabs;
    std::vector<std::unique_ptr<Lane>>& lanes;
    ~Guard() {
      slabs.shutdown();
      for (auto& lane : lanes) cudaStreamSynchronize(lane->stream.get());
    }
  } guard{slabs, lanes_};

  const auto nlanes = static_cast<std::int64_t>(lanes_.size());
  for (std::int64_t i = 0; i < nitems; ++i) {
    std::optional<Item> item = prefetcher.next();
    const std::int64_t u = i / nblocks_, b = i % nblocks_;
    const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(u)];
    const auto lane_index = static_cast<unsigned>(u % nlanes);
    Lane& lane = *lanes_[lane_index];
    const cudaStream_t st = lane.stream.get();
    const GenotypeChunkView& view = item->view;
    if (b == 0) hooks.begin_unit(lane_index, u, unit, st);

    int t = timer_.start(st);
    VCZ_CUDA_CHECK(cudaMemcpyAsync(lane.input.data(), view.data,
                                   static_cast<std::size_t>(view.bytes()), cudaMemcpyHostToDevice,
                                   st));
    timer_.stop(t, st, StageTimer::kH2D);
    h2d_bytes_ += view.bytes();
    slabs.release_after(item->lease, st);

    GenotypeChunkView device_view = view;
    device_view.data = lane.input.data();
    t = timer_.start(st);
    hooks.block(lane_index, u, b, device_view, st);
    timer_.stop(t, st, StageTimer::kCompute);
    calls_ += view.calls();

    if (b == nblocks_ - 1) {
      hooks.end_unit(lane_index, u, unit, st);
      done_variants_ += unit.selected();
      if (run_.progress) run_.progress(u + 1, nunits_, done_variants_);
    }
  }
}

void GpuSitePass::run_seed_baseline(SitePassHooks& hooks) {
  // Everything in turn on one stream: decode into pageable memory, copy (pageable: the call
  // returns once the data is staged), count, wait.
  Lane& lane = *lanes_[0];
  const cudaStream_t st = lane.stream.get();
  stream::BlockBuffers buffers;
  for (std::int64_t u = 0; u < nunits_; ++u) {
    const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(u)];
    hooks.begin_unit(0, u, unit, st);
    for (std::int64_t b = 0; b < nblocks_; ++b) {
      const GenotypeChunkView view =
          reader_.read(unit, static_cast<std::size_t>(b), buffers, &counters_[0]);
      int t = timer_.start(st);
      VCZ_CUDA_CHECK(cudaMemcpyAsync(lane.input.data(), view.data,
                                     static_cast<std::size_t>(view.bytes()), cudaMemcpyHostToDevice,
                                     st));
      timer_.stop(t, st, StageTimer::kH2D);
      h2d_bytes_ += view.bytes();
      GenotypeChunkView device_view = view;
      device_view.data = lane.input.data();
      t = timer_.start(st);
      hooks.block(0, u, b, device_view, st);
      timer_.stop(t, st, StageTimer::kCompute);
      calls_ += view.calls();
      lane.stream.synchronize();
    }
    hooks.end_unit(0, u, unit, st);
    lane.stream.synchronize();
    done_variants_ += unit.selected();
    if (run_.progress) run_.progress(u + 1, nunits_, done_variants_);
  }
}

void GpuSitePass::synchronize() {
  for (auto& lane : lanes_) lane->stream.synchronize();
  timer_.drain();
}

void GpuSitePass::report(RunStats* stats, double host_reduce_seconds) const {
  if (!stats) return;
  stats->device = "gpu (" + info_.name + ", " +
                  (seed_baseline_ ? std::string("seed-style baseline: one thread per variant, "
                                                "pageable copies, no overlap")
                                  : std::to_string(lanes_.size()) + " streams") +
                  ")";
  stats->wall_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  for (const auto& c : counters_) {
    stats->read_decode_seconds += static_cast<double>(c.read_decode_ns) * 1e-9;
    stats->gather_seconds += static_cast<double>(c.gather_ns) * 1e-9;
    stats->decoded_bytes += c.decoded_bytes;
  }
  stats->compute_seconds = timer_.seconds(StageTimer::kCompute);
  stats->reduce_seconds = timer_.seconds(StageTimer::kReduce) + host_reduce_seconds;
  stats->h2d_seconds = timer_.seconds(StageTimer::kH2D);
  stats->d2h_seconds = timer_.seconds(StageTimer::kD2H);
  stats->h2d_bytes = h2d_bytes_;
  stats->calls = calls_;
  stats->variants = done_variants_;
  stats->units = nunits_;
}

}  // namespace vczstats::cuda
