// The site pass on a CUDA device (backend/site_pass.hpp) over the one scheduler
// (stream/scheduler.hpp):
//
//   producers (pool tasks)            consumer (calling thread)                GPU, S streams
//   acquire a pinned slab ──▶ decode ──▶ in plan order: H2D copy on the unit's ──▶ copy | kernels
//   (waits for a free slab whose         stream, event → slab back to the ring,    per block;
//    last copy has finished)             the requested kernels; after a unit's     end of unit:
//                                        phase: its end-of-unit work              D2H, weights
//
// Each unit runs on stream (unit mod S) with that stream's own device buffers, so a unit's
// blocks are processed in order and units on different streams overlap (decode of k+2, copy of
// k+1, compute of k). What is computed is the products' (backend/cuda/gpu_product.hpp: allele
// counts, afdist counts, tallies and per-sample sums, packed genotypes, haplotype planes, phased
// haplotypes), each with its own buffers per lane: the pass launches their kernels on each block
// and, after a unit, lets each queue its copies back (or hand device words to a sink); a unit's
// outputs are handed over in plan order as soon as its lane's copies are done; the calling
// thread waits only when a lane's buffers are needed again.
//
// Device decode (RunOptions::gpu_decode, choose_gpu_decode): an item is a group of the unit's
// sample chunks instead of one decoded block. Producers only read the chunks' compressed bytes
// (zarr::Array::read_chunk_encoded) into a pinned slab; the consumer copies them to the device,
// where the lane's DeviceChunkDecoder decodes the whole group in one batch into the lane's chunk
// buffer (absent chunks: the fill value); each block is then the decoded chunk's rows (or their
// sample subset, gathered on the device) and the same kernels run on it. A lane's batch is
// checked (decode statuses) before its decoder takes the next one and before the unit's outputs
// are handed over, so a corrupt chunk stops the run with an error naming it.
//
// Seed-style baseline (hooks::set_gpu_seed_baseline, for benchmarks): one decode at a time into
// pageable memory, pageable copies, one stream, the one-thread-per-variant kernels, every step
// waiting for the last: what the project's seed implementations did.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <memory>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/decode/chunk_decoder.cuh"
#include "backend/cuda/gather_kernels.cuh"
#include "backend/cuda/gpu_pipeline.hpp"
#include "backend/cuda/gpu_product.hpp"
#include "backend/site_pass.hpp"
#include "stream/genotype_reader.hpp"
#include "stream/scheduler.hpp"
#include "vczstats/error.hpp"
#include "vczstats/testing.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::backend {
namespace {

using Clock = std::chrono::steady_clock;
using cuda::DeviceBuffer;
using cuda::Event;
using cuda::PinnedBuffer;
using cuda::StageTimer;

constexpr unsigned kDefaultStreams = 3;
/// Device decode: decoded chunks of one item (a group of sample chunks) at most, per lane.
/// Measured on the H100 at 10^5 samples in chunks of 10^3 (20 MB decoded per chunk), ten
/// interleaved runs each: items of 50 chunks (1 GB) against 100 (2 GB, one item per unit) took
/// afdist from 0.724 to 0.668 s and stats from 0.727 to 0.659 s, as two producers read a unit's
/// chunk files at once. Items of 25 (0.735, 0.763 s) and 10 (0.889, 0.940 s) were slower: the
/// decoder's batches then fill the GPU less.
constexpr std::int64_t kLaneDecodeBytes = std::int64_t{1} << 30;
/// Device decode: compressed bytes read ahead of the GPU when --prefetch is not given.
constexpr std::int64_t kDecodeBytesAhead = std::int64_t{256} << 20;

/// Device decode: where one chunk of an item lies in the item's slab.
struct EncodedPiece {
  std::uint64_t offset = 0, size = 0;
  bool present = false;
};

/// What a producer hands over: a decoded block in a pinned slab (or, for the baseline, in
/// pageable memory), and the unit's variant fields with its first block.
struct Payload {
  cuda::SlabPool::Lease lease;
  stream::BlockBuffers pageable;
  GenotypeChunkView view;
  std::shared_ptr<const vcz::VariantBlock> variants;
  std::vector<EncodedPiece> pieces;  // device decode: the group's chunks in the lease
  std::uint64_t encoded_bytes = 0;   // device decode: bytes used in the lease
};

/// One CUDA stream with the device buffers of the units queued on it (the products keep their
/// own buffers per lane, GpuSiteProduct::add_lane). The stream is declared first, so the buffers
/// (freed in its order) go before it.
struct Lane {
  cuda::Stream stream;
  std::unique_ptr<cuda::decode::DeviceChunkDecoder> decoder;  // device decode
  DeviceBuffer chunks;  // device decode: the item's decoded chunks
  DeviceBuffer input;   // one sample block
  Event copied;         // after the products' copies back of the lane's last unit
  Event decoded;        // device decode: after the last batch's status copy
  bool pending = false, decode_pending = false;
};

class GpuSitePass {
 public:
  GpuSitePass(const SitePassSpec& spec, const Deliver& deliver,
              std::vector<stats::SampleSums>* totals)
      : spec_(spec),
        plan_(*spec.plan),
        run_(*spec.run),
        deliver_(deliver),
        ctx_(cuda::DeviceContext::get(spec.device)),
        reader_(*spec.store, *spec.samples, {spec.min_gq, spec.min_dp}),
        seed_(hooks::gpu_seed_baseline()) {
    nunits_ = static_cast<std::int64_t>(plan_.units.size());
    // Remote stores: many requests in flight ahead of the readers (genotypes and variant fields).
    reader_.prefetch(plan_.units, spec_.variants);
    nblocks_ = static_cast<std::int64_t>(reader_.num_blocks());
    threads_ = threads_for_work(run_.threads, nunits_ * nblocks_);  // decode threads
    const unsigned nstreams = seed_ ? 1 : run_.gpu_streams ? run_.gpu_streams : kDefaultStreams;
    for (const auto& unit : plan_.units) max_rows_ = std::max(max_rows_, unit.size());
    product_ctx_.spec = &spec;
    product_ctx_.reader = &reader_;
    product_ctx_.pool = &ctx_.pool();
    product_ctx_.timer = &timer_;
    product_ctx_.max_rows = max_rows_;
    product_ctx_.workers = threads_;
    product_ctx_.seed = seed_;
    product_ctx_.sample_sums = totals;
    products_ = make_gpu_site_products(product_ctx_);
    for (const auto& p : products_) phases_ = std::max(phases_, p->phases());
    decoded_bytes_ = reader_.chunk_bytes();
    gathered_bytes_ = reader_.gathered_bytes(max_rows_);
    if (!seed_) {
      decode_choice_ = choose_gpu_decode(*spec.store, run_.gpu_decode);
      dev_ = decode_choice_.device;
      if (spec.min_gq > 0 || spec.min_dp > 0) {  // the masks are applied by the host's reader
        if (run_.gpu_decode == GpuDecode::On)
          throw UsageError(
              "--gpu-decode on: --min-gq/--min-dp (FMT/GQ, FMT/DP) mask the genotypes as the "
              "host decodes them; use --gpu-decode auto or off");
        dev_ = false;
        decode_choice_.device = false;
        decode_choice_.why = "--min-gq/--min-dp mask the genotypes as the host decodes them";
      }
    }
    if (dev_) {
      // Items are groups of sample blocks whose decoded chunks fit the lane's budget, of equal
      // size (100 blocks at most 53 each: two items of 50, not 53 and 47).
      const std::int64_t most = std::clamp<std::int64_t>(
          kLaneDecodeBytes / cuda::align_up(std::max<std::int64_t>(decoded_bytes_, 1), 256), 1,
          std::max<std::int64_t>(nblocks_, 1));
      items_per_unit_ = (nblocks_ + most - 1) / most;
      group_ = std::max<std::int64_t>((nblocks_ + items_per_unit_ - 1) / items_per_unit_, 1);
      chunk_stride_ = cuda::align_up(reader_.chunk_bytes(), 256);
      // Compressed bytes: genotypes compress 20-130x; start at 1/32 of the decoded size (a slab
      // grows when a group's bytes do not fit), so that pinning the ring stays cheap.
      decoded_bytes_ = std::max<std::int64_t>(group_ * reader_.chunk_bytes() / 32, 1 << 20);
    }
    const std::int64_t slab_bytes =
        cuda::align_up(decoded_bytes_, 256) + (dev_ ? 0 : cuda::align_up(gathered_bytes_, 256));
    // Items ahead: every producer busy plus one per stream. The GPU takes items as fast as they
    // come, so a deeper queue would only pin more memory, which costs time at the start.
    depth_ = run_.prefetch ? run_.prefetch : std::int64_t{threads_} + nstreams;
    // Device decode reads a group of chunk files per item (tens of MB compressed at 10^5
    // samples): a pinned slab per thread would cost more at the start than the extra readers
    // gain (the pinning serialises in the driver and slows the reads beside it; measured on
    // the H100: 0.7-0.9 thread-s of pinning for 10 items of 62 MB). Keep about
    // kDecodeBytesAhead compressed bytes ahead instead, but never fewer items than the lanes.
    if (dev_ && !run_.prefetch)
      depth_ = std::min(depth_, std::max<std::int64_t>(std::int64_t{nstreams} + 1,
                                                       kDecodeBytesAhead / slab_bytes));
    // Huge chunks: fewer items ahead rather than pinning most of the host's memory.
    const std::int64_t fit =
        cuda::pinned_budget() / std::max<std::int64_t>(slab_bytes, 1) - std::int64_t{nstreams} - 1;
    depth_ = std::max<std::int64_t>(1, std::min(depth_, fit));
    if (seed_) depth_ = 1;
    ring_ = static_cast<int>(depth_ + nstreams + 1);

    cuda::DevicePool& pool = ctx_.pool();
    // Device decode: a gathered block, or a dense block moved to an aligned start.
    const std::int64_t dense_bytes =
        max_rows_ * (reader_.array().chunks()[1] * reader_.ploidy() * reader_.elem_bytes());
    const std::int64_t input_bytes =
        dev_ ? std::max({gathered_bytes_, dense_bytes, std::int64_t{256}})
             : std::max(decoded_bytes_, gathered_bytes_);
    for (unsigned s = 0; s < nstreams; ++s) {
      auto lane = std::make_unique<Lane>();
      const cudaStream_t st = lane->stream.get();
      lane->input = DeviceBuffer(pool, input_bytes, st);
      if (dev_) {
        lane->chunks = DeviceBuffer(pool, group_ * chunk_stride_, st);
        lane->decoder = std::make_unique<cuda::decode::DeviceChunkDecoder>(pool, st);
      }
      for (const auto& p : products_) p->add_lane(st);
      lanes_.push_back(std::move(lane));
    }
    const cudaStream_t s0 = lanes_[0]->stream.get();
    for (const auto& p : products_) p->setup(s0);
    if (dev_) upload_columns(pool, s0);
    // Everything set up on stream 0 is ready before any stream uses it.
    VCZ_CUDA_CHECK(cudaStreamSynchronize(s0));
    counters_.resize(threads_);
  }

