// vczstats recompress against independent references, run in the test: python3-zarr (Debian's)
// reads the v2 output and every array equals the input's (dtype, shape, values, NaN payloads,
// dimension names); `vczstats afdist` of input and output are identical; and our reader
// finds equal arrays for v3, zip, selected arrays and small blocks that cut chunks unevenly.
// Inputs: the vcztools fixtures of ../shared/data (bio2zarr stores, v2 and v3) and simulated
// stores.

#include <gtest/gtest.h>

#include <fstream>

#include <fmt/format.h>

#include "test_util.hpp"
#include "vczstats/error.hpp"
#include "vczstats/recompress.hpp"
#include "vczstats/zarr.hpp"

using namespace vcztest;
namespace fs = std::filesystem;
namespace vz = vczstats::zarr;
namespace rc = vczstats::recompress;

namespace {

std::string cli(const std::string& args) {
  return run_ok(binary() + " " + args);
}

const std::vector<std::string> kFixtures = {
    "1kg_2020_chr20_annotations.vcz.zip", "1kg_2020_chrM.vcz.zip",   "chr22.vcz.zip",
    "field_type_combos.vcz.zip",          "msprime_diploid.vcz.zip", "sample-lz4.vcz.zip",
    "sample-split-alleles.vcz.zip",       "sample.vcz.zip",          "sample.vcz3.zip"};

/// Python (zarr 2.13): every array of A equals B's exactly (absent chunks of a null fill read
/// as 0, as our reader does); prints the number of arrays compared.
const char* kCompareScript = R"(
import itertools, sys, numpy as np, zarr
def open_group(p):
    return zarr.open_group(zarr.ZipStore(p, mode='r') if p.endswith('.zip') else p, mode='r')
a, b = open_group(sys.argv[1]), open_group(sys.argv[2])
names = sorted(a.array_keys())
assert names == sorted(b.array_keys()), (names, sorted(b.array_keys()))
assert dict(a.attrs) == dict(b.attrs)
for n in names:
    x, y = a[n], b[n]
    # Fixed-width strings (numpy U) are written as vlen-utf8, like every other string array.
    same_type = x.dtype == y.dtype or (x.dtype.kind == 'U' and y.dtype.kind == 'O')
    assert x.shape == y.shape and same_type, (n, x.shape, y.shape, x.dtype, y.dtype)
    assert x.attrs.get('_ARRAY_DIMENSIONS') == y.attrs.get('_ARRAY_DIMENSIONS'), n
    u, v = x[...], y[...]
    if x.fill_value is None and u.dtype.kind not in 'OU':
        # zarr 2.13 leaves absent chunks of a null fill uninitialised; we read them as 0.
        grid = [range((s + c - 1) // c) for s, c in zip(x.shape, x.chunks)]
        for idx in itertools.product(*grid):
            if x._chunk_key(idx) not in x.store:
                u[tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, x.chunks))] = 0
    if u.dtype.kind == 'f':
        u, v = u.view(f'u{u.dtype.itemsize}'), v.view(f'u{v.dtype.itemsize}')
    if v.dtype.kind == 'O':
        assert u.tolist() == v.tolist(), n
    else:
        assert np.array_equal(u, v), n
print(len(names))
)";

}  // namespace

// Every fixture, rechunked into odd sizes (7 variants x 3 samples) and written as a v2
// directory store: python3-zarr reads it, and its arrays equal the input's; --verify agrees.
TEST(Recompress, FixturesReadByPythonZarrWithEqualValues) {
  VCZ_REQUIRE_SHARED_DATA();
  VCZ_REQUIRE_PYTHON_ZARR();
  TempDir dir;
  const auto script = (dir / "compare.py").string();
  std::ofstream(script) << kCompareScript;
  for (const auto& name : kFixtures) {
    SCOPED_TRACE(name);
    const auto in = (shared_data() / "vcztools" / name).string();
    const auto out = (dir / (name + ".v2.vcz")).string();
    cli("recompress " + shell_quote(in) + " " + shell_quote(out) +
        " --zarr-format 2 --variants-chunk-size 7 --samples-chunk-size 3 --verify -t 2");
    const auto a = vz::Array::open(vz::open_store(out), "variant_position");
    EXPECT_EQ(a.chunks()[0], 7);
    if (name.ends_with("vcz3.zip")) {
      // python3-zarr 2.13 reads no v3: compare with the v2 fixture of the same VCF instead.
      const auto v2 = (shared_data() / "vcztools" / "sample.vcz.zip").string();
      const auto r = run(python() + " " + script + " " + shell_quote(v2) + " " + shell_quote(out));
      EXPECT_EQ(r.exit_code, 0) << r.err;
      continue;
    }
    const auto n = run_ok(python() + " " + script + " " + shell_quote(in) + " " + shell_quote(out));
    EXPECT_GT(std::stoi(n), 5);
  }
}

