// Host framing of encoded chunks into decode tasks and jobs, and running them on the host.
// blosc1's container (c-blosc 1.21, blosc.c: blosc_run_decompression_with_context, blosc_d,
// serial_blosc; shuffle.c: unshuffle, bitunshuffle) is matched byte for byte.

#include "backend/cuda/decode/framing.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "backend/cuda/decode/lz4_decode.hpp"
#include "backend/cuda/decode/zstd_decode.hpp"
#include "vczstats/error.hpp"
#include "zarr/codecs.hpp"

namespace vczstats::cuda::decode {

Ref ChunkFrames::allocate_scratch(std::uint64_t n) {
  const Ref r{Region::Scratch, scratch_bytes};
  scratch_bytes += (n + 15) & ~std::uint64_t{15};
  return r;
}

void ChunkFrames::clear() {
  tasks.clear();
  fills.clear();
  shuffles.clear();
  scatters.clear();
  scratch_bytes = 0;
}

void ResolvedJobs::clear() {
  tasks.clear();
  task_chunk.clear();
  fills.clear();
  shuffles.clear();
  scatters.clear();
}

namespace {

using Bytes = std::span<const std::byte>;
using zarr::BytesCodecSpec;
using zarr::ChunkEncoding;

// blosc1 (c-blosc 1.x) constants
constexpr std::uint64_t kBloscHeader = 16;
constexpr std::uint8_t kBloscFormatVersion = 2;
constexpr std::uint8_t kDoShuffle = 0x1;
constexpr std::uint8_t kMemcpyed = 0x2;
constexpr std::uint8_t kDoBitShuffle = 0x4;
constexpr std::uint8_t kFutureFlag = 0x8;
constexpr std::uint8_t kDontSplit = 0x10;
constexpr std::int64_t kMaxSplits = 16;
constexpr std::int64_t kMinBufferSize = 128;
constexpr std::int64_t kMaxTypesize = 255;
constexpr std::int64_t kMaxBlocksize =
    (std::numeric_limits<std::int32_t>::max() - kMaxTypesize * 4) / 3;

std::int32_t load_i32(Bytes b, std::uint64_t at) {
  std::uint32_t v = 0;
  for (int k = 0; k < 4; ++k)
    v |= static_cast<std::uint32_t>(std::to_integer<std::uint8_t>(b[at + k])) << (8 * k);
  return static_cast<std::int32_t>(v);
}

std::uint64_t load_u64(Bytes b, std::uint64_t at) {
  std::uint64_t v = 0;
  for (int k = 0; k < 8; ++k)
    v |= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(b[at + k])) << (8 * k);
  return v;
}

Ref at(Ref r, std::uint64_t offset) {
  return Ref{r.region, r.offset + offset};
}

/// Strip and verify the outermost crc32c checksums; returns what they cover.
Bytes strip_checksums(Bytes data, const std::vector<BytesCodecSpec>& codecs, std::size_t& count) {
  count = codecs.size();
  while (count > 0 && codecs[count - 1].kind == BytesCodecSpec::Kind::Crc32c) {
    if (data.size() < 4) throw FormatError("crc32c: data shorter than its 4-byte checksum");
    const Bytes payload = data.first(data.size() - 4);
    const auto stored = static_cast<std::uint32_t>(load_i32(data, payload.size()));
    const std::uint32_t computed = zarr::detail::crc32c(payload);
    if (stored != computed)
      throw FormatError(fmt::format("crc32c checksum mismatch (stored {:08x}, computed {:08x})",
                                    stored, computed));
    data = payload;
    --count;
  }
  return data;
}

class Framer {
 public:
  explicit Framer(ChunkFrames& out) : out_(out) {}

