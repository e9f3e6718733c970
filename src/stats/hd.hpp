#pragma once
// VCZ_HD marks functions compiled for both the host and, under nvcc, the device: the per-site
// math of every statistic is written once and shared by the CPU and CUDA backends.
#if defined(__CUDACC__)
#define VCZ_HD __host__ __device__
#else
#define VCZ_HD
#endif
