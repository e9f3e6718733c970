#pragma once
/// @file metadata.hpp
/// @brief Private: reading an array's metadata document (v2 .zarray/.zattrs, v3 zarr.json)
/// into ArrayMetadata, a codec pipeline and its chunk key encoding.

#include <memory>
#include <string>

#include "vczstats/zarr.hpp"
#include "zarr/pipeline.hpp"

namespace vczstats::zarr::detail {

/// @brief How chunk indices become store keys.
struct ChunkKeyEncoding {
  std::string prefix;  ///< "c" for v3 "default" encoding, "" otherwise
  char separator = '.';
};

/// @brief Everything needed to read an array's chunks.
struct ArraySpec {
  ArrayMetadata metadata;
  std::shared_ptr<const CodecPipeline> pipeline;
  ChunkKeyEncoding keys;
};

/// @brief Read the metadata of the array at @p path.
/// @throws FormatError naming store and array when it is absent, malformed or unsupported.
ArraySpec read_array_spec(const Store& store, const std::string& path);

}  // namespace vczstats::zarr::detail
