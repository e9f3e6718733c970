// Damaged chunks and unsupported metadata: every error is a FormatError that names the store,
// the array and (for chunks) the chunk key.

#include <fstream>
#include <random>
#include <string>

#include "vczstats/error.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/zarr.hpp"
#include "zarr/zarr_test_support.hpp"

namespace {

using namespace vczstats::zarr;
using vcztest::zarr::fixtures;
using vcztest::zarr::read_json;

::testing::AssertionResult mentions(const std::string& message,
                                    std::initializer_list<std::string> parts) {
  for (const auto& p : parts)
    if (message.find(p) == std::string::npos)
      return ::testing::AssertionFailure() << "'" << message << "' does not mention '" << p << "'";
  return ::testing::AssertionSuccess();
}

TEST(ZarrCodec, CorruptChunksNameArrayAndChunk) {
  const auto root = fixtures();
  const auto cases = read_json(root / "corrupt.json");
  const auto store = open_store(root / "corrupt");
  ASSERT_GE(cases["chunks"].size(), 10u);
  for (const auto& c : cases["chunks"]) {
    const std::string name = c["array"];
    SCOPED_TRACE(name);
    const Array array = Array::open(store, name);
    const auto index = c["chunk"].get<std::vector<std::int64_t>>();
    const std::string parts[] = {store->path(), "array " + name,
                                 "chunk " + c["key"].get<std::string>(),
                                 c["error"].get<std::string>()};
    try {
      if (array.dtype().kind == DataKind::String) {
        array.read_chunk_strings(index);
      } else {
        std::vector<std::byte> out(static_cast<std::size_t>(array.chunk_bytes()));
        array.read_chunk(index, out);
      }
      ADD_FAILURE() << "no error for " << name;
    } catch (const vczstats::FormatError& e) {
      EXPECT_TRUE(mentions(e.what(), {parts[0], parts[1], parts[2], parts[3]}));
    }
  }
}

TEST(ZarrCodec, CorruptChunkFailsRegionReadsWithAndWithoutPool) {
  const auto store = open_store(fixtures() / "corrupt");
  const Array array = Array::open(store, "truncated_blosc");
  const std::vector<std::int64_t> start{0, 0}, stop{12, 4};
  std::vector<std::byte> out(12 * 4 * 4);
  const std::string want = store->path() +
                           ": array truncated_blosc: chunk truncated_blosc/1.0: blosc "
                           "decompression failed (corrupt or truncated data)";
  try {
    array.read_region(start, stop, out);
    ADD_FAILURE() << "no error";
  } catch (const vczstats::FormatError& e) {
    EXPECT_EQ(std::string(e.what()), want);
  }
  vczstats::ThreadPool pool(2);
  try {
    array.read_region(start, stop, out, &pool);
    ADD_FAILURE() << "no error";
  } catch (const vczstats::FormatError& e) {
    EXPECT_EQ(std::string(e.what()), want);
  }
  // The undamaged chunks still read.
  const std::vector<std::int64_t> first{0, 0}, first_stop{4, 4};
  std::vector<std::byte> part(4 * 4 * 4);
  EXPECT_NO_THROW(array.read_region(first, first_stop, part));
}

TEST(ZarrCodec, UnsupportedMetadataIsAFormatError) {
  const auto root = fixtures();
  const auto cases = read_json(root / "corrupt.json");
  const auto store = open_store(root / "corrupt");
  for (const auto& [name, what] : cases["metadata"].items()) {
    SCOPED_TRACE(name);
    try {
      Array::open(store, name);
      ADD_FAILURE() << "no error for " << name;
    } catch (const vczstats::FormatError& e) {
      EXPECT_TRUE(mentions(e.what(), {store->path(), name, what.get<std::string>()}));
    }
  }
  try {
    Array::open(store, "fortran_order");
  } catch (const vczstats::FormatError& e) {
    EXPECT_TRUE(mentions(e.what(), {"order \"F\"", "not supported"}));
  }
  try {
    Array::open(store, "no_such_array");
    ADD_FAILURE() << "no error";
  } catch (const vczstats::FormatError& e) {
    EXPECT_TRUE(mentions(e.what(), {"no_such_array", "no .zarray or zarr.json"}));
  }
}

TEST(ZarrCodec, RandomDamageNeverCrashes) {
  // Truncate chunks and flip bytes at random: every read either succeeds or throws
  // FormatError (run under ASan/UBSan to catch out-of-bounds reads).
  vcztest::TempDir dir;
  namespace fs = std::filesystem;
  for (const std::string kind : {"v2", "v3"})
    fs::copy(fixtures() / kind, dir / kind, fs::copy_options::recursive);
  const std::vector<std::pair<std::string, std::string>> arrays = {
      {"v2", "blosc_zstd_2"},    {"v2", "blosc_lz4_1"},        {"v2", "blosc_zlib_0"},
      {"v2", "comp_zstd"},       {"v2", "comp_lz4"},           {"v2", "comp_zlib"},
      {"v2", "comp_gzip"},       {"v2", "comp_bz2"},           {"v2", "str_vlen_zstd"},
      {"v2", "str_vlen"},        {"v2", "filter_packbits"},    {"v2", "filter_delta_astype"},
      {"v2", "str_fixed_U"},     {"v3", "sharded_end"},        {"v3", "sharded_start"},
      {"v3", "sharded_strings"}, {"v3", "transpose_zstd_crc"}, {"v3", "strings"},
      {"v3", "big_gzip"}};
  std::mt19937_64 rng(12345);
  int failures = 0, successes = 0;
  for (const auto& [kind, name] : arrays) {
    SCOPED_TRACE(kind + " " + name);
    const auto store = open_store(dir / kind);
    const Array array = Array::open(store, name);
    const std::vector<std::int64_t> first(array.shape().size(), 0);
    const auto path = dir / kind / array.chunk_key(first);
    const std::string original = vcztest::zarr::read_file(path);
    ASSERT_FALSE(original.empty());
    for (int round = 0; round < 40; ++round) {
      std::string damaged = original;
      if (round % 2 == 0) {
        damaged.resize(rng() % original.size());
      } else {
        for (int k = 0; k < 1 + round % 5; ++k)
          damaged[rng() % damaged.size()] ^= static_cast<char>(1 + rng() % 255);
      }
      std::ofstream(path, std::ios::binary | std::ios::trunc) << damaged;
      try {
        if (array.dtype().kind == DataKind::String) {
          EXPECT_EQ(array.read_chunk_strings(first).size(),
                    static_cast<std::size_t>(array.chunk_elements()));
        } else {
          std::vector<std::byte> out(static_cast<std::size_t>(array.chunk_bytes()));
          array.read_chunk(first, out);
        }
        ++successes;
      } catch (const vczstats::FormatError& e) {
        EXPECT_TRUE(mentions(e.what(), {name, array.chunk_key(first)}));
        ++failures;
      }
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc) << original;
  }
  EXPECT_GT(failures, 300);
}

/// Hand-written metadata documents for the rules the fixtures do not exercise.
class ZarrCodecMetadata : public ::testing::Test {
 protected:
  std::string open_error(const std::string& key, const nlohmann::json& doc) {
    vcztest::TempDir dir;
    std::filesystem::create_directories(dir.path() / "x");
    std::ofstream(dir.path() / "x" / key) << doc.dump();
    try {
      Array::open(open_store(dir.path()), "x");
    } catch (const vczstats::FormatError& e) {
      return e.what();
    }
    return "";
  }
  static nlohmann::json v2() {
    return {{"zarr_format", 2}, {"shape", {10}}, {"chunks", {5}},      {"dtype", "<i4"},
            {"fill_value", 0},  {"order", "C"},  {"filters", nullptr}, {"compressor", nullptr}};
  }
  static nlohmann::json v3() {
    return {{"zarr_format", 3},
            {"node_type", "array"},
            {"shape", {10}},
            {"data_type", "int32"},
            {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {5}}}}}},
            {"chunk_key_encoding", {{"name", "default"}}},
            {"fill_value", 0},
            {"codecs", {{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}}}};
  }
};

