// The batched device chunk decoder: host framing, two host-to-device copies, one launch per
// stage, statuses copied back for check().

#include "backend/cuda/decode/chunk_decoder.cuh"

#include <algorithm>
#include <cstring>
#include <optional>

#include "backend/cuda/decode/decode_kernels.cuh"
#include "backend/cuda/decode/framing.hpp"
#include "backend/cuda/decode/lz4_decoder.cuh"
#include "backend/cuda/decode/zstd_decoder.cuh"
#include "vczstats/error.hpp"

namespace vczstats::cuda::decode {

namespace {

constexpr std::uint64_t kAlign = 16;

std::uint64_t aligned(std::uint64_t n) {
  return (n + kAlign - 1) & ~(kAlign - 1);
}

/// Make @p buffer hold at least @p bytes (device), growing by half again to limit reallocation.
void reserve(DeviceBuffer& buffer, DevicePool& pool, std::uint64_t bytes, cudaStream_t stream) {
  if (static_cast<std::uint64_t>(buffer.size()) >= bytes && buffer.data() != nullptr) return;
  buffer = DeviceBuffer();
  buffer = DeviceBuffer(
      pool, static_cast<std::int64_t>(std::max<std::uint64_t>(bytes + bytes / 2, 256)), stream);
}

void reserve(PinnedBuffer& buffer, std::uint64_t bytes) {
  if (static_cast<std::uint64_t>(buffer.size()) >= bytes && buffer.data() != nullptr) return;
  buffer = PinnedBuffer();
  buffer = PinnedBuffer(static_cast<std::int64_t>(std::max<std::uint64_t>(bytes + bytes / 2, 256)));
}

}  // namespace

struct DeviceChunkDecoder::Impl {
  Impl(DevicePool& p, cudaStream_t s) : pool(p), lz4(p, s), zstd(p, s) {}

  DevicePool& pool;
  Lz4DeviceDecoder lz4;
  ZstdDeviceDecoder zstd;
  DeviceBuffer d_input, d_scratch, d_jobs, d_status;
  PinnedBuffer h_jobs, h_status;
  Event jobs_copied;  // the host job staging may be rewritten once this has completed
  bool jobs_pending = false;
  // host state of the last batch, for check()
  std::vector<ChunkFrames> frames;
  ResolvedJobs jobs;
  std::vector<std::string> names;
  std::uint64_t task_count = 0;
  std::span<const std::byte> input;
  bool prepared = false;
};

DeviceChunkDecoder::DeviceChunkDecoder(DevicePool& pool, cudaStream_t stream)
    : impl_(std::make_unique<Impl>(pool, stream)), stream_(stream) {}

DeviceChunkDecoder::~DeviceChunkDecoder() = default;

cudaEvent_t DeviceChunkDecoder::input_consumed() const {
  return impl_->jobs_copied.get();
}

void DeviceChunkDecoder::enqueue(std::span<const std::byte> input,
                                 std::span<const EncodedChunk> chunks) {
  prepare(input, chunks);
  launch();
}

void DeviceChunkDecoder::prepare(std::span<const std::byte> input,
                                 std::span<const EncodedChunk> chunks) {
  Impl& m = *impl_;
  m.prepared = false;
  // 1. Frame every chunk on the host.
  if (m.frames.size() < chunks.size()) m.frames.resize(chunks.size());
  std::vector<std::uint64_t> scratch_base(chunks.size());
  std::uint64_t scratch = 0;
  stats_ = DecodeBatchStats();
  stats_.chunks = chunks.size();
  stats_.input_bytes = input.size();
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    const EncodedChunk& c = chunks[k];
    ChunkFrames& f = m.frames[k];
    f.clear();
    if (c.encoding == nullptr) throw UsageError(c.name + ": no chunk encoding");
    try {
      if (c.present) {
        if (c.offset > input.size() || c.size > input.size() - c.offset)
          throw UsageError(c.name + ": bytes [" + std::to_string(c.offset) + ", " +
                           std::to_string(c.offset + c.size) + ") lie outside the " +
                           std::to_string(input.size()) + "-byte batch input");
        frame_chunk(input.subspan(c.offset, c.size), *c.encoding, f);
      } else {
        frame_absent_chunk(*c.encoding, f);
      }
    } catch (const FormatError& e) {
      throw FormatError(c.name + ": " + e.what());
    }
    scratch_base[k] = scratch;
    scratch += aligned(f.scratch_bytes);
    stats_.output_bytes += c.encoding->decoded_bytes();
  }

