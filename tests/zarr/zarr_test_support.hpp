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
#include "vczstats/error.hpp"
#include "vczstats/thread_pool.hpp"
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

/// Regions that cross chunk boundaries: a middle slab, a corner, a single element.
inline std::vector<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> regions(
    const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& chunks) {
  std::vector<std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>>> out;
  std::vector<std::int64_t> a, b, c, d, e, f;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    const std::int64_t s = shape[k];
    a.push_back(std::min(s, std::max<std::int64_t>(chunks[k] / 2, 1)));
    b.push_back(std::max(a.back(), s - 1));
    c.push_back(0);
    d.push_back(std::min(s, chunks[k] + 1));
    e.push_back(s / 2);
    f.push_back(std::min(s, s / 2 + 1));
  }
  out.emplace_back(a, b);
  out.emplace_back(c, d);
  out.emplace_back(e, f);
  return out;
}

/// Check every array of fixture store @p store_name, opened as @p store (a local path or a
/// remote copy), against the values numpy/zarr-python wrote: whole, and (@p regions_too)
/// regions crossing chunk boundaries, serially and on a pool; the first @p max_arrays arrays.
inline void check_fixture_store(const std::string& store_name,
                                std::shared_ptr<const vczstats::zarr::Store> store,
                                bool regions_too = true, int max_arrays = 1 << 30) {
  using namespace vczstats::zarr;
  const auto root = fixtures();
  const auto manifest = read_json(root / "manifest.json");
  vczstats::ThreadPool pool(3);
  int checked = 0;
  for (const auto& entry : manifest) {
    if (entry["store"] != store_name) continue;
    if (checked >= max_arrays) break;
    const std::string name = entry["array"];
    SCOPED_TRACE(store_name + " " + name);
    const Array array = Array::open(store, name);
    const auto shape = entry["shape"].get<std::vector<std::int64_t>>();
    const auto chunks = entry["chunks"].get<std::vector<std::int64_t>>();
    EXPECT_EQ(array.shape(), shape);
    EXPECT_EQ(array.chunks(), chunks);
    EXPECT_EQ(array.dtype().name(), entry["dtype"].get<std::string>());
    const std::vector<std::int64_t> zero(shape.size(), 0);
    const auto expected_path = root / "expected" / entry["expected"].get<std::string>();
    if (array.dtype().kind == DataKind::String) {
      const auto want = read_json(expected_path).get<std::vector<std::string>>();
      EXPECT_EQ(array.read_region_strings(zero, shape), want);
      if (shape.size() == 1) {  // the one-buffer table sample_id is read into
        const auto table = array.read_string_table();
        EXPECT_EQ(std::vector<std::string>(table.begin(), table.end()), want);
      } else {
        EXPECT_THROW(array.read_string_table(), vczstats::UsageError);
      }
      if (!regions_too) {
        ++checked;
        continue;
      }
      for (const auto& [start, stop] : regions(shape, chunks))
        EXPECT_EQ(array.read_region_strings(start, stop), slice(want, shape, start, stop));
    } else {
      const auto want = read_bytes(expected_path);
      const auto itemsize = static_cast<std::size_t>(array.dtype().size);
      std::vector<std::byte> got(want.size());
      array.read_region(zero, shape, got);
      EXPECT_TRUE(same_elements(got, want, array.dtype()));
      if (!regions_too) {
        ++checked;
        continue;
      }
      std::fill(got.begin(), got.end(), std::byte{0x5A});
      array.read_region(zero, shape, got, &pool);
      EXPECT_TRUE(same_elements(got, want, array.dtype()));
      for (const auto& [start, stop] : regions(shape, chunks)) {
        const auto sub = slice(want, shape, start, stop, itemsize);
        std::vector<std::byte> part(sub.size());
        array.read_region(start, stop, part);
        EXPECT_TRUE(same_elements(part, sub, array.dtype()));
        std::vector<std::byte> pooled(sub.size());
        array.read_region(start, stop, pooled, &pool);
        EXPECT_TRUE(same_elements(pooled, sub, array.dtype()));
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, std::min(5, max_arrays - 1))
      << "the manifest lists too few arrays for " << store_name;
}

}  // namespace vcztest::zarr
