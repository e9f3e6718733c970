// The zstd decoding kernel (ZstdDeviceDecoder, src/backend/cuda/decode/zstd_decoder.cu) on the
// GPU; skips without one. The host tests (zstd_decode_test.cpp) check the same per-task code as
// a warp of one lane and as emulated warps; here the real warps run it:
//  - CudaZstdGpu.CorpusMatchesLibzstd: the host tests' corpus (libzstd frames of every kind) in
//    one batch, inputs and outputs at unaligned offsets of two big buffers, a few tasks of other
//    codecs among them (skipped: their status stays as it was): every output equal to the data
//    libzstd compressed, and no byte written outside the tasks' outputs;
//  - CudaZstdGpu.CorruptBatchFailsLikeTheHost: truncated and mutated frames that the host
//    decoder rejects: every status an error, the same error and the same number of bytes
//    produced as on the host, nothing written outside the outputs (run it under
//    compute-sanitizer memcheck too);
//  - CudaZstdGpu.OrderedAcrossStreams: decode() on two streams in turn, and an empty batch;
//  - CudaZstdGpu.SequenceStreamReadPastItsStartIsCorrupt: the fuzz corpus input of
//    HostileGpuDecode.ZstdSequenceStreamReadPastItsStartIsCorrupt (libzstd takes it, the format
//    does not): Corrupt with the host's 139929 bytes, in outputs of several sizes.

#include <gtest/gtest.h>

#ifdef VCZSTATS_HAVE_CUDA

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/decode/zstd_decode.hpp"
#include "backend/cuda/decode/zstd_decoder.cuh"
#include "backend/gpu_test_support.hpp"
#include "backend/zstd_corpus.hpp"

namespace dec = vczstats::cuda::decode;
namespace vc = vczstats::cuda;
using dec::DecodeError;
using zstdtest::Bytes;

