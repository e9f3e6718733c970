#pragma once
/// @file vcz.hpp
/// @brief The VCF Zarr layer: samples, contigs, variants and call_genotype of a VCZ store, and
/// queries (regions, sample subsets) turned into a chunk plan.

#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vczstats/string_table.hpp"
#include "vczstats/zarr.hpp"

namespace vczstats::vcz {

/// @name Limits on what a store may declare
/// Checked when a store is opened, before anything is allocated for what the metadata claims,
/// so that a few bytes of hostile metadata give a clear error instead of exhausting memory or
/// time. Each is far beyond real data sets.
/// @{
/// @brief Largest ploidy (call_genotype's third dimension): per-call rules cost up to
/// O(ploidy^2) (bcftools' distinct alleles); real ploidies are below 100.
inline constexpr std::int64_t kMaxPloidy = 1024;
/// @brief Largest number of alleles (variant_allele's second dimension): htslib's own limit.
inline constexpr std::int64_t kMaxAlleles = 65535;
/// @brief Largest number of samples, and of contigs (their ids are read whole, 32+ bytes each).
inline constexpr std::int64_t kMaxSamples = std::int64_t{1} << 26;
/// @brief Largest number of variant chunks: a chunk plan holds one work unit per chunk (16.7
/// million chunks are 16.7e9 variants in bio2zarr's default chunks of 1000).
inline constexpr std::int64_t kMaxVariantChunks = std::int64_t{1} << 24;
/// @}

/// @brief What the elements of an array of the schema must be.
enum class ElementKind {
  Integer,  ///< signed or unsigned integers (bool too)
  Number,   ///< any numbers
  String,
};

/// @brief A genomic interval, 1-based and inclusive like bcftools' -r.
struct Region {
  std::string contig;
  std::int64_t start = 1;
  std::int64_t end = std::numeric_limits<std::int64_t>::max();
  /// @brief The text it was parsed from: a contig whose name contains ':' matches it whole.
  std::string spec;
};

/// @brief Parse bcftools-style regions: "chr", "chr:pos", "chr:beg-end", "chr:beg-", separated
/// by commas. @throws UsageError on malformed input.
std::vector<Region> parse_regions(std::string_view spec);

/// @brief Read a regions file like bcftools -R: tab-separated CHROM POS or CHROM BEG END (1-based,
/// inclusive); files named *.bed or *.bed.gz are BED (0-based, half-open). '#' lines skipped.
std::vector<Region> read_regions_file(const std::filesystem::path& path);

/// @brief Which records a region selects, as bcftools --regions-overlap.
enum class RegionOverlap {
  Pos,     ///< POS lies in the region
  Record,  ///< [POS, POS + rlen - 1] overlaps the region (bcftools -r default)
};

/// @brief A unit of work: a range of variants inside one variant chunk of call_genotype, with an
/// optional mask when only some variants of the range are selected.
struct WorkUnit {
  std::int64_t chunk = 0;          ///< variant chunk index of call_genotype
  std::int64_t begin = 0;          ///< first variant (global index)
  std::int64_t end = 0;            ///< one past the last variant (global index)
  std::vector<std::uint8_t> mask;  ///< empty: all of [begin, end); else one flag per variant
  std::int64_t size() const { return end - begin; }
  /// @brief Number of selected variants.
  std::int64_t selected() const;
};

/// @brief The ordered list of work units a query reads.
struct ChunkPlan {
  std::vector<WorkUnit> units;
  /// @brief Total number of selected variants.
  std::int64_t selected_variants() const;
};

/// @brief Selected samples: indices into the store's samples axis, without hidden ("") samples,
/// grouped by sample chunk in ascending chunk order. Ascending overall, except after
/// apply_populations, which orders each chunk's samples by population.
struct SampleSelection {
  std::vector<std::int64_t> indices;
  std::int64_t size() const { return static_cast<std::int64_t>(indices.size()); }
};

/// @brief Seconds spent in the setup steps of a query, before its scan (shown by -v).
struct SetupTimes {
  double open_store = 0;    ///< the store's metadata, contigs and arrays (sample_id aside)
  double read_samples = 0;  ///< reading sample_id
  double selection = 0;     ///< -s/-S: reading the list, matching names, building the selection
  double populations = 0;   ///< -P: reading the file, matching, grouping by chunk and population
  /// @brief All steps together.
  double total() const { return open_store + read_samples + selection + populations; }
};

/// @brief An opened VCF Zarr store.
class VczStore {
 public:
  /// @brief Open a directory or zip store, or a URL (http(s)://, s3://, gs://; see
  /// zarr::open_store), and check that it is VCF Zarr (sample_id, variant_position, contig_id;
  /// call_genotype unless the store is sites-only): dimensions, element types, matching lengths,
  /// valid UTF-8 ids, and the limits above. When @p times is given, its open_store and
  /// read_samples are set. @throws IoError, FormatError.
  static VczStore open(const std::string& path, const zarr::StoreOptions& options = {},
                       SetupTimes* times = nullptr);

  const std::string& path() const { return path_; }
  const zarr::Store& store() const { return *store_; }
  std::shared_ptr<const zarr::Store> store_ptr() const { return store_; }
  int zarr_format() const { return zarr_format_; }
  /// @brief vcf_zarr_version attribute ("" when absent, as in pre-spec sgkit stores).
  const std::string& vcf_zarr_version() const { return vcf_zarr_version_; }
  const nlohmann::json& attributes() const { return attributes_; }

