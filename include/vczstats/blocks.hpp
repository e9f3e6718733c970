#pragma once
/// @file blocks.hpp
/// @brief Streaming access to the genotypes themselves: the selected variants of each work unit
/// of a query, over the selected samples, as dense blocks in host or device memory, decoded,
/// gathered (and copied to the device) ahead of the consumer on the shared thread pool. The
/// Python package's iter_chunks and materialize are this class.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "vczstats/device.hpp"
#include "vczstats/query.hpp"

namespace vczstats {

/// @brief How blocks are produced.
struct BlockStreamOptions {
  unsigned threads = 0;   ///< producer threads (0: all cores)
  unsigned prefetch = 0;  ///< blocks decoded ahead of the consumer (0: 2 x threads)
  /// Where blocks live: cpu (host memory) or gpu:N (device memory of CUDA device N; auto means
  /// the GPU when one is usable).
  DeviceSpec device{DeviceKind::Cpu, 0};
};

/// @brief One block: the selected variants of one work unit × the selected samples × ploidy,
/// signed integers of the store's width in C order (allele index, -1 missing, -2 fill). Owns its
/// memory through @ref owner (shared: hand it to whoever keeps the data alive).
struct GenotypeBlock {
  std::int64_t unit = 0;               ///< index of the work unit in the plan
  std::vector<std::int64_t> variant;   ///< global variant index of each row
  std::vector<std::int32_t> contig;    ///< contig index of each row
  std::vector<std::int64_t> position;  ///< 1-based POS of each row
  std::int64_t samples = 0;            ///< columns (selected samples, selection order)
  std::int64_t ploidy = 0;
  int elem_bytes = 1;           ///< 1, 2, 4 or 8
  bool on_device = false;       ///< data is device memory of CUDA device @ref device
  int device = 0;               ///< CUDA device index (when on_device)
  std::byte* data = nullptr;    ///< rows × samples × ploidy elements (null when empty)
  std::shared_ptr<void> owner;  ///< keeps data alive (device memory: freed on its stream)

  /// @brief Number of rows (variants).
  std::int64_t rows() const { return static_cast<std::int64_t>(variant.size()); }
  /// @brief Bytes of data.
  std::int64_t bytes() const { return rows() * samples * ploidy * elem_bytes; }
};

/// @brief Produces the blocks of a query's plan in plan order (one per work unit with a
/// selected variant): decoding, sample gathering and the host-to-device copy run on producer
/// tasks of the shared thread pool, at most prefetch blocks ahead. Producer errors reach next()
/// with their message. The query must outlive the stream.
class GenotypeBlockStream {
 public:
  /// @throws UsageError (a sites-only store, --device gpu without a usable GPU), CudaError.
  GenotypeBlockStream(const Query& q, const BlockStreamOptions& options);
  ~GenotypeBlockStream();
  GenotypeBlockStream(const GenotypeBlockStream&) = delete;
  GenotypeBlockStream& operator=(const GenotypeBlockStream&) = delete;

  /// @brief Number of blocks the stream yields.
  std::int64_t size() const;
  /// @brief Selected variants over all blocks.
  std::int64_t variants() const;
  /// @brief Selected samples (the columns of every block).
  std::int64_t samples() const;
  std::int64_t ploidy() const;
  int elem_bytes() const;
  /// @brief Whether blocks are in device memory, and of which device.
  bool on_device() const;
  int device() const;

  /// @brief The next block in plan order, or nullopt after the last. Blocks until it is ready.
  /// @throws what a producer threw (FormatError, IoError, CudaError), with its message.
  std::optional<GenotypeBlock> next();
  /// @brief Stop the producers (they finish the block in hand) and wait for them; next() then
  /// returns nullopt. Called by the destructor.
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// @brief Every selected variant of @p q in one block: the blocks of a host
/// GenotypeBlockStream copied in order into one buffer, then (options.device gpu) copied to
/// the device. @throws as GenotypeBlockStream.
GenotypeBlock materialize(const Query& q, const BlockStreamOptions& options);

}  // namespace vczstats