  /// Frame @p data (Input offset @p in) of encoding @p enc into @p dst.
  void frame(Bytes data, std::uint64_t in, const ChunkEncoding& enc, Ref dst) {
    if (enc.layout == ChunkEncoding::Layout::Sharding) {
      std::size_t left = 0;
      data = strip_checksums(data, enc.bytes_codecs, left);
      frame_shard(data, in, enc, dst);
      return;
    }
    const std::uint64_t decoded = enc.decoded_bytes();
    std::size_t left = 0;
    data = strip_checksums(data, enc.bytes_codecs, left);
    if (left == 0) {
      if (data.size() != decoded)
        throw FormatError(fmt::format("chunk holds {} bytes, expected {}", data.size(), decoded));
      task(in, data.size(), dst, decoded, TaskCodec::Copy);
      return;
    }
    const BytesCodecSpec& codec = enc.bytes_codecs[0];
    switch (codec.kind) {
      case BytesCodecSpec::Kind::Zstd:
        task(in, data.size(), dst, decoded, TaskCodec::Zstd);
        return;
      case BytesCodecSpec::Kind::Lz4: {
        if (data.size() < 4) throw FormatError("lz4: chunk shorter than its 4-byte size header");
        const std::int32_t n = load_i32(data, 0);
        if (n < 0 || static_cast<std::uint64_t>(n) != decoded)
          throw FormatError(
              fmt::format("lz4: header claims {} decoded bytes, expected {}", n, decoded));
        task(in + 4, data.size() - 4, dst, decoded, TaskCodec::Lz4);
        return;
      }
      case BytesCodecSpec::Kind::Blosc:
        frame_blosc(data, in, decoded, dst);
        return;
      default:
        throw FormatError(fmt::format("codec {} has no device decoder", codec.name));
    }
  }

 private:
  void task(std::uint64_t in, std::uint64_t in_size, Ref dst, std::uint64_t dst_size,
            TaskCodec codec) {
    out_.tasks.push_back(FramedTask{Ref{Region::Input, in}, in_size, dst, dst_size, codec});
  }

