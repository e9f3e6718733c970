// Array: chunk keys, reading chunks and regions, converting elements.

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vczstats/error.hpp"
#include "zarr/metadata.hpp"

namespace vczstats::zarr {

namespace {

/// ceil(extent / chunk), without the overflow of (extent + chunk - 1) near INT64_MAX.
std::int64_t chunks_along(std::int64_t extent, std::int64_t chunk) {
  return extent / chunk + (extent % chunk != 0 ? 1 : 0);
}

/// Sequential reads of a remote array: chunks along the first dimension hinted so far.
struct ReadSequence {
  std::mutex mutex;
  std::int64_t start = -1;  // first chunk of the run of forward reads
  std::int64_t until = -1;  // chunks [start, until) were hinted
  std::int64_t window = 0;  // chunks hinted past the last read
};

}  // namespace

struct Array::Impl {
  std::shared_ptr<const Store> store;
  std::string path;
  ArrayMetadata metadata;
  std::shared_ptr<const CodecPipeline> pipeline;
  detail::ChunkKeyEncoding keys;
  std::int64_t chunk_elements = 0;
  std::int64_t chunk_bytes = 0;
  ChunkEncoding encoding;
  std::shared_ptr<ReadSequence> sequence = std::make_shared<ReadSequence>();

  std::string name() const { return path.empty() ? "/" : path; }

  void check_chunk_index(std::span<const std::int64_t> index) const {
    const auto& shape = metadata.shape;
    const auto& chunks = metadata.chunks;
    bool ok = index.size() == shape.size();
    for (std::size_t d = 0; ok && d < index.size(); ++d) {
      const std::int64_t n = chunks_along(shape[d], chunks[d]);
      ok = index[d] >= 0 && index[d] < std::max<std::int64_t>(n, 1);
    }
    if (!ok)
      throw UsageError(fmt::format("{}: array {}: chunk index ({}) out of range", store->path(),
                                   name(), fmt::join(index, ",")));
  }

  [[noreturn]] void rethrow_for_chunk(const std::string& key, const std::exception& e) const {
    throw FormatError(
        fmt::format("{}: array {}: chunk {}: {}", store->path(), name(), key, e.what()));
  }

  void check_region(std::span<const std::int64_t> start, std::span<const std::int64_t> stop) const {
    const auto& shape = metadata.shape;
    bool ok = start.size() == shape.size() && stop.size() == shape.size();
    for (std::size_t d = 0; ok && d < shape.size(); ++d)
      ok = start[d] >= 0 && start[d] <= stop[d] && stop[d] <= shape[d];
    if (!ok)
      throw UsageError(fmt::format("{}: array {}: region [{}]..[{}] is outside shape [{}]",
                                   store->path(), name(), fmt::join(start, ","),
                                   fmt::join(stop, ","), fmt::join(shape, ",")));
  }
};

namespace {

/// The part of one chunk that a region needs.
struct Overlap {
  std::vector<std::int64_t> in_chunk;   // start within the chunk
  std::vector<std::int64_t> in_region;  // start within the region
  std::vector<std::int64_t> count;
  bool whole_chunk = true;
};

Overlap overlap(std::span<const std::int64_t> chunk_index, std::span<const std::int64_t> start,
                std::span<const std::int64_t> stop, const std::vector<std::int64_t>& chunks) {
  Overlap o;
  for (std::size_t d = 0; d < chunks.size(); ++d) {
    const std::int64_t origin = chunk_index[d] * chunks[d];
    const std::int64_t lo = std::max(start[d], origin);
    const std::int64_t hi = origin + std::min(chunks[d], stop[d] - origin);  // no overflow
    o.in_chunk.push_back(lo - origin);
    o.in_region.push_back(lo - start[d]);
    o.count.push_back(hi - lo);
    if (hi - lo != chunks[d]) o.whole_chunk = false;
  }
  return o;
}

std::vector<std::int64_t> region_shape(std::span<const std::int64_t> start,
                                       std::span<const std::int64_t> stop) {
  std::vector<std::int64_t> shape(start.size());
  for (std::size_t d = 0; d < start.size(); ++d) shape[d] = stop[d] - start[d];
  return shape;
}

/// Elements of a box of extents @p v. @throws UsageError when they cannot be counted in 64 bits
/// (no buffer could hold them).
std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t n = 1;
  for (auto x : v)
    if (__builtin_mul_overflow(n, x, &n))
      throw UsageError(
          fmt::format("a region of [{}] elements is too large to read", fmt::join(v, " x ")));
  return n;
}

/// Scratch buffer for one decoded chunk, one per thread, reused across calls.
std::vector<std::byte>& chunk_scratch(std::size_t bytes) {
  thread_local std::vector<std::byte> scratch;
  scratch.resize(bytes);
  return scratch;
}

}  // namespace

