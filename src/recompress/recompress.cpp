// Rechunk and re-encode a store, block by block. A block is a box whose extent along every
// dimension is a multiple of both the input and the output chunk sizes (their least common
// multiple, grown up to RecompressOptions::block_bytes), so every input chunk is decoded once
// and every output chunk is written once: read the block (input chunks decoded on the pool),
// then cut it into output chunks (encoded on the pool). Memory: one block plus a chunk per
// thread.

#include "vczstats/recompress.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "vczstats/error.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/zarr.hpp"
#include "zarr/pipeline.hpp"

namespace vczstats::recompress {
namespace {

namespace fs = std::filesystem;
using zarr::DataKind;

std::int64_t product(std::span<const std::int64_t> v) {
  std::int64_t n = 1;
  for (auto x : v) n *= x;
  return n;
}

std::int64_t round_up(std::int64_t x, std::int64_t m) {
  return (x + m - 1) / m * m;
}

/// The blocks of one array: a grid of boxes of shape `block` over `shape`, in C order.
class BlockGrid {
 public:
  BlockGrid(std::vector<std::int64_t> shape, std::span<const std::int64_t> in_chunks,
            std::span<const std::int64_t> out_chunks, std::int64_t itemsize, std::int64_t cap)
      : shape_(std::move(shape)), block_(shape_.size()) {
    for (std::size_t d = 0; d < shape_.size(); ++d) {
      const std::int64_t full = round_up(std::max<std::int64_t>(shape_[d], 1), out_chunks[d]);
      const std::int64_t l = std::lcm(in_chunks[d], out_chunks[d]);
      block_[d] = l > 0 && l < full ? l : full;
    }
    // Grow the block from the last dimension while it stays below the cap (and a multiple).
    std::int64_t bytes = product(block_) * itemsize;
    for (std::size_t d = shape_.size(); d-- > 0;) {
      const std::int64_t full = round_up(std::max<std::int64_t>(shape_[d], 1), block_[d]);
      if (block_[d] >= full || bytes <= 0) continue;
      const std::int64_t factor = std::max<std::int64_t>(1, cap / bytes);
      const std::int64_t grown = std::min(full, block_[d] * factor);
      bytes = bytes / block_[d] * grown;
      block_[d] = grown;
    }
    count_ = 1;
    for (std::size_t d = 0; d < shape_.size(); ++d)
      count_ *= (std::max<std::int64_t>(shape_[d], 0) + block_[d] - 1) / block_[d];
  }
  std::int64_t count() const { return count_; }
  /// [start, stop) of block @p i.
  void bounds(std::int64_t i, std::vector<std::int64_t>& start,
              std::vector<std::int64_t>& stop) const {
    const std::size_t n = shape_.size();
    start.assign(n, 0);
    stop.assign(n, 0);
    for (std::size_t d = n; d-- > 0;) {
      const std::int64_t blocks = (shape_[d] + block_[d] - 1) / block_[d];
      start[d] = (i % blocks) * block_[d];
      stop[d] = std::min(shape_[d], start[d] + block_[d]);
      i /= blocks;
    }
  }