  void frame_blosc(Bytes data, std::uint64_t in, std::uint64_t decoded, Ref dst) {
    if (data.size() < kBloscHeader)
      throw FormatError(
          fmt::format("blosc: chunk of {} bytes is shorter than the 16-byte header", data.size()));
    const auto byte = [&](std::uint64_t i) { return std::to_integer<std::uint8_t>(data[i]); };
    const std::uint8_t version = byte(0);
    const std::uint8_t flags = byte(2);
    const std::int64_t typesize = byte(3);
    const std::int64_t nbytes = load_i32(data, 4);
    const std::int64_t blocksize = load_i32(data, 8);
    const std::int64_t cbytes = load_i32(data, 12);
    if (nbytes < 0 || static_cast<std::uint64_t>(nbytes) != decoded)
      throw FormatError(
          fmt::format("blosc: header claims {} decoded bytes, expected {}", nbytes, decoded));
    if (cbytes < static_cast<std::int64_t>(kBloscHeader) ||
        static_cast<std::uint64_t>(cbytes) > data.size())
      throw FormatError(fmt::format("blosc: header claims {} compressed bytes, the chunk holds {}",
                                    cbytes, data.size()));
    if (nbytes == 0) return;
    if (blocksize <= 0 || blocksize > nbytes || blocksize > kMaxBlocksize || typesize == 0)
      throw FormatError(
          fmt::format("blosc: invalid header (block size {}, type size {})", blocksize, typesize));
    if (version != kBloscFormatVersion)
      throw FormatError(fmt::format("blosc: unsupported format version {}", version));
    if (flags & kFutureFlag) throw FormatError("blosc: unknown header flags");
    const Bytes chunk = data.first(static_cast<std::size_t>(cbytes));
    const std::int64_t leftover = nbytes % blocksize;
    const std::int64_t nblocks = nbytes / blocksize + (leftover > 0 ? 1 : 0);
    if (flags & kMemcpyed) {
      if (nbytes + static_cast<std::int64_t>(kBloscHeader) != cbytes)
        throw FormatError(fmt::format(
            "blosc: stored (memcpyed) chunk of {} compressed bytes for {} decoded bytes", cbytes,
            nbytes));
      task(in + kBloscHeader, static_cast<std::uint64_t>(nbytes), dst,
           static_cast<std::uint64_t>(nbytes), TaskCodec::Copy);
      return;
    }
    TaskCodec codec;
    switch (flags >> 5) {
      case 1:
        codec = TaskCodec::Lz4;
        break;
      case 4:
        codec = TaskCodec::Zstd;
        break;
      case 0:
        throw FormatError("blosc: internal codec blosclz has no device decoder");
      case 2:
        throw FormatError("blosc: internal codec snappy has no device decoder");
      case 3:
        throw FormatError("blosc: internal codec zlib has no device decoder");
      default:
        throw FormatError(fmt::format("blosc: unknown internal codec {}", flags >> 5));
    }
    if (nblocks > (cbytes - static_cast<std::int64_t>(kBloscHeader)) / 4)
      throw FormatError(fmt::format("blosc: {} blocks do not fit their start table in {} bytes",
                                    nblocks, cbytes));
    const bool byte_shuffle = (flags & kDoShuffle) && typesize > 1;
    const bool dont_split = flags & kDontSplit;
    // Shuffled blocks are decoded into scratch and unshuffled into place.
    std::optional<Ref> scratch;
    for (std::int64_t j = 0; j < nblocks; ++j) {
      const bool last_leftover = j == nblocks - 1 && leftover > 0;
      const std::int64_t bsize = last_leftover ? leftover : blocksize;
      const bool bit_shuffle = !byte_shuffle && (flags & kDoBitShuffle) && bsize >= typesize &&
                               (bsize / typesize) % 8 == 0;  // others stay as they are
      const auto block_offset = static_cast<std::uint64_t>(j * blocksize);
      Ref target = at(dst, block_offset);
      if (byte_shuffle || bit_shuffle) {
        if (!scratch) scratch = out_.allocate_scratch(static_cast<std::uint64_t>(nbytes));
        target = at(*scratch, block_offset);
        out_.shuffles.push_back(FramedShuffle{target, at(dst, block_offset),
                                              static_cast<std::uint64_t>(bsize),
                                              static_cast<std::uint32_t>(typesize), bit_shuffle});
      }
      const std::int64_t nsplits = !dont_split && typesize <= kMaxSplits &&
                                           bsize / typesize >= kMinBufferSize && !last_leftover
                                       ? typesize
                                       : 1;
      if (bsize % nsplits != 0)
        throw FormatError(
            fmt::format("blosc: block of {} bytes does not split into {} streams", bsize, nsplits));
      const std::int64_t neblock = bsize / nsplits;
      std::int64_t pos = load_i32(chunk, kBloscHeader + 4 * static_cast<std::uint64_t>(j));
      for (std::int64_t s = 0; s < nsplits; ++s) {
        if (pos < 0 || pos > cbytes - 4)
          throw FormatError(
              fmt::format("blosc: block {} stream {} starts at {}, outside the {} "
                          "compressed bytes",
                          j, s, pos, cbytes));
        const std::int64_t csize = load_i32(chunk, static_cast<std::uint64_t>(pos));
        pos += 4;
        if (csize < 0 || csize > cbytes - pos)
          throw FormatError(fmt::format("blosc: block {} stream {} claims {} bytes, {} remain", j,
                                        s, csize, cbytes - pos));
        const Ref split_dst = at(target, static_cast<std::uint64_t>(s * neblock));
        task(in + static_cast<std::uint64_t>(pos), static_cast<std::uint64_t>(csize), split_dst,
             static_cast<std::uint64_t>(neblock), csize == neblock ? TaskCodec::Copy : codec);
        pos += csize;
      }
    }
  }