  std::int64_t num_variants() const;
  /// @brief Length of the samples axis, hidden samples included.
  std::int64_t num_samples_total() const;
  /// @brief Length of the ploidy axis of call_genotype (0 for a sites-only store).
  std::int64_t ploidy() const;
  /// @brief sample_id for every position of the samples axis ("" = hidden), in one buffer.
  const StringTable& sample_ids() const;
  /// @brief The index of the visible sample named by each of @p names (-1: none), in one
  /// batched pass; names listed in store order match without a lookup. The first call builds
  /// a hash index of the names (8 to 16 bytes per sample; thread-safe). @throws FormatError when
  /// two visible samples share a name.
  std::vector<std::int64_t> find_samples(const StringTable& names) const;
  const std::vector<std::string>& contig_ids() const { return contig_ids_; }
  /// @brief The index of contig @p name, or nullopt when the store has no such contig.
  std::optional<std::int32_t> find_contig(std::string_view name) const;
  /// @brief contig_length, when the store has it.
  const std::optional<std::vector<std::int64_t>>& contig_lengths() const { return contig_lengths_; }

  /// @brief Whether the store has call_genotype (a sites-only store has none).
  bool has_genotypes() const { return has_genotypes_; }
  /// @brief call_genotype. @throws FormatError for a sites-only store.
  const zarr::Array& genotypes() const;
  /// @brief Any array of the store by name, or nullopt when absent.
  std::optional<zarr::Array> array(const std::string& name) const;
  /// @brief A per-variant array of the schema (variant_contig, variant_allele...), or nullopt
  /// when absent. @throws FormatError naming the array unless it has @p ndim dimensions, one
  /// entry per variant along the first, and elements of @p kind.
  std::optional<zarr::Array> variant_array(const std::string& name, int ndim,
                                           ElementKind kind) const;
  /// @brief Names of all arrays of the store.
  std::vector<std::string> array_names() const;

  /// @brief All visible samples (sample_id != "").
  SampleSelection all_samples() const;
  /// @brief Samples named in @p names (bcftools -s semantics; a leading '^' on the first name
  /// excludes the listed samples instead; a name listed twice counts once), ascending. Linear
  /// in the number of names and samples. @throws UsageError for an unknown name unless
  /// @p ignore_missing, and when nothing is selected.
  SampleSelection select_samples(const StringTable& names, bool ignore_missing = false) const;

  /// @brief One row of region_index (bio2zarr's layout): the records of one contig in one
  /// variant chunk. records is -1 in an index of five columns.
  struct RegionIndexRow {
    std::int64_t chunk, contig, first, last, max_end, records;
  };
  /// @brief The rows of region_index, or none when the store has no usable one: not a 2-D
  /// integer array of 5 to 64 columns, or far longer than one row per chunk and contig (it only
  /// saves reads: a few bytes of metadata must not make us read gigabytes). Reads the array.
  std::vector<RegionIndexRow> region_index() const;

  /// @brief The chunk plan for the whole store (@p regions empty) or for regions. Units never
  /// span two variant chunks and hold at most @p max_unit_variants variants (0: a whole chunk).
  /// Contigs named in regions but absent from the store are reported through @p missing_contigs.
  ChunkPlan plan(const std::vector<Region>& regions, RegionOverlap overlap,
                 std::int64_t max_unit_variants = 0,
                 std::vector<std::string>* missing_contigs = nullptr) const;

 private:
  std::string path_;
  std::shared_ptr<const zarr::Store> store_;
  int zarr_format_ = 2;
  std::string vcf_zarr_version_;
  nlohmann::json attributes_;
  bool has_genotypes_ = false;
  zarr::Array genotypes_;
  zarr::Array positions_;
  struct Samples;                     // sample_id and its name index, built on first use
  std::shared_ptr<Samples> samples_;  // shared by copies of the store
  std::vector<std::string> contig_ids_;
  std::unordered_map<std::string, std::int32_t> contig_index_;
  std::optional<std::vector<std::int64_t>> contig_lengths_;
};

/// @brief How many genotype calls a store's call_genotype_phased marks unphased (a zero flag).
struct Phasing {
  bool present = false;  ///< the store has call_genotype_phased (2-D, not strings)
  std::int64_t calls = 0, unphased = 0;
  std::int64_t chunks_read = 0, chunks_total = 0;  ///< fewer read than total: a sample
  /// @brief "phased", "unphased", "partly phased (N of M calls unphased)" (with the chunks read
  /// when not all were), "haploid (phasing does not apply)" or "no genotype calls".
  std::string describe(const VczStore& store) const;
};

/// @brief Count the phasing of @p store's calls over every chunk of call_genotype_phased when it
/// decodes to at most @p budget_bytes, else over evenly spaced chunks of about that size in all,
/// decoding the chunks through @p executor.
Phasing count_phasing(const VczStore& store, zarr::Executor& executor,
                      std::int64_t budget_bytes = std::int64_t{4} << 30);

/// @brief Split a comma-separated list ("a,b,c"); empty items are dropped.
std::vector<std::string> split_list(std::string_view s, char sep = ',');

/// @brief Read sample names from a file, one per line (first whitespace-separated column; lines
/// whose first column starts with '#' are skipped), in one pass into one buffer.
StringTable read_samples_file(const std::filesystem::path& path);

}  // namespace vczstats::vcz