Array::Array() = default;
Array::~Array() = default;
Array::Array(const Array&) = default;
Array& Array::operator=(const Array&) = default;
Array::Array(Array&&) noexcept = default;
Array& Array::operator=(Array&&) noexcept = default;

Array Array::open(std::shared_ptr<const Store> store, const std::string& path) {
  if (!store) throw UsageError("Array::open: no store");
  auto spec = detail::read_array_spec(*store, path);
  auto impl = std::make_shared<Impl>();
  impl->store = std::move(store);
  impl->path = path;
  impl->metadata = std::move(spec.metadata);
  impl->pipeline = std::move(spec.pipeline);
  impl->keys = std::move(spec.keys);
  impl->chunk_elements = product(impl->metadata.chunks);
  impl->chunk_bytes = impl->chunk_elements * impl->metadata.dtype.size;
  impl->encoding = impl->pipeline->encoding(impl->metadata.fill_value);
  Array a;
  a.impl_ = std::move(impl);
  return a;
}

const ArrayMetadata& Array::metadata() const {
  return impl_->metadata;
}
const std::string& Array::path() const {
  return impl_->path;
}
const Store& Array::store() const {
  return *impl_->store;
}
int Array::ndim() const {
  return static_cast<int>(impl_->metadata.shape.size());
}
const std::vector<std::int64_t>& Array::shape() const {
  return impl_->metadata.shape;
}
const std::vector<std::int64_t>& Array::chunks() const {
  return impl_->metadata.chunks;
}
const DataType& Array::dtype() const {
  return impl_->metadata.dtype;
}

std::int64_t Array::num_chunks(int dim) const {
  const auto d = static_cast<std::size_t>(dim);
  if (dim < 0 || d >= shape().size())
    throw UsageError(fmt::format("array {}: no dimension {}", impl_->name(), dim));
  return chunks_along(shape()[d], chunks()[d]);
}

std::int64_t Array::chunk_elements() const {
  return impl_->chunk_elements;
}
std::int64_t Array::chunk_bytes() const {
  return impl_->chunk_bytes;
}

std::string Array::chunk_key(std::span<const std::int64_t> chunk_index) const {
  const auto& keys = impl_->keys;
  std::string key = impl_->path.empty() ? std::string() : impl_->path + "/";
  if (!keys.prefix.empty()) {
    key += keys.prefix;
    if (!chunk_index.empty()) key += keys.separator;
  } else if (chunk_index.empty()) {
    key += '0';  // v2 keys of zero-dimensional arrays
  }
  for (std::size_t d = 0; d < chunk_index.size(); ++d) {
    if (d > 0) key += keys.separator;
    key += std::to_string(chunk_index[d]);
  }
  return key;
}

void Array::read_chunk(std::span<const std::int64_t> chunk_index, std::span<std::byte> out) const {
  const Impl& a = *impl_;
  if (a.metadata.dtype.kind == DataKind::String)
    throw UsageError(fmt::format("{}: array {} holds strings; use read_chunk_strings",
                                 a.store->path(), a.name()));
  a.check_chunk_index(chunk_index);
  if (out.size() != static_cast<std::size_t>(a.chunk_bytes))
    throw UsageError(fmt::format("array {}: chunk buffer holds {} bytes, expected {}", a.name(),
                                 out.size(), a.chunk_bytes));
  const std::string key = chunk_key(chunk_index);
  const auto bytes = a.store->get(key);
  if (!bytes) {
    detail::fill_elements(out, a.metadata.fill_value);
    return;
  }
  try {
    a.pipeline->decode(bytes->span(), out);
  } catch (const FormatError& e) {
    a.rethrow_for_chunk(key, e);
  }
}

