#pragma once
// What the CUDA backend's tests share (tests/backend/cuda_*_test.cpp): random genotype blocks
// in 16-byte aligned host memory, and the stores of gpu_test_stores.tsv.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cuda/afdist_lanes.hpp"
#include "test_util.hpp"
#include "vczstats/device.hpp"
#include "vczstats/genotypes.hpp"
#include "vczstats/vcz.hpp"

/// Skip the test with a visible message unless a GPU is usable.
#define VCZ_REQUIRE_GPU()                                                                  \
  do {                                                                                     \
    std::string why;                                                                       \
    if (!vczstats::gpu_available(&why)) GTEST_SKIP() << "skipped: no GPU (" << why << ")"; \
  } while (0)

namespace gputest {

namespace fs = std::filesystem;
using vczstats::GenotypeChunkView;

// ---- random genotype blocks -------------------------------------------------------------------

/// How a block's values are drawn.
struct Profile {
  double missing = 0.05;   ///< -1 per slot
  double multi = 0.1;      ///< alleles 2..max_allele
  int max_allele = 4;      ///< largest allele index drawn (besides odd values)
  double fill_rows = 0.5;  ///< fraction of rows with some shorter calls (-2 fill)
  double fill = 0.2;       ///< in such rows, fraction of calls shortened (length 0..ploidy-1)
  double odd = 0.01;       ///< odd values: -128, -3, -2 anywhere, 100, 127 (and wider ones)
};

/// A block in 16-byte aligned host memory, like a device buffer.
struct Block {
  std::vector<vczstats::cuda::Word16> storage;
  GenotypeChunkView view;
};

inline void put(std::byte* p, int elem, std::int64_t v) {
  switch (elem) {
    case 1: {
      const auto x = static_cast<std::int8_t>(v);
      std::memcpy(p, &x, 1);
      break;
    }
    case 2: {
      const auto x = static_cast<std::int16_t>(v);
      std::memcpy(p, &x, 2);
      break;
    }
    case 4: {
      const auto x = static_cast<std::int32_t>(v);
      std::memcpy(p, &x, 4);
      break;
    }
    default:
      std::memcpy(p, &v, 8);
  }
}

inline Block make_block(std::mt19937_64& rng, int elem, std::int64_t rows, std::int64_t samples,
                        int ploidy, const Profile& prof) {
  Block b;
  const std::int64_t bytes = rows * samples * ploidy * elem;
  b.storage.resize(static_cast<std::size_t>(bytes / 16 + 1));
  auto* base = reinterpret_cast<std::byte*>(b.storage.data());
  std::uniform_real_distribution<double> u01(0, 1);
  const std::vector<std::int64_t> odd8 = {-128, -3, -2, 100, 127, 1, 0};
  const std::vector<std::int64_t> odd_wide = {-32768, -300, -2, 300, 32767, -129, 128, 257};
  std::int64_t off = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const bool row_fills = u01(rng) < prof.fill_rows;
    for (std::int64_t s = 0; s < samples; ++s) {
      int len = ploidy;
      if (row_fills && u01(rng) < prof.fill) len = static_cast<int>(rng() % ploidy);
      for (int j = 0; j < ploidy; ++j, off += elem) {
        std::int64_t v;
        const double x = u01(rng);
        if (j >= len)
          v = -2;
        else if (x < prof.missing)
          v = -1;
        else if (x < prof.missing + prof.odd)
          v = elem > 1 && rng() % 2 ? odd_wide[rng() % odd_wide.size()] : odd8[rng() % odd8.size()];
        else if (x < prof.missing + prof.odd + prof.multi)
          v = 2 + static_cast<std::int64_t>(rng() % std::max(1, prof.max_allele - 1));
        else
          v = u01(rng) < 0.3 ? 1 : 0;
        put(base + off, elem, v);
      }
    }
  }
  b.view.data = base;
  b.view.elem_bytes = elem;
  b.view.variants = rows;
  b.view.samples = samples;
  b.view.ploidy = ploidy;
  return b;
}

/// Call @p check(const std::int8_t (&)[4]) on every 4-byte word whose bytes are in @p values,
/// then on @p random words drawn with @p seed.
template <class Check>
void for_each_int8_word(const std::vector<int>& values, int random, std::uint64_t seed,
                        Check&& check) {
  for (int a0 : values)
    for (int b0 : values)
      for (int a1 : values)
        for (int b1 : values) {
          const std::int8_t b[4] = {static_cast<std::int8_t>(a0), static_cast<std::int8_t>(b0),
                                    static_cast<std::int8_t>(a1), static_cast<std::int8_t>(b1)};
          check(b);
        }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < random; ++i) {
    const auto w = static_cast<std::uint32_t>(rng());
    std::int8_t b[4];
    std::memcpy(b, &w, 4);
    check(b);
  }
}