TEST_F(ZarrCodecMetadata, RejectsWhatItCannotRead) {
  auto m = v2();
  m["fill_value"] = 1 << 20;
  m["dtype"] = "<i2";
  EXPECT_TRUE(mentions(open_error(".zarray", m), {"fill_value", "int16"}));
  m = v2();
  m["dimension_separator"] = "-";
  EXPECT_TRUE(mentions(open_error(".zarray", m), {"dimension_separator"}));
  m = v2();
  m["chunks"] = {0};
  EXPECT_TRUE(mentions(open_error(".zarray", m), {"positive"}));
  m = v2();
  m["dtype"] = "|O";
  EXPECT_TRUE(mentions(open_error(".zarray", m), {"vlen-utf8"}));
  m = v2();
  m["filters"] = {{{"id", "packbits"}}};
  EXPECT_TRUE(mentions(open_error(".zarray", m), {"packbits"}));
  m = v2();
  m["dtype"] = {{"a", "<i4"}};
  EXPECT_TRUE(mentions(open_error(".zarray", m), {"structured"}));

  auto d = v3();
  d["codecs"] = {{{"name", "zstd"}}};
  EXPECT_TRUE(mentions(open_error("zarr.json", d), {"before any array-to-bytes codec"}));
  d = v3();
  d["codecs"] = nlohmann::json::array();
  EXPECT_TRUE(mentions(open_error("zarr.json", d), {"no array-to-bytes codec"}));
  d = v3();
  d["codecs"] = {{{"name", "vlen-utf8"}}};
  EXPECT_TRUE(mentions(open_error("zarr.json", d), {"vlen-utf8", "string"}));
  d = v3();
  d["codecs"] = {{{"name", "transpose"}, {"configuration", {{"order", {1, 0}}}}},
                 {{"name", "bytes"}}};
  EXPECT_TRUE(mentions(open_error("zarr.json", d), {"transpose"}));
  d = v3();
  d["chunk_key_encoding"] = {{"name", "fancy"}};
  EXPECT_TRUE(mentions(open_error("zarr.json", d), {"chunk_key_encoding", "fancy"}));
  d = v3();
  d["codecs"] = {{{"name", "sharding_indexed"},
                  {"configuration", {{"chunk_shape", {3}}, {"codecs", {{{"name", "bytes"}}}}}}}};
  EXPECT_TRUE(mentions(open_error("zarr.json", d), {"does not divide"}));
  d = v3();
  d["codecs"] = {{{"name", "sharding_indexed"},
                  {"configuration",
                   {{"chunk_shape", {5}},
                    {"codecs", {{{"name", "bytes"}}}},
                    {"index_codecs", {{{"name", "bytes"}}, {{"name", "zstd"}}}}}}}};
  EXPECT_TRUE(mentions(open_error("zarr.json", d), {"fixed-size index"}));
  d = v3();
  d["fill_value"] = "0x7fc0";
  d["data_type"] = "float32";
  EXPECT_TRUE(mentions(open_error("zarr.json", d), {"fill_value"}));
  EXPECT_EQ(open_error("zarr.json", v3()), "");
  EXPECT_EQ(open_error(".zarray", v2()), "");
}

TEST_F(ZarrCodecMetadata, V3FillValueForms) {
  vcztest::TempDir dir;
  std::filesystem::create_directories(dir.path() / "x");
  auto d = v3();
  d["data_type"] = "float32";
  d["fill_value"] = "0x3f800000";  // 1.0f as raw bits
  std::ofstream(dir.path() / "x" / "zarr.json") << d.dump();
  const auto a = Array::open(open_store(dir.path()), "x");
  EXPECT_EQ(a.read_all_as<double>(), std::vector<double>(10, 1.0));  // no chunks: all fill
  d["data_type"] = "uint64";
  d["fill_value"] = 18446744073709551615ull;
  std::ofstream(dir.path() / "x" / "zarr.json") << d.dump();
  EXPECT_EQ(Array::open(open_store(dir.path()), "x").read_all_as<std::uint64_t>(),
            std::vector<std::uint64_t>(10, 18446744073709551615ull));
  d["data_type"] = "int8";
  d["fill_value"] = -128;
  std::ofstream(dir.path() / "x" / "zarr.json") << d.dump();
  EXPECT_EQ(Array::open(open_store(dir.path()), "x").read_all_as<std::int32_t>(),
            std::vector<std::int32_t>(10, -128));
}

}  // namespace
