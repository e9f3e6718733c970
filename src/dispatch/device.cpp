// Device requests: parsing "cpu", "gpu", "gpu:N", "auto".

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "vczstats/device.hpp"
#include "vczstats/error.hpp"
#include "vczstats/run.hpp"
#include "vczstats/zarr.hpp"

namespace vczstats {

std::string DeviceSpec::to_string() const {
  switch (kind) {
    case DeviceKind::Cpu:
      return "cpu";
    case DeviceKind::Gpu: {
      if (all_gpus) return "gpu:all";
      if (gpus.empty()) return index == 0 ? "gpu" : "gpu:" + std::to_string(index);
      std::string text = "gpu:";
      for (std::size_t i = 0; i < gpus.size(); ++i) {
        if (i) text += ',';
        text += std::to_string(gpus[i]);
      }
      return text;
    }
    case DeviceKind::Auto:
      break;
  }
  return "auto";
}

DeviceSpec parse_device(std::string_view text) {
  if (text == "cpu") return {DeviceKind::Cpu, 0};
  if (text == "auto") return {DeviceKind::Auto, 0};
  if (text == "gpu") return {DeviceKind::Gpu, 0};
  if (text == "gpu:all") {
    DeviceSpec spec{DeviceKind::Gpu, 0};
    spec.all_gpus = true;
    return spec;
  }
  if (text.starts_with("gpu:")) {
    std::vector<int> list;
    bool ok = true;
    for (std::string_view rest = text.substr(4); ok;) {
      const auto comma = rest.find(',');
      const std::string_view n = rest.substr(0, comma);
      int index = -1;
      const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), index);
      ok = ec == std::errc() && end == n.data() + n.size() && !n.empty() && index >= 0;
      if (ok && std::find(list.begin(), list.end(), index) != list.end())
        throw UsageError("device '" + std::string(text) + "' names GPU " + std::to_string(index) +
                         " twice");
      if (ok) list.push_back(index);
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    if (ok) {
      DeviceSpec spec{DeviceKind::Gpu, list.front()};
      if (list.size() > 1) spec.gpus = std::move(list);
      return spec;
    }
  }
  throw UsageError("unknown device '" + std::string(text) +
                   "' (expected cpu, gpu, gpu:N with N a device index, several GPUs as gpu:0,1 "
                   "or gpu:all, or auto)");
}

namespace detail {
extern std::atomic<bool> g_cuda_started;  // set by the CUDA backend when it first calls CUDA
}  // namespace detail

namespace {
/// The entries a CUDA runtime started now would see: those of CUDA_VISIBLE_DEVICES up to the
/// first that names no device ("" or "-1"), else "0".."N-1" for the /dev/nvidiaN device files.
std::vector<std::string> visible_gpus() {
  std::vector<std::string> out;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) {
    for (std::string_view rest = visible; !rest.empty();) {
      const auto comma = rest.find(',');
      const auto item = rest.substr(0, comma);
      if (item.empty() || item.starts_with('-')) break;
      out.emplace_back(item);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return out;
  }
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev", ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 6 && name.starts_with("nvidia") &&
        std::all_of(name.begin() + 6, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      out.push_back(std::to_string(out.size()));
  }
  return out;
}
}  // namespace

int gpus_without_starting_cuda() {
  return static_cast<int>(visible_gpus().size());
}

std::vector<int> shared_gpus(const DeviceSpec& spec) {
  if (!spec.several()) return {spec.index};
  if (!spec.all_gpus) return spec.gpus;
  std::string why;
  const int n = gpu_count(&why);
  if (n == 0) throw UsageError("--device gpu:all: no CUDA device (" + why + ")");
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
  return all;
}

int process_gpu(const DeviceSpec& spec, bool index_given, int local_rank) {
  if (!spec.gpus.empty())
    return spec.gpus[static_cast<std::size_t>(std::max(local_rank, 0)) % spec.gpus.size()];
  if ((index_given && !spec.all_gpus) || local_rank < 0) return spec.index;
  const int gpus = gpus_without_starting_cuda();
  return gpus > 0 ? local_rank % gpus : spec.index;
}

int bind_process_to_gpu(int index) {
  return bind_process_to_gpus({index}).front();
}

