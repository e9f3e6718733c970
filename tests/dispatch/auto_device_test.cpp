// --device auto's estimate (vczstats/device.hpp) against what bench/auto_device.sh measured on
// the H100 machine: wherever one device was at least 20% faster there, the estimate must pick it.

#include <gtest/gtest.h>
#include <cstdlib>

#include "vczstats/device.hpp"

namespace {

using vczstats::AutoDeviceWork;
using vczstats::estimate_auto_device;

struct Measured {
  const char* what;
  double samples, variants;
  bool matrix;  // king: every sample pair over every variant
  unsigned threads;
  double cpu_s, gpu_s;  // medians of bench/auto_device.sh -t THREADS on the H100 machine
};

// bench/auto_device.sh -t 16 -n 3 and -t 4 -n 2 (2026-11-24): rows whose faster device won by
// at least 20%. (stats/afdist on 2,500 x 10^6 at 16 threads tie within 15%: left out.)
constexpr Measured kMeasured[] = {
    {"stats 100x10^4", 100, 1e4, false, 16, 0.016, 0.357},
    {"king 100x10^4", 100, 1e4, true, 16, 0.025, 0.439},
    {"afdist 1000x10^5", 1000, 1e5, false, 16, 0.068, 0.393},
    {"king 1000x10^5", 1000, 1e5, true, 16, 0.289, 0.575},
    {"stats 2500x10^5", 2500, 1e5, false, 16, 0.178, 0.490},
    {"king 2500x10^6", 2500, 1e6, true, 16, 4.144, 1.236},
    {"stats Ag1000G 100x1019012", 100, 1019012, false, 16, 0.158, 0.478},
    {"king Ag1000G 100x1019012", 100, 1019012, true, 16, 0.316, 0.593},
    {"stats 2500x10^5", 2500, 1e5, false, 4, 0.399, 0.539},
    {"king 2500x10^5", 2500, 1e5, true, 4, 1.145, 0.839},
    {"afdist Ag1000G 100x1019012", 100, 1019012, false, 4, 0.218, 0.452},
};

AutoDeviceWork work_of(const Measured& m) {
  AutoDeviceWork w;
  w.calls = m.samples * m.variants;
  if (m.matrix) w.pair_variants = m.samples * (m.samples + 1) / 2 * m.variants;
  w.threads = m.threads;
  return w;
}

TEST(AutoDevice, PicksTheDeviceThatWasMeasuredFaster) {
  for (const Measured& m : kMeasured) {
    const auto e = estimate_auto_device(work_of(m));
    EXPECT_EQ(e.gpu(), m.gpu_s < m.cpu_s)
        << m.what << " at " << m.threads << " threads: estimated CPU " << e.cpu_seconds
        << " s, GPU " << e.gpu_seconds << " s; measured " << m.cpu_s << " / " << m.gpu_s;
  }
}

TEST(AutoDevice, SmallRunsStayOnTheCpuAndLargeOnesTakeTheGpu) {
  for (unsigned threads : {1u, 2u, 16u, 128u}) {
    AutoDeviceWork w;
    w.threads = threads;
    EXPECT_FALSE(estimate_auto_device(w).gpu()) << "no work, " << threads << " threads";
    w.calls = 1e6;
    EXPECT_FALSE(estimate_auto_device(w).gpu()) << "10^6 calls, " << threads << " threads";
  }
  // 10^5 samples x 10^5 variants of site statistics, and a KING matrix of 10^4 x 10^5.
  AutoDeviceWork big;
  big.threads = 16;
  big.calls = 1e10;
  EXPECT_TRUE(estimate_auto_device(big).gpu());
  AutoDeviceWork king;
  king.threads = 16;
  king.calls = 1e9;
  king.pair_variants = 1e4 * (1e4 + 1) / 2 * 1e5;
  EXPECT_TRUE(estimate_auto_device(king).gpu());
}

TEST(AutoDevice, MoreCpuThreadsNeedMoreWorkBeforeTheGpuPays) {
  // The smallest number of calls (to 10%) that takes the GPU grows with the threads.
  auto crossover = [](unsigned threads) {
    AutoDeviceWork w;
    w.threads = threads;
    for (w.calls = 1e6; w.calls < 1e13; w.calls *= 1.1)
      if (estimate_auto_device(w).gpu()) return w.calls;
    return 1e13;  // never (many cores read faster than the GPU's measured rate)
  };
  double last = 0;
  for (unsigned threads : {1u, 4u, 16u}) {
    const double c = crossover(threads);
    EXPECT_GT(c, last) << threads << " threads";
    last = c;
  }
  EXPECT_LT(last, 1e13);  // 16 threads: the GPU pays from some size on
  AutoDeviceWork none;
  none.threads = 0;  // treated as one thread, never a division by zero
  none.calls = 1e8;
  EXPECT_GT(estimate_auto_device(none).cpu_seconds, 0.1);
}

}  // namespace

