// The Zarr writer: what it writes is read back by our reader (v2 and v3, directory and zip,
// zip64) and by Debian's python3-zarr (v2), for every data type, compressor and shuffle, with
// edge chunks, skipped fill-value chunks and chunks written concurrently.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>

#include "test_util.hpp"
#include "vczstats/error.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/zarr.hpp"
#include "vczstats/zarr_writer.hpp"
#include "zarr/stores.hpp"
#include "zarr/zarr_test_support.hpp"

using namespace vcztest;
using vczstats::ThreadPool;
using vczstats::UsageError;
namespace vz = vczstats::zarr;
namespace fs = std::filesystem;

namespace {

/// Deterministic element bytes for index i of a type (never the fill value 0 for most i).
std::vector<std::byte> element(const vz::DataType& t, std::int64_t i) {
  std::vector<std::byte> out(static_cast<std::size_t>(t.size));
  auto put = [&](auto v) { std::memcpy(out.data(), &v, sizeof v); };
  switch (t.kind) {
    case vz::DataKind::Bool:
      put(static_cast<std::uint8_t>(i % 3 == 0));
      break;
    case vz::DataKind::Int:
      if (t.size == 1) put(static_cast<std::int8_t>(i % 200 - 100));
      if (t.size == 2) put(static_cast<std::int16_t>(i * 7 - 3000));
      if (t.size == 4) put(static_cast<std::int32_t>(i * 100003 - 7));
      if (t.size == 8) put(static_cast<std::int64_t>(i) * 123456789012LL - 5);
      break;
    case vz::DataKind::UInt:
      if (t.size == 1) put(static_cast<std::uint8_t>(i % 251));
      if (t.size == 2) put(static_cast<std::uint16_t>(i * 13));
      if (t.size == 4) put(static_cast<std::uint32_t>(i * 4000037u));
      if (t.size == 8) put(static_cast<std::uint64_t>(i) * 9876543210987ULL);
      break;
    case vz::DataKind::Float:
      if (t.size == 4) put(i % 17 == 5 ? std::nanf("") : static_cast<float>(i) * 0.25f - 3.5f);
      if (t.size == 8) put(static_cast<double>(i) / 3.0 - 11.0);
      break;
    case vz::DataKind::String:
      break;
  }
  return out;
}

std::string string_element(std::int64_t i) {
  if (i % 5 == 0) return "";
  return std::string(static_cast<std::size_t>(i % 7), static_cast<char>('a' + i % 26)) +
         std::to_string(i) + (i % 11 == 0 ? "\xc3\xa9" : "");
}

struct Case {
  std::string name;
  vz::DataType dtype;
  vz::Compression compression;
};

std::vector<Case> cases() {
  using vz::Compression;
  using vz::DataKind;
  using vz::Shuffle;
  auto blosc = [](std::string cname, Shuffle s) {
    Compression c;
    c.blosc_cname = std::move(cname);
    c.shuffle = s;
    c.level = 5;
    return c;
  };
  Compression zstd;
  zstd.kind = Compression::Kind::Zstd;
  zstd.level = 3;
  Compression none;
  none.kind = Compression::Kind::None;
  return {
      {"b", {DataKind::Bool, 1}, blosc("zstd", Shuffle::Bit)},
      {"i8", {DataKind::Int, 1}, blosc("zstd", Shuffle::Bit)},
      {"i16", {DataKind::Int, 2}, blosc("lz4", Shuffle::Byte)},
      {"i32", {DataKind::Int, 4}, blosc("zstd", Shuffle::Byte)},
      {"i64", {DataKind::Int, 8}, zstd},
      {"u8", {DataKind::UInt, 1}, none},
      {"u16", {DataKind::UInt, 2}, blosc("zstd", Shuffle::None)},
      {"u32", {DataKind::UInt, 4}, zstd},
      {"u64", {DataKind::UInt, 8}, blosc("lz4", Shuffle::Bit)},
      {"f32", {DataKind::Float, 4}, blosc("zstd", Shuffle::Byte)},
      {"f64", {DataKind::Float, 8}, none},
      {"s", {DataKind::String, 0}, blosc("zstd", Shuffle::Byte)},
      {"s_zstd", {DataKind::String, 0}, zstd},
  };
}

const std::vector<std::int64_t> kShape = {23, 7, 3};
const std::vector<std::int64_t> kChunks = {10, 4, 3};

std::int64_t elements(const std::vector<std::int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

/// Write the whole array chunk by chunk (edge chunks padded with the fill value), chunks in
/// parallel. Chunk (1, *, *) is left entirely at the fill value so it must be skipped.
void write_array(const vz::ArrayWriter& w, ThreadPool& pool) {
  const auto& d = w.definition();
  const std::int64_t gv = (d.shape[0] + d.chunks[0] - 1) / d.chunks[0];
  const std::int64_t gs = (d.shape[1] + d.chunks[1] - 1) / d.chunks[1];
  pool.parallel_for(gv * gs, [&](std::int64_t c) {
    const std::int64_t cv = c / gs, cs = c % gs;
    const std::vector<std::int64_t> index = {cv, cs, 0};
    std::vector<std::byte> raw;
    std::vector<std::string> strings;
    for (std::int64_t a = 0; a < d.chunks[0]; ++a)
      for (std::int64_t b = 0; b < d.chunks[1]; ++b)
        for (std::int64_t k = 0; k < d.chunks[2]; ++k) {
          const std::int64_t v = cv * d.chunks[0] + a, s = cs * d.chunks[1] + b;
          const bool inside = v < d.shape[0] && s < d.shape[1] && cv != 1;
          const std::int64_t i = (v * d.shape[1] + s) * d.shape[2] + k;
          if (d.dtype.kind == vz::DataKind::String) {
            strings.push_back(inside ? string_element(i) : d.fill_string);
          } else {
            const auto e = inside ? element(d.dtype, i) : d.fill_value;
            raw.insert(raw.end(), e.begin(), e.end());
          }
        }
    const bool stored = d.dtype.kind == vz::DataKind::String ? w.write_chunk_strings(index, strings)
                                                             : w.write_chunk(index, raw);
    EXPECT_EQ(stored, cv != 1) << w.path() << " chunk " << cv << "," << cs;
  });
}

/// What the whole array must read as.
std::vector<std::byte> expected_bytes(const vz::DataType& t) {
  std::vector<std::byte> out;
  for (std::int64_t i = 0; i < elements(kShape); ++i) {
    const std::int64_t v = i / (kShape[1] * kShape[2]);
    const auto e = v >= kChunks[0] && v < 2 * kChunks[0]
                       ? std::vector<std::byte>(static_cast<std::size_t>(t.size), std::byte{0})
                       : element(t, i);
    out.insert(out.end(), e.begin(), e.end());
  }
  return out;
}

std::vector<std::string> expected_strings() {
  std::vector<std::string> out;
  for (std::int64_t i = 0; i < elements(kShape); ++i) {
    const std::int64_t v = i / (kShape[1] * kShape[2]);
    out.push_back(v >= kChunks[0] && v < 2 * kChunks[0] ? "" : string_element(i));
  }
  return out;
}

/// Float arrays compare bitwise except that any NaN equals any NaN.
bool same_bytes(const vz::DataType& t, const std::vector<std::byte>& a,
                const std::vector<std::byte>& b) {
  if (a.size() != b.size()) return false;
  if (t.kind != vz::DataKind::Float || t.size != 4) return a == b;
  for (std::size_t i = 0; i < a.size(); i += 4) {
    float x, y;
    std::memcpy(&x, a.data() + i, 4);
    std::memcpy(&y, b.data() + i, 4);
    if (std::isnan(x) != std::isnan(y) || (!std::isnan(x) && x != y)) return false;
  }
  return true;
}

/// Write a group holding one array per case.
void write_store(const fs::path& root, int format) {
  auto store = std::make_shared<const vz::DirectoryStoreWriter>(root);
  vz::write_group(*store, format, {{"purpose", "writer test"}, {"n", 3}});
  ThreadPool pool(3);
  for (const auto& c : cases()) {
    vz::ArrayDefinition d;
    d.dtype = c.dtype;
    d.shape = kShape;
    d.chunks = kChunks;
    d.dimension_names = {"variants", "samples", "ploidy"};
    d.compression = c.compression;
    d.attributes = {{"description", "case " + c.name}};
    vz::ArrayWriter w(store, c.name, format, d);
    write_array(w, pool);
  }
}

void check_with_our_reader(const fs::path& path, int format) {
  auto store = vz::open_store(path);
  const auto group = vz::open_group(*store);
  EXPECT_EQ(group.zarr_format, format);
  EXPECT_EQ(group.attributes["purpose"], "writer test");
  for (const auto& c : cases()) {
    SCOPED_TRACE(path.string() + " " + c.name);
    const auto a = vz::Array::open(store, c.name);
    EXPECT_EQ(a.dtype(), c.dtype);
    EXPECT_EQ(a.shape(), kShape);
    EXPECT_EQ(a.chunks(), kChunks);
    EXPECT_EQ(a.metadata().dimension_names,
              (std::vector<std::string>{"variants", "samples", "ploidy"}));
    EXPECT_EQ(a.metadata().attributes["description"], "case " + c.name);
    const std::vector<std::int64_t> start = {0, 0, 0};
    if (c.dtype.kind == vz::DataKind::String) {
      EXPECT_EQ(a.read_region_strings(start, kShape), expected_strings());
    } else {
      std::vector<std::byte> got(static_cast<std::size_t>(elements(kShape) * c.dtype.size));
      a.read_region(start, kShape, got);
      EXPECT_TRUE(same_bytes(c.dtype, got, expected_bytes(c.dtype)));
    }
  }
}

void check_with_python(const fs::path& path) {
  TempDir out;
  std::string cmd = python() + " " + shell_quote(tool("dump_zarr_arrays.py")) + " " +
                    shell_quote(path.string()) + " " + shell_quote(out.path().string());
  for (const auto& c : cases()) cmd += " " + c.name;
  run_ok(cmd);
  for (const auto& c : cases()) {
    SCOPED_TRACE(path.string() + " python3-zarr " + c.name);
    if (c.dtype.kind == vz::DataKind::String) {
      const auto j = vcztest::zarr::read_json(out / (c.name + ".json"));
      EXPECT_EQ(j.get<std::vector<std::string>>(), expected_strings());
    } else {
      EXPECT_TRUE(same_bytes(c.dtype, vcztest::zarr::read_bytes(out / (c.name + ".bin")),
                             expected_bytes(c.dtype)));
    }
  }
}

}  // namespace

TEST(ZarrWriter, V2DirectoryAndZipReadBackByOurReader) {
  TempDir dir;
  write_store(dir / "s.zarr", 2);
  EXPECT_FALSE(fs::exists(dir / "s.zarr" / "i8" / "1.0.0")) << "an all-fill chunk was stored";
  EXPECT_TRUE(fs::exists(dir / "s.zarr" / "i8" / "2.1.0"));
  check_with_our_reader(dir / "s.zarr", 2);
  vz::zip_directory(dir / "s.zarr", dir / "s.zip");
  check_with_our_reader(dir / "s.zip", 2);
  vczstats::zarr::detail::zip_directory(dir / "s.zarr", dir / "s64.zip", nullptr, true);
  check_with_our_reader(dir / "s64.zip", 2);
}

TEST(ZarrWriter, V3DirectoryAndZipReadBackByOurReader) {
  TempDir dir;
  write_store(dir / "s.zarr", 3);
  EXPECT_TRUE(fs::exists(dir / "s.zarr" / "zarr.json"));
  EXPECT_TRUE(fs::exists(dir / "s.zarr" / "i8" / "c" / "2" / "1" / "0"));
  EXPECT_FALSE(fs::exists(dir / "s.zarr" / "i8" / "c" / "1" / "0" / "0"));
  check_with_our_reader(dir / "s.zarr", 3);
  vz::zip_directory(dir / "s.zarr", dir / "s.zip");
  check_with_our_reader(dir / "s.zip", 3);
}

TEST(ZarrWriter, PythonZarrReadsV2DirectoryZipAndZip64) {
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  write_store(dir / "s.zarr", 2);
  check_with_python(dir / "s.zarr");
  vz::zip_directory(dir / "s.zarr", dir / "s.zip");
  check_with_python(dir / "s.zip");
  vczstats::zarr::detail::zip_directory(dir / "s.zarr", dir / "s64.zip", nullptr, true);
  check_with_python(dir / "s64.zip");
  // Python's zipfile checks every entry's CRC-32 and header.
  run_ok(python() +
         " -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); "
         "assert z.testzip() is None; "
         "assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())' " +
         shell_quote((dir / "s64.zip").string()));
}

TEST(ZarrWriter, FillValuesAndResizeInMetadata) {
  TempDir dir;
  auto store = std::make_shared<const vz::DirectoryStoreWriter>(dir / "s");
  vz::write_group(*store, 2, nlohmann::json::object());
  vz::ArrayDefinition d;
  d.dtype = {vz::DataKind::Float, 4};
  d.shape = {0};
  d.chunks = {4};
  d.fill_value = vz::fill_of(std::nanf(""));
  vz::ArrayWriter f(store, "f", 2, d);
  d.dtype = {vz::DataKind::Int, 2};
  d.fill_value = vz::fill_of(std::int16_t{-2});
  vz::ArrayWriter i(store, "i", 2, d);
  const std::vector<std::int64_t> c0 = {0};
  const std::vector<std::int16_t> fill_chunk = {-2, -2, -2, -2};
  EXPECT_FALSE(i.write_chunk(c0, std::as_bytes(std::span(fill_chunk))));
  const std::vector<std::int16_t> data = {5, -2, -1, 7};
  EXPECT_TRUE(i.write_chunk(std::vector<std::int64_t>{1}, std::as_bytes(std::span(data))));
  i.resize({7});
  auto zarray = vcztest::zarr::read_json(dir / "s" / "i" / ".zarray");
  EXPECT_EQ(zarray["fill_value"], -2);
  EXPECT_EQ(zarray["dtype"], "<i2");
  EXPECT_EQ(zarray["shape"], nlohmann::json::array({7}));
  EXPECT_EQ(vcztest::zarr::read_json(dir / "s" / "f" / ".zarray")["fill_value"], "NaN");
  auto a = vz::Array::open(vz::open_store(dir / "s"), "i");
  EXPECT_EQ(a.read_all_as<std::int32_t>(), (std::vector<std::int32_t>{-2, -2, -2, -2, 5, -2, -1}));
  // v3 keeps a NaN's payload (VCF Zarr's missing and fill floats are distinct NaNs).
  d.dtype = {vz::DataKind::Float, 4};
  std::uint32_t bits = 0x7F800002u;
  float payload;
  std::memcpy(&payload, &bits, 4);
  d.fill_value = vz::fill_of(payload);
  vz::ArrayWriter v3(store, "f3", 3, d);
  EXPECT_EQ(vcztest::zarr::read_json(dir / "s" / "f3" / "zarr.json")["fill_value"], "0x7f800002");
}

TEST(ZarrWriter, RejectsBadDefinitions) {
  TempDir dir;
  auto store = std::make_shared<const vz::DirectoryStoreWriter>(dir / "s");
  vz::ArrayDefinition d;
  d.dtype = {vz::DataKind::Int, 1};
  d.shape = {10, 2};
  d.chunks = {5};
  EXPECT_THROW(vz::ArrayWriter(store, "a", 2, d), UsageError);
  d.chunks = {5, 0};
  EXPECT_THROW(vz::ArrayWriter(store, "a", 2, d), UsageError);
  d.chunks = {5, 2};
  d.dtype = {vz::DataKind::Float, 2};
  EXPECT_THROW(vz::ArrayWriter(store, "a", 2, d), UsageError);
  d.dtype = {vz::DataKind::Int, 1};
  vz::ArrayWriter ok(store, "a", 2, d);
  const std::vector<std::byte> short_chunk(3);
  EXPECT_THROW(ok.write_chunk(std::vector<std::int64_t>{0, 0}, short_chunk), UsageError);
}
