// Host instantiation of the zstd decoder (zstd_core.hpp) for a warp of one lane.
#include "backend/cuda/decode/zstd_decode.hpp"

#include <memory>
#include <vector>

#include "backend/cuda/decode/zstd_core.hpp"

namespace vczstats::cuda::decode {

DecodeStatus zstd_decode_host(const DecodeTask& task) {
  return zstd_decode_host(task, ZstdHostOptions{}, nullptr);
}

DecodeStatus zstd_decode_host(const DecodeTask& task, const ZstdHostOptions& options,
                              ZstdDecodeStats* stats) {
  if (task.codec != TaskCodec::Zstd) {
    DecodeStatus st;
    st.error = static_cast<std::int32_t>(DecodeError::Unsupported);
    return st;
  }
  // Sized exactly, so that address sanitizers see any access beyond them.
  const auto shared = std::make_unique<zstd::WarpShared>();
  std::vector<std::uint8_t> literals(static_cast<std::size_t>(zstd::kLiteralBufferBytes));
  return zstd::decode_task(HostLane{}, task, *shared, literals.data(), options.verify_checksum,
                           stats);
}

std::uint64_t xxh64(const std::uint8_t* data, std::uint64_t size, std::uint64_t seed) {
  return zstd::xxh64_hash(data, size, seed);
}

}  // namespace vczstats::cuda::decode