  void frame_shard(Bytes shard, std::uint64_t in, const ChunkEncoding& enc, Ref dst) {
    const zarr::ShardingSpec& spec = *enc.sharding;
    const std::size_t n = enc.shape.size();
    const auto itemsize = static_cast<std::uint64_t>(enc.itemsize);
    std::vector<std::int64_t> grid(n);
    std::uint64_t cells = 1;
    for (std::size_t d = 0; d < n; ++d) {
      grid[d] = enc.shape[d] / spec.inner_shape[d];
      cells *= static_cast<std::uint64_t>(grid[d]);
    }
    std::uint64_t checksums = 0;
    for (const auto& c : spec.index.bytes_codecs)
      if (c.kind == BytesCodecSpec::Kind::Crc32c) ++checksums;
    const std::uint64_t index_bytes = cells * 16 + 4 * checksums;
    if (shard.size() < index_bytes)
      throw FormatError(
          fmt::format("sharding_indexed: shard holds {} bytes, less than its {}-byte index",
                      shard.size(), index_bytes));
    const Bytes index_span = spec.index_at_end ? shard.last(static_cast<std::size_t>(index_bytes))
                                               : shard.first(static_cast<std::size_t>(index_bytes));
    std::size_t left = 0;
    Bytes index;
    try {
      index = strip_checksums(index_span, spec.index.bytes_codecs, left);
    } catch (const FormatError& e) {
      throw FormatError(fmt::format("sharding_indexed: shard index: {}", e.what()));
    }
    // Shard strides (bytes) and the layout of an inner chunk inside the shard.
    std::vector<std::uint64_t> stride(n);
    std::uint64_t s = itemsize;
    for (std::size_t d = n; d-- > 0;) {
      stride[d] = s;
      s *= static_cast<std::uint64_t>(enc.shape[d]);
    }
    const auto& inner = spec.inner_shape;
    std::size_t full = n;  // inner covers the shard in dims [full, n)
    while (full > 0 && inner[full - 1] == enc.shape[full - 1]) --full;
    bool contiguous = true;
    for (std::size_t d = 0; d + 1 < full; ++d) contiguous = contiguous && inner[d] == 1;
    ScatterJob geometry;
    if (!contiguous) {
      std::size_t k = n - 1;
      std::uint64_t run = static_cast<std::uint64_t>(inner[k]);
      while (k > 0 && inner[k] == enc.shape[k]) {
        --k;
        run *= static_cast<std::uint64_t>(inner[k]);
      }
      if (k > static_cast<std::size_t>(kScatterDims))
        throw FormatError("sharding_indexed: too many dimensions for the device");
      geometry.run = run * itemsize;
      geometry.ndim = static_cast<std::int32_t>(k);
      geometry.rows = 1;
      for (std::size_t d = 0; d < k; ++d) {
        geometry.count[d] = inner[d];
        geometry.stride[d] = static_cast<std::int64_t>(stride[d]);
        geometry.rows *= static_cast<std::uint64_t>(inner[d]);
      }
    }
    const std::uint64_t inner_bytes = spec.inner.decoded_bytes();
    constexpr std::uint64_t kEmpty = std::numeric_limits<std::uint64_t>::max();
    std::vector<std::int64_t> cell(n);
    for (std::uint64_t i = 0; i < cells; ++i) {
      std::uint64_t rest = i, box = 0;
      for (std::size_t d = n; d-- > 0;) {
        const auto g = static_cast<std::uint64_t>(grid[d]);
        cell[d] = static_cast<std::int64_t>(rest % g);
        rest /= g;
        box += static_cast<std::uint64_t>(cell[d] * inner[d]) * stride[d];
      }
      const std::uint64_t offset = load_u64(index, 16 * i);
      const std::uint64_t nbytes = load_u64(index, 16 * i + 8);
      const Ref target = contiguous ? at(dst, box) : out_.allocate_scratch(inner_bytes);
      try {
        if (offset == kEmpty && nbytes == kEmpty) {
          fill(target, inner_bytes, enc.fill_value, enc.itemsize);
        } else {
          if (offset > shard.size() || nbytes > shard.size() - offset)
            throw FormatError(fmt::format("range [{}, {}) lies outside the {}-byte shard", offset,
                                          offset + nbytes, shard.size()));
          frame(shard.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(nbytes)),
                in + offset, spec.inner, target);
        }
      } catch (const FormatError& e) {
        std::string where;
        for (std::size_t d = 0; d < n; ++d) where += (d ? "," : "") + std::to_string(cell[d]);
        throw FormatError(fmt::format("inner chunk ({}): {}", where, e.what()));
      }
      if (!contiguous) out_.scatters.push_back(FramedScatter{target, at(dst, box), geometry});
    }
  }

