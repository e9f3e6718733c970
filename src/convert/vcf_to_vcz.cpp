// VCF/BCF -> VCF Zarr in one pass. The reading thread parses one variant chunk of records
// (htslib), checks them and notes the largest extent of every trailing dimension (alleles,
// ploidy, values per field); meanwhile the previous chunk is encoded on the thread pool, one
// task per (array, sample chunk). When a later chunk needs a wider trailing dimension (more
// alleles, higher ploidy, longer vectors) or wider genotype integers, the chunks already written
// of that array are read back, widened with the fill sentinel and rewritten: the final store has
// bio2zarr's layout (trailing dimensions are one chunk of the largest extent) without reading the
// input twice. Memory: two chunks of records plus one encoded chunk per thread.

#include <htslib/hts_log.h>

#include <array>
#include <chrono>
#include <cstring>
#include <future>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "convert/columns.hpp"
#include "convert/vcf_input.hpp"
#include "vczstats/convert.hpp"
#include "vczstats/error.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/vcz.hpp"
#include "vczstats/zarr.hpp"

namespace vczstats::convert {
namespace {

using namespace detail;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr int kRegionIndexFields = 6;  // chunk, contig, first POS, last POS, max END, records

zarr::Compression blosc(zarr::Shuffle shuffle) {
  zarr::Compression c;
  c.blosc_cname = "zstd";
  c.level = 7;
  c.shuffle = shuffle;
  return c;
}

zarr::DataType int_type(int bytes) {
  return {zarr::DataKind::Int, bytes};
}

/// The int type of the genotype array for the largest allele index.
int genotype_width(int max_allele_index) {
  if (max_allele_index <= std::numeric_limits<std::int8_t>::max()) return 1;
  if (max_allele_index <= std::numeric_limits<std::int16_t>::max()) return 2;
  return 4;
}

/// An element of @p type holding the integer @p v.
std::vector<std::byte> int_element(int bytes, std::int64_t v) {
  switch (bytes) {
    case 1:
      return zarr::fill_of(static_cast<std::int8_t>(v));
    case 2:
      return zarr::fill_of(static_cast<std::int16_t>(v));
    case 4:
      return zarr::fill_of(static_cast<std::int32_t>(v));
    default:
      return zarr::fill_of(static_cast<std::int64_t>(v));
  }
}

std::int64_t load_int(const std::byte* p, int bytes) {
  switch (bytes) {
    case 1:
      return static_cast<std::int8_t>(p[0]);
    case 2: {
      std::int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      std::int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

std::string dimension_name(const FieldDeclaration& f) {
  switch (f.number) {
    case BCF_VL_A:
      return "alt_alleles";
    case BCF_VL_R:
      return "alleles";
    case BCF_VL_G:
      return "genotypes";
    default:
      return fmt::format("{}_{}_dim", f.format ? "FORMAT" : "INFO", f.id);
  }
}

class Converter {
 public:
  Converter(const std::string& input, fs::path root, const ConvertOptions& o)
      : options_(o),
        threads_(o.threads ? o.threads : hardware_threads()),
        in_(input, static_cast<int>(std::max(1u, threads_ - 1))),
        root_(std::move(root)),
        pool_(std::max(1u, threads_ - 1)) {
    if (o.variants_chunk_size < 1 || o.samples_chunk_size < 1)
      throw UsageError("chunk sizes must be positive");
    if (o.zarr_format != 2 && o.zarr_format != 3)
      throw UsageError(fmt::format("--zarr-format {} (expected 2 or 3)", o.zarr_format));
    samples_ = static_cast<std::int64_t>(in_.samples().size());
    ctx_.variants_chunk = o.variants_chunk_size;
    ctx_.samples_chunk = std::min(o.samples_chunk_size, std::max<std::int64_t>(samples_, 1));
    ctx_.samples = samples_;
    store_ = std::make_shared<const zarr::DirectoryStoreWriter>(root_);
  }

  ConvertReport run() {
    const auto t0 = std::chrono::steady_clock::now();
    zarr::write_group(*store_, options_.zarr_format,
                      {{"vcf_zarr_version", "0.4"},
                       {"source", "vczstats convert 0.1.0"},
                       {"vcf_header", in_.header_text()}});
    define_columns();
    read_and_encode();
    write_final_arrays();
    report_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    report_.samples = samples_;
    report_.max_alleles = static_cast<int>(columns_[allele_col_].dim);
    report_.ploidy = genotype_col_ >= 0 ? static_cast<int>(columns_[genotype_col_].dim) : 0;
    report_.calls = report_.variants * samples_ * report_.ploidy;
    report_.arrays = static_cast<std::int64_t>(columns_.size()) + extra_arrays_;
    for (const auto& c : columns_) report_.stored_bytes += c.writer->stored_bytes();
    return report_;
  }

 private:
  // ---- columns ----------------------------------------------------------------------------------

  std::size_t add_column(Column c, zarr::ArrayDefinition d, const std::string& dim_name = "") {
    if (c.has_dim) d.dimension_names.push_back(dim_name);
    c.writer = std::make_unique<zarr::ArrayWriter>(store_, c.name, options_.zarr_format, d);
    columns_.push_back(std::move(c));
    return columns_.size() - 1;
  }

  std::size_t add_simple(const std::string& name, Source source, zarr::DataType dtype,
                         std::vector<std::byte> fill, zarr::Shuffle shuffle,
                         const std::string& description, bool has_dim = false,
                         const std::string& dim_name = "", std::vector<std::byte> pad = {}) {
    Column c;
    c.name = name;
    c.source = source;
    c.has_dim = has_dim;
    c.pad = std::move(pad);
    return add_column_with_dim(std::move(c), dtype, std::move(fill), description, dim_name,
                               shuffle);
  }

  void define_columns() {
    using zarr::DataKind;
    using zarr::Shuffle;
    const zarr::DataType i32 = int_type(4), f32{DataKind::Float, 4}, b{DataKind::Bool, 1},
                         str{DataKind::String, 0};
    const auto nan = zarr::fill_of(std::numeric_limits<float>::quiet_NaN());
    const auto no = zarr::fill_of(std::uint8_t{0});
    add_simple("variant_contig", Source::Contig, i32, {}, Shuffle::Byte,
               "An identifier from the reference genome or an angle-bracketed ID string pointing "
               "to a contig in the assembly file");
    add_simple("variant_position", Source::Position, i32, {}, Shuffle::Byte,
               "The reference position");
    add_simple("variant_length", Source::Length, i32, {}, Shuffle::Byte,
               "The length of the variant measured in bases");
    add_simple("variant_quality", Source::Quality, f32, nan, Shuffle::Byte,
               "Phred-scaled quality score");
    add_simple("variant_id", Source::Id, str, {}, Shuffle::Byte,
               "List of unique identifiers where applicable");
    add_simple("variant_id_mask", Source::IdMask, b, no, Shuffle::Bit,
               "True where the variant has no identifier");
    allele_col_ = add_simple("variant_allele", Source::Allele, str, {}, Shuffle::Byte,
                             "List of the reference and alternate alleles", true, "alleles");
    filter_col_ = add_simple("variant_filter", Source::Filter, b, no, Shuffle::Bit,
                             "Filter status of the variant", true, "filters", no);
    // FILTERs of the header, PASS first (htslib gives it id 0).
    bcf_hdr_t* h = in_.header();
    filter_columns_.assign(static_cast<std::size_t>(h->n[BCF_DT_ID]), -1);
    for (int id = 0; id < h->n[BCF_DT_ID]; ++id)
      if (bcf_hdr_idinfo_exists(h, BCF_HL_FLT, id)) add_filter(id);

    static const std::set<std::string> kReserved = {"contig", "position", "length", "quality",
                                                    "id",     "id_mask",  "allele", "filter"};
    const int gt = bcf_hdr_id2int(h, BCF_DT_ID, "GT");
    const bool has_gt = samples_ > 0 && gt >= 0 && bcf_hdr_idinfo_exists(h, BCF_HL_FMT, gt);
    info_columns_.assign(static_cast<std::size_t>(h->n[BCF_DT_ID]), -1);
    format_columns_.assign(static_cast<std::size_t>(h->n[BCF_DT_ID]), -1);
    for (const auto& f : in_.fields()) {
      if (f.format && (samples_ == 0 || f.id == "GT")) continue;
      if (!f.format && kReserved.count(f.id)) {
        report_.warnings.push_back(
            fmt::format("INFO/{} is not converted: variant_{} is a fixed field", f.id, f.id));
        continue;
      }
      Column c;
      c.name = (f.format ? "call_" : "variant_") + f.id;
      c.source = f.format ? Source::Format : Source::Info;
      c.field = f;
      c.per_sample = f.format;
      c.has_dim = f.type != BCF_HT_FLAG && !(f.number == BCF_VL_FIXED && f.fixed == 1);
      c.split_strings = f.type == BCF_HT_STR && c.has_dim;
      c.dim = c.has_dim && f.number == BCF_VL_FIXED ? std::max(1, f.fixed) : 1;
      zarr::DataType dtype = str;
      std::vector<std::byte> fill;
      switch (f.type) {
        case BCF_HT_FLAG:
          dtype = b;
          fill = no;
          break;
        case BCF_HT_INT:
          dtype = i32;
          fill = zarr::fill_of(kIntMissing);
          c.pad = zarr::fill_of(kIntFill);
          break;
        case BCF_HT_REAL: {
          dtype = f32;
          fill = nan;
          float fb;
          std::memcpy(&fb, &kFloatFillBits, 4);
          c.pad = zarr::fill_of(fb);
          break;
        }
        default:
          break;
      }
      const std::string dim_name = dimension_name(f);
      const std::size_t added =
          add_column_with_dim(std::move(c), dtype, std::move(fill), f.description, dim_name);
      (f.format ? format_columns_ : info_columns_)[static_cast<std::size_t>(f.header_id)] =
          static_cast<int>(added);
    }
    if (has_gt) {
      ctx_.gt_header_id = gt;
      Column g;
      g.name = "call_genotype";
      g.source = Source::Genotype;
      g.per_sample = true;
      g.has_dim = true;
      g.dim = 2;
      g.pad = int_element(1, kIntFill);
      genotype_col_ = static_cast<int>(add_column_with_dim(
          std::move(g), int_type(1), int_element(1, kIntMissing), "", "ploidy", Shuffle::Bit));
      Column p;
      p.name = "call_genotype_phased";
      p.source = Source::GenotypePhased;
      p.per_sample = true;
      phased_col_ =
          static_cast<int>(add_column_with_dim(std::move(p), b, no, "", "", Shuffle::Bit));
      Column m;
      m.name = "call_genotype_mask";
      m.source = Source::GenotypeMask;
      m.per_sample = true;
      m.has_dim = true;
      m.dim = 2;
      m.pad = zarr::fill_of(std::uint8_t{1});
      mask_col_ =
          static_cast<int>(add_column_with_dim(std::move(m), b, no, "", "ploidy", Shuffle::Bit));
    }
    // The allele count bounds the A/R/G dimensions, and the ploidy the G ones; growth is
    // checked per chunk, so start from the smallest shape.
    dims_initialised_ = false;
  }

  std::size_t add_column_with_dim(Column c, zarr::DataType dtype, std::vector<std::byte> fill,
                                  const std::string& description, const std::string& dim_name,
                                  zarr::Shuffle shuffle = zarr::Shuffle::Byte) {
    const bool bits = dtype.kind == zarr::DataKind::Bool;
    zarr::ArrayDefinition d;
    d.dtype = dtype;
    d.shape = {0};
    d.chunks = {ctx_.variants_chunk};
    d.dimension_names = {"variants"};
    if (c.per_sample) {
      d.shape.push_back(samples_);
      d.chunks.push_back(ctx_.samples_chunk);
      d.dimension_names.push_back("samples");
    }
    if (c.has_dim) {
      d.shape.push_back(c.dim);
      d.chunks.push_back(c.dim);
    }
    d.compression = blosc(bits ? zarr::Shuffle::Bit : shuffle);
    d.fill_value = std::move(fill);
    d.attributes = {{"description", description}};
    return add_column(std::move(c), std::move(d), dim_name);
  }

  void add_filter(int header_id) {
    if (static_cast<std::size_t>(header_id) >= filter_columns_.size())
      filter_columns_.resize(static_cast<std::size_t>(header_id) + 1, -1);
    filter_columns_[static_cast<std::size_t>(header_id)] = static_cast<int>(filter_names_.size());
    filter_names_.emplace_back(bcf_hdr_int2id(in_.header(), BCF_DT_ID, header_id));
    filter_descriptions_.push_back(in_.filter_description(header_id));
  }

  // ---- reading ----------------------------------------------------------------------------------

  /// Check one record and note its extents in @p chunk; returns the reason it is bad, or "".
  std::string admit(bcf1_t* rec, RecordChunk& chunk) {
    if (rec->pos < 0) return "invalid POS";
    // Sortedness (fatal: region queries need sorted records).
    if (rec->rid != last_rid_) {
      if (rec->rid < 0) return "no contig";
      if (static_cast<std::size_t>(rec->rid) < contig_done_.size() &&
          contig_done_[static_cast<std::size_t>(rec->rid)])
        throw FormatError(fmt::format(
            "{}: the input is not sorted: contig {} appears again after {}; sort it first "
            "(bcftools sort)",
            in_.where(rec), bcf_hdr_id2name(in_.header(), rec->rid),
            bcf_hdr_id2name(in_.header(), last_rid_)));
    } else if (rec->pos < last_pos_) {
      throw FormatError(fmt::format(
          "{}: the input is not sorted: position {} comes after {}; sort it first (bcftools sort)",
          in_.where(rec), rec->pos + 1, last_pos_ + 1));
    }
    if (rec->pos >= std::numeric_limits<std::int32_t>::max())  // (no rec->pos + 1: it may overflow)
      return fmt::format("position {} does not fit variant_position (int32)",
                         static_cast<std::uint64_t>(rec->pos) + 1);
    if (rec->rlen > std::numeric_limits<std::int32_t>::max())
      return fmt::format("length {} does not fit variant_length (int32)", rec->rlen);

    // Values per field; Number=1 fields hold one value.
    scratch_.clear();
    for (int i = 0; i < rec->n_info; ++i) {
      const bcf_info_t& info = rec->d.info[i];
      if (!info.vptr) continue;
      const int key = info.key;
      const int c = key >= 0 && static_cast<std::size_t>(key) < info_columns_.size()
                        ? info_columns_[static_cast<std::size_t>(key)]
                        : -1;
      if (c < 0) {
        note_unconverted(key, "INFO");
        continue;
      }
      const Column& col = columns_[static_cast<std::size_t>(c)];
      const std::int64_t n = value_count(col, &info, nullptr, samples_);
      if (!col.has_dim && n > 1)
        return fmt::format("INFO/{} has {} values but Number={}", col.field.id, n,
                           col.field.type == BCF_HT_FLAG ? "0" : "1");
      scratch_.emplace_back(c, n);
    }
    int max_allele = 0;
    for (int i = 0; i < rec->n_fmt; ++i) {
      const bcf_fmt_t& f = rec->d.fmt[i];
      if (!f.p) continue;
      if (f.id == ctx_.gt_header_id && genotype_col_ >= 0) {
        if (f.n > vcz::kMaxPloidy)
          return fmt::format("ploidy {} exceeds the {} a store may hold", f.n, vcz::kMaxPloidy);
        for (std::int64_t s = 0; s < samples_; ++s) {
          const std::uint8_t* p = f.p + s * f.size;
          for (int j = 0; j < f.n; ++j) {
            bool end = false, missing = false;
            const std::int32_t v = raw_int_at(p, f.type, j, end, missing);
            if (end) break;
            if (missing) continue;
            const int allele = bcf_gt_allele(v);
            max_allele = std::max(max_allele, allele);
          }
        }
        if (max_allele >= rec->n_allele)
          return fmt::format("GT allele {} but the record has {} alleles", max_allele,
                             static_cast<int>(rec->n_allele));
        scratch_.emplace_back(genotype_col_, f.n);
        continue;
      }
      const int key = f.id;
      const int c = key >= 0 && static_cast<std::size_t>(key) < format_columns_.size()
                        ? format_columns_[static_cast<std::size_t>(key)]
                        : -1;
      if (c < 0) {
        if (samples_ > 0) note_unconverted(key, "FORMAT");
        continue;
      }
      const Column& col = columns_[static_cast<std::size_t>(c)];
      const std::int64_t n = value_count(col, nullptr, &f, samples_);
      if (!col.has_dim && n > 1)
        return fmt::format("FORMAT/{} has {} values but Number=1", col.field.id, n);
      scratch_.emplace_back(c, n);
    }

    // Accepted: note extents, filters, region index, order.
    for (const auto& [c, n] : scratch_) {
      auto& d = chunk.dims[static_cast<std::size_t>(c)];
      d = std::max(d, n);
    }
    if (genotype_col_ >= 0) chunk.max_allele_index = std::max(chunk.max_allele_index, max_allele);
    auto& alleles = chunk.dims[allele_col_];
    alleles = std::max<std::int64_t>(alleles, static_cast<std::int64_t>(rec->n_allele));
    for (int k = 0; k < rec->d.n_flt; ++k) {
      const int id = rec->d.flt[k];
      if (static_cast<std::size_t>(id) >= filter_columns_.size() ||
          filter_columns_[static_cast<std::size_t>(id)] < 0)
        add_filter(id);
    }
    if (rec->rid != last_rid_) {
      if (last_rid_ >= 0) {
        if (contig_done_.size() <= static_cast<std::size_t>(last_rid_))
          contig_done_.resize(static_cast<std::size_t>(last_rid_) + 1, false);
        contig_done_[static_cast<std::size_t>(last_rid_)] = true;
      }
      last_rid_ = rec->rid;
    }
    last_pos_ = rec->pos;
    const std::int64_t pos = rec->pos + 1, end = rec->pos + rec->rlen;
    if (region_index_.empty() || region_index_.back()[0] != chunk.index ||
        region_index_.back()[1] != rec->rid) {
      region_index_.push_back({chunk.index, rec->rid, pos, pos, end, 1});
    } else {
      auto& r = region_index_.back();
      r[3] = pos;
      r[4] = std::max(r[4], end);
      ++r[5];
    }
    return "";
  }

  void note_unconverted(int key, const char* kind) {
    if (!unconverted_.insert(key).second) return;
    report_.warnings.push_back(
        fmt::format("{}/{} is not declared in the header of {}; not converted", kind,
                    bcf_hdr_int2id(in_.header(), BCF_DT_ID, key), in_.path()));
  }

  /// Fill @p chunk with up to a chunk of good records; false at the end of the input.
  void read_chunk(RecordChunk& chunk) {
    chunk.size = 0;
    chunk.dims.assign(columns_.size(), 0);
    chunk.max_allele_index = 0;
    const auto vchunk = static_cast<std::size_t>(ctx_.variants_chunk);
    if (chunk.records.size() < vchunk) {
      chunk.records.reserve(vchunk);
      while (chunk.records.size() < vchunk) chunk.records.emplace_back(bcf_init());
    }
    std::string reason;
    while (chunk.size < ctx_.variants_chunk) {
      if (options_.cancelled && options_.cancelled->load())
        throw IoError(fmt::format("{}: conversion interrupted", in_.path()));
      bcf1_t* rec = chunk.records[static_cast<std::size_t>(chunk.size)].get();
      reason.clear();
      const ReadStatus st = in_.read(rec, reason);
      if (st == ReadStatus::End) break;
      if (st == ReadStatus::Ok) reason = admit(rec, chunk);
      if (in_.take_undeclared_contig() && reason.empty())
        report_.warnings.push_back(fmt::format("{}: contig {} is not declared in the header",
                                               in_.where(rec),
                                               bcf_hdr_id2name(in_.header(), rec->rid)));
      if (!reason.empty()) {
        if (!options_.skip_bad)
          throw FormatError(fmt::format("{}: malformed record: {} (--skip-bad skips such records)",
                                        in_.where(rec), reason));
        ++report_.skipped;
        if (report_.skipped <= 5)
          report_.warnings.push_back(fmt::format("skipped {}: {}", in_.where(rec), reason));
        continue;
      }
      ++chunk.size;
      if (options_.progress && ((variants_read_ + chunk.size) & 4095) == 0)
        options_.progress(variants_read_ + chunk.size, in_.fraction_read());
    }
    variants_read_ += chunk.size;
  }

  // ---- growing trailing dimensions ----------------------------------------------------------

  /// Rewrite the chunks written so far of column @p c with trailing extent @p dim and genotype
  /// width @p width (bytes; 0 keeps the type).
  void grow(Column& c, std::int64_t dim, int width) {
    const zarr::ArrayDefinition old_def = c.writer->definition();
    zarr::ArrayDefinition def = old_def;
    if (c.has_dim) {
      def.shape.back() = dim;
      def.chunks.back() = dim;
    }
    if (width && width != def.dtype.size) {
      def.dtype = int_type(width);
      def.fill_value = int_element(width, load_int(old_def.fill_value.data(), old_def.dtype.size));
    }
    std::vector<std::byte> pad = c.pad;
    if (width && !pad.empty()) pad = int_element(width, load_int(c.pad.data(), old_def.dtype.size));
    def.shape[0] = variants_written_;
    if (variants_written_ == 0) {
      c.writer = std::make_unique<zarr::ArrayWriter>(store_, c.name, options_.zarr_format, def);
      c.dim = c.has_dim ? dim : 1;
      c.pad = pad;
      return;
    }
    ++report_.rewrites;
    auto old_shape = old_def.shape;
    old_shape[0] = variants_written_;
    c.writer->resize(old_shape);  // old layout, current length: what the reader below sees
    const auto store = zarr::open_store(root_);
    const auto old = zarr::Array::open(store, c.name);
    auto writer = std::make_unique<zarr::ArrayWriter>(store_, c.name, options_.zarr_format, def);
    const std::int64_t old_dim = c.has_dim ? old_def.chunks.back() : 1;
    const std::int64_t new_dim = c.has_dim ? dim : 1;
    const std::int64_t gv = old.num_chunks(0);
    const std::int64_t gs = c.per_sample ? old.num_chunks(1) : 1;
    const int from = old_def.dtype.size, to = def.dtype.size;
    const bool strings = def.dtype.kind == zarr::DataKind::String;
    pool_.parallel_for(gv * gs, [&](std::int64_t i) {
      std::vector<std::int64_t> index = {i / gs};
      if (c.per_sample) index.push_back(i % gs);
      if (c.has_dim) index.push_back(0);
      if (strings) {
        const auto values = old.read_chunk_strings(index);
        const auto rows = static_cast<std::int64_t>(values.size()) / old_dim;
        std::vector<std::string> out(static_cast<std::size_t>(rows * new_dim));
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t j = 0; j < old_dim; ++j)
            out[static_cast<std::size_t>(r * new_dim + j)] =
                values[static_cast<std::size_t>(r * old_dim + j)];
        writer->write_chunk_strings(index, out);
        return;
      }
      std::vector<std::byte> in(static_cast<std::size_t>(old.chunk_bytes()));
      old.read_chunk(index, in);
      const std::int64_t rows = static_cast<std::int64_t>(in.size()) / (old_dim * from);
      std::vector<std::byte> out(static_cast<std::size_t>(rows * new_dim * to));
      for (std::int64_t r = 0; r < rows; ++r) {
        std::byte* o = out.data() + r * new_dim * to;
        const std::byte* src = in.data() + r * old_dim * from;
        for (std::int64_t j = 0; j < new_dim; ++j) {
          if (j >= old_dim)
            std::memcpy(o + j * to, pad.data(), static_cast<std::size_t>(to));
          else if (from == to)
            std::memcpy(o + j * to, src + j * from, static_cast<std::size_t>(to));
          else
            std::memcpy(o + j * to, int_element(to, load_int(src + j * from, from)).data(),
                        static_cast<std::size_t>(to));
        }
      }
      writer->write_chunk(index, out);
    });
    c.writer = std::move(writer);
    c.dim = new_dim;
    c.pad = pad;
  }

  /// Before encoding @p chunk: widen every column whose trailing extent or type it outgrows.
  void fit(const RecordChunk& chunk) {
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      Column& c = columns_[i];
      const int col = static_cast<int>(i);
      if (col == mask_col_) {  // follows call_genotype
        const std::int64_t ploidy = columns_[static_cast<std::size_t>(genotype_col_)].dim;
        if (c.dim != ploidy) grow(c, ploidy, 0);
        continue;
      }
      int width = 0;
      if (col == genotype_col_) {
        const int w = genotype_width(chunk.max_allele_index);
        if (w > c.writer->definition().dtype.size) width = w;
      }
      if (!c.has_dim) {
        if (width) grow(c, 1, width);
        continue;
      }
      std::int64_t need =
          i == filter_col_ ? static_cast<std::int64_t>(filter_names_.size()) : chunk.dims[i];
      if (!dims_initialised_) {
        // The first chunk sets the extent (never below a fixed Number); a field absent from
        // it keeps its initial extent.
        const std::int64_t floor = c.field.number == BCF_VL_FIXED &&
                                           (c.source == Source::Info || c.source == Source::Format)
                                       ? c.field.fixed
                                       : 1;
        const std::int64_t target = need > 0 ? std::max(need, floor) : c.dim;
        if (target != c.dim || width) grow(c, target, width);
      } else if (need > c.dim || width) {
        grow(c, std::max(need, c.dim), width);
      }
    }
    dims_initialised_ = true;
  }

  // ---- pipeline
  // ------------------------------------------------------------------------------------

  void encode(const RecordChunk& chunk) {
    // Tasks: (column, sample chunk); the genotype task writes the phased and mask arrays too.
    std::vector<std::pair<std::size_t, std::int64_t>> tasks;
    const std::int64_t gs = (samples_ + ctx_.samples_chunk - 1) / ctx_.samples_chunk;
    for (int pass = 0; pass < 2; ++pass)  // per-sample (large) tasks first
      for (std::size_t i = 0; i < columns_.size(); ++i) {
        const Column& c = columns_[i];
        if (c.per_sample != (pass == 0)) continue;
        if (c.source == Source::GenotypePhased || c.source == Source::GenotypeMask) continue;
        for (std::int64_t s = 0; s < (c.per_sample ? gs : 1); ++s) tasks.emplace_back(i, s);
      }
    pool_.parallel_for(static_cast<std::int64_t>(tasks.size()), [&](std::int64_t t) {
      const auto [i, s] = tasks[static_cast<std::size_t>(t)];
      encode_column_chunk(columns_[i], chunk, s, ctx_);
    });
  }

  void read_and_encode() {
    hts_set_log_level(HTS_LOG_OFF);  // each malformed record is reported once, by us
    if (genotype_col_ >= 0) {
      ctx_.phased = &columns_[static_cast<std::size_t>(phased_col_)];
      ctx_.mask = &columns_[static_cast<std::size_t>(mask_col_)];
    }
    RecordChunk chunks[2];
    std::future<void> pending;
    for (std::int64_t k = 0;; ++k) {
      RecordChunk& chunk = chunks[k % 2];
      chunk.index = k;
      read_chunk(chunk);
      if (pending.valid()) pending.get();  // the previous chunk is written
      if (chunk.size == 0 && k > 0) break;
      chunk.filter_columns = filter_columns_;
      fit(chunk);
      if (chunk.size == 0) break;  // an empty input: shapes only
      variants_written_ += chunk.size;
      pending = std::async(std::launch::async, [this, &chunk] { encode(chunk); });
      if (chunk.size < ctx_.variants_chunk) break;
    }
    if (pending.valid()) pending.get();
    report_.variants = variants_written_;
    if (options_.progress) options_.progress(variants_written_, 1.0);
    for (auto& c : columns_) {
      auto shape = c.writer->definition().shape;
      shape[0] = variants_written_;
      c.writer->resize(shape);
    }
  }

  void write_strings(const std::string& name, const std::vector<std::string>& values,
                     std::int64_t chunk, const std::string& dim) {
    zarr::ArrayDefinition d;
    d.dtype = {zarr::DataKind::String, 0};
    d.shape = {static_cast<std::int64_t>(values.size())};
    d.chunks = {std::max<std::int64_t>(chunk, 1)};
    d.dimension_names = {dim};
    d.compression = blosc(zarr::Shuffle::Byte);
    zarr::ArrayWriter w(store_, name, options_.zarr_format, d);
    for (std::int64_t c = 0; c * d.chunks[0] < d.shape[0]; ++c) {
      std::vector<std::string> part(static_cast<std::size_t>(d.chunks[0]));
      for (std::int64_t i = 0; i < d.chunks[0] && c * d.chunks[0] + i < d.shape[0]; ++i)
        part[static_cast<std::size_t>(i)] = values[static_cast<std::size_t>(c * d.chunks[0] + i)];
      w.write_chunk_strings(std::vector<std::int64_t>{c}, part);
    }
    ++extra_arrays_;
  }

  template <class T>
  void write_ints(const std::string& name, const std::vector<T>& values,
                  std::vector<std::int64_t> shape, std::vector<std::string> dims) {
    zarr::ArrayDefinition d;
    d.dtype = {zarr::DataKind::Int, static_cast<int>(sizeof(T))};
    d.shape = shape;
    d.chunks = shape;
    d.chunks[0] = std::max<std::int64_t>(d.chunks[0], 1);
    d.dimension_names = std::move(dims);
    d.compression = blosc(zarr::Shuffle::Byte);
    zarr::ArrayWriter w(store_, name, options_.zarr_format, d);
    std::vector<T> chunk(static_cast<std::size_t>(w.chunk_elements()), T{0});
    std::copy(values.begin(), values.end(), chunk.begin());
    std::vector<std::int64_t> index(shape.size(), 0);
    w.write_chunk(index, std::as_bytes(std::span<const T>(chunk)));
    ++extra_arrays_;
  }

  void write_final_arrays() {
    write_strings("sample_id", in_.samples(), ctx_.samples_chunk, "samples");
    const auto contigs = in_.contigs();
    write_strings("contig_id", contigs, static_cast<std::int64_t>(contigs.size()), "contigs");
    const auto lengths = in_.contig_lengths();
    bool any = false;
    std::vector<std::int64_t> len;
    for (const auto& l : lengths) {
      any = any || l.has_value();
      len.push_back(l.value_or(0));
    }
    if (any) write_ints("contig_length", len, {static_cast<std::int64_t>(len.size())}, {"contigs"});
    write_strings("filter_id", filter_names_, static_cast<std::int64_t>(filter_names_.size()),
                  "filters");
    write_strings("filter_description", filter_descriptions_,
                  static_cast<std::int64_t>(filter_names_.size()), "filters");
    std::vector<std::int32_t> rows;
    for (const auto& r : region_index_)
      for (auto v : r) rows.push_back(static_cast<std::int32_t>(v));
    write_ints("region_index", rows,
               {static_cast<std::int64_t>(region_index_.size()), kRegionIndexFields},
               {"region_index_values", "region_index_fields"});
  }

  ConvertOptions options_;
  unsigned threads_;
  VcfInput in_;
  fs::path root_;
  ThreadPool pool_;
  std::shared_ptr<const zarr::DirectoryStoreWriter> store_;
  std::int64_t samples_ = 0;
  EncodeContext ctx_;
  std::vector<Column> columns_;
  std::size_t allele_col_ = 0, filter_col_ = 0;
  int genotype_col_ = -1, phased_col_ = -1, mask_col_ = -1;
  std::vector<int> info_columns_, format_columns_, filter_columns_;
  std::vector<std::string> filter_names_, filter_descriptions_;
  std::vector<std::pair<int, std::int64_t>> scratch_;
  std::set<int> unconverted_;
  std::vector<bool> contig_done_;
  int last_rid_ = -1;
  std::int64_t last_pos_ = -1;
  std::vector<std::array<std::int64_t, kRegionIndexFields>> region_index_;
  std::int64_t variants_read_ = 0, variants_written_ = 0;
  bool dims_initialised_ = false;
  std::int64_t extra_arrays_ = 0;
  ConvertReport report_;
};

}  // namespace

ConvertReport vcf_to_vcz(const std::string& input, const std::filesystem::path& store_dir,
                         const ConvertOptions& options) {
  Converter c(input, store_dir, options);
  return c.run();
}

}  // namespace vczstats::convert