  // 2. Device buffers, then resolve the frames against them.
  reserve(m.d_input, m.pool, input.size(), stream_);
  reserve(m.d_scratch, m.pool, scratch, stream_);
  m.jobs.clear();
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    RegionBases bases;
    bases.input = reinterpret_cast<const std::uint8_t*>(m.d_input.data()) + chunks[k].offset;
    bases.output = reinterpret_cast<std::uint8_t*>(chunks[k].d_dst);
    bases.scratch = reinterpret_cast<std::uint8_t*>(m.d_scratch.data()) + scratch_base[k];
    resolve(m.frames[k], bases, static_cast<std::uint32_t>(k), m.jobs);
  }
  m.names.clear();
  for (const auto& c : chunks) m.names.push_back(c.name);

  // Tasks grouped by codec (stable), so each decoder gets one contiguous range.
  const std::size_t n_tasks = m.jobs.tasks.size();
  std::vector<std::size_t> order(n_tasks);
  for (std::size_t i = 0; i < n_tasks; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return m.jobs.tasks[a].codec < m.jobs.tasks[b].codec;
  });
  std::vector<DecodeTask> tasks(n_tasks);
  std::vector<std::uint32_t> task_chunk(n_tasks);
  std::uint64_t counts[3] = {0, 0, 0};
  for (std::size_t i = 0; i < n_tasks; ++i) {
    tasks[i] = m.jobs.tasks[order[i]];
    task_chunk[i] = m.jobs.task_chunk[order[i]];
    counts[static_cast<int>(tasks[i].codec)]++;
  }
  m.jobs.tasks = std::move(tasks);
  m.jobs.task_chunk = std::move(task_chunk);
  stats_.copy_tasks = counts[static_cast<int>(TaskCodec::Copy)];
  stats_.zstd_tasks = counts[static_cast<int>(TaskCodec::Zstd)];
  stats_.lz4_tasks = counts[static_cast<int>(TaskCodec::Lz4)];
  stats_.fills = m.jobs.fills.size();
  stats_.shuffles = m.jobs.shuffles.size();
  stats_.scatters = m.jobs.scatters.size();
  m.task_count = n_tasks;

  m.input = input;
  m.prepared = true;
}

void DeviceChunkDecoder::launch(const std::function<void()>& after_copies) {
  Impl& m = *impl_;
  if (!m.prepared) throw UsageError("DeviceChunkDecoder::launch without a prepared batch");
  m.prepared = false;
  const std::span<const std::byte> input = m.input;
  const std::size_t n_tasks = m.jobs.tasks.size();
  const std::uint64_t counts[3] = {stats_.copy_tasks, stats_.zstd_tasks, stats_.lz4_tasks};
  std::uint64_t max_copy = 0;
  for (const auto& t : m.jobs.tasks)
    if (t.codec == TaskCodec::Copy) max_copy = std::max(max_copy, t.dst_size);

  // 3. Stage the job descriptors in pinned memory (once the previous batch's copy is done).
  const std::uint64_t tasks_at = 0;
  const std::uint64_t fills_at = aligned(tasks_at + n_tasks * sizeof(DecodeTask));
  const std::uint64_t shuffles_at = aligned(fills_at + m.jobs.fills.size() * sizeof(FillJob));
  const std::uint64_t scatters_at =
      aligned(shuffles_at + m.jobs.shuffles.size() * sizeof(ShuffleJob));
  const std::uint64_t jobs_bytes =
      aligned(scatters_at + m.jobs.scatters.size() * sizeof(ScatterJob));
  if (m.jobs_pending) m.jobs_copied.synchronize();
  reserve(m.h_jobs, jobs_bytes);
  reserve(m.d_jobs, m.pool, jobs_bytes, stream_);
  reserve(m.h_status, n_tasks * sizeof(DecodeStatus));
  reserve(m.d_status, m.pool, n_tasks * sizeof(DecodeStatus), stream_);
  auto stage = [&](std::uint64_t at, const void* src, std::size_t bytes) {
    if (bytes > 0) std::memcpy(m.h_jobs.data() + at, src, bytes);
  };
  stage(tasks_at, m.jobs.tasks.data(), n_tasks * sizeof(DecodeTask));
  stage(fills_at, m.jobs.fills.data(), m.jobs.fills.size() * sizeof(FillJob));
  stage(shuffles_at, m.jobs.shuffles.data(), m.jobs.shuffles.size() * sizeof(ShuffleJob));
  stage(scatters_at, m.jobs.scatters.data(), m.jobs.scatters.size() * sizeof(ScatterJob));

  // 4. Two host-to-device copies, then the stages.
  if (!input.empty())
    VCZ_CUDA_CHECK(cudaMemcpyAsync(m.d_input.data(), input.data(), input.size(),
                                   cudaMemcpyHostToDevice, stream_));
  VCZ_CUDA_CHECK(cudaMemcpyAsync(m.d_jobs.data(), m.h_jobs.data(), jobs_bytes,
                                 cudaMemcpyHostToDevice, stream_));
  m.jobs_copied.record(stream_);
  m.jobs_pending = true;
  if (after_copies) after_copies();
  if (n_tasks > 0)
    VCZ_CUDA_CHECK(cudaMemsetAsync(m.d_status.data(), 0, n_tasks * sizeof(DecodeStatus), stream_));

  const auto* d_tasks = reinterpret_cast<const DecodeTask*>(m.d_jobs.data() + tasks_at);
  auto* d_status = m.d_status.as<DecodeStatus>();
  std::uint64_t max_fill = 0, max_shuffle = 0, max_rows = 0;
  for (const auto& f : m.jobs.fills) max_fill = std::max(max_fill, f.size);
  for (const auto& s : m.jobs.shuffles) max_shuffle = std::max(max_shuffle, s.size);
  for (const auto& s : m.jobs.scatters) max_rows = std::max(max_rows, s.rows);

  launch_fills(reinterpret_cast<const FillJob*>(m.d_jobs.data() + fills_at),
               static_cast<std::int64_t>(m.jobs.fills.size()), max_fill, stream_);
  const auto copy_n = static_cast<std::int64_t>(counts[static_cast<int>(TaskCodec::Copy)]);
  const auto zstd_n = static_cast<std::int64_t>(counts[static_cast<int>(TaskCodec::Zstd)]);
  const auto lz4_n = static_cast<std::int64_t>(counts[static_cast<int>(TaskCodec::Lz4)]);
  // Order of the ranges: Copy (0), Zstd (1), Lz4 (2), as TaskCodec's values sort.
  launch_copy_tasks(d_tasks, d_status, copy_n, max_copy, stream_);
  m.zstd.decode(d_tasks + copy_n, d_status + copy_n, zstd_n, stream_);
  m.lz4.decode(d_tasks + copy_n + zstd_n, d_status + copy_n + zstd_n, lz4_n, stream_);
  launch_unshuffles(reinterpret_cast<const ShuffleJob*>(m.d_jobs.data() + shuffles_at),
                    static_cast<std::int64_t>(m.jobs.shuffles.size()), max_shuffle, stream_);
  launch_scatters(reinterpret_cast<const ScatterJob*>(m.d_jobs.data() + scatters_at),
                  static_cast<std::int64_t>(m.jobs.scatters.size()), max_rows, stream_);

  // 5. Statuses back to the host for check().
  if (n_tasks > 0)
    VCZ_CUDA_CHECK(cudaMemcpyAsync(m.h_status.data(), m.d_status.data(),
                                   n_tasks * sizeof(DecodeStatus), cudaMemcpyDeviceToHost,
                                   stream_));
}

