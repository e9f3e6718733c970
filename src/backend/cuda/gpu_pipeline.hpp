#pragma once
// The GPU site pass shared by every statistic of the CUDA backend (afdist, the allele-counts
// heavy pass):
//
//   producers (run.threads)            consumer (calling thread)                 GPU, S streams
//   acquire a pinned slab ──▶ decode  ──▶ in plan order: H2D copy on the unit's ──▶ copy | kernel
//   (waits for a free slab whose          stream, event → slab back to the ring,     per block;
//    last copy has finished)              the statistic's kernel; after a unit's     unit's end
//                                         last block: the statistic's end of unit    work
//
// Items are (unit, sample block) pairs in plan order, produced ahead by an OrderedPrefetcher
// (depth = run.prefetch or threads + S). Each unit runs on stream (unit mod S) with that
// stream's own device input buffer, so a unit's blocks are counted in order and units on
// different streams overlap (decode of k+2, copy of k+1 and compute of k). The ring holds
// depth + S + 1 slabs, pinned lazily: every claimed-but-unconsumed item holds one (at most
// depth), the rest are free or wait for their copy to finish, so producers never wait forever.
// A statistic plugs in through SitePassHooks and keeps its own per-stream device buffers,
// taken from pool() on stream(lane). Errors of producers reach the consumer through the
// prefetcher; on any exception the pass stops the slab ring (waking producers) and waits for
// the streams before anything is freed.
//
// Seed-style baseline (for comparison only, VCZSTATS_GPU_SEED_BASELINE=1 in the environment):
// one stream, one decode at a time into pageable memory, pageable synchronous copies, and the
// statistic's one-thread-per-variant kernel, each step waiting for the last: what the project's
// seed implementations did.

#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/cuda_util.cuh"
#include "stream/genotype_reader.hpp"
#include "vczstats/engine.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats::cuda {

/// @brief Whether the environment asks for the seed-style baseline (VCZSTATS_GPU_SEED_BASELINE
/// set to anything but "" or "0").
bool seed_baseline_requested();

/// @brief Times stages queued on streams with event pairs; the elapsed times of each stage are
/// summed over all streams. Event pairs are recycled; at most kMaxPending wait to be read.
class StageTimer {
 public:
  enum Stage { kH2D, kCompute, kReduce, kD2H, kStages };

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

/// @brief What a statistic does on the pipeline. Every call runs on the calling thread and
/// queues its work on @p stream (the unit's); a unit's calls come in order begin, block × blocks,
/// end, and units in plan order.
class SitePassHooks {
 public:
  virtual ~SitePassHooks() = default;
  /// @brief Unit @p u starts on lane @p lane (e.g. clear its per-site buffer).
  virtual void begin_unit(unsigned lane, std::int64_t u, const vcz::WorkUnit& unit,
                          cudaStream_t stream) = 0;
  /// @brief Queue the heavy pass of sample block @p b of unit @p u, resident on the device at
  /// block.data.
  virtual void block(unsigned lane, std::int64_t u, std::int64_t b, const GenotypeChunkView& block,
                     cudaStream_t stream) = 0;
  /// @brief Every block of unit @p u is queued.
  virtual void end_unit(unsigned lane, std::int64_t u, const vcz::WorkUnit& unit,
                        cudaStream_t stream) = 0;
};

/// @brief The pipeline's shared machinery: device, memory pool, streams with their input
/// buffers, the slab ring and the prefetcher (in run()), stage timing and the run statistics.
/// Declare the statistic's device buffers after this object (they are freed first).
class GpuSitePass {
 public:
  /// @brief Plan a pass (nothing is read yet). @throws Error on an empty plan or selection,
  /// CudaError.
  GpuSitePass(const vcz::VczStore& store, const vcz::ChunkPlan& plan,
              const vcz::SampleSelection& samples, const RunOptions& run);
  ~GpuSitePass();
  GpuSitePass(const GpuSitePass&) = delete;
  GpuSitePass& operator=(const GpuSitePass&) = delete;

  const stream::GenotypeReader& reader() const { return reader_; }
  DevicePool& pool() { return pool_; }
  unsigned lanes() const { return static_cast<unsigned>(lanes_.size()); }
  cudaStream_t stream(unsigned lane) const;
  std::int64_t max_rows() const { return max_rows_; }
  StageTimer& timer() { return timer_; }
  /// @brief The seed-style baseline runs (the statistic launches its baseline kernel).
  bool seed_baseline() const { return seed_baseline_; }

  /// @brief Decode, copy and hand every (unit, block) of the plan to @p hooks in plan order.
  /// On return (normal or by exception) producers have stopped; on an exception every stream
  /// has been waited for. @throws what producers, hooks or CUDA throw.
  void run(SitePassHooks& hooks);

  /// @brief Wait for every stream and read the timers (after run()).
  void synchronize();

  /// @brief Fill @p stats (if not null) with the timing breakdown; @p host_reduce_seconds is
  /// added to the reduce stage (work of the consumer on the host).
  void report(RunStats* stats, double host_reduce_seconds = 0) const;

 private:
  struct Lane;
  void run_pipelined(SitePassHooks& hooks);
  void run_seed_baseline(SitePassHooks& hooks);

  const vcz::ChunkPlan& plan_;
  const RunOptions& run_;
  stream::GenotypeReader reader_;
  std::chrono::steady_clock::time_point start_;
  bool seed_baseline_ = false;
  unsigned threads_ = 1;
  std::int64_t nunits_ = 0, nblocks_ = 0, max_rows_ = 0;
  std::int64_t decoded_bytes_ = 0, gathered_bytes_ = 0, depth_ = 1;
  int ring_ = 1;
  DeviceInfo info_;
  // Declaration order is destruction order reversed: pool last, streams after their buffers.
  DevicePool pool_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  StageTimer timer_;
  std::vector<stream::ReadCounters> counters_;
  std::int64_t done_variants_ = 0, calls_ = 0, h2d_bytes_ = 0;
};

}  // namespace vczstats::cuda
