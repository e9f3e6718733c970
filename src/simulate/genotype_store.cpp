// The genotypes-only VCF Zarr layout (see genotype_store.hpp), written without htslib.

#include "simulate/genotype_store.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "simulate/random.hpp"
#include "vczstats/error.hpp"

namespace vczstats::simulate::detail {
namespace {

using zarr::DataKind;
using zarr::DataType;

constexpr std::uint32_t kFloatMissingBits = 0x7F800001u;  // VCF Zarr's missing float (htslib's)

zarr::Compression blosc(bool bits) {
  zarr::Compression c;
  c.blosc_cname = "zstd";
  c.level = 7;
  c.shuffle = bits ? zarr::Shuffle::Bit : zarr::Shuffle::Byte;
  return c;
}

/// A VCF header describing the store (bio2zarr keeps the source's; vcztools reads it).
std::string vcf_header(const GenotypeStoreSpec& s) {
  std::string h = "##fileformat=VCFv4.3\n##FILTER=<ID=PASS,Description=\"All filters passed\">\n";
  for (std::size_t i = 0; i < s.contigs.size(); ++i)
    h += fmt::format("##contig=<ID={},length={}>\n", s.contigs[i], s.contig_lengths[i]);
  h += "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n";
  h += fmt::format("##source={}\n", s.source);
  h += "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\n";
  return h;
}

}  // namespace

GenotypeStoreWriter::GenotypeStoreWriter(const std::filesystem::path& root, GenotypeStoreSpec spec)
    : spec_(std::move(spec)) {
  if (spec_.variants_chunk < 1 || spec_.samples_chunk < 1)
    throw UsageError("chunk sizes must be positive");
  if (spec_.ploidy < 1 || spec_.ploidy > 64)
    throw UsageError(fmt::format("ploidy {} (expected 1 to 64)", spec_.ploidy));
  if (spec_.zarr_format != 2 && spec_.zarr_format != 3)
    throw UsageError(fmt::format("--zarr-format {} (expected 2 or 3)", spec_.zarr_format));
  if (spec_.contigs.size() != spec_.contig_lengths.size())
    throw UsageError("a length is needed for every contig");
  spec_.samples_chunk = std::min(spec_.samples_chunk, std::max<std::int64_t>(spec_.samples, 1));
  store_ = std::make_shared<const zarr::DirectoryStoreWriter>(root);
  nlohmann::json attrs = {
      {"vcf_zarr_version", "0.4"}, {"source", spec_.source}, {"vcf_header", vcf_header(spec_)}};
  for (const auto& [k, v] : spec_.extra_attributes.items()) attrs[k] = v;
  zarr::write_group(*store_, spec_.zarr_format, attrs);

  const DataType i32{DataKind::Int, 4}, b{DataKind::Bool, 1}, str{DataKind::String, 0};
  const auto no = zarr::fill_of(std::uint8_t{0});
  contig_ = variant_array("variant_contig", i32, {},
                          "An identifier from the reference genome or an angle-bracketed ID "
                          "string pointing to a contig in the assembly file");
  position_ = variant_array("variant_position", i32, {}, "The reference position");
  length_ = variant_array("variant_length", i32, {}, "The length of the variant measured in bases");
  quality_ = variant_array("variant_quality", DataType{DataKind::Float, 4},
                           zarr::fill_of(std::numeric_limits<float>::quiet_NaN()),
                           "Phred-scaled quality score");
  id_ = variant_array("variant_id", str, {}, "List of unique identifiers where applicable");
  id_mask_ = variant_array("variant_id_mask", b, no, "True where the variant has no identifier");
  allele_ = variant_array("variant_allele", str, {}, "List of the reference and alternate alleles",
                          2, "alleles");
  filter_ = variant_array("variant_filter", b, no, "Filter status of the variant", 1, "filters");

  auto per_call = [&](const std::string& name, DataType dtype, std::vector<std::byte> fill,
                      bool ploidy_dim, const std::string& description) {
    zarr::ArrayDefinition d;
    d.dtype = dtype;
    d.shape = {spec_.variants, spec_.samples};
    d.chunks = {spec_.variants_chunk, spec_.samples_chunk};
    d.dimension_names = {"variants", "samples"};
    if (ploidy_dim) {
      d.shape.push_back(spec_.ploidy);
      d.chunks.push_back(spec_.ploidy);
      d.dimension_names.push_back("ploidy");
    }
    d.compression = blosc(true);
    d.fill_value = std::move(fill);
    d.attributes = {{"description", description}};
    return std::make_unique<zarr::ArrayWriter>(store_, name, spec_.zarr_format, std::move(d));
  };
  genotype_ = per_call("call_genotype", DataType{DataKind::Int, 1}, zarr::fill_of(std::int8_t{-1}),
                       true, "");
  phased_ = per_call("call_genotype_phased", b, no, false, "");
  mask_ = per_call("call_genotype_mask", b, no, true, "");
  if (spec_.quality) {
    gq_ = per_call("call_GQ", DataType{DataKind::Int, 1}, zarr::fill_of(std::int8_t{-1}), false,
                   "Conditional genotype quality");
    dp_ = per_call("call_DP", DataType{DataKind::Int, 1}, zarr::fill_of(std::int8_t{-1}), false,
                   "Read depth");
  }
}

std::unique_ptr<zarr::ArrayWriter> GenotypeStoreWriter::variant_array(
    const std::string& name, zarr::DataType dtype, std::vector<std::byte> fill,
    const std::string& description, std::int64_t trailing, const std::string& trailing_name) {
  zarr::ArrayDefinition d;
  d.dtype = dtype;
  d.shape = {spec_.variants};
  d.chunks = {spec_.variants_chunk};
  d.dimension_names = {"variants"};
  if (trailing > 0) {
    d.shape.push_back(trailing);
    d.chunks.push_back(trailing);
    d.dimension_names.push_back(trailing_name);
  }
  d.compression = blosc(dtype.kind == DataKind::Bool);
  d.fill_value = std::move(fill);
  d.attributes = {{"description", description}};
  return std::make_unique<zarr::ArrayWriter>(store_, name, spec_.zarr_format, std::move(d));
}

std::int64_t GenotypeStoreWriter::variant_chunks() const {
  return (spec_.variants + spec_.variants_chunk - 1) / spec_.variants_chunk;
}

std::int64_t GenotypeStoreWriter::sample_chunks() const {
  return (spec_.samples + spec_.samples_chunk - 1) / spec_.samples_chunk;
}

std::int64_t GenotypeStoreWriter::genotype_chunk_elements() const {
  return spec_.variants_chunk * spec_.samples_chunk * spec_.ploidy;
}

void GenotypeStoreWriter::write_samples(const std::vector<std::string>& ids) const {
  if (static_cast<std::int64_t>(ids.size()) != spec_.samples)
    throw UsageError(fmt::format("{} sample names for {} samples", ids.size(), spec_.samples));
  zarr::ArrayDefinition d;
  d.dtype = {DataKind::String, 0};
  d.shape = {spec_.samples};
  d.chunks = {spec_.samples_chunk};
  d.dimension_names = {"samples"};
  d.compression = blosc(false);
  const zarr::ArrayWriter w(store_, "sample_id", spec_.zarr_format, d);
  for (std::int64_t c = 0; c < sample_chunks(); ++c) {
    std::vector<std::string> part(static_cast<std::size_t>(spec_.samples_chunk));
    const std::int64_t s0 = c * spec_.samples_chunk;
    for (std::int64_t i = 0; i < spec_.samples_chunk && s0 + i < spec_.samples; ++i)
      part[static_cast<std::size_t>(i)] = ids[static_cast<std::size_t>(s0 + i)];
    w.write_chunk_strings(std::vector<std::int64_t>{c}, part);
  }
}

void GenotypeStoreWriter::write_variants(std::int64_t chunk, const VariantRows& rows) {
  const auto n = static_cast<std::int64_t>(rows.position.size());
  if (chunk < 0 || chunk >= variant_chunks() ||
      n != std::min(spec_.variants_chunk, spec_.variants - chunk * spec_.variants_chunk) ||
      static_cast<std::int64_t>(rows.contig.size()) != n ||
      static_cast<std::int64_t>(rows.ref.size()) != n ||
      static_cast<std::int64_t>(rows.alt.size()) != n)
    throw UsageError(fmt::format("variant chunk {}: {} rows do not fit", chunk, n));
  const auto full = static_cast<std::size_t>(spec_.variants_chunk);
  const std::vector<std::int64_t> i1 = {chunk}, i2 = {chunk, 0};
  auto ints = [&](const zarr::ArrayWriter& w, auto&& value) {
    std::vector<std::int32_t> v(full, 0);
    for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = value(i);
    w.write_chunk(i1, std::as_bytes(std::span<const std::int32_t>(v)));
  };
  ints(*contig_, [&](std::int64_t i) { return rows.contig[static_cast<std::size_t>(i)]; });
  ints(*position_, [&](std::int64_t i) { return rows.position[static_cast<std::size_t>(i)]; });
  ints(*length_, [](std::int64_t) { return 1; });
  std::vector<std::uint32_t> quality(full, 0x7fc00000u);  // the fill (NaN) beyond the edge
  std::fill_n(quality.begin(), n, kFloatMissingBits);
  quality_->write_chunk(i1, std::as_bytes(std::span<const std::uint32_t>(quality)));
  std::vector<std::uint8_t> flags(full, 0);
  std::fill_n(flags.begin(), n, std::uint8_t{1});
  id_mask_->write_chunk(i1, std::as_bytes(std::span<const std::uint8_t>(flags)));
  filter_->write_chunk(i2, std::as_bytes(std::span<const std::uint8_t>(flags)));
  const std::string missing_id = ".";
  std::vector<std::string> ids(full);
  for (std::int64_t i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = missing_id;
  id_->write_chunk_strings(i1, ids);
  std::vector<std::string> alleles(2 * full);
  for (std::int64_t i = 0; i < n; ++i) {
    alleles[static_cast<std::size_t>(2 * i)] =
        std::string(1, rows.ref[static_cast<std::size_t>(i)]);
    alleles[static_cast<std::size_t>(2 * i + 1)] =
        std::string(1, rows.alt[static_cast<std::size_t>(i)]);
  }
  allele_->write_chunk_strings(i2, alleles);

  // region_index: one row per (chunk, contig) run.
  std::lock_guard lock(mutex_);
  for (std::int64_t i = 0; i < n;) {
    std::int64_t j = i;
    while (j + 1 < n &&
           rows.contig[static_cast<std::size_t>(j + 1)] == rows.contig[static_cast<std::size_t>(i)])
      ++j;
    const std::int32_t first = rows.position[static_cast<std::size_t>(i)];
    const std::int32_t last = rows.position[static_cast<std::size_t>(j)];
    region_index_.push_back({static_cast<std::int32_t>(chunk),
                             rows.contig[static_cast<std::size_t>(i)], first, last, last,
                             static_cast<std::int32_t>(j - i + 1)});
    i = j + 1;
  }
}

void GenotypeStoreWriter::write_genotypes(std::int64_t chunk, std::int64_t sample_chunk,
                                          std::span<std::int8_t> gt,
                                          std::vector<std::uint8_t>& scratch) const {
  const std::int64_t vc = spec_.variants_chunk, sc = spec_.samples_chunk, p = spec_.ploidy;
  if (static_cast<std::int64_t>(gt.size()) != genotype_chunk_elements())
    throw UsageError(fmt::format("genotype chunk of {} values, expected {}", gt.size(),
                                 genotype_chunk_elements()));
  const std::int64_t rows = std::min(vc, spec_.variants - chunk * vc);
  const std::int64_t cols = std::min(sc, spec_.samples - sample_chunk * sc);
  // Beyond the edges: the fill value, so that edge chunks compress and compare as zarr's do.
  for (std::int64_t r = 0; r < vc; ++r) {
    std::int8_t* row = gt.data() + r * sc * p;
    if (r >= rows)
      std::fill_n(row, sc * p, std::int8_t{-1});
    else if (cols < sc)
      std::fill_n(row + cols * p, (sc - cols) * p, std::int8_t{-1});
  }
  const std::vector<std::int64_t> i3 = {chunk, sample_chunk, 0}, i2 = {chunk, sample_chunk};
  genotype_->write_chunk(i3, std::as_bytes(gt));
  // Mask (vc x sc x p) then phased (vc x sc) in one scratch buffer; fill (false) beyond edges.
  scratch.resize(static_cast<std::size_t>(vc * sc * (p + 1)));
  std::uint8_t* mask = scratch.data();
  std::uint8_t* phased = scratch.data() + vc * sc * p;
  unsigned char any_missing = 0;  // sign bits of every allele, OR-ed (vectorises)
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto* g = reinterpret_cast<const unsigned char*>(gt.data() + r * sc * p);
    for (std::int64_t i = 0; i < cols * p; ++i) any_missing |= g[i];
  }
  if ((any_missing & 0x80) == 0) {
    mask_->write_fill_chunk(i3);  // all false: not stored
  } else {
    for (std::int64_t r = 0; r < vc; ++r) {
      const std::int8_t* g = gt.data() + r * sc * p;
      std::uint8_t* m = mask + r * sc * p;
      const std::int64_t n = r < rows ? cols * p : 0;
      for (std::int64_t i = 0; i < n; ++i) m[i] = g[i] < 0;
      std::fill(m + n, m + sc * p, std::uint8_t{0});
    }
    mask_->write_chunk(i3, std::as_bytes(std::span<const std::uint8_t>(mask, vc * sc * p)));
  }
  for (std::int64_t r = 0; r < vc; ++r) {
    const std::int8_t* g = gt.data() + r * sc * p;
    std::uint8_t* ph = phased + r * sc;
    const std::int64_t n = r < rows ? cols : 0;
    for (std::int64_t s = 0; s < n; ++s) {
      int missing = 0;
      for (std::int64_t j = 0; j < p; ++j) missing += g[s * p + j] < 0;
      ph[s] = missing < p;
    }
    std::fill(ph + n, ph + sc, std::uint8_t{0});
  }
  phased_->write_chunk(i2, std::as_bytes(std::span<const std::uint8_t>(phased, vc * sc)));
  if (spec_.quality) write_quality(chunk, sample_chunk, rows, cols);
}

void GenotypeStoreWriter::write_quality(std::int64_t chunk, std::int64_t sample_chunk,
                                        std::int64_t rows, std::int64_t cols) const {
  const std::int64_t vc = spec_.variants_chunk, sc = spec_.samples_chunk;
  std::vector<std::int8_t> gq(static_cast<std::size_t>(vc * sc), -1), dp(gq.size(), -1);
  for (std::int64_t r = 0; r < rows; ++r) {
    // One hash per call (variant, sample): GQ from its low bits, DP from its high bits.
    const std::uint64_t key = hash_key({spec_.seed, 0x6751ull, std::uint64_t(chunk * vc + r)});
    for (std::int64_t s = 0; s < cols; ++s) {
      const std::uint64_t h = mix64(key + std::uint64_t(sample_chunk * sc + s));
      gq[static_cast<std::size_t>(r * sc + s)] = static_cast<std::int8_t>(h % 100);
      dp[static_cast<std::size_t>(r * sc + s)] = static_cast<std::int8_t>((h >> 32) % 50);
    }
  }
  const std::vector<std::int64_t> i2 = {chunk, sample_chunk};
  gq_->write_chunk(i2, std::as_bytes(std::span<const std::int8_t>(gq)));
  dp_->write_chunk(i2, std::as_bytes(std::span<const std::int8_t>(dp)));
}

void GenotypeStoreWriter::small_array(const std::string& name, zarr::DataType dtype,
                                      std::span<const std::byte> values,
                                      std::vector<std::int64_t> shape,
                                      std::vector<std::string> dims) {
  zarr::ArrayDefinition d;
  d.dtype = dtype;
  d.shape = shape;
  d.chunks = shape;
  d.chunks[0] = std::max<std::int64_t>(d.chunks[0], 1);
  d.dimension_names = std::move(dims);
  d.compression = blosc(false);
  const zarr::ArrayWriter w(store_, name, spec_.zarr_format, d);
  std::vector<std::byte> chunk(static_cast<std::size_t>(w.chunk_elements() * dtype.size),
                               std::byte{0});
  std::copy(values.begin(), values.end(), chunk.begin());
  w.write_chunk(std::vector<std::int64_t>(shape.size(), 0), chunk);
  other_bytes_ += w.stored_bytes();
}

void GenotypeStoreWriter::small_strings(const std::string& name,
                                        const std::vector<std::string>& values,
                                        const std::string& dim) {
  zarr::ArrayDefinition d;
  d.dtype = {DataKind::String, 0};
  d.shape = {static_cast<std::int64_t>(values.size())};
  d.chunks = {std::max<std::int64_t>(d.shape[0], 1)};
  d.dimension_names = {dim};
  d.compression = blosc(false);
  const zarr::ArrayWriter w(store_, name, spec_.zarr_format, d);
  std::vector<std::string> chunk = values;
  chunk.resize(static_cast<std::size_t>(d.chunks[0]));
  w.write_chunk_strings(std::vector<std::int64_t>{0}, chunk);
  other_bytes_ += w.stored_bytes();
}

void GenotypeStoreWriter::finish() {
  small_strings("contig_id", spec_.contigs, "contigs");
  small_array("contig_length", DataType{DataKind::Int, 8},
              std::as_bytes(std::span<const std::int64_t>(spec_.contig_lengths)),
              {static_cast<std::int64_t>(spec_.contig_lengths.size())}, {"contigs"});
  small_strings("filter_id", {"PASS"}, "filters");
  small_strings("filter_description", {"All filters passed"}, "filters");
  std::lock_guard lock(mutex_);
  std::sort(region_index_.begin(), region_index_.end());
  std::vector<std::int32_t> flat;
  for (const auto& r : region_index_) flat.insert(flat.end(), r.begin(), r.end());
  small_array("region_index", DataType{DataKind::Int, 4},
              std::as_bytes(std::span<const std::int32_t>(flat)),
              {static_cast<std::int64_t>(region_index_.size()), 6},
              {"region_index_values", "region_index_fields"});
}

std::uint64_t GenotypeStoreWriter::stored_bytes() const {
  std::uint64_t n = other_bytes_;
  for (const auto* w : {&contig_, &position_, &length_, &allele_, &id_, &id_mask_, &quality_,
                        &filter_, &genotype_, &phased_, &mask_})
    n += (*w)->stored_bytes();
  return n;
}

std::uint64_t GenotypeStoreWriter::genotype_stored_bytes() const {
  return genotype_->stored_bytes();
}

}  // namespace vczstats::simulate::detail
