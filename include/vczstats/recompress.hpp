#pragma once
/// @file recompress.hpp
/// @brief Rechunk and re-encode a Zarr store (any store our reader opens) into a new directory
/// store, streamed block by block, and compare two stores array by array.

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "vczstats/zarr_writer.hpp"

namespace vczstats::recompress {

/// @brief What to change.
struct RecompressOptions {
  /// @brief Arrays to re-encode (empty: all). The others keep their chunks and encoding: their
  /// keys are copied byte for byte, or, when the Zarr format changes, they are re-encoded with
  /// the default codec.
  std::vector<std::string> arrays;
  /// @brief The codec of re-encoded arrays (default: blosc zstd level 7).
  zarr::Compression compression;
  /// @brief Shuffle chosen per array: bit shuffle for 1-byte elements (genotypes, bools),
  /// byte shuffle otherwise (bio2zarr's choice). When false, compression.shuffle applies.
  bool auto_shuffle = true;
  std::int64_t variants_chunk_size = 0;  ///< dimension "variants"; 0 keeps the input's
  std::int64_t samples_chunk_size = 0;   ///< dimension "samples"; 0 keeps the input's
  int zarr_format = 0;                   ///< 2 or 3; 0 keeps the input's
  unsigned threads = 0;                  ///< 0 = all cores
  /// @brief Upper bound of the decoded block held per step (grown to one block of the least
  /// common multiple of the input and output chunk shapes when that is larger).
  std::int64_t block_bytes = std::int64_t{256} << 20;
  /// @brief Called after each block: decoded bytes done and the total.
  std::function<void(std::int64_t done, std::int64_t total)> progress;
  /// @brief Polled between blocks; when it becomes true recompress() throws IoError.
  const std::atomic<bool>* cancelled = nullptr;
  /// @brief How to open the input when it is a URL (remote stores).
  zarr::StoreOptions input_store;
};

/// @brief What recompress() did.
struct RecompressReport {
  std::int64_t arrays = 0;     ///< arrays in the output
  std::int64_t rewritten = 0;  ///< re-encoded (the others copied byte for byte)
  std::int64_t variants = 0;   ///< extent of dimension "variants" (0 when none)
  std::uint64_t input_stored_bytes = 0;
  std::uint64_t output_stored_bytes = 0;
  std::uint64_t decoded_bytes = 0;  ///< numeric arrays' decoded size
  double seconds = 0;
  zarr::IoStats input_io;  ///< what reading a remote input fetched
};

/// @brief Recompress the store at @p input (a path or a URL) into a new directory store at
/// @p output_dir.
/// @throws UsageError for an unknown array name, FormatError/IoError from reading or writing.
RecompressReport recompress(const std::string& input, const std::filesystem::path& output_dir,
                            const RecompressOptions& options);

/// @brief Check that every array of @p a is in @p b with the same shape, data type, fill value,
/// attributes and values (any chunking or codec), and that the group attributes are equal;
/// reads block by block on @p threads threads.
/// @throws FormatError naming the first difference.
void verify_same(const std::string& a, const std::filesystem::path& b, unsigned threads = 0,
                 const zarr::StoreOptions& a_options = {});

}  // namespace vczstats::recompress