 private:
  std::vector<std::int64_t> shape_, block_;
  std::int64_t count_ = 0;
};

enum class Role { Variants, Samples, Other };

/// Which dimensions are variants and samples: from the dimension names, else from VCF Zarr's
/// naming (variant_*, call_*, sample_*).
std::vector<Role> dimension_roles(const std::string& name, const zarr::ArrayMetadata& m) {
  std::vector<Role> roles(m.shape.size(), Role::Other);
  if (!m.dimension_names.empty()) {
    for (std::size_t d = 0; d < roles.size() && d < m.dimension_names.size(); ++d)
      roles[d] = m.dimension_names[d] == "variants"  ? Role::Variants
                 : m.dimension_names[d] == "samples" ? Role::Samples
                                                     : Role::Other;
    return roles;
  }
  if (roles.empty()) return roles;
  if (name.starts_with("variant_") || name.starts_with("call_")) roles[0] = Role::Variants;
  if (name.starts_with("call_") && roles.size() > 1) roles[1] = Role::Samples;
  if (name.starts_with("sample_")) roles[0] = Role::Samples;
  return roles;
}

nlohmann::json array_attributes(const zarr::ArrayMetadata& m) {
  nlohmann::json a = m.attributes.is_object() ? m.attributes : nlohmann::json::object();
  a.erase("_ARRAY_DIMENSIONS");  // the writer adds the dimension names
  return a;
}

/// One element of the fill value (zeros when the input gives none).
std::vector<std::byte> fill_element(const zarr::ArrayMetadata& m) {
  std::vector<std::byte> f = m.fill_value;
  f.resize(static_cast<std::size_t>(m.dtype.size), std::byte{0});
  return f;
}

class Recompressor {
 public:
  Recompressor(const std::string& input, const fs::path& output, const RecompressOptions& o)
      : o_(o),
        in_(zarr::open_store(input, o.input_store)),
        out_(std::make_shared<const zarr::DirectoryStoreWriter>(output)),
        pool_(std::max(1u, (o.threads ? o.threads : hardware_threads()) - 1)) {
    group_ = zarr::open_group(*in_);
    format_ = o.zarr_format ? o.zarr_format : group_.zarr_format;
    if (format_ != 2 && format_ != 3)
      throw UsageError(fmt::format("--zarr-format {} (expected 2 or 3)", format_));
    names_ = zarr::list_arrays(*in_);
    std::set<std::string> have(names_.begin(), names_.end());
    for (const auto& a : o.arrays)
      if (!have.count(a))
        throw UsageError(
            fmt::format("{}: no array {} (arrays: {})", in_->path(), a, fmt::join(names_, ", ")));
    selected_.insert(o.arrays.begin(), o.arrays.end());
  }

  RecompressReport run() {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<zarr::Array> arrays;
    for (const auto& n : names_) {
      arrays.push_back(zarr::Array::open(in_, n));
      const auto& m = arrays.back().metadata();
      total_ +=
          m.dtype.kind == DataKind::String ? product(m.shape) : product(m.shape) * m.dtype.size;
      const auto roles = dimension_roles(n, m);
      if (!roles.empty() && roles[0] == Role::Variants) report_.variants = m.shape[0];
    }
    for (const auto& e : in_->list("")) report_.input_stored_bytes += e.stored_size;
    zarr::write_group(*out_, format_, group_.attributes);
    for (std::size_t i = 0; i < names_.size(); ++i) {
      const bool chosen = selected_.empty() || selected_.count(names_[i]);
      if (!chosen && format_ == group_.zarr_format)
        copy(names_[i], arrays[i]);
      else
        rewrite(arrays[i], chosen);
    }
    report_.arrays = static_cast<std::int64_t>(names_.size());
    for (const auto& e : zarr::open_store(out_->root())->list(""))
      report_.output_stored_bytes += e.stored_size;
    report_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report_.input_io = in_->io_stats();
    return report_;
  }

 private:
  void check_cancelled() const {
    if (o_.cancelled && o_.cancelled->load())
      throw IoError(fmt::format("{}: recompression interrupted", in_->path()));
  }

  void advance(std::int64_t bytes) {
    done_ += bytes;
    if (o_.progress) o_.progress(done_, total_);
  }

  /// Every key of the array, byte for byte.
  void copy(const std::string& name, const zarr::Array& a) {
    for (const auto& e : in_->list(name + "/")) {
      check_cancelled();
      const auto bytes = in_->get(e.key);
      if (bytes) out_->set(e.key, bytes->span());
    }
    const auto& m = a.metadata();
    advance(m.dtype.kind == DataKind::String ? product(m.shape) : product(m.shape) * m.dtype.size);
  }