 public:
  void fill(Ref dst, std::uint64_t size, const std::vector<std::byte>& value, int itemsize) {
    FramedFill f;
    f.dst = dst;
    f.size = size;
    f.itemsize = static_cast<std::uint32_t>(std::clamp(itemsize, 1, 8));
    for (std::size_t k = 0; k < value.size() && k < 8; ++k)
      f.pattern[k] = std::to_integer<std::uint8_t>(value[k]);
    if (size > 0) out_.fills.push_back(f);
  }

 private:
  ChunkFrames& out_;
};

}  // namespace

void frame_chunk(std::span<const std::byte> encoded, const zarr::ChunkEncoding& encoding,
                 ChunkFrames& out) {
  std::string why;
  if (!zarr::device_decodable(encoding, &why)) throw FormatError(why);
  Framer(out).frame(encoded, 0, encoding, Ref{Region::Output, 0});
}

void frame_absent_chunk(const zarr::ChunkEncoding& encoding, ChunkFrames& out) {
  Framer(out).fill(Ref{Region::Output, 0}, encoding.decoded_bytes(), encoding.fill_value,
                   encoding.itemsize);
}

namespace {

std::uint8_t* pointer(const Ref& r, const RegionBases& b) {
  switch (r.region) {
    case Region::Input:
      return const_cast<std::uint8_t*>(b.input + r.offset);
    case Region::Output:
      return b.output + r.offset;
    case Region::Scratch:
      break;
  }
  return b.scratch + r.offset;
}

}  // namespace

void resolve(const ChunkFrames& frames, const RegionBases& bases, std::uint32_t chunk,
             ResolvedJobs& out) {
  for (const auto& t : frames.tasks) {
    DecodeTask d;
    d.src = pointer(t.src, bases);
    d.src_size = t.src_size;
    d.dst = pointer(t.dst, bases);
    d.dst_size = t.dst_size;
    d.codec = t.codec;
    out.tasks.push_back(d);
    out.task_chunk.push_back(chunk);
  }
  for (const auto& f : frames.fills) {
    FillJob j;
    j.dst = pointer(f.dst, bases);
    j.size = f.size;
    std::memcpy(j.pattern, f.pattern, sizeof j.pattern);
    j.itemsize = f.itemsize;
    out.fills.push_back(j);
  }
  for (const auto& s : frames.shuffles) {
    ShuffleJob j;
    j.src = pointer(s.src, bases);
    j.dst = pointer(s.dst, bases);
    j.size = s.size;
    j.typesize = s.typesize;
    j.bit = s.bit ? 1u : 0u;
    out.shuffles.push_back(j);
  }
  for (const auto& s : frames.scatters) {
    ScatterJob j = s.geometry;
    j.src = pointer(s.src, bases);
    j.dst = pointer(s.dst, bases);
    out.scatters.push_back(j);
  }
}