TEST(AutoDevice, LargeLdTakesTheGpuAndASmallOneStaysOnTheCpu) {
  // LD of 10^4 samples x 10^5 variants, window 1000 (3 planes of 157 words a row): 10^8 pairs
  // x 471 words on 16 threads goes to the GPU; 100 samples x 2000 variants, window 10, stays on
  // the CPU (the GPU's setup alone costs more).
  AutoDeviceWork ld;
  ld.threads = 16;
  ld.calls = 1e4 * 1e5;
  ld.pair_words = 1e5 * 1000 * 471;
  EXPECT_TRUE(estimate_auto_device(ld).gpu());
  AutoDeviceWork small;
  small.threads = 16;
  small.calls = 100 * 2000;
  small.pair_words = 2000 * 10 * 6;
  EXPECT_FALSE(estimate_auto_device(small).gpu());
}

// Binding a one-run process to its GPU before CUDA starts (bind_process_to_gpu): the devices are
// counted from CUDA_VISIBLE_DEVICES as the CUDA runtime reads it (up to the first entry that
// names no device), and the chosen entry becomes the only visible one. Each ctest case is its
// own process, so the environment changed here goes with it.
TEST(BindProcessToGpu, NarrowsCudaVisibleDevicesToTheChosenEntry) {
  ::setenv("CUDA_VISIBLE_DEVICES", "5,7,9", 1);
  EXPECT_EQ(vczstats::gpus_without_starting_cuda(), 3);
  EXPECT_EQ(vczstats::bind_process_to_gpu(3), 3);  // not among them: left for the run to report
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "5,7,9");
  EXPECT_EQ(vczstats::bind_process_to_gpu(1), 0);
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "7");
  EXPECT_EQ(vczstats::gpus_without_starting_cuda(), 1);
  // Bound again with the same index (GpuPrestart, then the run's own options): device 0 again,
  // not 1 of the one now visible.
  EXPECT_EQ(vczstats::bind_process_to_gpu(1), 0);
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "7");
  EXPECT_EQ(vczstats::bind_process_to_gpu(0), 0);  // one device: nothing to narrow
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "7");
  ::setenv("CUDA_VISIBLE_DEVICES", "0,-1,2", 1);
  EXPECT_EQ(vczstats::gpus_without_starting_cuda(), 1);
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
  EXPECT_EQ(vczstats::gpus_without_starting_cuda(), 0);
}

// Several GPUs of one process (`--device gpu:2,0`): the chosen entries, in the request's order,
// become the visible ones, and the run's indices 0 and 1; binding the same list again answers the
// same; a list naming a device that is not there is left for the run to report.
TEST(BindProcessToGpu, NarrowsCudaVisibleDevicesToSeveralEntries) {
  ::setenv("CUDA_VISIBLE_DEVICES", "5,7,9", 1);
  EXPECT_EQ(vczstats::bind_process_to_gpus({2, 3}), (std::vector<int>{2, 3}));
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "5,7,9");
  auto spec = vczstats::parse_device("gpu:2,0");
  spec = vczstats::bind_process_to_device(spec);
  EXPECT_EQ(spec.gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(spec.index, 0);
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "9,5");
  EXPECT_EQ(vczstats::bind_process_to_gpus({2, 0}), (std::vector<int>{0, 1}));
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "9,5");
  // gpu:all and the CPU: nothing bound.
  EXPECT_TRUE(vczstats::bind_process_to_device(vczstats::parse_device("gpu:all")).all_gpus);
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "9,5");
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
}

