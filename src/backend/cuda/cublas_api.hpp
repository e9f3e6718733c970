#pragma once
// cuBLAS, loaded on first use: linking libcublas costs every process ~0.1 s at start (its
// relocations and static data: ~26,000 page faults), also the many runs that never touch a
// matrix. The entry points are the _v2 symbols cublas_v2.h maps the names to. Shared by the
// matrix family (sample_matrix_gpu.cpp) and the randomized PCA (pca_product_gpu.cpp).

#include <cublas_v2.h>
#include <dlfcn.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "backend/cuda/cuda_util.cuh"
#include "vczstats/error.hpp"

namespace vczstats::cuda {

/// @brief The cuBLAS entry points the project calls.
struct CublasApi {
  decltype(&cublasCreate) create = nullptr;
  decltype(&cublasDestroy) destroy = nullptr;
  decltype(&cublasSetStream) set_stream = nullptr;
  decltype(&cublasSetWorkspace) set_workspace = nullptr;
  // cublasGemmEx is overloaded in C++ (cublas_api.h): the C entry point's type.
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
  GemmEx gemm_ex = nullptr;
  decltype(&cublasDgemm) dgemm = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;

  /// @brief The entry points, loaded on the first call. @throws CudaError.
  static const CublasApi& get() {
    static const CublasApi api = load();
    return api;
  }

 private:
  static CublasApi load() {
    const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      throw CudaError("cuBLAS (for the matrix statistics on the GPU): cannot load " + name + ": " +
                      dlerror() + "; use --device cpu, or put the CUDA libraries on the path");
    CublasApi a;
    auto sym = [&](auto& fn, const char* symbol) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, symbol));
      if (!fn) throw CudaError(name + " has no " + symbol);
    };
    sym(a.create, "cublasCreate_v2");
    sym(a.destroy, "cublasDestroy_v2");
    sym(a.set_stream, "cublasSetStream_v2");
    sym(a.set_workspace, "cublasSetWorkspace_v2");
    sym(a.gemm_ex, "cublasGemmEx");
    sym(a.dgemm, "cublasDgemm_v2");
    sym(a.status_string, "cublasGetStatusString");
    return a;  // the library stays loaded for the process
  }
};

/// @brief Throw CudaError naming @p call unless @p s is success.
inline void check_cublas(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw CudaError(std::string("cuBLAS: ") + call + ": " + CublasApi::get().status_string(s));
}

/// @brief A cuBLAS handle bound to one stream, with its workspace from the device's pool.
class BlasHandle {
 public:
  BlasHandle(DevicePool& pool, cudaStream_t stream) : BlasHandle(create(), pool, stream) {}
  /// @brief Take over @p handle (from create(), e.g. made on another thread while this one
  /// set up the rest); it is destroyed on failure too.
  BlasHandle(cublasHandle_t handle, DevicePool& pool, cudaStream_t stream) : h_(handle) {
    try {
      check_cublas(blas().set_stream(h_, stream), "cublasSetStream");
      workspace_ = DeviceBuffer(pool, kWorkspace, stream);
      check_cublas(blas().set_workspace(h_, workspace_.data(), kWorkspace), "cublasSetWorkspace");
    } catch (...) {
      blas().destroy(h_);
      throw;
    }
  }
  ~BlasHandle() { blas().destroy(h_); }
  BlasHandle(const BlasHandle&) = delete;
  BlasHandle& operator=(const BlasHandle&) = delete;
  cublasHandle_t get() const { return h_; }
  /// @brief A new handle on the current device (loads cuBLAS on the first call: ~0.1-0.3 s).
  static cublasHandle_t create() {
    cublasHandle_t h = nullptr;
    check_cublas(blas().create(&h), "cublasCreate");
    return h;
  }
  static const CublasApi& blas() { return CublasApi::get(); }

 private:
  static constexpr std::int64_t kWorkspace = 32ll << 20;  // cuBLAS's advice for Hopper
  cublasHandle_t h_ = nullptr;
  DeviceBuffer workspace_;
};

}  // namespace vczstats::cuda
