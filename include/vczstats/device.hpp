#pragma once
/// @file device.hpp
/// @brief Where to compute: the CPU, a CUDA device by index, or the GPU when one is usable.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace vczstats {

/// @brief The kind of device a run asks for.
enum class DeviceKind { Cpu, Gpu, Auto };

/// @brief A device request: `cpu`, `gpu` (device 0), `gpu:N`, several GPUs (`gpu:0,1,...` or
/// `gpu:all`) or `auto` (device 0 when usable, else the CPU). The index is explicit everywhere
/// below: nothing assumes device 0.
///
/// Several GPUs: one process shares the run among them, a thread each (runner.hpp), with the
/// output of one GPU; under MPI each rank takes one of them instead (process_gpu).
struct DeviceSpec {
  DeviceSpec() = default;
  DeviceSpec(DeviceKind k, int i = 0) : kind(k), index(i) {}  // NOLINT: {Gpu, 1} reads well
  DeviceKind kind = DeviceKind::Auto;
  int index = 0;          ///< CUDA device index (Gpu and Auto); with several GPUs the first
  std::vector<int> gpus;  ///< `gpu:0,1,...`: the GPUs (two or more, distinct); else empty
  bool all_gpus = false;  ///< `gpu:all`: every GPU the process sees
  /// @brief Whether the request names several GPUs (`gpu:0,1`, `gpu:all`).
  bool several() const { return kind == DeviceKind::Gpu && (all_gpus || !gpus.empty()); }
  /// @brief The option text: "cpu", "gpu:1", "gpu:0,1", "gpu:all", "auto".
  std::string to_string() const;
};

/// @brief Parse "cpu", "gpu", "gpu:N", "gpu:N,M,...", "gpu:all" or "auto". @throws UsageError.
DeviceSpec parse_device(std::string_view text);

/// @brief The GPUs a request for several (DeviceSpec::several) runs on: its list, or for
/// `gpu:all` every CUDA device (gpu_count: starts CUDA). @throws UsageError when `gpu:all` finds
/// no device (naming why).
std::vector<int> shared_gpus(const DeviceSpec& spec);

/// @brief Number of CUDA devices (0 without a driver, a device or the CUDA backend; then
/// @p reason says why).
int gpu_count(std::string* reason = nullptr);

/// @brief Whether CUDA device @p index can be used; when not, @p reason says why.
bool gpu_available(std::string* reason = nullptr, int index = 0);

/// @brief The GPUs this process could use, counted without starting CUDA: the entries of
/// CUDA_VISIBLE_DEVICES when it is set, else the /dev/nvidiaN device files; 0 when none.
int gpus_without_starting_cuda();

/// @brief Restrict this process's CUDA runtime, before it starts, to the one device that
/// @p index names (CUDA_VISIBLE_DEVICES): driver initialisation then touches that device alone,
/// where it otherwise initialises every visible GPU (on a 4 x H100 host 1.2 s instead of 0.45).
/// For processes that run one statistic (the CLI, each MPI rank), never for a library user who
/// may want other devices later. @return the index to use from now on: 0 once bound; @p index
/// when the runtime had started already, the devices cannot be counted, or @p index is not
/// among them (the run then reports that as before). Binding again with the same @p index
/// answers 0 again.
int bind_process_to_gpu(int index);

/// @brief bind_process_to_gpu for the GPUs of a process that shares one run among them
/// (`gpu:0,2`; bind_process_to_gpu is this for a list of one): CUDA_VISIBLE_DEVICES narrowed to
/// those devices, in that order. @return the indices to use from now on (0, 1, ... once bound,
/// and again for the same list; @p indices when it cannot bind).
std::vector<int> bind_process_to_gpus(const std::vector<int>& indices);

/// @brief @p spec with its GPUs bound (bind_process_to_gpus) and its indices as they are from
/// then on: `gpu:2` becomes device 0 of the one visible, `gpu:0,2` devices 0 and 1; `cpu` and
/// `gpu:all` are left as they are. For processes that run one statistic alone (the CLI).
DeviceSpec bind_process_to_device(DeviceSpec spec);

/// @brief The CUDA device a process that runs one statistic uses for @p spec (a GPU request):
/// its own index when @p index_given (`gpu:N`); for an MPI rank (@p local_rank >= 0, its rank
/// among those of its node) the GPU local_rank mod the node's GPUs (gpus_without_starting_cuda),
/// or with a list (`gpu:0,2`) the entry local_rank mod its length; else spec.index.
int process_gpu(const DeviceSpec& spec, bool index_given, int local_rank);

/// @brief Starts CUDA for its devices on threads of their own (driver initialisation and each
/// device's primary context: 0.2-0.35 s on the H100 and H200 hosts), so that it overlaps what the
/// process does before its first GPU call: MPI_Init, opening the store, planning. That first call
/// then waits for the thread inside CUDA, and finds the context made. Binds the process to the
/// devices first (bind_process_to_gpus), so it is for processes that run one statistic (the CLI,
/// each MPI rank). A failure (no driver, no such device) is left to the run to report.
/// Destruction waits for the threads; a build without CUDA does nothing.
class GpuPrestart {
 public:
  /// @brief Devices @p indices (one, or the GPUs of a process that shares its run among them,
  /// `gpu:0,1`): bound with bind_process_to_gpus and started at once, a thread each.
  explicit GpuPrestart(const std::vector<int>& indices);
  ~GpuPrestart();
  GpuPrestart(const GpuPrestart&) = delete;
  GpuPrestart& operator=(const GpuPrestart&) = delete;

 private:
  struct Thread;
  std::unique_ptr<Thread> thread_;
};

/// @brief The work of one run, as `--device auto` weighs it.
struct AutoDeviceWork {
  double calls = 0;          ///< genotype calls the site pass reads (variants x samples)
  double pair_variants = 0;  ///< matrix family: sample pairs x variants (n (n + 1) / 2 x m)
  double pair_words = 0;     ///< variant-pair family: variant pairs x 64-bit words of a row
  /// Variant pairs of bands with a reducer (ld-stats): the CPU band sums them where it counts
  /// them; the GPU band sums them on the device when the reducer has a device form, else hands
  /// every one to the host (device_reduced_pairs counts the former, a share of these).
  double reduced_pairs = 0;
  double device_reduced_pairs = 0;
  unsigned threads = 1;  ///< CPU threads the run would use
};

/// @brief The seconds a run is estimated to take on the CPU and on the GPU, from rates measured
/// on the H100 machine with bench/auto_device.sh (README, "Choosing the device"): the CPU
/// reads 1.6e8 calls/s and sums 4.7e10 pair-variants/s per thread; the GPU pays 0.35 s of setup
/// (CUDA context, cuBLAS, pinned buffers; 0.1 s more with a matrix), then reads 4e9 calls/s and
/// sums 4e12 pair-variants/s. Variant pairs (ld, prune): the CPU band counts 1.3e9 pair row-words/s
/// per thread, the GPU band 2e11 (H100 machine, bench/matrix.sh -c ld). Reduced pairs (ld-stats):
/// the CPU sums 1e7 a second per thread, the GPU 4.6e8 on the device, or its host 2e6 in all
/// when the reducer has no device form (H200 machine, bench/ld_stats.sh and
/// bench/ld_stats_pg_gpu.sh).
struct AutoDeviceEstimate {
  double cpu_seconds = 0, gpu_seconds = 0;
  /// @brief Whether auto takes the GPU: when it is estimated faster.
  bool gpu() const { return gpu_seconds < cpu_seconds; }
};
AutoDeviceEstimate estimate_auto_device(const AutoDeviceWork& work);

}  // namespace vczstats