  ~GpuSitePass() {
    for (auto& lane : lanes_) cudaStreamSynchronize(lane->stream.get());
  }

  void run(RunStats* stats) {
    const auto start = Clock::now();
    cuda::SlabPool slabs(ring_, decoded_bytes_, dev_ ? 0 : gathered_bytes_);
    // Runs first on the way out, normal or not: wake producers waiting for a slab and let
    // queued GPU work finish before the pinned slabs go.
    struct Guard {
      cuda::SlabPool& slabs;
      std::vector<std::unique_ptr<Lane>>& lanes;
      ~Guard() {
        slabs.shutdown();
        for (auto& lane : lanes) cudaStreamSynchronize(lane->stream.get());
      }
    } guard{slabs, lanes_};

    stream::ScheduleHooks<Payload> hooks;
    hooks.produce = [&](const stream::WorkItem& item, unsigned p) {
      const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(item.unit)];
      Payload out;
      if (item.phase == 0 && item.block == 0 && spec_.variants)
        out.variants =
            std::make_shared<vcz::VariantBlock>(spec_.variants->read(unit.begin, unit.end));
      const auto b = static_cast<std::size_t>(item.block);
      if (dev_) {
        read_encoded(unit, item.block, out, slabs, counters_[p]);
        const std::int64_t b0 = item.block * group_, b1 = std::min(nblocks_, b0 + group_);
        for (std::int64_t block = b0; block < b1; ++block)
          for (const auto& product : products_) product->check_encoded(unit, block, p);
      } else if (seed_) {
        out.view = reader_.read(unit, b, out.pageable, &counters_[p]);
      } else {
        ctx_.make_current();  // pool threads: pinned allocations and events of this device
        out.lease = slabs.acquire();
        out.view = reader_.read(unit, b, out.lease.decoded(), out.lease.gathered(), &counters_[p]);
      }
      if (!dev_)
        for (const auto& product : products_) product->check_block(unit, item.block, out.view, p);
      return out;
    };
    hooks.consume = [&](const stream::WorkItem& item, Payload& in) {
      if (dev_)
        consume_encoded(item, in, slabs);
      else
        consume(item, in, slabs);
    };
    hooks.phase_done = [&](std::int64_t u, int phase) { phase_done(u, phase); };

