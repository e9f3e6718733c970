#pragma once
// The lanes a device decoder's per-task code runs on. Decoders are written once as templates on
// a "warp" type W and run:
//  - on the device with DeviceWarp: the 32 lanes of a CUDA warp (one warp per task);
//  - on the host with HostLane: a warp of one lane, so the very same loops run sequentially (host
//    decoding, tests against the reference libraries, fuzzing under sanitizers);
//  - in tests with an emulated warp of several threads (tests/backend/), which checks the lane
//    partitioning and the placement of the synchronisation points without a GPU.
//
// The rules the decoders follow, so that every W gives the same result:
//  - control flow around sync() and the collective calls (any, ballot, match_any, bcast) is the
//    same in every lane: it depends only on values every lane computed identically (every lane
//    parses headers and bit streams redundantly), or on a collective's result;
//  - shared state (the per-warp tables) is written by the leader only, or by lanes on disjoint
//    parts, and read by the other lanes only after a sync();
//  - work is split across lanes as `for (i = w.lane(); i < n; i += W::kWidth)`.
// No CUDA headers here: the file compiles with g++ and nvcc.

#include <cstdint>

#include "backend/cuda/decode/decode_task.hpp"

namespace vczstats::cuda::decode {

/// @brief Number of set bits of @p x (host and device).
VCZ_HD inline int popcount32(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}

/// @brief Index of the highest set bit of @p x; @p x must not be 0.
VCZ_HD inline int highbit32(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return 31 - __clz(static_cast<int>(x));
#else
  return 31 - __builtin_clz(x);
#endif
}

/// @brief A warp of one lane: the host runs the decoders' warp code sequentially.
struct HostLane {
  static constexpr int kWidth = 1;
  static constexpr bool kDevice = false;
  int lane() const { return 0; }
  bool leader() const { return true; }
  void sync() const {}
  bool any(bool p) const { return p; }
  std::uint32_t ballot(bool p) const { return p ? 1u : 0u; }
  std::uint32_t match_any(std::uint32_t) const { return 1u; }
  std::uint32_t lanemask_lt() const { return 0u; }
  std::uint32_t bcast(std::uint32_t v) const { return v; }
};

#if defined(__CUDACC__)
/// @brief The 32 lanes of a CUDA warp (all of them active: the decoders never let a lane leave
/// early). The member functions are host-device only so that host passes of templates compile;
/// they do nothing useful on the host.
struct DeviceWarp {
  static constexpr int kWidth = 32;
  static constexpr bool kDevice = true;
  VCZ_HD int lane() const {
#if defined(__CUDA_ARCH__)
    return static_cast<int>(threadIdx.x & 31u);
#else
    return 0;
#endif
  }
  VCZ_HD bool leader() const {
    return lane() == 0;
  }
  VCZ_HD void sync() const {
#if defined(__CUDA_ARCH__)
    __syncwarp();
#endif
  }
  VCZ_HD bool any(bool p) const {
#if defined(__CUDA_ARCH__)
    return __any_sync(0xFFFFFFFFu, p) != 0;
#else
    return p;
#endif
  }
  VCZ_HD std::uint32_t ballot(bool p) const {
#if defined(__CUDA_ARCH__)
    return __ballot_sync(0xFFFFFFFFu, p);
#else
    return p ? 1u : 0u;
#endif
  }
  VCZ_HD std::uint32_t match_any(std::uint32_t v) const {
#if defined(__CUDA_ARCH__)
    return __match_any_sync(0xFFFFFFFFu, v);
#else
    (void)v;
    return 1u;
#endif
  }
  VCZ_HD std::uint32_t lanemask_lt() const {
    return (1u << static_cast<unsigned>(lane())) - 1u;
  }
  VCZ_HD std::uint32_t bcast(std::uint32_t v) const {
#if defined(__CUDA_ARCH__)
    return __shfl_sync(0xFFFFFFFFu, v, 0);
#else
    return v;
#endif
  }
};
#endif

}  // namespace vczstats::cuda::decode
