#pragma once
// Timing shared by the GPU benchmarks: the median of repeated launches, measured with CUDA
// events on one stream after two warm-up launches, and the median of host timings.

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "backend/cuda/cuda_util.cuh"

namespace vczstats::bench {

/// @brief The median of @p v (the upper one of an even count; 0 when empty).
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// @brief Median milliseconds of @p reps calls of @p launch (which queues work on @p st), after
/// two warm-up calls. @throws CudaError.
template <class F>
double median_ms(cudaStream_t st, int reps, F&& launch) {
  cuda::Event a(true), b(true);
  launch();  // warm-up
  launch();
  VCZ_CUDA_CHECK(cudaStreamSynchronize(st));
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    a.record(st);
    launch();
    b.record(st);
    b.synchronize();
    float t = 0;
    VCZ_CUDA_CHECK(cudaEventElapsedTime(&t, a.get(), b.get()));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return static_cast<double>(ms[ms.size() / 2]);
}

}  // namespace vczstats::bench
