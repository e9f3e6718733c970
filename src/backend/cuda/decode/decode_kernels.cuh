#pragma once
// Launchers of the jobs around the decode tasks (decode_jobs.hpp): stored-block copies, fills,
// byte and bit unshuffles and shard scatters. Each takes device arrays of jobs and a stream.

#include <cstdint>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/decode/decode_jobs.hpp"
#include "backend/cuda/decode/decode_task.hpp"

namespace vczstats::cuda::decode {

/// @brief Copy the @p n stored (TaskCodec::Copy) tasks at @p d_tasks; @p max_bytes is the
/// largest task's size (it sets the grid). Writes one status per task.
void launch_copy_tasks(const DecodeTask* d_tasks, DecodeStatus* d_status, std::int64_t n,
                       std::uint64_t max_bytes, cudaStream_t stream);
/// @brief Run @p n fill jobs; @p max_bytes is the largest one's size.
void launch_fills(const FillJob* d_jobs, std::int64_t n, std::uint64_t max_bytes,
                  cudaStream_t stream);
/// @brief Run @p n unshuffle jobs; @p max_bytes is the largest one's size.
void launch_unshuffles(const ShuffleJob* d_jobs, std::int64_t n, std::uint64_t max_bytes,
                       cudaStream_t stream);
/// @brief Run @p n scatter jobs; @p max_rows is the largest one's row count.
void launch_scatters(const ScatterJob* d_jobs, std::int64_t n, std::uint64_t max_rows,
                     cudaStream_t stream);

}  // namespace vczstats::cuda::decode
