#pragma once
/// @file convert.hpp
/// @brief VCF / VCF.gz / BCF to VCF Zarr (the layout bio2zarr writes, vcf_zarr_version 0.4),
/// streamed: one variant chunk of records is held at a time while the previous one is encoded
/// on a thread pool.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace vczstats::convert {

/// @brief How to convert.
struct ConvertOptions {
  std::int64_t variants_chunk_size = 1000;  ///< bio2zarr's default
  std::int64_t samples_chunk_size = 10000;  ///< bio2zarr's default
  int zarr_format = 2;                      ///< 2 or 3
  unsigned threads = 0;                     ///< encoding threads (0 = all cores)
  bool skip_bad = false;                    ///< count and skip malformed records instead of failing
  /// @brief Called now and then with the records converted so far and the fraction of the
  /// input read (negative when unknown, e.g. a pipe).
  std::function<void(std::int64_t variants, double fraction)> progress;
  /// @brief Polled between records; when it becomes true the conversion stops with an error.
  const std::atomic<bool>* cancelled = nullptr;
};

/// @brief What a conversion wrote.
struct ConvertReport {
  std::int64_t variants = 0;
  std::int64_t samples = 0;
  std::int64_t skipped = 0;  ///< malformed records skipped (--skip-bad)
  int ploidy = 0;            ///< 0 without genotypes
  int max_alleles = 0;
  std::int64_t arrays = 0;
  std::int64_t calls = 0;     ///< variants x samples x ploidy
  std::int64_t rewrites = 0;  ///< arrays re-encoded because a dimension or width grew
  std::uint64_t stored_bytes = 0;
  double seconds = 0;
  std::vector<std::string> warnings;
};

/// @brief Convert @p input (VCF, bgzipped VCF or BCF; "-" is standard input) into a directory
/// store at @p store_dir (created; it should not exist).
/// @throws FormatError naming the file, the record (line or number, contig:position) and the
/// reason for a malformed record (unless skip_bad) or unsorted input; IoError for I/O failures.
ConvertReport vcf_to_vcz(const std::string& input, const std::filesystem::path& store_dir,
                         const ConvertOptions& options);

}  // namespace vczstats::convert
