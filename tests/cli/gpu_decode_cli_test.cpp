// Where a GPU run would decode the genotypes (choose_gpu_decode), as `info` reports it and as
// --gpu-decode on enforces it; runs without a GPU (the choice is made from the store alone).
// The expectations come from how the test stores were written (codec, sample chunks).

#include <gtest/gtest.h>

#include "test_util.hpp"

using namespace vcztest;

TEST(GpuDecodeChoice, InfoSaysWhichPathAndWhyNot) {
  VCZ_REQUIRE_PYTHON_ZARR();
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  // zlib has no device decoder: host decode, naming the codec.
  const auto zlib = make_random_store(dir, "zlib", "--seed 11 --samples 40 --variants 60",
                                      "--compressor zlib --samples-chunk-size 1");
  auto info = run_ok(binary() + " info --device gpu " + zlib);
  EXPECT_EQ(info_field(info, "gpu_decode").rfind("host: ", 0), 0u) << info;
  EXPECT_NE(info_field(info, "gpu_decode").find("zlib"), std::string::npos) << info;
  // Blosc zstd with one sample per chunk: 40 sample chunks of one blosc block each (60 x 2 bytes),
  // enough
  // independent streams per work unit to decode on the device.
  const auto wide = make_random_store(dir, "wide", "--seed 12 --samples 40 --variants 60",
                                      "--samples-chunk-size 1");
  info = run_ok(binary() + " info --device gpu " + wide);
  EXPECT_EQ(info_field(info, "gpu_decode").rfind("device (40 sample chunks x 1 blosc block of", 0),
            0u)
      << info;
  EXPECT_NE(info.find("GPU decode: 40 independent compressed streams per work unit"),
            std::string::npos)
      << info;
  // One sample chunk (the whole 10000-variant chunk of 800 KB, a few blosc blocks): too few
  // independent streams to decode in parallel.
  const auto narrow = make_random_store(dir, "narrow", "--seed 13 --samples 40 --variants 60", "");
  info = run_ok(binary() + " info --device gpu " + narrow);
  EXPECT_EQ(info_field(info, "gpu_decode").rfind("host: only ", 0), 0u) << info;
  EXPECT_NE(info_field(info, "gpu_decode").find("(1 sample chunk x "), std::string::npos) << info;
  EXPECT_NE(info_field(info, "gpu_decode").find("too few chunks"), std::string::npos) << info;
  // Plain zstd: one stream per chunk.
  const auto zstd = make_random_store(dir, "zstd", "--seed 14 --samples 40 --variants 60",
                                      "--compressor zstd --samples-chunk-size 1");
  info = run_ok(binary() + " info --device gpu " + zstd);
  EXPECT_EQ(info_field(info, "gpu_decode"), "device (40 sample chunks x 1 zstd stream)") << info;
  // JSON says the same.
  const auto json = run_ok(binary() + " info --device gpu --format json " + zlib);
  EXPECT_NE(json.find("\"path\": \"host\""), std::string::npos) << json;
  EXPECT_NE(json.find("zlib"), std::string::npos) << json;
}

TEST(GpuDecodeChoice, OnWithANonDecodableStoreIsAUsageError) {
  VCZ_REQUIRE_PYTHON_ZARR();
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  const auto gzip =
      make_random_store(dir, "gzip", "--seed 15 --samples 6 --variants 30", "--compressor gzip");
  for (const std::string cmd : {"afdist", "stats --stats pi --window-size 1000", "freq"}) {
    const auto r = run(binary() + " " + cmd + " " + gzip + " --gpu-decode on");
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find("--gpu-decode on"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("array call_genotype"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("gzip"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // The CPU decodes everything: --device cpu ignores the setting; off and auto run anywhere.
  const std::string cpu = run_ok(binary() + " afdist " + gzip + " --device cpu");
  EXPECT_EQ(run_ok(binary() + " afdist " + gzip + " --device cpu --gpu-decode on"), cpu);
  EXPECT_EQ(run_ok(binary() + " afdist " + gzip + " --gpu-decode off"), cpu);
  EXPECT_EQ(run_ok(binary() + " afdist " + gzip + " --gpu-decode auto"), cpu);
  auto r = run(binary() + " afdist " + gzip + " --gpu-decode sometimes");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run(binary() + " afdist --help");
  EXPECT_NE(r.out.find("--gpu-decode"), std::string::npos) << r.out;
}

TEST(GpuDecodeChoice, RecompressPresetGpuWritesBloscZstd3BitShuffle) {
  VCZ_REQUIRE_PYTHON_ZARR();
  VCZ_REQUIRE_PROGRAM("bcftools");
  TempDir dir;
  const auto in = make_random_store(dir, "in", "--seed 16 --samples 40 --variants 80", "");
  const auto out = (dir / "gpu.vcz").string();
  run_ok(binary() + " recompress " + in + " " + out + " --preset gpu --samples-chunk-size 1");
  // Python's zarr reads what was written: blosc zstd 3, bit shuffle, the same genotypes.
  const std::string check =
      run_ok(python() +
             " -c \"import sys, zarr, numpy; a = zarr.open(sys.argv[1], mode='r')"
             "['call_genotype']; b = zarr.open(sys.argv[2], mode='r')['call_genotype']; "
             "c = b.compressor; print(c.codec_id, c.cname, c.clevel, c.shuffle, b.chunks[1], "
             "numpy.array_equal(a[:], b[:]))\" " +
             in + " " + out);
  EXPECT_EQ(check, "blosc zstd 3 2 1 True\n");
  EXPECT_EQ(info_field(run_ok(binary() + " info --device gpu " + out), "gpu_decode")
                .rfind("device (40 sample chunks x 1 blosc block of", 0),
            0u);
  EXPECT_EQ(run_ok(binary() + " afdist --device cpu " + out),
            run_ok(binary() + " afdist --device cpu " + in));
  const auto r = run(binary() + " recompress " + in + " " + (dir / "x.vcz").string() +
                     " --preset gpu --codec zstd");
  EXPECT_EQ(r.exit_code, 2) << r.err;
}