std::optional<Bytes> Array::read_chunk_encoded(std::span<const std::int64_t> chunk_index) const {
  impl_->check_chunk_index(chunk_index);
  return impl_->store->get(chunk_key(chunk_index));
}

const ChunkEncoding& Array::chunk_encoding() const {
  return impl_->encoding;
}

std::vector<std::string> Array::read_chunk_strings(
    std::span<const std::int64_t> chunk_index) const {
  const Impl& a = *impl_;
  if (a.metadata.dtype.kind != DataKind::String)
    throw UsageError(fmt::format("{}: array {} does not hold strings", a.store->path(), a.name()));
  a.check_chunk_index(chunk_index);
  const std::string key = chunk_key(chunk_index);
  const auto bytes = a.store->get(key);
  if (!bytes)
    return std::vector<std::string>(static_cast<std::size_t>(a.chunk_elements),
                                    a.metadata.fill_string);
  try {
    return a.pipeline->decode_strings(bytes->span());
  } catch (const FormatError& e) {
    a.rethrow_for_chunk(key, e);
  }
}

/// A remote store fetches a region's chunks together instead of one round trip each, and the
/// chunks after it when the array is read forwards (variant fields unit by unit): a window
/// along the first dimension that doubles with each forward read, up to kMaxWindow chunks, so
/// requests are in flight ahead of the reader whichever statistic reads the array.
namespace {
void hint_region(const Array& array, const ArrayMetadata& metadata, ReadSequence& seq,
                 const detail::RegionChunks& chunks) {
  const Store& store = array.store();
  if (chunks.total == 0 || !store.reads_ahead() || metadata.shape.empty()) return;
  constexpr std::int64_t kMaxWindow = 256;
  const std::int64_t lo = chunks.first[0], hi = lo + chunks.count[0];
  const std::int64_t n0 =
      std::max<std::int64_t>(chunks_along(metadata.shape[0], metadata.chunks[0]), 1);
  std::int64_t from = lo, to = hi;
  bool forward = false;
  {
    std::lock_guard lock(seq.mutex);
    // Reads from several threads arrive a little out of order: any read inside the hinted
    // span continues the run. The window is topped up in batches (half a window at least), so
    // a zip's neighbouring chunks travel in one range request.
    forward = seq.start >= 0 && lo >= seq.start && lo <= seq.until;
    if (forward) {
      seq.window = std::min(kMaxWindow, std::max<std::int64_t>(2 * seq.window, 4));
      from = std::max(lo, seq.until);
      to = seq.until - hi < seq.window / 2 ? std::min(n0, hi + seq.window) : from;
    } else {
      seq.start = lo;
      seq.window = 0;
    }
    seq.until = forward ? std::max(seq.until, to) : hi;
  }
  if (to <= from || (!forward && chunks.total < 2)) return;
  std::vector<std::int64_t> first = chunks.first, count = chunks.count;
  first[0] = from;
  count[0] = to - from;
  std::int64_t total = 1;
  for (auto c : count) total *= c;
  std::vector<std::string> keys;
  keys.reserve(static_cast<std::size_t>(total));
  std::vector<std::int64_t> index(first.size());
  for (std::int64_t i = 0; i < total; ++i) {
    std::int64_t r = i;
    for (std::size_t d = first.size(); d-- > 0;) {
      index[d] = first[d] + r % count[d];
      r /= count[d];
    }
    keys.push_back(array.chunk_key(index));
  }
  store.prefetch(keys);
}
}  // namespace

