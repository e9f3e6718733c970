#pragma once
/// @file run.hpp
/// @brief How a computation runs (threads, device, prefetch, progress) and what it reports.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "vczstats/device.hpp"
#include "vczstats/vcz.hpp"

namespace vczstats {

/// @brief Progress report: work units done out of the total, and variants done.
using ProgressFn = std::function<void(std::int64_t units_done, std::int64_t units_total,
                                      std::int64_t variants_done)>;

/// @brief Where a GPU run decodes the genotype chunks: Auto = on the device when every codec of
/// call_genotype's pipeline has a device decoder (zarr::device_decodable), else on the host; On =
/// on the device (an error when it cannot); Off = on the host.
enum class GpuDecode { Auto, On, Off };

/// @brief How to run.
struct RunOptions {
  unsigned threads = 0;      ///< decode/compute threads (0: all cores)
  unsigned prefetch = 0;     ///< work items decoded ahead of the consumer (0: backend default)
  DeviceSpec device;         ///< cpu, gpu:N or auto
  unsigned gpu_streams = 0;  ///< CUDA streams of the GPU pipeline (0: 3)
  GpuDecode gpu_decode = GpuDecode::Auto;  ///< GPU runs: device or host decode of the genotypes
  ProgressFn progress;  ///< called after each work unit, on the calling thread (may be empty)
  /// The matrix family's backends return sums, never final per-pair values (CellValue): the
  /// statistics will be merged or saved (dist::compute sets it).
  bool keep_matrix_sums = false;
};

/// @brief Parse "auto", "on" or "off". @throws UsageError.
GpuDecode parse_gpu_decode(std::string_view text);

/// @brief Where a GPU run would decode the genotype chunks of a store, and why.
struct GpuDecodeChoice {
  bool device = false;                ///< decode on the device
  std::string why;                    ///< host decode: why not on the device (empty when device)
  std::int64_t streams_per_unit = 0;  ///< independent compressed streams per work unit (estimate)
  std::string layout;                 ///< e.g. "3 sample chunks x 80 blosc blocks of 256 KiB"
  std::vector<std::string> warnings;  ///< badly chunked for the device (decoded all the same)
};

/// @brief Decoded chunks above this many bytes are decoded on the host (device memory per lane).
inline constexpr std::int64_t kMaxDeviceDecodeChunkBytes = std::int64_t{1} << 30;
/// @brief Fewer independent compressed streams per work unit than this: Auto decodes on the
/// host (a device decodes one stream per warp; a handful of warps is slower than a CPU core).
inline constexpr std::int64_t kMinDeviceDecodeStreams = 32;

/// @brief Decide where a GPU run decodes @p store's call_genotype with @p mode: Off = host;
/// Auto = device when every codec has a device decoder, the chunks are not too large and a work
/// unit has enough independent streams; On = device, @throws UsageError naming the array and
/// the reason when it cannot (no device decoder, chunks too large). Reads one chunk's header.
GpuDecodeChoice choose_gpu_decode(const vcz::VczStore& store, GpuDecode mode);

/// @brief What a run did and how long each stage took (for -v).
struct RunStats {
  std::string device;                 ///< e.g. "cpu, 16 threads"
  std::string note;                   ///< e.g. why auto fell back to the CPU (shown with -v)
  std::vector<std::string> warnings;  ///< things the user must see (always shown)
  vcz::SetupTimes setup;              ///< building the query (open store, samples, populations)
  double wall_seconds = 0;
  double read_decode_seconds = 0;  ///< summed over threads
  double gather_seconds = 0;       ///< sample-subset gathers, summed over threads
  double compute_seconds = 0;      ///< heavy pass, summed over threads (GPU: kernel time)
  double reduce_seconds = 0;       ///< merging and the statistics' reductions (consumer)
  double h2d_seconds = 0;  ///< GPU: host-to-device copies (CUDA events, summed over streams)
  double device_decode_seconds = 0;  ///< GPU decode: decode kernels (CUDA events, over streams)
  std::int64_t encoded_bytes = 0;    ///< GPU decode: compressed genotype bytes read
  bool device_decode = false;        ///< GPU: the genotypes were decoded on the device
  double d2h_seconds = 0;            ///< GPU: device-to-host copies
  std::int64_t h2d_bytes = 0;        ///< GPU: bytes copied to the device
  std::int64_t decoded_bytes = 0;    ///< genotype bytes decoded
  std::int64_t calls = 0;            ///< genotype calls read (rows × samples × ploidy, per pass)
  std::int64_t variants = 0;         ///< variants selected
  std::int64_t units = 0;
  std::int64_t device_pairs = 0;  ///< GPU: variant pairs summed on the device (ld-stats' bins)
};

}  // namespace vczstats
