// Placeholder (replaced by the GPU band).
#include "backend/pair_band.hpp"
#include "vczstats/error.hpp"
namespace vczstats::backend {
std::unique_ptr<PairBand> make_pair_band_gpu(const PairBandSpec&) {
  throw UsageError("variant pairs: no GPU band yet");
}
}  // namespace vczstats::backend