void Array::read_region(std::span<const std::int64_t> start, std::span<const std::int64_t> stop,
                        std::span<std::byte> out, Executor* pool) const {
  const Impl& a = *impl_;
  if (a.metadata.dtype.kind == DataKind::String)
    throw UsageError(fmt::format("{}: array {} holds strings; use read_region_strings",
                                 a.store->path(), a.name()));
  a.check_region(start, stop);
  const auto shape = region_shape(start, stop);
  const auto itemsize = static_cast<std::size_t>(a.metadata.dtype.size);
  if (out.size() != static_cast<std::size_t>(product(shape)) * itemsize)
    throw UsageError(fmt::format("array {}: region buffer holds {} bytes, expected {}", a.name(),
                                 out.size(), static_cast<std::size_t>(product(shape)) * itemsize));
  const detail::RegionChunks plan(start, stop, a.metadata.chunks);
  if (plan.total == 0) return;
  hint_region(*this, a.metadata, *a.sequence, plan);
  const auto chunk_bytes = static_cast<std::size_t>(a.chunk_bytes);

  auto task = [&](std::int64_t i) {
    const auto index = plan.index(i);
    const Overlap o = overlap(index, start, stop, a.metadata.chunks);
    if (o.whole_chunk) {
      // A chunk that lands as one contiguous block of the output decodes straight into it.
      if (auto offset = detail::contiguous_box_offset(shape, o.in_region, o.count)) {
        read_chunk(index, out.subspan(static_cast<std::size_t>(*offset) * itemsize, chunk_bytes));
        return;
      }
    }
    auto& scratch = chunk_scratch(chunk_bytes);
    read_chunk(index, scratch);
    detail::for_each_run(a.metadata.chunks, o.in_chunk, shape, o.in_region, o.count,
                         [&](std::int64_t s, std::int64_t d, std::int64_t run) {
                           std::memcpy(out.data() + static_cast<std::size_t>(d) * itemsize,
                                       scratch.data() + static_cast<std::size_t>(s) * itemsize,
                                       static_cast<std::size_t>(run) * itemsize);
                         });
  };
  if (pool != nullptr && plan.total > 1)
    pool->parallel_for(plan.total, task);
  else
    for (std::int64_t i = 0; i < plan.total; ++i) task(i);
}

std::vector<std::string> Array::read_region_strings(std::span<const std::int64_t> start,
                                                    std::span<const std::int64_t> stop) const {
  const Impl& a = *impl_;
  a.check_region(start, stop);
  const auto shape = region_shape(start, stop);
  std::vector<std::string> out(static_cast<std::size_t>(product(shape)));
  const detail::RegionChunks plan(start, stop, a.metadata.chunks);
  hint_region(*this, a.metadata, *a.sequence, plan);
  for (std::int64_t i = 0; i < plan.total; ++i) {
    const auto index = plan.index(i);
    const Overlap o = overlap(index, start, stop, a.metadata.chunks);
    auto chunk = read_chunk_strings(index);
    detail::for_each_run(a.metadata.chunks, o.in_chunk, shape, o.in_region, o.count,
                         [&](std::int64_t s, std::int64_t d, std::int64_t run) {
                           for (std::int64_t k = 0; k < run; ++k)
                             out[static_cast<std::size_t>(d + k)] =
                                 std::move(chunk[static_cast<std::size_t>(s + k)]);
                         });
  }
  return out;
}

StringTable Array::read_string_table() const {
  const Impl& a = *impl_;
  if (a.metadata.dtype.kind != DataKind::String || a.metadata.shape.size() != 1)
    throw UsageError(fmt::format("{}: array {} is not a one-dimensional string array",
                                 a.store->path(), a.name()));
  const std::int64_t n = a.metadata.shape[0], csize = a.metadata.chunks[0];
  StringTable out, chunk;
  for (std::int64_t c = 0; c * csize < n; ++c) {
    const std::int64_t index[1] = {c};
    a.check_chunk_index(index);
    const std::string key = chunk_key(index);
    const auto bytes = a.store->get(key);
    chunk.clear();
    if (!bytes) {
      for (std::int64_t i = 0; i < csize; ++i) chunk.push_back(a.metadata.fill_string);
    } else {
      try {
        a.pipeline->decode_strings_into(bytes->span(), chunk);
      } catch (const FormatError& e) {
        a.rethrow_for_chunk(key, e);
      }
    }
    if (chunk.size() != csize)
      throw FormatError(fmt::format("{}: {}: chunk {} holds {} strings, expected {}",
                                    a.store->path(), a.name(), key, chunk.size(), csize));
    // The first chunk tells the characters per string; reserve the whole table once.
    if (c == 0) out.reserve(n, chunk.chars() * (n / std::max<std::int64_t>(csize, 1) + 1));
    out.append(chunk, 0, std::min(csize, n - c * csize));
  }
  return out;
}

