#pragma once
/// @file error.hpp
/// @brief Exception hierarchy of the library. Every message names the file, array or chunk
/// concerned and what was expected, so the CLI can print it as one line.

#include <stdexcept>
#include <string>

namespace vczstats {

/// @brief Base of every exception the library throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief Input that does not follow the Zarr / VCF Zarr format (bad metadata, corrupt chunk...).
class FormatError : public Error {
 public:
  using Error::Error;
};

/// @brief A file could not be opened, read, mapped or written.
class IoError : public Error {
 public:
  using Error::Error;
};

/// @brief A CUDA runtime call or kernel launch failed.
class CudaError : public Error {
 public:
  using Error::Error;
};

/// @brief The caller asked for something that cannot be done (bad option, unknown sample...).
class UsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace vczstats