void DeviceChunkDecoder::check() const {
  const Impl& m = *impl_;
  const auto* status = reinterpret_cast<const DecodeStatus*>(m.h_status.data());
  for (std::uint64_t i = 0; i < m.task_count; ++i) {
    if (status[i].error == 0) continue;
    const std::uint32_t chunk = m.jobs.task_chunk[i];
    throw FormatError(m.names[chunk] + ": " + describe_failure(m.jobs.tasks[i], status[i]));
  }
}

// ---- EncodedBatch ------------------------------------------------------------------------------

void EncodedBatch::add_bytes(std::optional<std::span<const std::byte>> bytes,
                             const zarr::ChunkEncoding& encoding, std::byte* d_dst,
                             std::string name) {
  EncodedChunk c;
  c.offset = used_;
  c.size = bytes ? bytes->size() : 0;
  c.present = bytes.has_value();
  c.encoding = &encoding;
  c.d_dst = d_dst;
  c.name = std::move(name);
  if (c.size > 0) {
    const std::uint64_t need = aligned(used_ + c.size);
    if (static_cast<std::uint64_t>(buffer_.size()) < need) {
      PinnedBuffer grown(static_cast<std::int64_t>(std::max<std::uint64_t>(need * 2, 1 << 20)));
      if (used_ > 0) std::memcpy(grown.data(), buffer_.data(), used_);
      buffer_ = std::move(grown);
    }
    std::memcpy(buffer_.data() + used_, bytes->data(), c.size);
    used_ = need;  // each chunk starts 16-byte aligned
  }
  chunks_.push_back(std::move(c));
}

void EncodedBatch::add(const zarr::Array& array, std::span<const std::int64_t> chunk_index,
                       std::byte* d_dst) {
  const auto bytes = array.read_chunk_encoded(chunk_index);
  std::optional<std::span<const std::byte>> span;
  if (bytes) span = bytes->span();
  add_bytes(
      span, array.chunk_encoding(), d_dst,
      array.store().path() + ": array " + array.path() + ": chunk " + array.chunk_key(chunk_index));
}

void EncodedBatch::clear() {
  used_ = 0;
  chunks_.clear();
}

std::span<const std::byte> EncodedBatch::input() const {
  return {buffer_.data(), static_cast<std::size_t>(used_)};
}

}  // namespace vczstats::cuda::decode