// ---- the stores of gpu_test_stores.tsv
// ------------------------------------------------------------

struct StoreSpec {
  std::string name, vcf_args, convert_args;
};

inline std::vector<StoreSpec> store_specs() {
  std::ifstream in(fs::path(VCZ_SOURCE_DIR) / "tests/backend/gpu_test_stores.tsv");
  std::vector<StoreSpec> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    StoreSpec s;
    std::getline(ls, s.name, '\t');
    std::getline(ls, s.vcf_args, '\t');
    std::getline(ls, s.convert_args, '\t');
    out.push_back(s);
  }
  return out;
}

inline std::string store_file_name(const StoreSpec& s) {
  return s.name + (s.convert_args.find("--zip") != std::string::npos ? ".vcz.zip" : ".vcz");
}

/// The store of @p spec: made now when python3-zarr and bcftools are installed, else taken from
/// $VCZSTATS_TEST_STORES (scripts/fetch-gpu-deps.sh makes them for the GPU machine); "" if
/// neither.
inline std::string obtain_store(const vcztest::TempDir& dir, const StoreSpec& spec) {
  if (vcztest::have_python_zarr() && vcztest::have_program("bcftools")) {
    const auto vcf = (dir / (spec.name + ".vcf.gz")).string();
    const auto store = (dir / store_file_name(spec)).string();
    vcztest::run_ok(vcztest::python() + " " + vcztest::tool("random_vcf.py") + " " + spec.vcf_args +
                    " -o " + vcztest::shell_quote(vcf));
    vcztest::run_ok(vcztest::python() + " " + vcztest::tool("vcf2vcz.py") + " " +
                    vcztest::shell_quote(vcf) + " " + vcztest::shell_quote(store) + " " +
                    spec.convert_args);
    return store;
  }
  if (const char* dir_env = std::getenv("VCZSTATS_TEST_STORES")) {
    const fs::path p = fs::path(dir_env) / store_file_name(spec);
    if (fs::exists(p)) return p.string();
  }
  return "";
}

/// A store with FORMAT GQ and DP (call_GQ, call_DP) for the genotype masks, made as
/// scripts/fetch-gpu-deps.sh makes $VCZSTATS_TEST_STORES/gq_dp.vcz; "" if neither can be had.
inline std::string gq_store(const vcztest::TempDir& dir) {
  if (vcztest::have_python_zarr() && vcztest::have_program("bcftools")) {
    const auto gz = (dir / "gq_dp.vcf.gz").string(), vcf = (dir / "gq_dp.vcf").string();
    const auto store = (dir / "gq_dp.vcz").string();
    vcztest::run_ok(vcztest::python() + " " + vcztest::tool("random_vcf.py") +
                    " --seed 109 --samples 53 --variants 400 --contigs 2 --missing 0.05 "
                    "--multiallelic 0.1 --mean-spacing 10 -o " +
                    vcztest::shell_quote(gz));
    vcztest::run_ok(vcztest::python() + " " + vcztest::tool("qc_vcf.py") + " " +
                    vcztest::shell_quote(gz) + " --gq-dp -o " + vcztest::shell_quote(vcf));
    vcztest::run_ok(vcztest::python() + " " + vcztest::tool("vcf2vcz.py") + " " +
                    vcztest::shell_quote(vcf) + " " + vcztest::shell_quote(store) +
                    " --variants-chunk-size 45 --samples-chunk-size 20");
    return store;
  }
  if (const char* dir_env = std::getenv("VCZSTATS_TEST_STORES")) {
    const fs::path p = fs::path(dir_env) / "gq_dp.vcz";
    if (fs::exists(p)) return p.string();
  }
  return "";
}

/// The Ag1000G store of ../shared/data, or "" when absent.
inline std::string ag1000g_store() {
  const auto shared = vcztest::shared_data();
  const auto ag = shared / "ag1000g/gamb.X.8-12Mb.n100.derived.vcz.zip";
  return !shared.empty() && fs::exists(ag) ? ag.string() : "";
}

/// Call @p check (under a trace of the store's name) with each store of gpu_test_stores.tsv that
/// can be obtained, then the Ag1000G store when ../shared/data has it; the number of stores.
template <class Check>
int for_each_test_store(const vcztest::TempDir& dir, Check check) {
  int stores = 0;
  for (const auto& spec : store_specs()) {
    const std::string path = obtain_store(dir, spec);
    if (path.empty()) continue;
    SCOPED_TRACE(spec.name);
    ++stores;
    check(path);
  }
  if (const std::string ag = ag1000g_store(); !ag.empty()) {
    SCOPED_TRACE("ag1000g");
    ++stores;
    check(ag);
  }
  return stores;
}

