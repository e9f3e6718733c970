// The matrix family's pair-count GEMM alone (src/backend/cuda/sample_matrix_gpu.cpp): int8 x
// int8 -> int32 cuBLAS GEMMs over the lower triangle of an n x n matrix in tiles of 8192
// samples, k variant slots per batch, as the accumulator runs them, timed with CUDA events.
// Prints tensor operations per second (2 n_i n_j k per tile) and the share of the device's int8
// dense peak (H100 SXM: 1979 x 10^12 operations/s; PCIe 1513 x 10^12; --peak to give another).
//
// Usage: gpu_int8_gemm_bench [--samples N,...] [--k K,...] [--reps R] [--peak TOPS]

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "gpu_int8_gemm_bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "gpu_int8_gemm_bench: %s: %s\n", what, cublasGetStatusString(s));
    std::exit(1);
  }
}

std::vector<long> list(const char* text) {
  std::vector<long> v;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');) v.push_back(std::atol(item.c_str()));
  return v;
}

constexpr long kTile = 8192;  // as sample_matrix_gpu.cpp

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> samples = {10000, 20000}, ks = {4096, 16384};
  int reps = 5;
  double peak = 0;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--samples"))
      samples = list(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--k"))
      ks = list(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--reps"))
      reps = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--peak"))
      peak = std::atof(argv[a + 1]) * 1e12;
    else {
      std::fprintf(
          stderr,
          "usage: gpu_int8_gemm_bench [--samples N,...] [--k K,...] [--reps R] [--peak TOPS]\n");
      return 2;
    }
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  if (peak == 0) peak = std::strstr(prop.name, "PCIe") ? 1513e12 : 1979e12;
  cublasHandle_t h;
  check(cublasCreate(&h), "cublasCreate");
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "event");
  check(cudaEventCreate(&e1), "event");
  std::printf("%s, int8 dense peak %.0f x 10^12 operations/s; median of %d\n\n", prop.name,
              peak / 1e12, reps);
  std::printf("| samples | k | tiles | GEMM ms | 10^12 ops/s | share of peak |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|\n");
  for (long n : samples)
    for (long k : ks) {
      std::int8_t* a = nullptr;
      std::int32_t* c = nullptr;
      const long ld = (n + 15) / 16 * 16;
      check(cudaMalloc(&a, static_cast<std::size_t>(n * k)), "cudaMalloc");
      check(cudaMalloc(&c, static_cast<std::size_t>(n * ld) * 4), "cudaMalloc");
      check(cudaMemset(a, 1, static_cast<std::size_t>(n * k)), "cudaMemset");
      check(cudaMemset(c, 0, static_cast<std::size_t>(n * ld) * 4), "cudaMemset");
      double ops = 0;
      long tiles = 0;
      auto run = [&] {
        const int one = 1;
        for (long i0 = 0; i0 < n; i0 += kTile)
          for (long j0 = 0; j0 < std::min(i0 + kTile, n); j0 += kTile) {
            const long i1 = std::min(i0 + kTile, n), j1 = std::min(j0 + kTile, n);
            check(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(j1 - j0),
                               static_cast<int>(i1 - i0), static_cast<int>(k), &one, a + j0 * k,
                               CUDA_R_8I, static_cast<int>(k), a + i0 * k, CUDA_R_8I,
                               static_cast<int>(k), &one, c + i0 * ld + j0, CUDA_R_32I,
                               static_cast<int>(ld), CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmEx");
          }
      };
      for (long i0 = 0; i0 < n; i0 += kTile)
        for (long j0 = 0; j0 < std::min(i0 + kTile, n); j0 += kTile, ++tiles)
          ops += 2.0 * (std::min(i0 + kTile, n) - i0) * (std::min(j0 + kTile, n) - j0) * k;
      run();  // warm-up (cuBLAS picks and loads its kernel)
      std::vector<float> ms;
      for (int r = 0; r < reps; ++r) {
        check(cudaEventRecord(e0), "record");
        run();
        check(cudaEventRecord(e1), "record");
        check(cudaEventSynchronize(e1), "sync");
        float t = 0;
        check(cudaEventElapsedTime(&t, e0, e1), "elapsed");
        ms.push_back(t);
      }
      std::sort(ms.begin(), ms.end());
      const double t = ms[ms.size() / 2] / 1e3;
      std::printf("| %ld | %ld | %ld | %.3f | %.0f | %.0f%% |\n", n, k, tiles, t * 1e3,
                  ops / t / 1e12, 100 * ops / t / peak);
      cudaFree(a);
      cudaFree(c);
    }
  cublasDestroy(h);
  return 0;
}
