#pragma once
/// @file genotype_store.hpp
/// @brief Private: writes a genotypes-only VCF Zarr store in the layout `vczstats convert` and
/// bio2zarr write (vcf_zarr_version 0.4), for stores whose shape is known up front (simulate,
/// ms input). No htslib. Variant rows and genotype chunks may be written from any thread, in
/// any order; finish() writes what depends on every chunk (region_index).

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "vczstats/zarr_writer.hpp"

namespace vczstats::simulate::detail {

/// @brief The fixed shape and chunking of the store.
struct GenotypeStoreSpec {
  std::int64_t samples = 0;
  std::int64_t variants = 0;
  int ploidy = 2;
  std::int64_t variants_chunk = 1000;
  std::int64_t samples_chunk = 10000;
  int zarr_format = 2;
  std::vector<std::string> contigs;
  std::vector<std::int64_t> contig_lengths;
  std::string source;      ///< group attribute "source"
  bool quality = false;    ///< write call_GQ and call_DP (SimulateOptions::quality)
  std::uint64_t seed = 0;  ///< of call_GQ/call_DP's values
  nlohmann::json extra_attributes = nlohmann::json::object();  ///< merged into the group's
};

/// @brief One variant chunk's rows of the per-variant arrays (biallelic sites, REF and ALT).
struct VariantRows {
  std::span<const std::int32_t> contig;    ///< index into GenotypeStoreSpec::contigs
  std::span<const std::int32_t> position;  ///< 1-based
  std::span<const char> ref, alt;          ///< one letter each
};

/// @brief Writes the arrays; see the file comment.
class GenotypeStoreWriter {
 public:
  /// @brief Create the store at @p root (group metadata and every array's metadata).
  GenotypeStoreWriter(const std::filesystem::path& root, GenotypeStoreSpec spec);

  const GenotypeStoreSpec& spec() const { return spec_; }
  std::int64_t variant_chunks() const;
  std::int64_t sample_chunks() const;
  /// @brief int8 elements of one full genotype chunk: variants_chunk x samples_chunk x ploidy.
  std::int64_t genotype_chunk_elements() const;

  /// @brief Write sample_id (@p ids.size() == samples).
  void write_samples(const std::vector<std::string>& ids) const;
  /// @brief Write variant chunk @p chunk of variant_contig, variant_position, variant_length,
  /// variant_allele, variant_id(_mask), variant_quality and variant_filter. Thread-safe.
  void write_variants(std::int64_t chunk, const VariantRows& rows);
  /// @brief Write genotype chunk (@p chunk, @p sample_chunk) of call_genotype from @p gt (a full
  /// chunk, C order; the part beyond the array's edges is overwritten with the fill value), and
  /// the matching chunks of call_genotype_mask (allele < 0) and call_genotype_phased (true
  /// unless every allele of the call is missing). @p scratch is reused between calls.
  /// Thread-safe.
  void write_genotypes(std::int64_t chunk, std::int64_t sample_chunk, std::span<std::int8_t> gt,
                       std::vector<std::uint8_t>& scratch) const;
  /// @brief Write contig_id, contig_length, filter_id, filter_description and region_index.
  void finish();

  /// @brief Stored bytes of every array written so far, and of call_genotype.
  std::uint64_t stored_bytes() const;
  std::uint64_t genotype_stored_bytes() const;

 private:
  void write_quality(std::int64_t chunk, std::int64_t sample_chunk, std::int64_t rows,
                     std::int64_t cols) const;
  std::unique_ptr<zarr::ArrayWriter> variant_array(const std::string& name, zarr::DataType dtype,
                                                   std::vector<std::byte> fill,
                                                   const std::string& description,
                                                   std::int64_t trailing = 0,
                                                   const std::string& trailing_name = "");
  void small_array(const std::string& name, zarr::DataType dtype, std::span<const std::byte> values,
                   std::vector<std::int64_t> shape, std::vector<std::string> dims);
  void small_strings(const std::string& name, const std::vector<std::string>& values,
                     const std::string& dim);

  GenotypeStoreSpec spec_;
  std::shared_ptr<const zarr::DirectoryStoreWriter> store_;
  std::unique_ptr<zarr::ArrayWriter> contig_, position_, length_, allele_, id_, id_mask_, quality_,
      filter_, genotype_, phased_, mask_, gq_, dp_;
  std::uint64_t other_bytes_ = 0;
  std::mutex mutex_;
  /// region_index rows: chunk, contig, first POS, last POS, max END, records.
  std::vector<std::array<std::int32_t, 6>> region_index_;
};

}  // namespace vczstats::simulate::detail
