// Decoding arrays of the generated fixture stores (v2, v3, zip variants) and comparing every
// element with what numpy/zarr-python wrote.

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "vczstats/error.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/zarr.hpp"
#include "zarr/zarr_test_support.hpp"

namespace {

using namespace vczstats::zarr;
using vcztest::zarr::fixtures;
using vcztest::zarr::read_bytes;
using vcztest::zarr::read_json;
using vcztest::zarr::same_elements;
using vcztest::zarr::slice;

/// Check every array of one fixture store against its expected values.
void check_store(const std::string& store_name) {
  vcztest::zarr::check_fixture_store(store_name, open_store(fixtures() / store_name));
}

TEST(ZarrArray, V2DirectoryStoreDecodesEveryArray) {
  check_store("v2");
}
TEST(ZarrArray, V2ZipStoredDecodesEveryArray) {
  check_store("v2_stored.zip");
}
TEST(ZarrArray, V2ZipDeflatedDecodesEveryArray) {
  check_store("v2_deflated.zip");
}
TEST(ZarrArray, V2ZipUnderTopLevelFolderDecodesEveryArray) {
  check_store("v2_folder.zip");
}
TEST(ZarrArray, V2Zip64DecodesEveryArray) {
  check_store("v2_zip64.zip");
}
TEST(ZarrArray, V3DirectoryStoreDecodesEveryArray) {
  check_store("v3");
}
TEST(ZarrArray, V3ZipDeflatedDecodesEveryArray) {
  check_store("v3_deflated.zip");
}
TEST(ZarrArray, V3ZipUnderTopLevelFolderDecodesEveryArray) {
  check_store("v3_folder.zip");
}

TEST(ZarrArray, ChunkKeys) {
  const auto v2 = open_store(fixtures() / "v2");
  const auto v3 = open_store(fixtures() / "v3");
  const std::vector<std::int64_t> idx{3, 1, 0};
  EXPECT_EQ(Array::open(v2, "sep_dot_genotypes").chunk_key(idx), "sep_dot_genotypes/3.1.0");
  EXPECT_EQ(Array::open(v2, "sep_slash").chunk_key(idx), "sep_slash/3/1/0");
  EXPECT_EQ(Array::open(v2, "scalar").chunk_key({}), "scalar/0");
  const std::vector<std::int64_t> idx2{2, 1};
  EXPECT_EQ(Array::open(v3, "bytes_blosc").chunk_key(idx2), "bytes_blosc/c/2/1");
  EXPECT_EQ(Array::open(v3, "keys_default_dot").chunk_key(idx2), "keys_default_dot/c.2.1");
  EXPECT_EQ(Array::open(v3, "keys_v2").chunk_key(idx2), "keys_v2/2.1");
  EXPECT_EQ(Array::open(v3, "keys_v2_slash").chunk_key(idx2), "keys_v2_slash/2/1");
}

TEST(ZarrArray, ChunkGeometry) {
  const auto a = Array::open(open_store(fixtures() / "v2"), "sep_dot_genotypes");
  EXPECT_EQ(a.ndim(), 3);
  EXPECT_EQ(a.num_chunks(0), 4);  // 100 / 30, rounded up
  EXPECT_EQ(a.num_chunks(1), 3);
  EXPECT_EQ(a.num_chunks(2), 1);
  EXPECT_EQ(a.chunk_elements(), 30 * 4 * 2);
  EXPECT_EQ(a.chunk_bytes(), 30 * 4 * 2);
  const auto s = Array::open(open_store(fixtures() / "v2"), "str_vlen");
  EXPECT_EQ(s.chunk_bytes(), 0);
}

TEST(ZarrArray, AbsentChunkReadsAsFillValue) {
  const auto store = open_store(fixtures() / "v2");
  const auto a = Array::open(store, "fill_int");  // uint16, chunk 0 absent, fill 42
  std::vector<std::byte> chunk(static_cast<std::size_t>(a.chunk_bytes()));
  const std::vector<std::int64_t> first{0};
  a.read_chunk(first, chunk);
  for (std::size_t i = 0; i < chunk.size(); i += 2) {
    std::uint16_t v;
    std::memcpy(&v, chunk.data() + i, 2);
    EXPECT_EQ(v, 42);
  }
  const auto n = Array::open(store, "fill_null");  // int32, null fill reads as 0
  std::vector<std::int32_t> values(static_cast<std::size_t>(n.chunk_elements()), -5);
  const std::vector<std::int64_t> origin{0, 0};
  n.read_chunk(origin, std::as_writable_bytes(std::span(values)));
  for (auto v : values) EXPECT_EQ(v, 0);

  const auto nan = Array::open(store, "fill_nan");
  const std::vector<std::int64_t> second{1};
  std::vector<double> d(static_cast<std::size_t>(nan.chunk_elements()));
  nan.read_chunk(second, std::as_writable_bytes(std::span(d)));
  for (auto v : d) EXPECT_TRUE(std::isnan(v));

  const auto strings = Array::open(store, "str_vlen");  // chunk (2, 0) absent, fill ""
  const std::vector<std::int64_t> absent{2, 0};
  const auto got = strings.read_chunk_strings(absent);
  EXPECT_EQ(got.size(), 8u);
  for (const auto& s : got) EXPECT_EQ(s, "");
  const auto fixed = Array::open(store, "str_fixed_U");  // fill "zé"
  const std::vector<std::int64_t> absent_u{2, 0};
  for (const auto& s : fixed.read_chunk_strings(absent_u)) EXPECT_EQ(s, "zé");
  const auto fixed_s = Array::open(store, "str_fixed_S");  // fill b"ab", base64 in .zarray
  const std::vector<std::int64_t> absent_s{1, 0};
  for (const auto& s : fixed_s.read_chunk_strings(absent_s)) EXPECT_EQ(s, "ab");
}

TEST(ZarrArray, EdgeChunkIsFullSize) {
  const auto store = open_store(fixtures() / "v2");
  const auto a = Array::open(store, "sep_dot_genotypes");  // 100 rows, chunks of 30
  std::vector<std::int8_t> chunk(static_cast<std::size_t>(a.chunk_elements()));
  const std::vector<std::int64_t> last{3, 2, 0};  // rows 90..119, samples 8..11
  a.read_chunk(last, std::as_writable_bytes(std::span(chunk)));
  // The in-bounds corner (rows 90..99, samples 8..9) matches the full read.
  auto all = a.read_all_as<std::int32_t>();
  for (int r = 0; r < 10; ++r)
    for (int s = 0; s < 2; ++s)
      for (int p = 0; p < 2; ++p)
        EXPECT_EQ(chunk[static_cast<std::size_t>((r * 4 + s) * 2 + p)],
                  all[static_cast<std::size_t>(((90 + r) * 10 + 8 + s) * 2 + p)]);
}

TEST(ZarrArray, ReadAsConvertsEveryNumericType) {
  const auto root = fixtures();
  const auto store = open_store(root / "v2");
  const auto i2 = Array::open(store, "dtype_le_i2");
  const auto raw = read_bytes(root / "expected" / "v2_dtype_le_i2.bin");
  const auto as64 = i2.read_all_as<std::int64_t>();
  ASSERT_EQ(as64.size() * 2, raw.size());
  for (std::size_t i = 0; i < as64.size(); ++i) {
    std::int16_t v;
    std::memcpy(&v, raw.data() + 2 * i, 2);
    EXPECT_EQ(as64[i], v);
  }
  const auto be = Array::open(store, "dtype_be_i2").read_all_as<double>();
  EXPECT_EQ(be.size(), as64.size());

  const auto boolean = Array::open(store, "dtype_b1").read_all_as<std::uint8_t>();
  for (auto v : boolean) EXPECT_LE(v, 1);

  // NaN and infinities saturate / read as 0 when converted to integers.
  const auto f = Array::open(store, "fill_nan").read_all_as<std::int32_t>();
  EXPECT_EQ(f[6], 0);  // chunk 1 is absent: NaN
  const auto g = Array::open(store, "fill_inf").read_all_as<std::int64_t>();
  EXPECT_EQ(g[12], std::numeric_limits<std::int64_t>::lowest());

  const std::vector<std::int64_t> start{10}, stop{20};
  const auto pos = Array::open(store, "positions");
  const auto part = pos.read_region_as<std::int64_t>(start, stop);
  const auto all = pos.read_all_as<std::int64_t>();
  EXPECT_EQ(part, std::vector<std::int64_t>(all.begin() + 10, all.begin() + 20));
  EXPECT_THROW(Array::open(store, "str_vlen").read_all_as<std::int32_t>(), vczstats::UsageError);
}

TEST(ZarrArray, MetadataIsNormalised) {
  const auto v2 = open_store(fixtures() / "v2");
  const auto g = Array::open(v2, "sep_dot_genotypes").metadata();
  EXPECT_EQ(g.zarr_format, 2);
  EXPECT_EQ(g.dtype_spec, "|i1");
  EXPECT_EQ(g.codecs, "blosc(lz4:5,shuffle)");
  ASSERT_EQ(g.fill_value.size(), 1u);
  EXPECT_EQ(static_cast<std::int8_t>(g.fill_value[0]), -2);
  EXPECT_EQ(Array::open(v2, "filter_delta").metadata().codecs, "delta(<i4) | zstd(1)");
  EXPECT_EQ(Array::open(v2, "filter_delta_astype").metadata().codecs, "delta(<i4 as <i2)");
  EXPECT_EQ(Array::open(v2, "str_vlen_zstd").metadata().codecs, "vlen-utf8 | zstd(3)");
  EXPECT_EQ(Array::open(v2, "comp_none").metadata().codecs, "none");
  EXPECT_EQ(Array::open(v2, "str_vlen").metadata().fill_string, "");

  const auto v3 = open_store(fixtures() / "v3");
  const auto b = Array::open(v3, "bytes_blosc").metadata();
  EXPECT_EQ(b.zarr_format, 3);
  EXPECT_EQ(b.dtype_spec, "int32");
  EXPECT_EQ(b.codecs, "blosc(zstd:5,shuffle)");
  EXPECT_EQ(b.dimension_names, (std::vector<std::string>{"variants", ""}));
  EXPECT_EQ(b.attributes["name"], "bytes_blosc");
  const auto t = Array::open(v3, "transpose_zstd_crc").metadata();
  EXPECT_EQ(t.codecs, "transpose(2,0,1) | zstd(3) | crc32c");
  double fill;
  std::memcpy(&fill, t.fill_value.data(), 8);
  EXPECT_TRUE(std::isnan(fill));
  EXPECT_EQ(Array::open(v3, "sharded_end").metadata().codecs,
            "sharding([4,4,2]: blosc(zstd:5,bitshuffle))");
  EXPECT_EQ(Array::open(v3, "big_gzip").metadata().codecs, "bytes(big) | gzip(5)");
}

TEST(ZarrArray, GroupsAndArrayListing) {
  for (const std::string name : {"v2", "v2_stored.zip", "v2_folder.zip", "v2_zip64.zip"}) {
    SCOPED_TRACE(name);
    const auto store = open_store(fixtures() / name);
    EXPECT_EQ(open_group(*store).zarr_format, 2);
    const auto arrays = list_arrays(*store);
    EXPECT_TRUE(std::binary_search(arrays.begin(), arrays.end(), "sep_slash"));
    EXPECT_TRUE(std::binary_search(arrays.begin(), arrays.end(), "scalar"));
    EXPECT_TRUE(std::is_sorted(arrays.begin(), arrays.end()));
  }
  for (const std::string name : {"v3", "v3_deflated.zip", "v3_folder.zip"}) {
    SCOPED_TRACE(name);
    const auto store = open_store(fixtures() / name);
    const auto group = open_group(*store);
    EXPECT_EQ(group.zarr_format, 3);
    EXPECT_EQ(group.attributes["origin"], "fixtures");
    const auto arrays = list_arrays(*store);
    EXPECT_TRUE(std::binary_search(arrays.begin(), arrays.end(), "sharded_end"));
    EXPECT_FALSE(std::binary_search(arrays.begin(), arrays.end(), "c"));
  }
  const auto v2 = open_store(fixtures() / "v2");
  EXPECT_THROW(open_group(*v2, "sep_slash"), vczstats::FormatError);
  const auto v3 = open_store(fixtures() / "v3");
  EXPECT_THROW(open_group(*v3, "strings"), vczstats::FormatError);
  EXPECT_THROW(Array::open(v3, ""), vczstats::FormatError);  // the root is a group
}

TEST(ZarrArray, RejectsBadRequests) {
  const auto a = Array::open(open_store(fixtures() / "v2"), "fill_int");
  std::vector<std::byte> small(3);
  const std::vector<std::int64_t> first{0}, beyond{99};
  EXPECT_THROW(a.read_chunk(first, small), vczstats::UsageError);
  std::vector<std::byte> chunk(static_cast<std::size_t>(a.chunk_bytes()));
  EXPECT_THROW(a.read_chunk(beyond, chunk), vczstats::UsageError);
  const std::vector<std::int64_t> start{5}, stop{21};
  std::vector<std::byte> region(32);
  EXPECT_THROW(a.read_region(start, stop, region), vczstats::UsageError);
  const std::vector<std::int64_t> empty_start{5}, empty_stop{5};
  std::vector<std::byte> none;
  a.read_region(empty_start, empty_stop, none);  // an empty region reads nothing
}

TEST(ZarrArray, ArraysAreCopyableAndShareable) {
  const auto store = open_store(fixtures() / "v2");
  Array a = Array::open(store, "positions");
  Array b = a;
  Array c = std::move(a);
  EXPECT_EQ(b.read_all_as<std::int64_t>(), c.read_all_as<std::int64_t>());
  EXPECT_EQ(&b.store(), store.get());
  EXPECT_EQ(c.path(), "positions");
}

}  // namespace