// ---- one ctest test per store (and part of a long command list) ------------------------------

/// A store of the end-to-end GPU tests (a name of gpu_test_stores.tsv, or "ag1000g") and the
/// slice of a command list that one test runs: commands k with k % parts == part. One test per
/// case lets `ctest -j` run the stores (and the slices of the large one) side by side, over the
/// host's GPUs (tests/gpu_tests.cmake).
struct StoreCase {
  std::string store;
  int part = 0, parts = 1;
  bool takes(std::size_t k) const {
    return static_cast<int>(k % static_cast<std::size_t>(parts)) == part;
  }
};

/// How gtest prints a case (in the test's listing and ctest's name for it).
inline void PrintTo(const StoreCase& c, std::ostream* os) {
  *os << c.store << " part " << c.part + 1 << " of " << c.parts;
}

/// Every store of gpu_test_stores.tsv, then Ag1000G, each in one part or in the number of parts
/// @p parts gives for it; @p only, when not empty, keeps the stores it names.
inline std::vector<StoreCase> store_cases(const std::map<std::string, int>& parts = {},
                                          const std::vector<std::string>& only = {}) {
  std::vector<StoreCase> out;
  auto add = [&](const std::string& name) {
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) return;
    const auto it = parts.find(name);
    const int n = it == parts.end() ? 1 : it->second;
    for (int k = 0; k < n; ++k) out.push_back({name, k, n});
  };
  for (const auto& spec : store_specs()) add(spec.name);
  add("ag1000g");
  return out;
}

/// The test's name of a case: "missing_multi", "ag1000g_2of3".
inline std::string case_name(const ::testing::TestParamInfo<StoreCase>& info) {
  const StoreCase& c = info.param;
  return c.parts == 1 ? c.store
                      : c.store + "_" + std::to_string(c.part + 1) + "of" + std::to_string(c.parts);
}

/// The store of @p c: made in @p dir or found, as obtain_store() does, or "" when neither.
inline std::string case_store(const vcztest::TempDir& dir, const StoreCase& c) {
  if (c.store == "ag1000g") return ag1000g_store();
  for (const auto& spec : store_specs())
    if (spec.name == c.store) return obtain_store(dir, spec);
  return "";
}

/// Skip the test visibly when its store cannot be had.
#define VCZ_REQUIRE_CASE_STORE(path, c)                                               \
  do {                                                                                \
    if ((path).empty())                                                               \
      GTEST_SKIP() << "skipped: no store " << (c).store                               \
                   << " (needs python3-zarr and bcftools, VCZSTATS_TEST_STORES from " \
                      "scripts/fetch-gpu-deps.sh, or ../shared/data for ag1000g)";    \
  } while (0)

/// The plans the end-to-end tests run: the whole store, units of 5 variants, and regions on the
/// first two contigs in units of 7 (the last is named by its regions).
inline std::vector<std::pair<std::string, vczstats::vcz::ChunkPlan>> test_plans(
    const vczstats::vcz::VczStore& store) {
  namespace vcz = vczstats::vcz;
  std::vector<std::pair<std::string, vcz::ChunkPlan>> plans;
  plans.emplace_back("whole", store.plan({}, vcz::RegionOverlap::Record));
  plans.emplace_back("units of 5", store.plan({}, vcz::RegionOverlap::Record, 5));
  const auto& contigs = store.contig_ids();
  std::string regions = contigs[0] + ":1000-2500";
  if (contigs.size() > 1) regions += "," + contigs[1] + ":123-777";
  plans.emplace_back(regions,
                     store.plan(vcz::parse_regions(regions), vcz::RegionOverlap::Record, 7));
  return plans;
}

/// A populations file of @p store_path's samples in @p dir/@p name: three populations p0..p2
/// assigned in a fixed scrambled order; with @p subset, every third sample is left out.
inline std::string write_pops(const vcztest::TempDir& dir, const std::string& store_path,
                              bool subset = false, const std::string& name = "pops.tsv") {
  const auto store = vczstats::vcz::VczStore::open(store_path);
  const std::string path = (dir / name).string();
  std::ofstream f(path);
  int i = 0, k = 0;
  for (const auto& id : store.sample_ids()) {
    if (id.empty()) continue;
    if (!subset || k++ % 3 != 1) f << id << "\tp" << (i++ * 7 % 3) << "\n";
  }
  return path;
}

}  // namespace gputest
