// Device decode in the GPU pipeline (issue 10, "the device path"): with --gpu-decode on, the
// genotype chunks are decoded on the device and the statistics must be byte-identical to
// --gpu-decode off (host decode) and to the CPU, on the stores of gpu_test_stores.tsv (every
// dtype, ploidy, zip and directory stores, blosc zstd and lz4, plain zstd) and every store of
// ../shared/data whose call_genotype the device can decode, whole and with sample subsets
// (gathered on the device). A corrupt chunk stops the run with one error line naming the array
// and the chunk, and never hangs. One ctest test per store (the small stores of ../shared/data
// in three groups; Ag1000G in two slices of the command list). Skips visibly without a GPU.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "backend/gpu_test_support.hpp"
#include "test_util.hpp"
#include "vczstats/zarr.hpp"

namespace {

namespace fs = std::filesystem;

/// Populations p0..p2 over the named samples (every sample, or every other for a subset).
/// A sample subset (-S): two of every three samples, which makes every sample chunk a subset.
std::string write_subset(const vcztest::TempDir& dir, const std::string& store_path) {
  const auto store = vczstats::vcz::VczStore::open(store_path);
  const std::string path = (dir / "subset.txt").string();
  std::ofstream f(path);
  int k = 0;
  for (const auto& id : store.sample_ids())
    if (!id.empty() && k++ % 3 != 1) f << id << "\n";
  return path;
}

bool device_decodable(const std::string& store_path) {
  const auto store = vczstats::vcz::VczStore::open(store_path);
  return store.has_genotypes() &&
         vczstats::zarr::device_decodable(store.genotypes().chunk_encoding());
}

/// The commands of @p c's slice on @p store, three ways; the -v check in the first slice.
void expect_same_three_ways(const vcztest::TempDir& dir, const std::string& store,
                            const gputest::StoreCase& c = {}) {
  const std::string q = vcztest::shell_quote(store);
  const std::string pops = vcztest::shell_quote(gputest::write_pops(dir, store, false, "pops.tsv"));
  const std::string sub_pops =
      vcztest::shell_quote(gputest::write_pops(dir, store, true, "sub_pops.tsv"));
  const std::string subset = vcztest::shell_quote(write_subset(dir, store));
  // Ag1000G: units of a few variants over 100 kb of it (over its 10^6 sites they take minutes).
  const std::string tiny =
      store.find("ag1000g") != std::string::npos ? " -r X:8000000-8100000" : "";
  const std::vector<std::string> commands = {
      "stats " + q + " -P " + pops +
          " --window-size 2000 --stats pi,theta_w,tajima_d,dxy,fst_hudson,fst_wc",
      "stats " + q + " -P " + sub_pops + " --window-size 5000 --stats pi,dxy,fst_hudson",
      "afdist " + q,
      "afdist " + q + " -S " + subset,
      "afdist " + q + tiny + " --max-unit-variants 7",
      "freq " + q + " -P " + pops,
      "geno-counts " + q + " -S " + subset + tiny + " --max-unit-variants 9",
      "sample-stats " + q + " -P " + sub_pops,
  };
  for (std::size_t k = 0; k < commands.size(); ++k) {
    if (!c.takes(k)) continue;
    const std::string& cmd = commands[k];
    const auto cpu = vcztest::run(vcztest::binary() + " " + cmd + " --device cpu -t 2");
    ASSERT_EQ(cpu.exit_code, 0) << cmd << "\n" << cpu.err;
    const std::string on =
        vcztest::run_ok(vcztest::binary() + " " + cmd + " --device gpu --gpu-decode on -t 3");
    const std::string off =
        vcztest::run_ok(vcztest::binary() + " " + cmd + " --device gpu --gpu-decode off -t 3");
    EXPECT_EQ(cpu.out, on) << cmd;
    EXPECT_EQ(cpu.out, off) << cmd;
    EXPECT_GT(cpu.out.size(), 0u) << cmd;
  }
  if (c.part != 0) return;
  // -v says where the genotypes were decoded and times the device stages apart.
  const auto v =
      vcztest::run(vcztest::binary() + " afdist " + q + " --device gpu --gpu-decode on -v");
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_NE(v.err.find("genotypes decoded on the device"), std::string::npos) << v.err;
  EXPECT_NE(v.err.find("decode "), std::string::npos) << v.err;
  EXPECT_NE(v.err.find("host->device"), std::string::npos) << v.err;
}

/// The stores of ../shared/data but Ag1000G (a test of its own).
std::vector<fs::path> shared_stores() {
  std::vector<fs::path> out;
  const auto shared = vcztest::shared_data();
  if (shared.empty() || !fs::exists(shared)) return out;
  for (const auto& e : fs::recursive_directory_iterator(shared)) {
    const std::string name = e.path().filename().string();
    if (name.find("ag1000g") != std::string::npos) continue;
    if (name.ends_with(".vcz.zip") || name.ends_with(".vcz3.zip") ||
        (e.is_directory() && name.ends_with(".vcz")))
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class CudaGpuDecodeCliStores : public ::testing::TestWithParam<gputest::StoreCase> {};

}  // namespace

TEST_P(CudaGpuDecodeCliStores, SameOutputsWithDeviceDecodeOnOffAndCpu) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  const gputest::StoreCase& c = GetParam();
  if (c.store == "shared") {  // the small stores of ../shared/data the device can decode
    int stores = 0;
    const auto shared = shared_stores();
    for (std::size_t k = 0; k < shared.size(); ++k) {
      const fs::path& p = shared[k];
      if (!c.takes(k) || !device_decodable(p.string())) continue;
      SCOPED_TRACE(p.string());
      ++stores;
      expect_same_three_ways(dir, p.string());
    }
    if (stores == 0) GTEST_SKIP() << "skipped: no device-decodable store in ../shared/data";
    return;
  }
  const std::string path = gputest::case_store(dir, c);
  VCZ_REQUIRE_CASE_STORE(path, c);
  if (c.store != "ag1000g") {
    ASSERT_TRUE(device_decodable(path)) << c.store;
  } else if (!device_decodable(path)) {
    GTEST_SKIP() << "skipped: the device cannot decode " << path;
  }
  expect_same_three_ways(dir, path, c);
}

INSTANTIATE_TEST_SUITE_P(Stores, CudaGpuDecodeCliStores, ::testing::ValuesIn([] {
                           auto cases = gputest::store_cases({{"ag1000g", 2}});
                           for (int k = 0; k < 3; ++k) cases.push_back({"shared", k, 3});
                           return cases;
                         }()),
                         gputest::case_name);

/// A directory store of gpu_test_stores.tsv copied to @p dir, with one call_genotype chunk's zstd
/// frame magic overwritten (@p header: its blosc header's compressed size instead).
std::string corrupt_store(const vcztest::TempDir& dir, const std::string& name, bool header,
                          std::string* chunk) {
  for (const auto& spec : gputest::store_specs()) {
    if (spec.name != name) continue;
    const std::string path = gputest::obtain_store(dir, spec);
    if (path.empty()) return "";
    const fs::path copy = dir / (name + (header ? "-header" : "-frame") + ".vcz");
    fs::copy(path, copy, fs::copy_options::recursive);
    *chunk = "call_genotype/1.0.0";
    const fs::path file = copy / *chunk;
    std::string bytes;
    {
      std::ifstream in(file, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    if (header) {
      if (bytes.size() < 16) return "";
      bytes[12] = '\x7f';  // cbytes far beyond the chunk's bytes
      bytes[13] = '\x7f';
    } else {
      const std::string magic = "\x28\xb5\x2f\xfd";
      const auto at = bytes.find(magic);
      if (at == std::string::npos) return "";
      bytes.replace(at, 4, std::string("\x11\x22\x33\x44", 4));
    }
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
    return copy.string();
  }
  return "";
}

TEST(CudaGpuDecodeCli, CorruptChunkIsACleanErrorNamingTheChunk) {
  VCZ_REQUIRE_GPU();
  vcztest::TempDir dir;
  for (const bool header : {false, true}) {
    std::string chunk;
    const std::string store = corrupt_store(dir, "missing_multi", header, &chunk);
    if (store.empty())
      GTEST_SKIP() << "skipped: store missing_multi not available or has no zstd frame";
    for (const std::string cmd : {"afdist", "sample-stats"}) {
      const auto r = vcztest::run("timeout 300 " + vcztest::binary() + " " + cmd + " " +
                                  vcztest::shell_quote(store) + " --device gpu --gpu-decode on");
      EXPECT_EQ(r.exit_code, 1) << cmd << (header ? " header" : " frame") << "\n" << r.err;
      EXPECT_NE(r.err.find("call_genotype"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(chunk), std::string::npos) << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      EXPECT_TRUE(r.out.empty()) << r.out;
    }
  }
}
