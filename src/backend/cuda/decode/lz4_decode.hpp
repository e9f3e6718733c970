#pragma once
// The LZ4 block decoder (raw block, no frame header), one source for the host and the device:
// lz4_decode_lanes<Lanes> decodes one task with Lanes cooperating threads that parse the same
// sequence headers (broadcast reads) and share the literal and match copies. The device runs it
// with a warp (Lanes = 32, one task per warp); the host with Lanes = 1 (lz4_decode_host).
//
// Bounds: every read is checked against src_size and every write against dst_size before it
// happens; a match may only reach back into bytes this task has already written.

#include <cstdint>
#include <cstring>

#include "backend/cuda/decode/decode_task.hpp"

namespace vczstats::cuda::decode {

/// @brief The first 2^32-1 of a byte offset, for DecodeStatus::detail.
VCZ_HD inline std::uint32_t clip_detail(std::uint64_t v) {
  return v > 0xFFFFFFFFull ? 0xFFFFFFFFu : static_cast<std::uint32_t>(v);
}

/// @brief A failed status: @p error at input byte @p at, @p produced bytes written.
VCZ_HD inline DecodeStatus decode_failure(DecodeError error, std::uint64_t at,
                                          std::uint64_t produced) {
  DecodeStatus s;
  s.error = static_cast<std::int32_t>(error);
  s.detail = clip_detail(at);
  s.produced = produced;
  return s;
}

/// @brief Make the writes of all lanes visible to all lanes (a no-op on the host).
VCZ_HD inline void lanes_sync() {
#if defined(__CUDA_ARCH__)
  __syncwarp();
#endif
}

/// @brief Add the length bytes that follow a token field of 15 (each 255 means more follow) to
/// @p length; false when the input ends first.
VCZ_HD inline bool lz4_extend_length(const std::uint8_t* src, std::uint64_t n, std::uint64_t& ip,
                                     std::uint64_t& length) {
  for (;;) {
    if (ip >= n) return false;
    const unsigned b = src[ip++];
    length += b;
    if (b != 255) return true;
  }
}

/// @brief Decode the LZ4 block of @p t with @p Lanes threads; @p lane is this thread's index.
/// Every lane returns the same status.
template <unsigned Lanes>
VCZ_HD inline DecodeStatus lz4_decode_lanes(const DecodeTask& t, unsigned lane) {
  const std::uint8_t* src = t.src;
  std::uint8_t* dst = t.dst;
  const std::uint64_t n = t.src_size;
  const std::uint64_t cap = t.dst_size;
  std::uint64_t ip = 0, op = 0;
  for (;;) {
    if (ip >= n) return decode_failure(DecodeError::Truncated, ip, op);
    const unsigned token = src[ip++];
    std::uint64_t literals = token >> 4;
    if (literals == 15 && !lz4_extend_length(src, n, ip, literals))
      return decode_failure(DecodeError::Truncated, ip, op);
    if (literals > n - ip) return decode_failure(DecodeError::Truncated, ip, op);
    if (literals > cap - op) return decode_failure(DecodeError::OutputOverflow, ip, op);
    for (std::uint64_t i = lane; i < literals; i += Lanes) dst[op + i] = src[ip + i];
    ip += literals;
    op += literals;
    if (ip == n) break;  // the last sequence has literals only
    if (n - ip < 2) return decode_failure(DecodeError::Truncated, ip, op);
    const std::uint32_t offset = src[ip] | (static_cast<std::uint32_t>(src[ip + 1]) << 8);
    ip += 2;
    if (offset == 0 || offset > op) return decode_failure(DecodeError::Corrupt, ip - 2, op);
    std::uint64_t length = (token & 15u) + 4;
    if ((token & 15u) == 15u && !lz4_extend_length(src, n, ip, length))
      return decode_failure(DecodeError::Truncated, ip, op);
    if (length > cap - op) return decode_failure(DecodeError::OutputOverflow, ip, op);
    lanes_sync();  // the match may read what other lanes just wrote
    const std::uint8_t* from = dst + (op - offset);
    if (offset >= length) {
      for (std::uint64_t i = lane; i < length; i += Lanes) dst[op + i] = from[i];
    } else {
      // Overlapping: the output repeats with period offset, and every byte read lies before op.
      for (std::uint64_t i = lane; i < length; i += Lanes) dst[op + i] = from[i % offset];
    }
    op += length;
  }
  lanes_sync();
  if (op != cap) return decode_failure(DecodeError::OutputShort, ip, op);
  DecodeStatus ok;
  ok.produced = op;
  return ok;
}

/// @brief Decode one LZ4 task on the host.
inline DecodeStatus lz4_decode_host(const DecodeTask& t) {
  return lz4_decode_lanes<1>(t, 0);
}

/// @brief Copy a stored task (src_size must equal dst_size), one lane of @p lanes.
VCZ_HD inline DecodeStatus copy_decode_lanes(const DecodeTask& t, std::uint64_t lane,
                                             std::uint64_t lanes) {
  if (t.src_size != t.dst_size)
    return decode_failure(
        t.src_size < t.dst_size ? DecodeError::OutputShort : DecodeError::OutputOverflow, 0, 0);
  for (std::uint64_t i = lane; i < t.dst_size; i += lanes) t.dst[i] = t.src[i];
  DecodeStatus ok;
  ok.produced = t.dst_size;
  return ok;
}

/// @brief Copy one stored task on the host.
inline DecodeStatus copy_decode_host(const DecodeTask& t) {
  if (t.src_size != t.dst_size) return copy_decode_lanes(t, 0, 1);  // the failure status
  if (t.dst_size > 0) std::memcpy(t.dst, t.src, t.dst_size);
  DecodeStatus ok;
  ok.produced = t.dst_size;
  return ok;
}

}  // namespace vczstats::cuda::decode