std::vector<int> bind_process_to_gpus(const std::vector<int>& indices) {
  static std::mutex mutex;
  static std::vector<int> bound_from;  // the indices this process was bound to
  std::lock_guard lock(mutex);
  std::vector<int> bound(indices.size());  // 0, 1, ...: their indices once bound
  for (std::size_t i = 0; i < bound.size(); ++i) bound[i] = static_cast<int>(i);
  if (!indices.empty() && indices == bound_from) return bound;  // bound already (GpuPrestart)
  if (detail::g_cuda_started.load() || indices.empty()) return indices;
  const auto gpus = visible_gpus();
  const int n = static_cast<int>(gpus.size());
  std::string visible;
  for (const int i : indices) {
    if (i < 0 || i >= n) return indices;  // an error for the run to report
    if (!visible.empty()) visible += ',';
    visible += gpus[static_cast<std::size_t>(i)];
  }
  // Every visible device, in order (one device of one): nothing to narrow.
  if (indices.size() == gpus.size() && indices == bound) return bound;
  ::setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1);
  bound_from = indices;
  return bound;
}

DeviceSpec bind_process_to_device(DeviceSpec spec) {
  if (spec.kind == DeviceKind::Cpu || spec.all_gpus) return spec;
  if (spec.gpus.empty()) {
    spec.index = bind_process_to_gpu(spec.index);
  } else {
    spec.gpus = bind_process_to_gpus(spec.gpus);
    spec.index = spec.gpus.front();
  }
  return spec;
}

AutoDeviceEstimate estimate_auto_device(const AutoDeviceWork& work) {
  // Rates of bench/auto_device.sh on the H100 machine (16-core host): medians over stores of 10^6
  // to 2.5 x 10^9 calls; the CPU's per-thread rates held from 4 to 16 threads.
  constexpr double kCpuCallsPerThread = 1.6e8, kCpuPairVariantsPerThread = 4.7e10;
  constexpr double kGpuSetup = 0.35, kGpuMatrixSetup = 0.1;
  constexpr double kGpuCalls = 4e9, kGpuPairVariants = 4e12;
  // Variant pairs: measured on the H100 machine (bench/matrix.sh -c ld, 10^4 x 10^5, windows of
  // 100 and 1000 variants, 16 threads; the rates from the difference of the two): the CPU band
  // counts 1.3e9 pair words/s per thread, the GPU band 2e11 (the words of a row: three planes of
  // 157 words at 10^4 samples).
  constexpr double kCpuPairWordsPerThread = 1.3e9, kGpuPairWords = 2e11;
  // Reduced pairs (ld-stats, 2026-11-29, after the shared per-pair code): the pg_gpu shape's pairs
  // of one word sum at 1e7 a second per thread on 2 cores (bench/ld_stats_pg_gpu.sh, fixed costs
  // of the processes included; 35 ns a pair on one thread); on the H200 machine 10^9 pairs of
  // 10^4 haplotypes took 25.4 s on the 16 cores and 6.59 s on the GPU (bench/ld_stats.sh), of
  // which the device's sums are about 2.2 s once the calls, the pair words and the setup above are
  // taken out: 4.6e8 pairs/s. Without a device form (populations of 2^15 haplotypes or more) the
  // GPU hands its pairs to the host, which sums 1.7e6-4.5e6 a second.
  constexpr double kCpuReducedPairsPerThread = 1e7, kGpuDeviceReducedPairs = 4.6e8,
                   kGpuHostPairs = 2e6;
  const double threads = std::max(1u, work.threads);
  AutoDeviceEstimate e;
  e.cpu_seconds = work.calls / (threads * kCpuCallsPerThread) +
                  work.pair_variants / (threads * kCpuPairVariantsPerThread) +
                  work.pair_words / (threads * kCpuPairWordsPerThread) +
                  work.reduced_pairs / (threads * kCpuReducedPairsPerThread);
  e.gpu_seconds =
      kGpuSetup + work.calls / kGpuCalls +
      (work.pair_variants > 0 ? kGpuMatrixSetup + work.pair_variants / kGpuPairVariants : 0.0) +
      work.pair_words / kGpuPairWords + work.device_reduced_pairs / kGpuDeviceReducedPairs +
      (work.reduced_pairs - work.device_reduced_pairs) / kGpuHostPairs;
  return e;
}

}  // namespace vczstats

// ---- where a GPU run decodes the genotypes (run.hpp) -------------------------------------------