// ld-stats (a band with a reducer): the CPU sums its pairs where it counts them, the GPU band hands
// them all to the host. bench/ld_stats_pg_gpu.sh on the H200 machine (2026-11-29): 4.3 x 10^6
// pairs of 40 haplotypes, the CPU 0.129 s at 16 threads and 0.237 s at 4, the GPU 2.62 s.
TEST(AutoDevice, ReducedPairsOnTheDeviceWhenManyAndWide) {
  for (unsigned threads : {2u, 4u, 16u}) {
    // pg_gpu's shape (bench/ld_stats_pg_gpu.sh): 4.3e6 pairs of one word, the GPU's start-up
    // alone is longer than the CPU's run (0.093 s on 16 cores against 1.3 s)
    AutoDeviceWork w;
    w.threads = threads;
    w.calls = 40 * 5100.0;
    w.reduced_pairs = w.device_reduced_pairs = 4.3e6;
    w.pair_words = 4.3e6 * 2;  // one word a plane
    EXPECT_FALSE(estimate_auto_device(w).gpu()) << threads << " threads";
    // 10^9 pairs of 10^4 haplotypes (bench/ld_stats.sh: 25.4 s on the 16 cores, 6.59 s on the
    // GPU, which sums them on the device)
    w.calls = 1e4 * 1e6;
    w.reduced_pairs = w.device_reduced_pairs = 1e9;
    w.pair_words = 1e9 * 2 * 157;
    EXPECT_TRUE(estimate_auto_device(w).gpu()) << threads << " threads, 10^9 pairs";
    // the same pairs without a device form (every pair to the host on the GPU): the CPU
    w.device_reduced_pairs = 0;
    EXPECT_FALSE(estimate_auto_device(w).gpu()) << threads << " threads, host sums";
  }
}

// The GPU of a one-statistic process (process_gpu): gpu:N is N; an MPI rank's `gpu` is its
// node-local rank mod the node's GPUs (counted from CUDA_VISIBLE_DEVICES here); a process alone
// takes the request's index; without a GPU to count, the request's index.
TEST(ProcessGpu, NodeLocalRankModTheGpusUnlessAnIndexIsGiven) {
  ::setenv("CUDA_VISIBLE_DEVICES", "2,5,6", 1);
  const vczstats::DeviceSpec gpu{vczstats::DeviceKind::Gpu, 0};
  const vczstats::DeviceSpec gpu1{vczstats::DeviceKind::Gpu, 1};
  EXPECT_EQ(vczstats::process_gpu(gpu, false, -1), 0);
  EXPECT_EQ(vczstats::process_gpu(gpu, false, 4), 1);
  EXPECT_EQ(vczstats::process_gpu(gpu, false, 2), 2);
  EXPECT_EQ(vczstats::process_gpu(gpu1, true, 4), 1);
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
  EXPECT_EQ(vczstats::process_gpu(gpu, false, 4), 0);
}

// Under MPI a request for several GPUs names those a node's ranks take: `gpu:3,1` gives local
// rank r entry r mod 2; `gpu:all` is `gpu` (local rank mod the node's GPUs).
TEST(ProcessGpu, SeveralGpusAreTakenOneARank) {
  ::setenv("CUDA_VISIBLE_DEVICES", "2,5,6", 1);
  const auto list = vczstats::parse_device("gpu:3,1"), all = vczstats::parse_device("gpu:all");
  EXPECT_EQ(vczstats::process_gpu(list, true, 0), 3);
  EXPECT_EQ(vczstats::process_gpu(list, true, 1), 1);
  EXPECT_EQ(vczstats::process_gpu(list, true, 2), 3);
  EXPECT_EQ(vczstats::process_gpu(all, true, 4), 1);
  ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
}
