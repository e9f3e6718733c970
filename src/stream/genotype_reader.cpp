#include "stream/genotype_reader.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <type_traits>
#include <unordered_set>

#include "vczstats/error.hpp"

namespace vczstats::stream {
namespace {
std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

GenotypeReader::GenotypeReader(const vcz::VczStore& store, const vcz::SampleSelection& samples,
                               GenotypeMask mask)
    : gt_(store.genotypes()), mask_(mask) {
  auto field = [&](const char* name, const char* option) {
    auto a = store.array(name);
    if (!a)
      throw FormatError(store.path() + ": " + option + " needs " + name +
                        ", which the store lacks");
    if (a->shape().size() != 2 || a->shape()[0] != gt_.shape()[0] ||
        a->shape()[1] != gt_.shape()[1] || a->chunks()[0] != gt_.chunks()[0] ||
        a->chunks()[1] != gt_.chunks()[1])
      throw FormatError(store.path() + ": " + name +
                        " is not a variants x samples array chunked as call_genotype");
    return a;
  };
  if (mask.min_gq > 0) gq_ = field("call_GQ", "--min-gq (FMT/GQ)");
  if (mask.min_dp > 0) dp_ = field("call_DP", "--min-dp (FMT/DP)");
  ploidy_ = gt_.shape()[2];
  elem_bytes_ = gt_.dtype().size;
  if (gt_.chunks()[2] != ploidy_)
    throw FormatError(store.path() + ": call_genotype is chunked along the ploidy axis (" +
                      std::to_string(gt_.chunks()[2]) + " of " + std::to_string(ploidy_) +
                      "); rechunk the store");
  // The selection is grouped by sample chunk, in ascending chunk order (within a chunk the
  // order may follow populations, see apply_populations); a block is one chunk's samples.
  const std::int64_t cs = gt_.chunks()[1];
  std::int64_t position = 0;
  for (std::int64_t idx : samples.indices) {
    const std::int64_t chunk = idx / cs;
    if (blocks_.empty() || blocks_.back().chunk != chunk) {
      if (!blocks_.empty() && chunk < blocks_.back().chunk)
        throw Error("genotype reader: the sample selection is not grouped by sample chunk");
      blocks_.push_back({chunk, {}, position, false});
    }
    blocks_.back().local.push_back(idx - chunk * cs);
    ++position;
  }
  for (auto& b : blocks_) {
    bool in_order = static_cast<std::int64_t>(b.local.size()) == cs;
    for (std::size_t k = 0; in_order && k < b.local.size(); ++k)
      in_order = b.local[k] == static_cast<std::int64_t>(k);
    b.contiguous_all = in_order;
  }
  num_selected_ = samples.size();
}

void GenotypeReader::prefetch(std::span<const vcz::WorkUnit> units,
                              const vcz::VariantReader* fields) const {
  const zarr::Store& store = gt_.store();
  if (!store.reads_ahead()) return;
  std::vector<std::string> keys;
  keys.reserve(units.size() * (blocks_.size() + (fields ? 4 : 0)));
  std::unordered_set<std::string> seen;  // the fields' chunks already hinted
  std::int64_t last_chunk = -1;
  for (const auto& unit : units) {
    if (unit.chunk != last_chunk) {  // units split from one chunk read it once each
      last_chunk = unit.chunk;
      for (const auto& b : blocks_) {
        const std::int64_t index[3] = {unit.chunk, b.chunk, 0};
        keys.push_back(gt_.chunk_key(index));
      }
    }
    if (fields && unit.size() > 0) fields->chunk_keys(unit.begin, unit.end, keys, seen);
  }
  store.prefetch(keys);
}

std::int64_t GenotypeReader::gathered_bytes(std::int64_t max_rows) const {
  std::size_t widest = 0;
  for (const auto& b : blocks_)
    if (!b.contiguous_all) widest = std::max(widest, b.local.size());
  return max_rows * static_cast<std::int64_t>(widest) * ploidy_ * elem_bytes_;
}

GenotypeChunkView GenotypeReader::read(const vcz::WorkUnit& unit, std::size_t block,
                                       BlockBuffers& buf, ReadCounters* counters) const {
  buf.decoded.resize(static_cast<std::size_t>(gt_.chunk_bytes()));
  buf.gathered.resize(static_cast<std::size_t>(gathered_bytes(unit.size())));
  return read(unit, block, buf.decoded, buf.gathered, counters);
}

GenotypeChunkView GenotypeReader::read(const vcz::WorkUnit& unit, std::size_t block,
                                       std::span<std::byte> decoded, std::span<std::byte> gathered,
                                       ReadCounters* counters) const {
  const SampleBlock& sb = blocks_.at(block);
  const std::int64_t cv = gt_.chunks()[0], cs = gt_.chunks()[1];
  const std::int64_t row0 = unit.begin - unit.chunk * cv;
  const std::int64_t rows = unit.end - unit.begin;
  const std::int64_t stored_row_bytes = cs * ploidy_ * elem_bytes_;

  const std::int64_t t0 = now_ns();
  if (static_cast<std::int64_t>(decoded.size()) < gt_.chunk_bytes())
    throw Error("genotype reader: decode buffer too small");
  const std::int64_t index[3] = {unit.chunk, sb.chunk, 0};
  gt_.read_chunk(index, decoded.first(static_cast<std::size_t>(gt_.chunk_bytes())));
  const std::int64_t t1 = now_ns();

  GenotypeChunkView view;
  view.elem_bytes = elem_bytes_;
  view.variants = rows;
  view.samples = static_cast<std::int64_t>(sb.local.size());
  view.ploidy = ploidy_;
  view.variant_offset = unit.begin;
  view.sample_offset = sb.first;
  if (sb.contiguous_all) {
    // The stored rows are already dense: point into the decoded chunk.
    view.data = decoded.data() + row0 * stored_row_bytes;
  } else {
    const std::int64_t call_bytes = ploidy_ * elem_bytes_;
    const std::int64_t out_row_bytes = view.samples * call_bytes;
    if (static_cast<std::int64_t>(gathered.size()) < rows * out_row_bytes)
      throw Error("genotype reader: gather buffer too small");
    auto gather = [&]<std::size_t kBytes>() {
      // kBytes > 0: a fixed-size copy the compiler turns into one load and store per call.
      const std::size_t n = kBytes ? kBytes : static_cast<std::size_t>(call_bytes);
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::byte* src = decoded.data() + (row0 + r) * stored_row_bytes;
        std::byte* dst = gathered.data() + r * out_row_bytes;
        for (std::size_t k = 0; k < sb.local.size(); ++k)
          std::memcpy(dst + k * n, src + static_cast<std::size_t>(sb.local[k]) * n,
                      kBytes ? kBytes : n);
      }
    };
    switch (call_bytes) {
      case 1:
        gather.template operator()<1>();
        break;
      case 2:
        gather.template operator()<2>();
        break;
      case 4:
        gather.template operator()<4>();
        break;
      case 8:
        gather.template operator()<8>();
        break;
      case 16:
        gather.template operator()<16>();
        break;
      default:
        gather.template operator()<0>();
        break;
    }
    view.data = gathered.data();
  }
  if (gq_) mask_calls(*gq_, mask_.min_gq, unit.chunk, sb, row0, view);
  if (dp_) mask_calls(*dp_, mask_.min_dp, unit.chunk, sb, row0, view);
  if (counters) {
    counters->read_decode_ns += t1 - t0;
    counters->gather_ns += now_ns() - t1;
    counters->decoded_bytes += gt_.chunk_bytes();
  }
  return view;
}

namespace {

/// Set to missing (-1) every allele of the calls whose value (GQ or DP, of type V, @p cs per
/// row from @p values) is present (>= 0) and below @p min; fill alleles (-2) stay fill. G: the
/// genotype element, P: the ploidy (0: @p ploidy at run time). Branch-free (a mask hitting calls
/// at random costs no mispredictions) and through locals (int8 stores alias everything).
template <class V, class G, int P>
void mask_rows(const V* values, std::int64_t cs, int min, const std::int64_t* local,
               GenotypeChunkView& view, std::int64_t ploidy) {
  const std::uint32_t below = static_cast<std::uint32_t>(std::max(min, 0));
  const std::int64_t p = P ? P : ploidy, rows = view.variants, samples = view.samples;
  G* data = static_cast<G*>(const_cast<void*>(static_cast<const void*>(view.data)));
  auto call = [below, p](V value, G* c) {
    // present and below (0 <= v < min, one unsigned comparison): all bits set, else none
    using U = std::make_unsigned_t<G>;
    const U all = static_cast<U>(
        -static_cast<U>(static_cast<std::uint32_t>(static_cast<std::int32_t>(value)) < below));
    for (std::int64_t s = 0; s < p; ++s) {
      const U g = static_cast<U>(c[s]);
      const U missing = static_cast<U>(static_cast<U>(-1) - static_cast<U>(c[s] == G(-2)));
      c[s] = static_cast<G>(g ^ ((g ^ missing) & all));
    }
  };
  for (std::int64_t r = 0; r < rows; ++r) {
    const V* vr = values + r * cs;
    G* gr = data + r * samples * p;
    if (local)
      for (std::int64_t k = 0; k < samples; ++k) call(vr[local[k]], gr + k * p);
    else
      for (std::int64_t k = 0; k < samples; ++k) call(vr[k], gr + k * p);
  }
}

template <class V>
void mask_typed(const V* values, std::int64_t cs, int min, const std::int64_t* local,
                GenotypeChunkView& view) {
  const std::int64_t p = view.ploidy;
  switch (view.elem_bytes) {
    case 1:
      if (p == 2) return mask_rows<V, std::int8_t, 2>(values, cs, min, local, view, p);
      return mask_rows<V, std::int8_t, 0>(values, cs, min, local, view, p);
    case 2:
      return mask_rows<V, std::int16_t, 0>(values, cs, min, local, view, p);
    case 4:
      return mask_rows<V, std::int32_t, 0>(values, cs, min, local, view, p);
    default:
      return mask_rows<V, std::int64_t, 0>(values, cs, min, local, view, p);
  }
}

}  // namespace

void GenotypeReader::mask_calls(const zarr::Array& a, int min, std::int64_t chunk,
                                const SampleBlock& sb, std::int64_t row0,
                                GenotypeChunkView& view) const {
  const std::int64_t cs = a.chunks()[1];
  // Buffers kept per thread: a run reads one GQ (DP) chunk per genotype chunk it reads.
  thread_local std::vector<std::byte> raw;
  thread_local std::vector<std::int32_t> values;
  raw.resize(static_cast<std::size_t>(a.chunk_bytes()));
  const std::int64_t index[2] = {chunk, sb.chunk};
  a.read_chunk(index, raw);
  // The rows of the view start at row0 of the chunk.
  const zarr::DataType t = a.dtype();
  const std::size_t first = static_cast<std::size_t>(row0 * cs),
                    count = static_cast<std::size_t>(view.variants * cs);
  const std::byte* rows = raw.data() + first * static_cast<std::size_t>(t.size);
  const std::int64_t* local = sb.contiguous_all ? nullptr : sb.local.data();  // columns
  if (t.kind == zarr::DataKind::Int && t.size == 1)
    return mask_typed(reinterpret_cast<const std::int8_t*>(rows), cs, min, local, view);
  if (t.kind == zarr::DataKind::Int && t.size == 2)
    return mask_typed(reinterpret_cast<const std::int16_t*>(rows), cs, min, local, view);
  values.resize(count);  // other types: as int32 first
  zarr::convert_elements(t, rows, count, values.data());
  mask_typed(values.data(), cs, min, local, view);
}

}  // namespace vczstats::stream
