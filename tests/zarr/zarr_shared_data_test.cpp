// The project's real VCF Zarr stores (../shared/data): what we decode must equal what
// zarr-python reads, and the v3 copy of a store must hold the same values as its v2 original.

#include <algorithm>

#include "vczstats/thread_pool.hpp"
#include "vczstats/zarr.hpp"
#include "zarr/zarr_test_support.hpp"

namespace {

using namespace vczstats::zarr;
using vcztest::zarr::read_bytes;
using vcztest::zarr::read_json;
using vcztest::zarr::same_elements;
namespace fs = std::filesystem;

/// Compare arrays (or first-dimension slices "name:start:stop") of @p store with python's read.
void compare_with_python(const fs::path& store_path, const std::vector<std::string>& specs,
                         vczstats::ThreadPool* pool = nullptr) {
  vcztest::TempDir out;
  std::string cmd =
      vcztest::python() + " " + vcztest::shell_quote(vcztest::tool("dump_zarr_arrays.py")) + " " +
      vcztest::shell_quote(store_path.string()) + " " + vcztest::shell_quote(out.path().string());
  for (const auto& s : specs) cmd += " " + vcztest::shell_quote(s);
  vcztest::run_ok(cmd);
  const auto store = open_store(store_path);
  for (const auto& entry : read_json(out / "manifest.json")) {
    const std::string name = entry["array"];
    SCOPED_TRACE(store_path.filename().string() + " " + name);
    const Array array = Array::open(store, name);
    std::vector<std::int64_t> start(array.shape().size(), 0), stop = array.shape();
    start[0] = entry["start"];
    stop[0] = entry["stop"];
    const auto file = out / entry["file"].get<std::string>();
    if (array.dtype().kind == DataKind::String) {
      EXPECT_EQ(array.read_region_strings(start, stop),
                read_json(file).get<std::vector<std::string>>());
    } else {
      const auto want = read_bytes(file);
      std::vector<std::byte> got(want.size());
      array.read_region(start, stop, got, pool);
      EXPECT_TRUE(same_elements(got, want, array.dtype()));
    }
  }
}

TEST(ZarrSharedData, SampleStoreMatchesZarrPython) {
  VCZ_REQUIRE_SHARED_DATA();
  const auto data = vcztest::shared_data() / "vcztools";
  compare_with_python(data / "sample.vcz.zip",
                      {"call_genotype", "call_genotype_mask:4:9", "call_genotype_phased", "call_DP",
                       "variant_position", "variant_allele", "variant_contig", "sample_id",
                       "contig_id", "variant_AA"});
  // call_genotype_mask has fill_value null and its first chunk is absent: zarr-python then
  // returns uninitialised memory, the design says zeros (false).
  const auto mask = Array::open(open_store(data / "sample.vcz.zip"), "call_genotype_mask");
  const std::vector<std::int64_t> first{0, 0, 0};
  std::vector<std::uint8_t> chunk(static_cast<std::size_t>(mask.chunk_elements()), 9);
  mask.read_chunk(first, std::as_writable_bytes(std::span(chunk)));
  EXPECT_EQ(chunk, std::vector<std::uint8_t>(chunk.size(), 0));
}

TEST(ZarrSharedData, Lz4StoreMatchesZarrPython) {
  VCZ_REQUIRE_SHARED_DATA();
  const auto data = vcztest::shared_data() / "vcztools";
  compare_with_python(data / "sample-lz4.vcz.zip",
                      {"call_genotype", "variant_position", "variant_allele", "sample_id"});
  const auto store = open_store(data / "sample-lz4.vcz.zip");
  EXPECT_NE(Array::open(store, "call_genotype").metadata().codecs.find("lz4"), std::string::npos);
}

TEST(ZarrSharedData, Ag1000gStoreMatchesZarrPython) {
  VCZ_REQUIRE_SHARED_DATA();
  const auto zip = vcztest::shared_data() / "ag1000g" / "gamb.X.8-12Mb.n100.derived.vcz.zip";
  vczstats::ThreadPool pool(2);
  compare_with_python(
      zip,
      {"call_genotype:0:3000", "call_genotype:500500:502600", "call_genotype:1018000:1019012",
       "variant_position", "variant_allele:0:5000", "sample_id"},
      &pool);
  const auto store = open_store(zip);
  const auto g = Array::open(store, "call_genotype");
  EXPECT_EQ(g.shape(), (std::vector<std::int64_t>{1019012, 100, 2}));
  EXPECT_EQ(g.metadata().codecs, "blosc(zstd:7,bitshuffle)");
  const auto arrays = list_arrays(*store);
  EXPECT_TRUE(std::binary_search(arrays.begin(), arrays.end(), "call_genotype"));
  EXPECT_TRUE(std::binary_search(arrays.begin(), arrays.end(), "variant_id"));
}

TEST(ZarrSharedData, V3StoreHoldsTheSameValuesAsV2) {
  VCZ_REQUIRE_SHARED_DATA();
  const auto data = vcztest::shared_data() / "vcztools";
  const auto v2 = open_store(data / "sample.vcz.zip");
  const auto v3 = open_store(data / "sample.vcz3.zip");
  EXPECT_EQ(open_group(*v3).zarr_format, 3);
  EXPECT_EQ(open_group(*v3).attributes["vcf_zarr_version"],
            open_group(*v2).attributes["vcf_zarr_version"]);
  const auto names2 = list_arrays(*v2);
  const auto names3 = list_arrays(*v3);
  EXPECT_EQ(names2, names3);
  int compared = 0;
  for (const auto& name : names3) {
    if (!std::binary_search(names2.begin(), names2.end(), name)) continue;
    SCOPED_TRACE(name);
    const Array a2 = Array::open(v2, name);
    const Array a3 = Array::open(v3, name);
    ASSERT_EQ(a2.shape(), a3.shape());
    ASSERT_EQ(a2.dtype(), a3.dtype());
    const std::vector<std::int64_t> zero(a2.shape().size(), 0);
    if (a2.dtype().kind == DataKind::String) {
      EXPECT_EQ(a2.read_region_strings(zero, a2.shape()), a3.read_region_strings(zero, a3.shape()));
    } else {
      std::int64_t n = 1;
      for (auto s : a2.shape()) n *= s;
      std::vector<std::byte> b2(static_cast<std::size_t>(n * a2.dtype().size));
      std::vector<std::byte> b3(b2.size());
      a2.read_region(zero, a2.shape(), b2);
      a3.read_region(zero, a3.shape(), b3);
      EXPECT_TRUE(same_elements(b3, b2, a2.dtype()));
    }
    ++compared;
  }
  EXPECT_GE(compared, 20);
}

TEST(ZarrSharedData, EveryStoreOpensAndEveryArrayDecodes) {
  VCZ_REQUIRE_SHARED_DATA();
  for (const auto& item : fs::directory_iterator(vcztest::shared_data() / "vcztools")) {
    if (item.path().extension() != ".zip") continue;
    SCOPED_TRACE(item.path().filename().string());
    const auto store = open_store(item.path());
    EXPECT_NO_THROW(open_group(*store));
    for (const auto& name : list_arrays(*store)) {
      SCOPED_TRACE(name);
      const Array a = Array::open(store, name);
      const std::vector<std::int64_t> zero(a.shape().size(), 0);
      if (a.dtype().kind == DataKind::String) {
        EXPECT_NO_THROW(a.read_region_strings(zero, a.shape()));
      } else {
        EXPECT_NO_THROW(a.read_all_as<double>());
      }
    }
  }
}

}  // namespace
