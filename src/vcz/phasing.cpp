// The phasing of a store's genotype calls, from call_genotype_phased (vczstats info).

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "vczstats/vcz.hpp"

namespace vczstats::vcz {

Phasing count_phasing(const VczStore& s, zarr::Executor& executor, std::int64_t budget_bytes) {
  Phasing p;
  const auto arr = s.has_genotypes() ? s.array("call_genotype_phased") : std::nullopt;
  if (!arr || arr->ndim() != 2 || arr->dtype().kind == zarr::DataKind::String) return p;
  p.present = true;
  const std::int64_t ns = arr->num_chunks(1);
  p.chunks_total = arr->num_chunks(0) * ns;
  if (p.chunks_total <= 0) return p;  // no variants or no samples
  const std::int64_t bytes = std::max<std::int64_t>(1, arr->chunk_bytes());
  const std::int64_t budget = std::max<std::int64_t>(1, budget_bytes / bytes);  // chunks
  const std::int64_t stride = (p.chunks_total + budget - 1) / budget;
  p.chunks_read = (p.chunks_total + stride - 1) / stride;
  const auto& shape = arr->shape();
  const auto& chunks = arr->chunks();
  const std::int64_t item = arr->dtype().size;
  std::atomic<std::int64_t> calls{0}, unphased{0};
  executor.parallel_for(p.chunks_read, [&](std::int64_t k) {
    const std::int64_t c = k * stride;
    const std::int64_t idx[2] = {c / ns, c % ns};
    std::vector<std::byte> buf(static_cast<std::size_t>(bytes));
    arr->read_chunk(idx, buf);
    const std::int64_t rows = std::min(chunks[0], shape[0] - idx[0] * chunks[0]);
    const std::int64_t cols = std::min(chunks[1], shape[1] - idx[1] * chunks[1]);
    std::int64_t zero = 0;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < cols; ++j) {
        const std::byte* v = buf.data() + (r * chunks[1] + j) * item;
        zero += std::all_of(v, v + item, [](std::byte b) { return b == std::byte{0}; }) ? 1 : 0;
      }
    calls += rows * cols;
    unphased += zero;
  });
  p.calls = calls.load();
  p.unphased = unphased.load();
  return p;
}

std::string Phasing::describe(const VczStore& s) const {
  if (!s.has_genotypes()) return "no genotype calls";
  if (s.ploidy() == 1) return "haploid (phasing does not apply)";
  if (!present) return "unphased (no call_genotype_phased)";
  if (calls == 0 && chunks_read == chunks_total) return "no genotype calls";
  std::string state = unphased == 0 ? "phased"
                      : unphased == calls
                          ? "unphased"
                          : fmt::format("partly phased ({} of {} calls unphased)", unphased, calls);
  if (chunks_read < chunks_total)
    state += fmt::format(" in {} of {} chunks read", chunks_read, chunks_total);
  return state;
}

}  // namespace vczstats::vcz