    stream::Schedule s;
    s.units = nunits_;
    s.blocks = dev_ ? items_per_unit_ : nblocks_;
    s.phases = phases_;
    s.workers = seed_ ? 1 : threads_;
    s.depth = static_cast<unsigned>(depth_);
    stream::run_schedule(s, hooks);

    while (!pending_.empty()) deliver_front(true);
    for (auto& lane : lanes_) check_decoded(*lane);
    for (const auto& p : products_) p->end(lanes_[0]->stream.get());
    for (auto& lane : lanes_) lane->stream.synchronize();
    timer_.drain();
    if (stats) report(*stats, start);
  }

 private:
  struct Pending {
    std::int64_t unit;
    unsigned lane;
    std::shared_ptr<const vcz::VariantBlock> variants;
  };

  unsigned lane_of(std::int64_t u) const {
    return static_cast<unsigned>(u % static_cast<std::int64_t>(lanes_.size()));
  }

  void consume(const stream::WorkItem& item, Payload& in, cuda::SlabPool& slabs) {
    const std::int64_t u = item.unit;
    const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(u)];
    const unsigned li = lane_of(u);
    Lane& lane = *lanes_[li];
    const cudaStream_t st = lane.stream.get();
    if (item.phase == 0 && item.block == 0) begin_unit(li, unit);
    if (in.variants) variants_[u] = std::move(in.variants);

