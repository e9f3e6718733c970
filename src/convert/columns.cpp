// Encoding one chunk of one column from unpacked htslib records: the values are read straight
// from the records' typed BCF buffers (no header look-ups, so encoding threads never touch the
// header the reading thread may extend), mapped to VCF Zarr's missing/fill sentinels and laid
// out in the chunk's C order.

#include "convert/columns.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace vczstats::convert::detail {

std::int32_t raw_int_at(const std::uint8_t* p, int type, std::int64_t j, bool& end, bool& missing) {
  std::int32_t v = 0;
  switch (type) {
    case BCF_BT_INT8: {
      const auto x = static_cast<std::int8_t>(p[j]);
      end = x == bcf_int8_vector_end;
      missing = x == bcf_int8_missing;
      v = x;
      break;
    }
    case BCF_BT_INT16: {
      std::int16_t x;
      std::memcpy(&x, p + 2 * j, 2);
      end = x == bcf_int16_vector_end;
      missing = x == bcf_int16_missing;
      v = x;
      break;
    }
    default: {
      std::memcpy(&v, p + 4 * j, 4);
      end = v == bcf_int32_vector_end;
      missing = v == bcf_int32_missing;
      break;
    }
  }
  return v;
}

namespace {

/// An integer of a BCF typed buffer, with htslib's missing / vector-end sentinels mapped to
/// VCF Zarr's -1 / -2.
std::int32_t int_at(const std::uint8_t* p, int type, std::int64_t j) {
  bool end = false, missing = false;
  const std::int32_t v = raw_int_at(p, type, j, end, missing);
  return missing ? kIntMissing : end ? kIntFill : v;
}

std::uint32_t float_bits_at(const std::uint8_t* p, int type, std::int64_t j) {
  if (type != BCF_BT_FLOAT) return kFloatMissingBits;
  std::uint32_t v;
  std::memcpy(&v, p + 4 * j, 4);
  return v;
}

/// The string of a BCF char buffer of @p n bytes (NUL-padded); missing ("" or htslib's 0x07)
/// reads as ".".
std::string_view string_at(const std::uint8_t* p, std::int64_t n) {
  const char* c = reinterpret_cast<const char*>(p);
  const auto len = static_cast<std::size_t>(std::find(c, c + n, '\0') - c);
  std::string_view s(c, len);
  if (s.empty() || s == "\x07") return ".";
  return s;
}

/// Write the items of @p s (split at ',' when @p split) into out[0..dim), padding with "".
void put_strings(std::string_view s, bool split, std::int64_t dim, std::string* out) {
  std::int64_t j = 0;
  if (!split) {
    out[j++].assign(s);
  } else {
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = s.find(',', start);
      if (j < dim)
        out[j++].assign(s.substr(start, comma == std::string_view::npos ? s.npos : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }
  for (; j < dim; ++j) out[j].clear();
}

const bcf_info_t* find_info(const bcf1_t* rec, int key) {
  for (int i = 0; i < rec->n_info; ++i)
    if (rec->d.info[i].key == key && rec->d.info[i].vptr) return &rec->d.info[i];
  return nullptr;
}

const bcf_fmt_t* find_fmt(const bcf1_t* rec, int key) {
  for (int i = 0; i < rec->n_fmt; ++i)
    if (rec->d.fmt[i].id == key && rec->d.fmt[i].p) return &rec->d.fmt[i];
  return nullptr;
}

struct Buffers {
  std::vector<std::byte> raw, raw2, raw3;
  std::vector<std::string> strings;
};

Buffers& buffers() {
  thread_local Buffers b;
  return b;
}

template <class T>
void store_bits(std::byte* out, T v) {
  std::memcpy(out, &v, sizeof v);
}

/// Genotypes of one sample chunk as allele indices of type T, plus phasing and mask.
template <class T>
void encode_genotypes(const Column& gt, const RecordChunk& chunk, std::int64_t s0, std::int64_t s1,
                      const EncodeContext& ctx, Buffers& b) {
  const std::int64_t vchunk = ctx.variants_chunk, schunk = ctx.samples_chunk;
  const std::int64_t ploidy = gt.dim;
  const std::size_t calls = static_cast<std::size_t>(vchunk * schunk * ploidy);
  b.raw.assign(calls * sizeof(T), std::byte{0});
  b.raw2.assign(static_cast<std::size_t>(vchunk * schunk), std::byte{0});  // phased
  b.raw3.assign(calls, std::byte{0});                                      // mask
  T* g = reinterpret_cast<T*>(b.raw.data());
  std::fill(g, g + calls, static_cast<T>(kIntMissing));  // the array's fill (rows past the end)
  auto* phased = reinterpret_cast<std::uint8_t*>(b.raw2.data());
  auto* mask = reinterpret_cast<std::uint8_t*>(b.raw3.data());
  for (std::int64_t r = 0; r < chunk.size; ++r) {
    const bcf1_t* rec = chunk.records[static_cast<std::size_t>(r)].get();
    const bcf_fmt_t* f = find_fmt(rec, ctx.gt_header_id);
    for (std::int64_t s = s0; s < s1; ++s) {
      const std::int64_t call = r * schunk + (s - s0);
      T* out = g + call * ploidy;
      std::uint8_t* m = mask + call * ploidy;
      std::int64_t k = 0;  // alleles present (not vector end)
      bool second_phased = false;
      if (f) {
        const std::uint8_t* p = f->p + s * f->size;
        for (std::int64_t j = 0; j < f->n && j < ploidy; ++j) {
          bool end = false, missing = false;
          const std::int32_t raw = raw_int_at(p, f->type, j, end, missing);
          if (end) break;
          out[j] = static_cast<T>(missing ? kIntMissing : bcf_gt_allele(raw));
          if (j == 1) second_phased = bcf_gt_is_phased(raw);
          ++k;
        }
      } else {
        out[0] = static_cast<T>(kIntMissing);
        k = 1;
      }
      for (std::int64_t j = k; j < ploidy; ++j) out[j] = static_cast<T>(kIntFill);
      for (std::int64_t j = 0; j < ploidy; ++j) m[j] = static_cast<std::uint8_t>(out[j] < 0);
      // bio2zarr (through cyvcf2) reports haploid calls as phased.
      phased[call] = static_cast<std::uint8_t>(k <= 1 || second_phased);
    }
  }
  // Rows past the last record: fill values of each array (-1, false, false).
  const std::vector<std::int64_t> index3 = {chunk.index, s0 / schunk, 0};
  const std::vector<std::int64_t> index2 = {chunk.index, s0 / schunk};
  gt.writer->write_chunk(index3, b.raw);
  ctx.phased->writer->write_chunk(index2, b.raw2);
  ctx.mask->writer->write_chunk(index3, b.raw3);
}

}  // namespace

std::int64_t value_count(const Column& column, const bcf_info_t* info, const bcf_fmt_t* fmt,
                         std::int64_t samples) {
  if (info) {
    if (column.field.type == BCF_HT_FLAG) return 1;
    if (column.field.type != BCF_HT_STR) return info->len;
    if (!column.split_strings) return 1;
    const char* c = reinterpret_cast<const char*>(info->vptr);
    const std::int64_t n = std::find(c, c + info->len, '\0') - c;
    return 1 + std::count(c, c + n, ',');
  }
  if (fmt) {
    if (column.field.type != BCF_HT_STR) return fmt->n;
    if (!column.split_strings) return 1;
    std::int64_t most = 1;
    for (std::int64_t s = 0; s < samples; ++s) {
      const char* c = reinterpret_cast<const char*>(fmt->p + s * fmt->size);
      const std::int64_t n = std::find(c, c + fmt->n, '\0') - c;
      most = std::max<std::int64_t>(most, 1 + std::count(c, c + n, ','));
    }
    return most;
  }
  return 1;
}

void encode_column_chunk(const Column& col, const RecordChunk& chunk, std::int64_t sample_chunk,
                         const EncodeContext& ctx) {
  Buffers& b = buffers();
  const std::int64_t vchunk = ctx.variants_chunk;
  const std::int64_t s0 = sample_chunk * ctx.samples_chunk;
  const std::int64_t s1 = std::min(ctx.samples, s0 + ctx.samples_chunk);
  const std::int64_t width = col.per_sample ? ctx.samples_chunk : 1;  // samples per row
  const std::int64_t dim = col.dim;
  const std::int64_t row = width * dim;  // elements per record
  const std::size_t n = static_cast<std::size_t>(vchunk * row);
  const auto& def = col.writer->definition();
  std::vector<std::int64_t> index = {chunk.index};
  if (col.per_sample) index.push_back(sample_chunk);
  if (col.has_dim) index.push_back(0);
  auto rec_at = [&](std::int64_t r) { return chunk.records[static_cast<std::size_t>(r)].get(); };

  if (col.source == Source::Genotype) {
    switch (def.dtype.size) {
      case 1:
        encode_genotypes<std::int8_t>(col, chunk, s0, s1, ctx, b);
        return;
      case 2:
        encode_genotypes<std::int16_t>(col, chunk, s0, s1, ctx, b);
        return;
      default:
        encode_genotypes<std::int32_t>(col, chunk, s0, s1, ctx, b);
        return;
    }
  }

  if (def.dtype.kind == zarr::DataKind::String) {
    b.strings.resize(n);
    for (auto& s : b.strings) s.assign(def.fill_string);
    for (std::int64_t r = 0; r < chunk.size; ++r) {
      const bcf1_t* rec = rec_at(r);
      std::string* out = b.strings.data() + r * row;
      switch (col.source) {
        case Source::Id:
          out[0].assign(rec->d.id ? rec->d.id : ".");
          break;
        case Source::Allele:
          for (std::int64_t j = 0; j < dim; ++j)
            out[j].assign(j < rec->n_allele ? rec->d.allele[j] : "");
          break;
        case Source::Info: {
          const bcf_info_t* info = find_info(rec, col.field.header_id);
          if (!info) {
            put_strings(".", false, dim, out);  // absent: one missing value, then padding
            break;
          }
          put_strings(string_at(info->vptr, info->len), col.split_strings, dim, out);
          break;
        }
        case Source::Format: {
          const bcf_fmt_t* f = find_fmt(rec, col.field.header_id);
          for (std::int64_t s = s0; s < s1; ++s) {
            std::string* o = out + (s - s0) * dim;
            if (!f) {
              put_strings(".", false, dim, o);
              continue;
            }
            put_strings(string_at(f->p + s * f->size, f->n), col.split_strings, dim, o);
          }
          break;
        }
        default:
          break;
      }
    }
    col.writer->write_chunk_strings(index, b.strings);
    return;
  }

  // Numeric and bool columns: start from the fill value, then write each record's row.
  const auto size = static_cast<std::size_t>(def.dtype.size);
  b.raw.resize(n * size);
  for (std::size_t i = 0; i < n; ++i)
    std::memcpy(b.raw.data() + i * size, def.fill_value.data(), size);
  std::byte* data = b.raw.data();
  for (std::int64_t r = 0; r < chunk.size; ++r) {
    const bcf1_t* rec = rec_at(r);
    std::byte* out = data + static_cast<std::size_t>(r * row) * size;
    switch (col.source) {
      case Source::Contig:
        store_bits(out, static_cast<std::int32_t>(rec->rid));
        break;
      case Source::Position:
        store_bits(out, static_cast<std::int32_t>(rec->pos + 1));
        break;
      case Source::Length:
        store_bits(out, static_cast<std::int32_t>(rec->rlen));
        break;
      case Source::Quality:
        store_bits(out, rec->qual);
        break;
      case Source::IdMask:
        out[0] =
            std::byte{static_cast<std::uint8_t>(!rec->d.id || std::strcmp(rec->d.id, ".") == 0)};
        break;
      case Source::Filter:
        for (std::int64_t j = 0; j < dim; ++j) out[j] = std::byte{0};
        for (int k = 0; k < rec->d.n_flt; ++k) {
          const int id = rec->d.flt[k];
          if (id >= 0 && static_cast<std::size_t>(id) < chunk.filter_columns.size() &&
              chunk.filter_columns[static_cast<std::size_t>(id)] >= 0)
            out[chunk.filter_columns[static_cast<std::size_t>(id)]] = std::byte{1};
        }
        break;
      case Source::Info: {
        const bcf_info_t* info = find_info(rec, col.field.header_id);
        if (col.field.type == BCF_HT_FLAG) {
          out[0] = std::byte{static_cast<std::uint8_t>(info != nullptr)};
        } else {
          // A field the record lacks reads as one missing value, then padding.
          const std::int64_t count = info ? info->len : 1;
          const bool is_int = col.field.type == BCF_HT_INT;
          for (std::int64_t j = 0; j < dim; ++j) {
            if (is_int)
              store_bits(out + 4 * j, j >= count ? kIntFill
                                      : info     ? int_at(info->vptr, info->type, j)
                                                 : kIntMissing);
            else
              store_bits(out + 4 * j, j >= count ? kFloatFillBits
                                      : info     ? float_bits_at(info->vptr, info->type, j)
                                                 : kFloatMissingBits);
          }
        }
        break;
      }
      case Source::Format: {
        const bcf_fmt_t* f = find_fmt(rec, col.field.header_id);
        const bool is_int = col.field.type == BCF_HT_INT;
        for (std::int64_t s = s0; s < s1; ++s) {
          std::byte* o = out + static_cast<std::size_t>((s - s0) * dim) * size;
          const std::uint8_t* p = f ? f->p + s * f->size : nullptr;
          // A field the record lacks reads as one missing value, then padding.
          const std::int64_t count = f ? f->n : 1;
          for (std::int64_t j = 0; j < dim; ++j) {
            if (is_int)
              store_bits(o + 4 * j, j >= count ? kIntFill
                                    : f        ? int_at(p, f->type, j)
                                               : kIntMissing);
            else
              store_bits(o + 4 * j, j >= count ? kFloatFillBits
                                    : f        ? float_bits_at(p, f->type, j)
                                               : kFloatMissingBits);
          }
        }
        break;
      }
      default:
        break;
    }
  }
  col.writer->write_chunk(index, b.raw);
}

}  // namespace vczstats::convert::detail
