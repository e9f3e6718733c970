#pragma once
// STAND-IN, to be deleted when branch zstd lands: it provides zstd_decode_host with the
// interface of src/backend/cuda/decode/zstd_decode.hpp and reports every zstd task as
// Unsupported, so the blosc side builds and its zstd error path is tested. Replace the include
// of this file (framing.cpp) by "backend/cuda/decode/zstd_decode.hpp".

#include "backend/cuda/decode/lz4_decode.hpp"

namespace vczstats::cuda::decode {

/// @brief Stand-in: reports Unsupported for every zstd task.
inline DecodeStatus zstd_decode_host(const DecodeTask& t) {
  (void)t;
  return decode_failure(DecodeError::Unsupported, 0, 0);
}

}  // namespace vczstats::cuda::decode