namespace {

constexpr std::uint8_t kGuard = 0xA5;

/// One input of a batch: the bytes to decode and the output size.
struct Input {
  std::string name;
  Bytes src;
  std::uint64_t dst_size = 0;
  dec::TaskCodec codec = dec::TaskCodec::Zstd;
};

/// A batch laid out in two device buffers: inputs and outputs at odd offsets, a gap of guard
/// bytes after each output.
struct BatchResult {
  std::vector<dec::DecodeStatus> status;
  std::vector<Bytes> out;
  std::vector<std::string> guard_errors;
};

BatchResult run_batch(const std::vector<Input>& inputs, int stream_count = 1) {
  std::vector<std::uint64_t> src_off, dst_off;
  std::uint64_t src_total = 0, dst_total = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    src_off.push_back(src_total);
    dst_off.push_back(dst_total);
    src_total += inputs[i].src.size() + 1 + i % 7;  // odd alignments
    dst_total += inputs[i].dst_size + 3 + i % 5;    // guard bytes in between
  }
  dst_total += 16;
  Bytes h_src(src_total, 0), h_dst(dst_total, kGuard);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].src.empty())
      std::memcpy(h_src.data() + src_off[i], inputs[i].src.data(), inputs[i].src.size());

  vc::Stream stream;
  vc::Stream other;
  vc::DevicePool pool(0);
  vc::DeviceBuffer d_src(pool, static_cast<std::int64_t>(src_total), stream.get());
  vc::DeviceBuffer d_dst(pool, static_cast<std::int64_t>(dst_total), stream.get());
  const auto n = static_cast<std::int64_t>(inputs.size());
  vc::DeviceBuffer d_tasks(pool, n * static_cast<std::int64_t>(sizeof(dec::DecodeTask)),
                           stream.get());
  vc::DeviceBuffer d_status(pool, n * static_cast<std::int64_t>(sizeof(dec::DecodeStatus)),
                            stream.get());
  std::vector<dec::DecodeTask> tasks(inputs.size());
  std::vector<dec::DecodeStatus> status(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    tasks[i].src = d_src.as<std::uint8_t>() + src_off[i];
    tasks[i].src_size = inputs[i].src.size();
    tasks[i].dst = d_dst.as<std::uint8_t>() + dst_off[i];
    tasks[i].dst_size = inputs[i].dst_size;
    tasks[i].codec = inputs[i].codec;
    status[i].error = -7;  // a value no decoder writes
    status[i].detail = 12345;
  }
  VCZ_CUDA_CHECK(
      cudaMemcpyAsync(d_src.data(), h_src.data(), src_total, cudaMemcpyHostToDevice, stream.get()));
  VCZ_CUDA_CHECK(
      cudaMemcpyAsync(d_dst.data(), h_dst.data(), dst_total, cudaMemcpyHostToDevice, stream.get()));
  VCZ_CUDA_CHECK(cudaMemcpyAsync(d_tasks.data(), tasks.data(), n * sizeof(dec::DecodeTask),
                                 cudaMemcpyHostToDevice, stream.get()));
  VCZ_CUDA_CHECK(cudaMemcpyAsync(d_status.data(), status.data(), n * sizeof(dec::DecodeStatus),
                                 cudaMemcpyHostToDevice, stream.get()));
  {
    dec::ZstdDeviceDecoder decoder(pool, stream.get());
    if (stream_count == 1) {
      decoder.decode(d_tasks.as<dec::DecodeTask>(), d_status.as<dec::DecodeStatus>(), n,
                     stream.get());
    } else {
      // Halves on two streams, then everything again on the first: the decoder orders them.
      VCZ_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      const std::int64_t half = n / 2;
      decoder.decode(d_tasks.as<dec::DecodeTask>(), d_status.as<dec::DecodeStatus>(), half,
                     other.get());
      decoder.decode(d_tasks.as<dec::DecodeTask>() + half, d_status.as<dec::DecodeStatus>() + half,
                     n - half, stream.get());
      decoder.decode(d_tasks.as<dec::DecodeTask>(), d_status.as<dec::DecodeStatus>(), 0,
                     other.get());
      decoder.decode(d_tasks.as<dec::DecodeTask>(), d_status.as<dec::DecodeStatus>(), n,
                     other.get());
      VCZ_CUDA_CHECK(cudaStreamSynchronize(other.get()));
    }
  }
  VCZ_CUDA_CHECK(
      cudaMemcpyAsync(h_dst.data(), d_dst.data(), dst_total, cudaMemcpyDeviceToHost, stream.get()));
  VCZ_CUDA_CHECK(cudaMemcpyAsync(status.data(), d_status.data(), n * sizeof(dec::DecodeStatus),
                                 cudaMemcpyDeviceToHost, stream.get()));
  stream.synchronize();

  BatchResult r;
  r.status = status;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto* p = h_dst.data() + dst_off[i];
    r.out.emplace_back(p, p + inputs[i].dst_size);
    const std::uint64_t gap_end = i + 1 < inputs.size() ? dst_off[i + 1] : dst_total;
    for (std::uint64_t g = dst_off[i] + inputs[i].dst_size; g < gap_end; ++g)
      if (h_dst[g] != kGuard) {
        r.guard_errors.push_back(inputs[i].name + ": byte " +
                                 std::to_string(g - dst_off[i] - inputs[i].dst_size) +
                                 " after the output written");
        break;
      }
  }
  return r;
}

std::string describe(const dec::DecodeStatus& s) {
  return "error " + std::to_string(s.error) + " detail " + std::to_string(s.detail) + " produced " +
         std::to_string(s.produced);
}

}  // namespace

TEST(CudaZstdGpu, CorpusMatchesLibzstd) {
  VCZ_REQUIRE_GPU();
  const auto corpus = zstdtest::corpus(true);
  std::vector<Input> inputs;
  std::vector<const Bytes*> want;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    inputs.push_back(Input{corpus[i].name, corpus[i].frame, corpus[i].plain.size()});
    want.push_back(&corpus[i].plain);
    if (i % 20 == 5) {  // other codecs are left to other decoders
      inputs.push_back(Input{"lz4 task", Bytes(10, 1), 10, dec::TaskCodec::Lz4});
      want.push_back(nullptr);
    }
  }
  const BatchResult r = run_batch(inputs);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!want[i]) {
      EXPECT_EQ(r.status[i].error, -7) << "a task of another codec was touched";
      continue;
    }
    EXPECT_EQ(r.status[i].error, 0) << inputs[i].name << ": " << describe(r.status[i]);
    EXPECT_EQ(r.status[i].produced, want[i]->size()) << inputs[i].name;
    EXPECT_TRUE(r.out[i] == *want[i]) << inputs[i].name << ": output differs";
  }
  for (const auto& e : r.guard_errors) ADD_FAILURE() << e;
}

