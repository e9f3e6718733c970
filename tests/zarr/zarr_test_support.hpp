#pragma once
// Helpers shared by the Zarr tests: the generated fixture stores and their expected values.

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_util.hpp"
#include "vczstats/zarr.hpp"

namespace vcztest::zarr {

namespace fs = std::filesystem;

/// The fixture stores written by tests/tools/make_zarr_fixtures.py, generated once per
/// test process into a temporary directory.
inline const fs::path& fixtures() {
  static TempDir dir;
  static const fs::path root = [] {
    const fs::path out = dir / "fixtures";
    run_ok(python() + " " + shell_quote(tool("make_zarr_fixtures.py")) + " " +
           shell_quote(out.string()));
    return out;
  }();
  return root;
}

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline nlohmann::json read_json(const fs::path& p) {
  return nlohmann::json::parse(read_file(p));
}

inline std::vector<std::byte> read_bytes(const fs::path& p) {
  const std::string s = read_file(p);
  std::vector<std::byte> out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

/// Elements of the C-order region [start, stop) of an array of @p shape (itemsize bytes each).
inline std::vector<std::byte> slice(const std::vector<std::byte>& full,
                                    const std::vector<std::int64_t>& shape,
                                    const std::vector<std::int64_t>& start,
                                    const std::vector<std::int64_t>& stop, std::size_t itemsize) {
  std::vector<std::byte> out;
  const std::size_t n = shape.size();
  std::vector<std::int64_t> idx(start);
  for (std::size_t d = 0; d < n; ++d)
    if (start[d] >= stop[d]) return out;
  for (;;) {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < n; ++d) flat = flat * shape[d] + idx[d];
    const auto* p = full.data() + static_cast<std::size_t>(flat) * itemsize;
    out.insert(out.end(), p, p + itemsize);
    std::size_t d = n;
    for (;;) {
      if (d == 0) return out;
      --d;
      if (++idx[d] < stop[d]) break;
      idx[d] = start[d];
    }
  }
}

/// Same for strings.
inline std::vector<std::string> slice(const std::vector<std::string>& full,
                                      const std::vector<std::int64_t>& shape,
                                      const std::vector<std::int64_t>& start,
                                      const std::vector<std::int64_t>& stop) {
  std::vector<std::byte> index(full.size() * sizeof(std::int64_t));
  for (std::size_t i = 0; i < full.size(); ++i) {
    const auto v = static_cast<std::int64_t>(i);
    std::memcpy(index.data() + i * sizeof(v), &v, sizeof(v));
  }
  const auto picked = slice(index, shape, start, stop, sizeof(std::int64_t));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < picked.size(); i += sizeof(std::int64_t)) {
    std::int64_t v;
    std::memcpy(&v, picked.data() + i, sizeof(v));
    out.push_back(full[static_cast<std::size_t>(v)]);
  }
  return out;
}

/// Compare decoded elements, treating NaN as equal to NaN for float types.
inline ::testing::AssertionResult same_elements(const std::vector<std::byte>& got,
                                                const std::vector<std::byte>& want,
                                                const vczstats::zarr::DataType& type) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << "sizes differ: " << got.size() << " vs " << want.size() << " bytes";
  const auto size = static_cast<std::size_t>(type.size);
  for (std::size_t i = 0; i < got.size(); i += size) {
    if (std::memcmp(got.data() + i, want.data() + i, size) == 0) continue;
    if (type.kind == vczstats::zarr::DataKind::Float) {
      double a, b;
      if (size == 4) {
        float fa, fb;
        std::memcpy(&fa, got.data() + i, 4);
        std::memcpy(&fb, want.data() + i, 4);
        a = fa;
        b = fb;
      } else {
        std::memcpy(&a, got.data() + i, 8);
        std::memcpy(&b, want.data() + i, 8);
      }
      if ((std::isnan(a) && std::isnan(b)) || a == b) continue;
    }
    return ::testing::AssertionFailure() << "element " << i / size << " differs";
  }
  return ::testing::AssertionSuccess();
}

}  // namespace vcztest::zarr
