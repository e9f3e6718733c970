#pragma once
/// @file columns.hpp
/// @brief Private: the arrays of a VCF Zarr store as the converter fills them ("columns"), a
/// chunk of htslib records, and the encoding of one chunk of one column from those records.

#include <htslib/vcf.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "convert/vcf_input.hpp"
#include "vczstats/zarr_writer.hpp"

namespace vczstats::convert::detail {

/// @brief Where a column's values come from.
enum class Source {
  Contig,
  Position,
  Length,
  Quality,
  Id,
  IdMask,
  Allele,
  Filter,
  Info,
  Format,
  Genotype,  ///< call_genotype; its task also writes call_genotype_phased and _mask
  GenotypePhased,
  GenotypeMask,
};

/// @brief One array being filled, chunk by chunk.
struct Column {
  std::string name;
  Source source = Source::Position;
  FieldDeclaration field;      ///< Info and Format columns
  bool per_sample = false;     ///< variants x samples [x dim]
  bool has_dim = false;        ///< a trailing dimension (alleles, ploidy, values...)
  bool split_strings = false;  ///< string values are comma-separated lists
  std::int64_t dim = 1;        ///< extent of the trailing dimension (1 when none)
  std::vector<std::byte> pad;  ///< element that pads a grown trailing dimension (numeric)
  std::unique_ptr<zarr::ArrayWriter> writer;
};

/// @brief Variant records of one chunk (reused: bcf1_t keep their buffers between chunks).
struct RecordChunk {
  std::vector<RecordPtr> records;
  std::int64_t size = 0;            ///< records in use
  std::int64_t index = 0;           ///< chunk index along the variants dimension
  std::vector<std::int64_t> dims;   ///< per column: largest trailing extent seen in the chunk
  std::vector<int> filter_columns;  ///< header FILTER id -> variant_filter column (-1: none)
  int max_allele_index = 0;         ///< largest GT allele index seen in the chunk
};

/// @brief What encoding needs besides the records.
struct EncodeContext {
  std::int64_t variants_chunk = 0;
  std::int64_t samples_chunk = 0;
  std::int64_t samples = 0;
  int gt_header_id = -1;
  const Column* phased = nullptr;  ///< written by the genotype task
  const Column* mask = nullptr;
};

/// @brief Encode and write chunk (chunk.index, sample_chunk) of @p column. Thread-safe.
void encode_column_chunk(const Column& column, const RecordChunk& chunk, std::int64_t sample_chunk,
                         const EncodeContext& ctx);

/// @brief Number of values a record holds for a field: the vector length (numbers), or for
/// comma-separated strings the number of items of the longest one.
std::int64_t value_count(const Column& column, const bcf_info_t* info, const bcf_fmt_t* fmt,
                         std::int64_t samples);

/// @brief The integer at index @p j of a BCF typed buffer (int8/16/32), and whether it is
/// htslib's missing value or vector end.
std::int32_t raw_int_at(const std::uint8_t* p, int type, std::int64_t j, bool& end, bool& missing);

/// @brief VCF Zarr's sentinels: missing and fill (padding) values.
constexpr std::int32_t kIntMissing = -1;
constexpr std::int32_t kIntFill = -2;
constexpr std::uint32_t kFloatMissingBits = 0x7F800001u;  // = htslib's bcf_float_missing
constexpr std::uint32_t kFloatFillBits = 0x7F800002u;     // = htslib's bcf_float_vector_end

}  // namespace vczstats::convert::detail