TEST(CudaZstdGpu, CorruptBatchFailsLikeTheHost) {
  VCZ_REQUIRE_GPU();
  const auto corpus = zstdtest::corpus(false);
  std::mt19937_64 rng(99);
  std::vector<Input> inputs;
  std::vector<dec::DecodeStatus> host;
  auto consider = [&](const std::string& name, Bytes bad, std::uint64_t dst_size) {
    const dec::DecodeStatus st = zstdtest::host_decode(bad, dst_size, nullptr, false).status;
    if (st.error == 0) return;  // a mutation that still decodes: not for this batch
    inputs.push_back(Input{name, std::move(bad), dst_size});
    host.push_back(st);
  };
  for (const auto& c : corpus) {
    if (c.frame.size() > 60000 || c.plain.size() > 700000) continue;
    for (int k = 0; k < 6; ++k) {
      const std::size_t cut = rng() % (c.frame.size() + 1);
      consider(c.name + " cut " + std::to_string(cut),
               Bytes(c.frame.begin(), c.frame.begin() + static_cast<std::ptrdiff_t>(cut)),
               c.plain.size());
    }
    for (int k = 0; k < 30; ++k) {
      Bytes bad = c.frame;
      if (bad.empty()) continue;
      for (int e = 0; e < 1 + static_cast<int>(rng() % 3); ++e) {
        const std::size_t at =
            rng() % 2 ? rng() % std::min<std::size_t>(64, bad.size()) : rng() % bad.size();
        bad[at] = rng() % 2 ? static_cast<std::uint8_t>(rng())
                            : static_cast<std::uint8_t>(bad[at] ^ (1u << (rng() % 8)));
      }
      consider(c.name + " mutated", std::move(bad), c.plain.size());
    }
    if (!c.plain.empty()) {
      consider(c.name + " dst too small", c.frame, c.plain.size() - 1);
      consider(c.name + " dst too large", c.frame, c.plain.size() + 1);
    }
  }
  ASSERT_GT(inputs.size(), 1000u);
  const BatchResult r = run_batch(inputs);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_NE(r.status[i].error, 0) << inputs[i].name;
    EXPECT_EQ(r.status[i].error, host[i].error)
        << inputs[i].name << ": device " << describe(r.status[i]) << ", host " << describe(host[i]);
    EXPECT_EQ(r.status[i].produced, host[i].produced) << inputs[i].name;
  }
  for (const auto& e : r.guard_errors) ADD_FAILURE() << e;
  std::printf("%zu corrupt tasks\n", inputs.size());
}

TEST(CudaZstdGpu, OrderedAcrossStreams) {
  VCZ_REQUIRE_GPU();
  const auto corpus = zstdtest::corpus(false);
  std::vector<Input> inputs;
  for (const auto& c : corpus) inputs.push_back(Input{c.name, c.frame, c.plain.size()});
  const BatchResult r = run_batch(inputs, 2);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(r.status[i].error, 0) << inputs[i].name << ": " << describe(r.status[i]);
    EXPECT_TRUE(r.out[i] == corpus[i].plain) << inputs[i].name;
  }
}

TEST(CudaZstdGpu, SequenceStreamReadPastItsStartIsCorrupt) {
  VCZ_REQUIRE_GPU();
  std::ifstream in(std::filesystem::path(VCZ_SOURCE_DIR) / "fuzz" / "corpus" / "gpu_zstd" /
                       "dba640640a28419b5ce4444ffdbc12f974b8aac5",
                   std::ios::binary);
  const Bytes frame((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(frame.size(), 24043u);
  std::vector<Input> inputs;
  for (const std::uint64_t size : {140035u, 140135u, 1u << 20})
    inputs.push_back(Input{"dst " + std::to_string(size), frame, size});
  const BatchResult r = run_batch(inputs);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const zstdtest::Decoded host = zstdtest::host_decode(frame, inputs[i].dst_size);
    EXPECT_EQ(host.error(), DecodeError::Corrupt) << inputs[i].name;
    EXPECT_EQ(host.status.produced, 139929u) << inputs[i].name;
    EXPECT_EQ(r.status[i].error, host.status.error)
        << inputs[i].name << ": " << describe(r.status[i]);
    EXPECT_EQ(r.status[i].produced, host.status.produced) << inputs[i].name;
    EXPECT_EQ(std::memcmp(r.out[i].data(), host.out.data(), 139929), 0) << inputs[i].name;
  }
  for (const auto& e : r.guard_errors) ADD_FAILURE() << e;
}

#endif  // VCZSTATS_HAVE_CUDA