template <class T>
std::vector<T> Array::read_region_as(std::span<const std::int64_t> start,
                                     std::span<const std::int64_t> stop) const {
  impl_->check_region(start, stop);
  const auto n = static_cast<std::size_t>(product(region_shape(start, stop)));
  std::vector<std::byte> raw(n * static_cast<std::size_t>(dtype().size));
  read_region(start, stop, raw);
  std::vector<T> out(n);
  convert_elements(dtype(), raw.data(), n, out.data());
  return out;
}

template <class T>
std::vector<T> Array::read_all_as() const {
  const std::vector<std::int64_t> start(shape().size(), 0);
  return read_region_as<T>(start, shape());
}

namespace {

template <class To, class From>
To convert_one(From v) {
  if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // Saturate instead of the undefined behaviour of out-of-range conversions; NaN reads as 0.
    if (std::isnan(v)) return To{0};
    if (v <= static_cast<From>(std::numeric_limits<To>::lowest()))
      return std::numeric_limits<To>::lowest();
    if (v >= static_cast<From>(std::numeric_limits<To>::max()))
      return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

template <class From, class To>
void convert_run(const std::byte* src, std::size_t count, To* dst) {
  for (std::size_t i = 0; i < count; ++i) {
    From v;
    std::memcpy(&v, src + i * sizeof(From), sizeof(From));
    dst[i] = convert_one<To>(v);
  }
}

}  // namespace

template <class T>
void convert_elements(const DataType& from, const std::byte* src, std::size_t count, T* dst) {
  switch (from.kind) {
    case DataKind::Bool:
      for (std::size_t i = 0; i < count; ++i)
        dst[i] = static_cast<T>(src[i] != std::byte{0} ? 1 : 0);
      return;
    case DataKind::Int:
      switch (from.size) {
        case 1:
          return convert_run<std::int8_t>(src, count, dst);
        case 2:
          return convert_run<std::int16_t>(src, count, dst);
        case 4:
          return convert_run<std::int32_t>(src, count, dst);
        case 8:
          return convert_run<std::int64_t>(src, count, dst);
      }
      break;
    case DataKind::UInt:
      switch (from.size) {
        case 1:
          return convert_run<std::uint8_t>(src, count, dst);
        case 2:
          return convert_run<std::uint16_t>(src, count, dst);
        case 4:
          return convert_run<std::uint32_t>(src, count, dst);
        case 8:
          return convert_run<std::uint64_t>(src, count, dst);
      }
      break;
    case DataKind::Float:
      if (from.size == 4) return convert_run<float>(src, count, dst);
      if (from.size == 8) return convert_run<double>(src, count, dst);
      break;
    case DataKind::String:
      throw UsageError("cannot convert strings to numbers");
  }
  throw UsageError(fmt::format("cannot convert elements of type {}", from.name()));
}

#define VCZ_INSTANTIATE(T)                                                               \
  template void convert_elements<T>(const DataType&, const std::byte*, std::size_t, T*); \
  template std::vector<T> Array::read_all_as<T>() const;                                 \
  template std::vector<T> Array::read_region_as<T>(std::span<const std::int64_t>,        \
                                                   std::span<const std::int64_t>) const;
VCZ_INSTANTIATE(std::int8_t)
VCZ_INSTANTIATE(std::int16_t)
VCZ_INSTANTIATE(std::int32_t)
VCZ_INSTANTIATE(std::int64_t)
VCZ_INSTANTIATE(std::uint8_t)
VCZ_INSTANTIATE(std::uint16_t)
VCZ_INSTANTIATE(std::uint32_t)
VCZ_INSTANTIATE(std::uint64_t)
VCZ_INSTANTIATE(float)
VCZ_INSTANTIATE(double)
#undef VCZ_INSTANTIATE

}  // namespace vczstats::zarr