namespace vczstats {

GpuDecode parse_gpu_decode(std::string_view text) {
  if (text == "auto") return GpuDecode::Auto;
  if (text == "on") return GpuDecode::On;
  if (text == "off") return GpuDecode::Off;
  throw UsageError("--gpu-decode: unknown value '" + std::string(text) +
                   "' (expected auto, on or off)");
}

namespace {

std::string mib(std::int64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < (1 << 20)) return fmt::format("{:.3g} KiB", static_cast<double>(bytes) / 1024);
  if (bytes < (1 << 30)) return fmt::format("{:.3g} MiB", static_cast<double>(bytes) / (1 << 20));
  return fmt::format("{:.3g} GiB", static_cast<double>(bytes) / (1 << 30));
}

const char* plural(std::int64_t n) {
  return n == 1 ? "" : "s";
}

std::uint32_t le32(const std::byte* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

/// Independent compressed streams in one chunk of @p gt (blosc blocks from the first chunk's
/// header; one per zstd/lz4 chunk or inner chunk of a shard), and how to say it.
std::pair<std::int64_t, std::string> streams_per_chunk(const zarr::Array& gt) {
  const zarr::ChunkEncoding& enc = gt.chunk_encoding();
  const zarr::ChunkEncoding* leaf = &enc;
  std::int64_t inner = 1;
  if (enc.layout == zarr::ChunkEncoding::Layout::Sharding && enc.sharding) {
    leaf = &enc.sharding->inner;
    for (std::size_t d = 0; d < enc.shape.size() && d < enc.sharding->inner_shape.size(); ++d)
      inner *= (enc.shape[d] + enc.sharding->inner_shape[d] - 1) /
               std::max<std::int64_t>(enc.sharding->inner_shape[d], 1);
  }
  const zarr::BytesCodecSpec* compressor = nullptr;
  for (const auto& c : leaf->bytes_codecs)
    if (c.kind != zarr::BytesCodecSpec::Kind::Crc32c) compressor = &c;
  if (compressor == nullptr || compressor->kind != zarr::BytesCodecSpec::Kind::Blosc) {
    const std::string what = compressor ? compressor->name + " stream" : "uncompressed block";
    if (inner > 1) return {inner, fmt::format("{} inner chunks ({} each)", inner, what)};
    return {1, "1 " + what};
  }
  if (inner > 1) return {inner, fmt::format("{} inner chunks (blosc each)", inner)};
  const std::int64_t decoded = static_cast<std::int64_t>(enc.decoded_bytes());
  std::int64_t blocksize = 0;
  try {
    const std::int64_t first[3] = {0, 0, 0};
    const auto bytes = gt.read_chunk_encoded(std::span(first, static_cast<std::size_t>(gt.ndim())));
    if (bytes && bytes->size() >= 16) blocksize = le32(bytes->data() + 8);
  } catch (const Error&) {
    // no estimate; the run itself reports a corrupt chunk
  }
  if (blocksize <= 0) return {1, "blosc blocks of unknown size"};
  const std::int64_t blocks = (decoded + blocksize - 1) / blocksize;
  return {blocks, fmt::format("{} blosc block{} of {}", blocks, plural(blocks), mib(blocksize))};
}

}  // namespace

GpuDecodeChoice choose_gpu_decode(const vcz::VczStore& store, GpuDecode mode) {
  GpuDecodeChoice c;
  if (mode == GpuDecode::Off) {
    c.why = "--gpu-decode off";
    return c;
  }
  if (!store.has_genotypes()) {
    c.why = "no call_genotype";
    return c;
  }
  const zarr::Array& gt = store.genotypes();
  const std::string name = store.path() + ": array " + gt.path();
  const zarr::ChunkEncoding& enc = gt.chunk_encoding();
  auto refuse = [&](const std::string& why) {
    if (mode == GpuDecode::On)
      throw UsageError("--gpu-decode on: " + name + " cannot be decoded on the device: " + why);
    c.why = why;
    return c;
  };
  std::string why;
  if (!zarr::device_decodable(enc, &why)) return refuse(why);
  const auto chunk_bytes = static_cast<std::int64_t>(enc.decoded_bytes());
  if (chunk_bytes > kMaxDeviceDecodeChunkBytes)
    return refuse(
        fmt::format("chunks of {} decoded are too large to decode on the device "
                    "(limit {})",
                    mib(chunk_bytes), mib(kMaxDeviceDecodeChunkBytes)));
  const std::int64_t sample_chunks = gt.ndim() > 1 ? gt.num_chunks(1) : 1;
  const auto [per_chunk, how] = streams_per_chunk(gt);
  c.streams_per_unit = sample_chunks * per_chunk;
  c.layout =
      fmt::format("{} sample chunk{} x {}", sample_chunks, sample_chunks == 1 ? "" : "s", how);
  if (c.streams_per_unit < kMinDeviceDecodeStreams) {
    const std::string few = fmt::format(
        "only {} independent compressed stream{} per work unit ({}): too few chunks to decode "
        "in parallel on the device",
        c.streams_per_unit, plural(c.streams_per_unit), c.layout);
    if (mode == GpuDecode::Auto) {
      c.why = few;
      return c;
    }
    c.warnings.push_back(few);
  } else if (c.streams_per_unit < 1024) {
    c.warnings.push_back(fmt::format(
        "{} independent compressed streams per work unit ({}) fill a GPU only partly (a few "
        "thousand do); smaller blosc blocks or more sample chunks decode faster",
        c.streams_per_unit, c.layout));
  }
  c.device = true;
  return c;
}

}  // namespace vczstats
