#pragma once
// The GPU pipeline's machinery (backend/cuda/site_pass_gpu.cpp runs the site family on it):
// the device context of a CUDA device (its memory pool, name), a ring of pinned host slabs that
// producers decode into, and stage timing with CUDA events.

#include <cuda_runtime.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/cuda_util.cuh"

namespace vczstats::cuda {

/// @brief One CUDA device as the library uses it: its index (explicit everywhere, never assumed
/// to be 0), its memory resource (a stream-ordered pool kept for the process, so repeated runs
/// do not pay for it again) and its properties. One per device, created on first use.
class DeviceContext {
 public:
  /// @brief The context of device @p index; makes it the calling thread's current device.
  /// @throws CudaError.
  static DeviceContext& get(int index);
  int index() const { return index_; }
  DevicePool& pool() { return pool_; }
  const DeviceInfo& info() const { return info_; }
  /// @brief Make this device current on the calling thread.
  void make_current() const;

 private:
  explicit DeviceContext(int index);
  int index_;
  DeviceInfo info_;
  DevicePool pool_;
};

/// @brief Pinned memory the ring may take: a quarter of physical memory, at most 16 GiB.
std::int64_t pinned_budget();

/// @brief A bounded ring of pinned host slabs, each holding one decoded chunk and one gather
/// buffer. acquire() hands out a slab only once the copy that last read it has finished.
class SlabPool {
 public:
  /// A slab held by one producer or item; returned to the pool when destroyed unless
  /// release_after() queued its return behind a copy.
  class Lease {
   public:
    Lease() = default;
    Lease(SlabPool* pool, int index) : pool_(pool), index_(index) {}
    Lease(Lease&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)), index_(o.index_) {}
    Lease& operator=(Lease&& o) noexcept {
      if (this != &o) {
        reset();
        pool_ = std::exchange(o.pool_, nullptr);
        index_ = o.index_;
      }
      return *this;
    }
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

  /// Make the leased slab's first part (decoded()) hold at least @p bytes, reallocating it (and
  /// dropping the gather part) when smaller; its contents are not kept. Only the holder calls it.
  std::span<std::byte> grow(Lease& lease, std::int64_t bytes) {
    Slab& s = slab(lease.index_);
    if (static_cast<std::int64_t>(s.decoded.size()) < bytes) {
      const std::int64_t n = align_up(bytes + bytes / 2, 256);
      s.memory = PinnedBuffer();
      s.memory = PinnedBuffer(n);
      s.decoded = {s.memory.data(), static_cast<std::size_t>(n)};
      s.gathered = {};
    }
    return s.decoded.first(static_cast<std::size_t>(bytes));
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

/// @brief Times stages queued on streams with event pairs; the elapsed times of each stage are
/// summed over all streams. Event pairs are recycled; at most kMaxPending wait to be read.
class StageTimer {
 public:
  enum Stage { kH2D, kCompute, kReduce, kD2H, kDecode, kStages };

  int start(cudaStream_t stream);
  void stop(int k, cudaStream_t stream, Stage stage);
  /// @brief Read every pending pair (waits for the work timed).
  void drain();
  double seconds(Stage stage) const { return ms_[stage] * 1e-3; }

 private:
  static constexpr std::size_t kMaxPending = 512;
  int take();
  void collect_front();
  std::deque<std::pair<Event, Event>> pairs_;  // deque: elements never move
  std::deque<std::pair<int, Stage>> pending_;
  std::vector<int> free_;
  double ms_[kStages] = {};
};

}  // namespace vczstats::cuda