  void rewrite(const zarr::Array& a, bool chosen) {
    const zarr::ArrayMetadata& m = a.metadata();
    zarr::ArrayDefinition def;
    def.dtype = m.dtype;
    def.shape = m.shape;
    def.chunks = m.chunks;
    def.dimension_names = m.dimension_names;
    def.attributes = array_attributes(m);
    const bool strings = m.dtype.kind == DataKind::String;
    if (strings)
      def.fill_string = m.fill_string;
    else
      def.fill_value = fill_element(m);
    // Arrays not chosen (re-encoded only for a new format) get the default codec.
    def.compression = chosen ? o_.compression : zarr::Compression{};
    if (o_.auto_shuffle || !chosen)
      def.compression.shuffle =
          !strings && m.dtype.size == 1 ? zarr::Shuffle::Bit : zarr::Shuffle::Byte;
    if (chosen) {
      const auto roles = dimension_roles(a.path(), m);
      for (std::size_t d = 0; d < roles.size(); ++d) {
        if (roles[d] == Role::Variants && o_.variants_chunk_size > 0)
          def.chunks[d] = o_.variants_chunk_size;
        if (roles[d] == Role::Samples && o_.samples_chunk_size > 0)
          def.chunks[d] = o_.samples_chunk_size;
      }
    }
    const zarr::ArrayWriter w(out_, a.path(), format_, def);
    ++report_.rewritten;
    const std::int64_t itemsize = strings ? 1 : m.dtype.size;
    const BlockGrid grid(m.shape, m.chunks, def.chunks, itemsize, o_.block_bytes);
    std::vector<std::int64_t> start, stop;
    std::vector<std::byte> block;
    const std::vector<std::byte> fill = strings ? std::vector<std::byte>{} : def.fill_value;
    for (std::int64_t b = 0; b < grid.count(); ++b) {
      check_cancelled();
      grid.bounds(b, start, stop);
      std::vector<std::int64_t> extent(start.size());
      for (std::size_t d = 0; d < start.size(); ++d) extent[d] = stop[d] - start[d];
      const zarr::detail::RegionChunks chunks(start, stop, def.chunks);
      if (strings) {
        const auto values = a.read_region_strings(start, stop);
        pool_.parallel_for(chunks.total, [&](std::int64_t i) {
          const auto idx = chunks.index(i);
          std::vector<std::string> chunk(static_cast<std::size_t>(product(def.chunks)),
                                         def.fill_string);
          for_each_chunk_run(idx, def.chunks, start, extent, m.shape,
                             [&](std::int64_t s, std::int64_t d, std::int64_t run) {
                               std::copy_n(values.begin() + s, run, chunk.begin() + d);
                             });
          w.write_chunk_strings(idx, chunk);
        });
        advance(product(extent));
        continue;
      }
      block.resize(static_cast<std::size_t>(product(extent) * itemsize));
      a.read_region(start, stop, block, &pool_);
      report_.decoded_bytes += block.size();
      pool_.parallel_for(chunks.total, [&](std::int64_t i) {
        const auto idx = chunks.index(i);
        thread_local std::vector<std::byte> chunk;
        chunk.resize(static_cast<std::size_t>(product(def.chunks) * itemsize));
        bool whole = true;
        for (std::size_t d = 0; d < idx.size(); ++d)
          whole = whole && (idx[d] + 1) * def.chunks[d] <= m.shape[d];
        if (!whole) zarr::detail::fill_elements(chunk, fill);
        for_each_chunk_run(idx, def.chunks, start, extent, m.shape,
                           [&](std::int64_t s, std::int64_t d, std::int64_t run) {
                             std::memcpy(chunk.data() + d * itemsize, block.data() + s * itemsize,
                                         static_cast<std::size_t>(run * itemsize));
                           });
        w.write_chunk(idx, chunk);
      });
      advance(static_cast<std::int64_t>(block.size()));
    }
  }

  /// fn(offset in the block, offset in the chunk, run) for output chunk @p idx.
  template <class Fn>
  static void for_each_chunk_run(std::span<const std::int64_t> idx,
                                 std::span<const std::int64_t> chunks,
                                 std::span<const std::int64_t> start,
                                 std::span<const std::int64_t> extent,
                                 std::span<const std::int64_t> shape, Fn&& fn) {
    const std::size_t n = idx.size();
    std::vector<std::int64_t> src_start(n), dst_start(n, 0), count(n);
    for (std::size_t d = 0; d < n; ++d) {
      const std::int64_t c0 = idx[d] * chunks[d];
      src_start[d] = c0 - start[d];
      count[d] = std::min(chunks[d], shape[d] - c0);
    }
    zarr::detail::for_each_run(extent, src_start, chunks, dst_start, count, fn);
  }