    const GenotypeChunkView& view = in.view;
    const int t = timer_.start(st);
    VCZ_CUDA_CHECK(cudaMemcpyAsync(lane.input.data(), view.data,
                                   static_cast<std::size_t>(view.bytes()), cudaMemcpyHostToDevice,
                                   st));
    timer_.stop(t, st, StageTimer::kH2D);
    h2d_bytes_ += view.bytes();
    if (!seed_) slabs.release_after(in.lease, st);

    GenotypeChunkView dv = view;
    dv.data = lane.input.data();
    run_kernels(item.phase, item.block, dv, li, unit);
    if (seed_) lane.stream.synchronize();
  }

  /// Device decode, producer: read the compressed bytes of item @p group's chunks of @p unit
  /// into a pinned slab.
  void read_encoded(const vcz::WorkUnit& unit, std::int64_t group, Payload& out,
                    cuda::SlabPool& slabs, stream::ReadCounters& counters) {
    ctx_.make_current();  // pool threads: pinned allocations and events of this device
    const auto t0 = Clock::now();
    const zarr::Array& gt = reader_.array();
    const std::int64_t b0 = group * group_, b1 = std::min(nblocks_, b0 + group_);
    std::vector<std::optional<zarr::Bytes>> bytes;
    std::uint64_t total = 0;
    for (std::int64_t b = b0; b < b1; ++b) {
      const std::int64_t index[3] = {unit.chunk, reader_.block_chunk(static_cast<std::size_t>(b)),
                                     0};
      bytes.push_back(gt.read_chunk_encoded(index));
      if (bytes.back()) total += (bytes.back()->size() + 15) & ~std::uint64_t{15};
    }
    out.lease = slabs.acquire();
    const std::span<std::byte> slab =
        slabs.grow(out.lease, std::max<std::int64_t>(static_cast<std::int64_t>(total), 1));
    std::uint64_t at = 0;
    for (const auto& c : bytes) {
      EncodedPiece piece;
      if (c) {
        piece = {at, c->size(), true};
        if (c->size() > 0) std::memcpy(slab.data() + at, c->data(), c->size());
        at += (c->size() + 15) & ~std::uint64_t{15};
      }
      out.pieces.push_back(piece);
    }
    out.encoded_bytes = at;
    counters.read_decode_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
    counters.decoded_bytes += static_cast<std::int64_t>(at);  // compressed, in this mode
  }

  /// Device decode, consumer: copy the group's compressed bytes, decode them on the lane, then
  /// each block's kernels (after a gather on the device for sample subsets).
  void consume_encoded(const stream::WorkItem& item, Payload& in, cuda::SlabPool& slabs) {
    const std::int64_t u = item.unit;
    const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(u)];
    const unsigned li = lane_of(u);
    Lane& lane = *lanes_[li];
    const cudaStream_t st = lane.stream.get();
    if (item.phase == 0 && item.block == 0) begin_unit(li, unit);
    if (in.variants) variants_[u] = std::move(in.variants);
    check_decoded(lane);  // the decoder's last batch, before it takes this one

    const zarr::Array& gt = reader_.array();
    const std::int64_t chunk_bytes = reader_.chunk_bytes();
    const std::int64_t b0 = item.block * group_;
    std::vector<cuda::decode::EncodedChunk> chunks(in.pieces.size());
    for (std::size_t k = 0; k < in.pieces.size(); ++k) {
      const std::int64_t index[3] = {unit.chunk,
                                     reader_.block_chunk(static_cast<std::size_t>(b0) + k), 0};
      auto& c = chunks[k];
      c.offset = in.pieces[k].offset;
      c.size = in.pieces[k].size;
      c.present = in.pieces[k].present;
      c.encoding = &gt.chunk_encoding();
      c.d_dst = lane.chunks.data() + static_cast<std::int64_t>(k) * chunk_stride_;
      c.name = gt.store().path() + ": array " + gt.path() + ": chunk " + gt.chunk_key(index);
    }
    const std::span<const std::byte> input(in.lease.decoded().data(),
                                           static_cast<std::size_t>(in.encoded_bytes));
    lane.decoder->prepare(input, chunks);  // throws naming the chunk for a corrupt header
    int t = timer_.start(st);
    lane.decoder->launch([&] {
      timer_.stop(t, st, StageTimer::kH2D);
      t = timer_.start(st);
    });
    lane.decoded.record(st);
    lane.decode_pending = true;
    slabs.release_after(in.lease, st);
    h2d_bytes_ += static_cast<std::int64_t>(in.encoded_bytes);
    device_decoded_bytes_ += static_cast<std::int64_t>(chunks.size()) * chunk_bytes;

    const std::int64_t cv = gt.chunks()[0];
    const std::int64_t row0 = unit.begin - unit.chunk * cv;
    const std::int64_t call_bytes = reader_.ploidy() * reader_.elem_bytes();
    const std::int64_t stored_row_bytes = gt.chunks()[1] * call_bytes;
    for (std::size_t k = 0; k < chunks.size(); ++k) {
      const std::size_t b = static_cast<std::size_t>(b0) + k;
      GenotypeChunkView dv;
      dv.elem_bytes = reader_.elem_bytes();
      dv.variants = unit.size();
      dv.samples = reader_.block_samples(b);
      dv.ploidy = reader_.ploidy();
      dv.variant_offset = unit.begin;
      dv.sample_offset = reader_.block_first(b);
      const std::byte* rows = chunks[k].d_dst + row0 * stored_row_bytes;
      if (reader_.block_dense(b) && reinterpret_cast<std::uintptr_t>(rows) % 16 == 0) {
        dv.data = rows;
      } else if (reader_.block_dense(b)) {
        // The kernels load aligned 16-byte words: a unit starting inside a chunk at a row
        // whose offset is not a multiple of 16 is copied to the (aligned) input buffer.
        if (k > 0) t = timer_.start(st);
        VCZ_CUDA_CHECK(cudaMemcpyAsync(lane.input.data(), rows,
                                       static_cast<std::size_t>(dv.variants * stored_row_bytes),
                                       cudaMemcpyDeviceToDevice, st));
        dv.data = lane.input.data();
        if (k > 0) timer_.stop(t, st, StageTimer::kDecode);
      } else {
        if (k > 0) t = timer_.start(st);
        cuda::launch_gather_samples(rows, stored_row_bytes,
                                    columns_.as<std::int32_t>() + column_offset_[b], dv.samples,
                                    call_bytes, dv.variants, lane.input.data(), st);
        dv.data = lane.input.data();
        if (k > 0) timer_.stop(t, st, StageTimer::kDecode);
      }
      if (k == 0) timer_.stop(t, st, StageTimer::kDecode);
      run_kernels(item.phase, static_cast<std::int64_t>(b), dv, li, unit);
    }
  }

  /// Device decode: wait for @p lane's last decode batch and throw if a chunk failed.
  void check_decoded(Lane& lane) {
    if (!lane.decode_pending) return;
    lane.decoded.synchronize();
    lane.decode_pending = false;
    lane.decoder->check();
  }

  /// Device decode: every block's selected columns, as int32 offsets into its stored chunk.
  void upload_columns(cuda::DevicePool& pool, cudaStream_t st) {
    std::vector<std::int32_t> all;
    for (std::size_t b = 0; b < reader_.num_blocks(); ++b) {
      column_offset_.push_back(static_cast<std::int64_t>(all.size()));
      for (std::int64_t c : reader_.block_columns(b)) all.push_back(static_cast<std::int32_t>(c));
    }
    columns_ = DeviceBuffer(
        pool, std::max<std::int64_t>(static_cast<std::int64_t>(all.size()) * 4, 4), st);
    if (!all.empty())
      VCZ_CUDA_CHECK(
          cudaMemcpyAsync(columns_.data(), all.data(), all.size() * 4, cudaMemcpyHostToDevice, st));
    VCZ_CUDA_CHECK(cudaStreamSynchronize(st));  // the pageable source goes out of scope
  }

  /// The products' kernels on block @p block of a unit, resident on the device as @p dv.
  void run_kernels(int phase, std::int64_t block, const GenotypeChunkView& dv, unsigned li,
                   const vcz::WorkUnit& unit) {
    const cudaStream_t st = lanes_[li]->stream.get();
    const int t = timer_.start(st);
    for (const auto& p : products_)
      if (p->phases() > phase) p->launch(phase, li, block, dv, unit, st);
    calls_ += dv.calls();
    timer_.stop(t, st, StageTimer::kCompute);
  }

  /// A unit starts on lane @p li: the outputs of the unit before it on this lane must have been
  /// handed over (its host buffers are reused); then the products clear their sums.
  void begin_unit(unsigned li, const vcz::WorkUnit& unit) {
    Lane& lane = *lanes_[li];
    while (lane.pending) deliver_front(true);
    for (const auto& p : products_) p->begin_unit(li, unit, lane.stream.get());
  }

  void phase_done(std::int64_t u, int phase) {
    const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(u)];
    const unsigned li = lane_of(u);
    Lane& lane = *lanes_[li];
    const cudaStream_t st = lane.stream.get();
    // Device sinks, and the unit's outputs back to the products' host buffers.
    for (const auto& p : products_)
      if (p->phases() > phase) p->unit_done(phase, li, u, unit, st);
    if (phase == 0) {
      lane.copied.record(st);
      lane.pending = true;
      auto it = variants_.find(u);
      pending_.push_back({u, li, it == variants_.end() ? nullptr : std::move(it->second)});
      if (it != variants_.end()) variants_.erase(it);
      while (!pending_.empty() && deliver_front(false)) {
      }
    }
    if (seed_) lane.stream.synchronize();
    if (phase == phases_ - 1) {
      done_variants_ += unit.selected();
      if (run_.progress) run_.progress(u + 1, nunits_, done_variants_);
    }
  }

  /// Hand the oldest pending unit over; @p wait: wait for its copy, else return false when it
  /// is not back yet.
  bool deliver_front(bool wait) {
    Pending p = std::move(pending_.front());
    Lane& lane = *lanes_[p.lane];
    if (wait) {
      lane.copied.synchronize();
    } else {
      const cudaError_t e = cudaEventQuery(lane.copied.get());
      if (e == cudaErrorNotReady) {
        pending_.front() = std::move(p);
        return false;
      }
      VCZ_CUDA_CHECK(e);
    }
    // Device decode: the unit's chunks decoded without error (its last batch, or a later one
    // of this lane, is the decoder's pending batch).
    if (lane.decode_pending && !wait) {
      const cudaError_t e = cudaEventQuery(lane.decoded.get());
      if (e == cudaErrorNotReady) {
        pending_.front() = std::move(p);
        return false;
      }
      VCZ_CUDA_CHECK(e);
    }
    check_decoded(lane);
    const vcz::WorkUnit& unit = plan_.units[static_cast<std::size_t>(p.unit)];
    UnitOutput out;
    out.index = p.unit;
    for (const auto& product : products_) product->deliver(p.lane, unit, out);
    out.variants = std::move(p.variants);
    const auto t0 = Clock::now();
    deliver_(out);
    host_reduce_seconds_ += std::chrono::duration<double>(Clock::now() - t0).count();
    lane.pending = false;
    pending_.pop_front();
    return true;
  }

  void report(RunStats& stats, Clock::time_point start) const {
    stats.device = "gpu " + std::to_string(ctx_.index()) + " (" + ctx_.info().name + " at PCI " +
                   ctx_.info().pci + ", " +
                   (seed_ ? std::string("seed-style baseline: one thread per variant, "
                                        "pageable copies, no overlap")
                          : std::to_string(lanes_.size()) + " streams") +
                   (dev_    ? ", device decode"
                    : seed_ ? ""
                            : ", host decode") +
                   ")";
    if (!seed_) {
      std::string note = dev_ ? "genotypes decoded on the device (" + decode_choice_.layout + "; " +
                                    std::to_string(group_) + " chunks per batch)"
                              : "genotypes decoded on the host: " + decode_choice_.why;
      for (const auto& w : decode_choice_.warnings) note += "; " + w;
      stats.note = stats.note.empty() ? note : stats.note + "; " + note;
    }
    stats.device_decode = dev_;
    stats.device_decode_seconds = timer_.seconds(StageTimer::kDecode);
    stats.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    for (const auto& c : counters_) {
      stats.read_decode_seconds += static_cast<double>(c.read_decode_ns) * 1e-9;
      stats.gather_seconds += static_cast<double>(c.gather_ns) * 1e-9;
      stats.decoded_bytes += c.decoded_bytes;
    }
    if (dev_) {
      stats.encoded_bytes = stats.decoded_bytes;  // the producers counted compressed bytes
      stats.decoded_bytes = device_decoded_bytes_;
    }
    stats.compute_seconds = timer_.seconds(StageTimer::kCompute);
    stats.reduce_seconds = timer_.seconds(StageTimer::kReduce) + host_reduce_seconds_;
    stats.h2d_seconds = timer_.seconds(StageTimer::kH2D);
    stats.d2h_seconds = timer_.seconds(StageTimer::kD2H);
    stats.h2d_bytes = h2d_bytes_;
    stats.calls = calls_;
    stats.variants = done_variants_;
    stats.units = nunits_;
  }

  const SitePassSpec& spec_;
  const vcz::ChunkPlan& plan_;
  const RunOptions& run_;
  const Deliver& deliver_;
  cuda::DeviceContext& ctx_;
  stream::GenotypeReader reader_;
  bool seed_ = false;
  unsigned threads_ = 1;
  std::int64_t nunits_ = 0, nblocks_ = 0, max_rows_ = 0;
  std::int64_t decoded_bytes_ = 0, gathered_bytes_ = 0, depth_ = 1;
  int ring_ = 1;
  // Device decode (choose_gpu_decode): items of group_ sample blocks, items_per_unit_ per unit.
  GpuDecodeChoice decode_choice_;
  bool dev_ = false;
  std::int64_t group_ = 1, items_per_unit_ = 1, chunk_stride_ = 0, device_decoded_bytes_ = 0;
  std::vector<std::int64_t> column_offset_;  // per block, into columns_
  // Declaration order is destruction order reversed: the streams' buffers before the streams.
  StageTimer timer_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  // The products (their lane buffers go before the lanes' streams), in registration order.
  GpuProductContext product_ctx_;
  std::vector<std::unique_ptr<GpuSiteProduct>> products_;
  int phases_ = 1;
  DeviceBuffer columns_;
  std::vector<stream::ReadCounters> counters_;
  std::map<std::int64_t, std::shared_ptr<const vcz::VariantBlock>> variants_;
  std::deque<Pending> pending_;
  std::int64_t done_variants_ = 0, calls_ = 0, h2d_bytes_ = 0;
  double host_reduce_seconds_ = 0;
};

}  // namespace

void run_site_pass_gpu(const SitePassSpec& spec, const Deliver& deliver,
                       std::vector<stats::SampleSums>* sample_sums, RunStats* stats) {
  GpuSitePass pass(spec, deliver, sample_sums);
  pass.run(stats);
}

}  // namespace vczstats::backend