std::string decode_error_name(std::int32_t error) {
  switch (static_cast<DecodeError>(error)) {
    case DecodeError::Ok:
      return "ok";
    case DecodeError::Truncated:
      return "truncated input";
    case DecodeError::Corrupt:
      return "corrupt data";
    case DecodeError::OutputOverflow:
      return "decodes to more bytes than expected";
    case DecodeError::OutputShort:
      return "decodes to fewer bytes than expected";
    case DecodeError::Unsupported:
      return "unsupported feature";
    case DecodeError::WorkspaceTooSmall:
      return "workspace too small";
  }
  return fmt::format("error {}", error);
}

std::string task_codec_name(TaskCodec codec) {
  switch (codec) {
    case TaskCodec::Copy:
      return "stored";
    case TaskCodec::Zstd:
      return "zstd";
    case TaskCodec::Lz4:
      return "lz4";
  }
  return "unknown";
}

std::string describe_failure(const DecodeTask& t, const DecodeStatus& s) {
  return fmt::format(
      "{} stream of {} bytes (expected to decode to {}): {} at input byte {}, {} "
      "bytes written",
      task_codec_name(t.codec), t.src_size, t.dst_size, decode_error_name(s.error), s.detail,
      s.produced);
}

HostDecoders::HostDecoders() : lz4(lz4_decode_host), zstd(zstd_decode_host) {}

std::optional<std::size_t> run_jobs_host(const ResolvedJobs& jobs, const HostDecoders& decoders,
                                         DecodeStatus* failed) {
  for (const auto& f : jobs.fills)
    for (std::uint64_t i = 0; i < f.size; ++i) fill_byte(f, i);
  for (std::size_t k = 0; k < jobs.tasks.size(); ++k) {
    const DecodeTask& t = jobs.tasks[k];
    DecodeStatus s;
    switch (t.codec) {
      case TaskCodec::Copy:
        s = copy_decode_host(t);
        break;
      case TaskCodec::Lz4:
        s = decoders.lz4(t);
        break;
      case TaskCodec::Zstd:
        s = decoders.zstd(t);
        break;
      default:
        s = decode_failure(DecodeError::Unsupported, 0, 0);
    }
    if (s.error != 0) {
      if (failed) *failed = s;
      return k;
    }
  }
  for (const auto& j : jobs.shuffles) {
    const std::uint64_t n = shuffle_elements(j);
    if (j.bit) {
      for (std::uint64_t g = 0; g < n / 8; ++g) bit_unshuffle_group(j, g);
    } else {
      for (std::uint64_t i = 0; i < n; ++i) byte_unshuffle_element(j, i);
    }
    for (std::uint64_t i = 0; i < j.size - n * j.typesize; ++i) shuffle_tail_byte(j, i);
  }
  for (const auto& j : jobs.scatters)
    for (std::uint64_t r = 0; r < j.rows; ++r)
      std::memcpy(j.dst + scatter_row_offset(j, r), j.src + r * j.run, j.run);
  return std::nullopt;
}

void decode_chunk_host(std::optional<std::span<const std::byte>> encoded,
                       const zarr::ChunkEncoding& encoding, std::span<std::byte> out,
                       const HostDecoders& decoders) {
  if (out.size() != encoding.decoded_bytes())
    throw UsageError(fmt::format("chunk buffer holds {} bytes, expected {}", out.size(),
                                 encoding.decoded_bytes()));
  ChunkFrames frames;
  if (encoded)
    frame_chunk(*encoded, encoding, frames);
  else
    frame_absent_chunk(encoding, frames);
  std::vector<std::uint8_t> scratch(static_cast<std::size_t>(frames.scratch_bytes));
  ResolvedJobs jobs;
  RegionBases bases;
  bases.input = encoded ? reinterpret_cast<const std::uint8_t*>(encoded->data()) : nullptr;
  bases.output = reinterpret_cast<std::uint8_t*>(out.data());
  bases.scratch = scratch.data();
  resolve(frames, bases, 0, jobs);
  DecodeStatus status;
  if (auto k = run_jobs_host(jobs, decoders, &status))
    throw FormatError(describe_failure(jobs.tasks[*k], status));
}

}  // namespace vczstats::cuda::decode