  RecompressOptions o_;
  std::shared_ptr<const zarr::Store> in_;
  std::shared_ptr<const zarr::DirectoryStoreWriter> out_;
  ThreadPool pool_;
  zarr::GroupInfo group_;
  int format_ = 2;
  std::vector<std::string> names_;
  std::set<std::string> selected_;
  std::int64_t total_ = 0, done_ = 0;
  RecompressReport report_;
};

}  // namespace

RecompressReport recompress(const std::string& input, const std::filesystem::path& output_dir,
                            const RecompressOptions& options) {
  Recompressor r(input, output_dir, options);
  return r.run();
}

void verify_same(const std::string& a, const std::filesystem::path& b, unsigned threads,
                 const zarr::StoreOptions& a_options) {
  const auto sa = zarr::open_store(a, a_options), sb = zarr::open_store(b);
  auto fail = [&](const std::string& what) {
    return FormatError(fmt::format("verify: {} and {} differ: {}", a, b.string(), what));
  };
  const auto ga = zarr::open_group(*sa), gb = zarr::open_group(*sb);
  if (ga.attributes != gb.attributes) throw fail("group attributes");
  const auto names = zarr::list_arrays(*sa);
  if (names != zarr::list_arrays(*sb))
    throw fail(fmt::format("arrays [{}] against [{}]", fmt::join(names, ", "),
                           fmt::join(zarr::list_arrays(*sb), ", ")));
  ThreadPool pool(std::max(1u, (threads ? threads : hardware_threads()) - 1));
  for (const auto& name : names) {
    const auto x = zarr::Array::open(sa, name), y = zarr::Array::open(sb, name);
    const auto &mx = x.metadata(), &my = y.metadata();
    if (mx.shape != my.shape)
      throw fail(fmt::format("{}: shape [{}] against [{}]", name, fmt::join(mx.shape, ", "),
                             fmt::join(my.shape, ", ")));
    if (mx.dtype != my.dtype)
      throw fail(fmt::format("{}: {} against {}", name, mx.dtype.name(), my.dtype.name()));
    const bool strings = mx.dtype.kind == DataKind::String;
    if (strings ? mx.fill_string != my.fill_string : fill_element(mx) != fill_element(my))
      throw fail(name + ": fill value");
    if (array_attributes(mx) != array_attributes(my)) throw fail(name + ": attributes");
    if (!mx.dimension_names.empty() && !my.dimension_names.empty() &&
        mx.dimension_names != my.dimension_names)
      throw fail(name + ": dimension names");
    // Blocks along the first dimension, aligned to both chunkings.
    const std::int64_t itemsize = strings ? 1 : mx.dtype.size;
    const BlockGrid grid(mx.shape, mx.chunks, my.chunks, itemsize, std::int64_t{128} << 20);
    std::vector<std::int64_t> start, stop;
    std::vector<std::byte> bx, by;
    for (std::int64_t i = 0; i < grid.count(); ++i) {
      grid.bounds(i, start, stop);
      const std::string where =
          fmt::format("{}[{}:{}]", name, fmt::join(start, ","), fmt::join(stop, ","));
      if (strings) {
        if (x.read_region_strings(start, stop) != y.read_region_strings(start, stop))
          throw fail(where + ": values");
        continue;
      }
      std::int64_t n = itemsize;
      for (std::size_t d = 0; d < start.size(); ++d) n *= stop[d] - start[d];
      bx.resize(static_cast<std::size_t>(n));
      by.resize(static_cast<std::size_t>(n));
      x.read_region(start, stop, bx, &pool);
      y.read_region(start, stop, by, &pool);
      if (bx != by) throw fail(where + ": values");
    }
  }
}

}  // namespace vczstats::recompress