TEST(Recompress, AfdistIdenticalOnInputAndOutput) {
  VCZ_REQUIRE_SHARED_DATA();
  TempDir dir;
  for (const std::string name : {"chr22.vcz.zip", "sample.vcz.zip", "sample.vcz3.zip",
                                 "msprime_diploid.vcz.zip", "1kg_2020_chrM.vcz.zip"}) {
    SCOPED_TRACE(name);
    const auto in = (shared_data() / "vcztools" / name).string();
    for (const std::string args :
         {"--variants-chunk-size 9 --samples-chunk-size 4 --codec blosc-lz4",
          "--zarr-format 3 --codec zstd --clevel 3", "--codec none --shuffle none"}) {
      const auto out = (dir / "out.vcz.zip").string();
      cli("recompress -f " + shell_quote(in) + " " + shell_quote(out) + " " + args);
      EXPECT_EQ(cli("afdist " + shell_quote(in)), cli("afdist " + shell_quote(out))) << args;
      rc::verify_same(in, out, 2);
    }
  }
}

// Only call_genotype is re-encoded: the other arrays' keys are the input's, byte for byte.
TEST(Recompress, SelectedArraysAndVerbatimCopies) {
  TempDir dir;
  const auto in = (dir / "in.vcz").string();
  cli("simulate " + shell_quote(in) + " --samples 25 --variants 300 --variants-chunk-size 50 " +
      "--samples-chunk-size 10 --missing 0.01 -t 2");
  const auto out = (dir / "out.vcz").string();
  cli("recompress " + shell_quote(in) + " " + shell_quote(out) +
      " --arrays call_genotype --variants-chunk-size 64 --samples-chunk-size 25 --codec zstd "
      "--verify");
  const auto a = vz::open_store(in), b = vz::open_store(out);
  EXPECT_EQ(vz::Array::open(b, "call_genotype").chunks(), (std::vector<std::int64_t>{64, 25, 2}));
  EXPECT_EQ(vz::Array::open(b, "call_genotype").metadata().codecs, "zstd(7)");
  EXPECT_EQ(vz::Array::open(b, "call_genotype_mask").chunks(),
            (std::vector<std::int64_t>{50, 10, 2}));
  for (const auto& e : a->list("call_genotype_mask/")) {
    const auto x = a->get(e.key), y = b->get(e.key);
    ASSERT_TRUE(y.has_value()) << e.key;
    EXPECT_TRUE(std::equal(x->span().begin(), x->span().end(), y->span().begin(), y->span().end()))
        << e.key;
  }
  // An unknown array is a usage error, and nothing is written.
  const auto r = run(binary() + " recompress " + shell_quote(in) + " " +
                     shell_quote((dir / "x.vcz").string()) + " --arrays nope");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no array nope"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "x.vcz"));
}

// Small blocks whose chunk grids do not divide each other (input 50 x 10, output 30 x 7):
// the library streams block by block and every value lands where it belongs.
TEST(Recompress, SmallBlocksAndUnevenChunks) {
  TempDir dir;
  const auto in = (dir / "in.vcz").string();
  cli("simulate " + shell_quote(in) + " --samples 33 --variants 257 --variants-chunk-size 50 " +
      "--samples-chunk-size 10 --missing 0.02 -t 2");
  for (int format : {2, 3}) {
    rc::RecompressOptions o;
    o.variants_chunk_size = 30;
    o.samples_chunk_size = 7;
    o.zarr_format = format;
    o.block_bytes = 4096;
    o.threads = 3;
    std::int64_t last = -1, total = 0;
    o.progress = [&](std::int64_t d, std::int64_t t) {
      EXPECT_GE(d, last);
      last = d;
      total = t;
    };
    const auto out = dir / fmt::format("out{}.vcz", format);
    const auto report = rc::recompress(in, out, o);
    EXPECT_EQ(report.rewritten, report.arrays);
    EXPECT_EQ(report.variants, 257);
    EXPECT_EQ(last, total);
    rc::verify_same(in, out, 2);
    EXPECT_EQ(vz::open_group(*vz::open_store(out)).zarr_format, format);
  }
}

// verify_same notices a chunk that differs.
TEST(Recompress, VerifyFindsDifferences) {
  TempDir dir;
  const auto a = (dir / "a.vcz").string(), b = (dir / "b.vcz").string(),
             c = (dir / "c.vcz").string();
  const std::string args = " --samples 20 --variants 100 --variants-chunk-size 50 -t 1";
  cli("simulate " + shell_quote(a) + args + " --seed 1");
  cli("simulate " + shell_quote(c) + args + " --seed 2");
  cli("recompress " + shell_quote(a) + " " + shell_quote(b));
  rc::verify_same(a, b, 1);
  fs::copy_file(fs::path(c) / "call_genotype" / "1.0.0", fs::path(b) / "call_genotype" / "1.0.0",
                fs::copy_options::overwrite_existing);
  try {
    rc::verify_same(a, b, 1);
    ADD_FAILURE() << "verify_same did not notice the changed chunk";
  } catch (const vczstats::FormatError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("call_genotype["), std::string::npos) << what;
    EXPECT_NE(what.find("]: values"), std::string::npos) << what;
  }
}
