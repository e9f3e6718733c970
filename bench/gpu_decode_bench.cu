// Benchmark of the batched device chunk decoder (src/backend/cuda/decode/chunk_decoder.cuh).
//
// Reads every chunk of one array of a store (default call_genotype) into pinned host memory,
// groups the chunks by how they are encoded (e.g. "blosc zstd bitshuffle typesize 1"), and for
// each group, --reps times after a warm-up, decodes all its chunks through DeviceChunkDecoder in
// batches of about --batch-mib MiB of decoded bytes, timed with CUDA events from the first
// host-to-device copy (compressed bytes and job lists) to the last stage (host framing,
// DeviceChunkDecoder::prepare, is timed separately on the CPU). The
// first run is checked byte for byte against zarr::Array::read_chunk (libblosc/libzstd/liblz4).
// Peers measured in the same run:
//   - a device-to-device cudaMemcpy of the same number of decoded bytes (read + write roof);
//   - host decode of the same chunks with libblosc/libzstd/liblz4 (Array::read_chunk) on all
//     hardware threads (--threads), median wall time.
// Prints a Markdown table: decoded GB/s per codec group, and the peers.
//
// Usage: gpu_decode_bench --store PATH [--array NAME] [--reps N] [--batch-mib N] [--threads N]

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backend/cuda/cuda_util.cuh"
#include "backend/cuda/decode/chunk_decoder.cuh"
#include "backend/cuda/decode/framing.hpp"
#include "gpu_timing.cuh"
#include "vczstats/error.hpp"
#include "vczstats/zarr.hpp"

using namespace vczstats;
namespace dec = vczstats::cuda::decode;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// A label for how a chunk is encoded, from its blosc header when it has one.
std::string group_of(const zarr::ChunkEncoding& e, const std::optional<zarr::Bytes>& bytes) {
  if (!bytes) return "absent (fill)";
  if (e.layout == zarr::ChunkEncoding::Layout::Sharding) return "sharded";
  if (e.bytes_codecs.empty()) return "bytes (stored)";
  const auto& c = e.bytes_codecs[0];
  if (c.kind != zarr::BytesCodecSpec::Kind::Blosc) return c.name;
  if (bytes->size() < 16) return "blosc (short)";
  const auto* h = reinterpret_cast<const std::uint8_t*>(bytes->data());
  if (h[2] & 0x2) return "blosc memcpyed";
  static const char* codecs[] = {"blosclz", "lz4", "snappy", "zlib", "zstd", "?", "?", "?"};
  const char* shuffle = (h[2] & 0x1) && h[3] > 1 ? "shuffle"
                        : (h[2] & 0x4)           ? "bitshuffle"
                                                 : "noshuffle";
  return std::string("blosc ") + codecs[h[2] >> 5] + " " + shuffle + " typesize " +
         std::to_string(h[3]);
}

struct Chunk {
  std::vector<std::int64_t> index;
  std::optional<zarr::Bytes> bytes;
};

struct Result {
  std::string group;
  std::size_t chunks = 0;
  double compressed_mb = 0, decoded_mb = 0;
  double device_gbs = 0, framing_ms = 0, copy_gbs = 0, host_gbs = 0;
  std::string note;
};

/// Host decode of @p chunks with @p threads threads: seconds.
double host_decode(const zarr::Array& a, const std::vector<const Chunk*>& chunks, int threads) {
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::vector<std::byte> out(static_cast<std::size_t>(a.chunk_bytes()));
      for (std::size_t k = static_cast<std::size_t>(t); k < chunks.size();
           k += static_cast<std::size_t>(threads))
        a.read_chunk(chunks[k]->index, out);
    });
  for (auto& th : pool) th.join();
  return seconds_since(t0);
}

Result run_group(const zarr::Array& a, const std::string& group,
                 const std::vector<const Chunk*>& chunks, int reps, std::uint64_t batch_bytes,
                 int threads, cuda::DevicePool& pool, cuda::Stream& stream) {
  Result r;
  r.group = group;
  r.chunks = chunks.size();
  const auto chunk_bytes = static_cast<std::uint64_t>(a.chunk_bytes());
  for (const auto* c : chunks) r.compressed_mb += c->bytes ? c->bytes->size() / 1e6 : 0;
  r.decoded_mb = static_cast<double>(chunk_bytes * chunks.size()) / 1e6;
  // Batches of whole chunks.
  const std::size_t per_batch = static_cast<std::size_t>(
      std::max<std::uint64_t>(1, batch_bytes / std::max<std::uint64_t>(chunk_bytes, 1)));
  std::vector<dec::EncodedBatch> batches((chunks.size() + per_batch - 1) / per_batch);
  cuda::DeviceBuffer out(pool, static_cast<std::int64_t>(per_batch * chunk_bytes), stream.get());
  for (std::size_t b = 0; b < batches.size(); ++b)
    for (std::size_t k = b * per_batch; k < std::min(chunks.size(), (b + 1) * per_batch); ++k) {
      std::optional<std::span<const std::byte>> span;
      if (chunks[k]->bytes) span = chunks[k]->bytes->span();
      batches[b].add_bytes(span, a.chunk_encoding(), out.data() + (k - b * per_batch) * chunk_bytes,
                           a.chunk_key(chunks[k]->index));
    }
  dec::DeviceChunkDecoder decoder(pool, stream.get());
  cuda::Event start(true), stop(true);
  std::vector<double> device_s, framing_s;
  std::vector<std::byte> host(static_cast<std::size_t>(per_batch * chunk_bytes));
  std::vector<std::byte> want(static_cast<std::size_t>(chunk_bytes));
  try {
    for (int rep = 0; rep <= reps; ++rep) {  // rep 0: warm-up and check
      float ms_total = 0;
      double framing = 0;
      for (std::size_t b = 0; b < batches.size(); ++b) {
        const auto t0 = Clock::now();
        decoder.prepare(batches[b].input(), batches[b].chunks());
        framing += seconds_since(t0);
        start.record(stream.get());
        decoder.launch();
        stop.record(stream.get());
        stop.synchronize();
        decoder.check();
        float ms = 0;
        VCZ_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
        ms_total += ms;
        if (rep == 0) {
          const std::size_t n = batches[b].chunks().size();
          VCZ_CUDA_CHECK(
              cudaMemcpy(host.data(), out.data(), n * chunk_bytes, cudaMemcpyDeviceToHost));
          for (std::size_t k = 0; k < n; ++k) {
            a.read_chunk(chunks[b * per_batch + k]->index, want);
            if (std::memcmp(host.data() + k * chunk_bytes, want.data(), chunk_bytes) != 0)
              throw FormatError("device decode differs from read_chunk at chunk " +
                                a.chunk_key(chunks[b * per_batch + k]->index));
          }
        }
      }
      if (rep > 0) {
        device_s.push_back(ms_total / 1e3);
        framing_s.push_back(framing);
      }
    }
    r.device_gbs = r.decoded_mb / 1e3 / bench::median(device_s);
    r.framing_ms = bench::median(framing_s) * 1e3;
  } catch (const FormatError& e) {
    r.note = e.what();
  }
  // Peer: a device-to-device copy of the same decoded bytes (in batch-sized pieces).
  {
    cuda::DeviceBuffer from(pool, static_cast<std::int64_t>(per_batch * chunk_bytes), stream.get());
    std::vector<double> copy_s;
    for (int rep = 0; rep <= reps; ++rep) {
      start.record(stream.get());
      std::uint64_t left = chunk_bytes * chunks.size();
      while (left > 0) {
        const std::uint64_t n = std::min<std::uint64_t>(left, per_batch * chunk_bytes);
        VCZ_CUDA_CHECK(
            cudaMemcpyAsync(out.data(), from.data(), n, cudaMemcpyDeviceToDevice, stream.get()));
        left -= n;
      }
      stop.record(stream.get());
      stop.synchronize();
      float ms = 0;
      VCZ_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      if (rep > 0) copy_s.push_back(ms / 1e3);
    }
    r.copy_gbs = r.decoded_mb / 1e3 / bench::median(copy_s);
  }
  // Peer: host decode on all threads.
  std::vector<double> host_s;
  for (int rep = 0; rep <= std::min(reps, 5); ++rep) {
    const double s = host_decode(a, chunks, threads);
    if (rep > 0) host_s.push_back(s);
  }
  r.host_gbs = r.decoded_mb / 1e3 / bench::median(host_s);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string store_path, array_name = "call_genotype";
  int reps = 5;
  std::uint64_t batch_mib = 256;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--store")
      store_path = argv[i + 1];
    else if (k == "--array")
      array_name = argv[i + 1];
    else if (k == "--reps")
      reps = std::max(1, std::atoi(argv[i + 1]));
    else if (k == "--batch-mib")
      batch_mib = static_cast<std::uint64_t>(std::max(1, std::atoi(argv[i + 1])));
    else if (k == "--threads")
      threads = std::max(1, std::atoi(argv[i + 1]));
    else
      store_path.clear(), i = argc;
  }
  if (store_path.empty()) {
    std::fprintf(stderr,
                 "usage: %s --store PATH [--array NAME] [--reps N] [--batch-mib N] "
                 "[--threads N]\n",
                 argv[0]);
    return 2;
  }
  try {
    VCZ_CUDA_CHECK(cudaSetDevice(0));
    const cuda::DeviceInfo info = cuda::device_info(0);
    const auto store = zarr::open_store(store_path);
    const auto a = zarr::Array::open(store, array_name);
    std::string why;
    if (!zarr::device_decodable(a.chunk_encoding(), &why)) {
      std::fprintf(stderr, "%s: %s has no device decoder: %s\n", store_path.c_str(),
                   array_name.c_str(), why.c_str());
      return 1;
    }
    // Every chunk, grouped by encoding.
    std::vector<Chunk> all;
    {
      const int n = a.ndim();
      std::vector<std::int64_t> grid(static_cast<std::size_t>(n));
      std::int64_t total = 1;
      for (int d = 0; d < n; ++d) total *= grid[static_cast<std::size_t>(d)] = a.num_chunks(d);
      for (std::int64_t i = 0; i < total; ++i) {
        Chunk c;
        c.index.resize(static_cast<std::size_t>(n));
        std::int64_t rest = i;
        for (int d = n; d-- > 0;) {
          c.index[static_cast<std::size_t>(d)] = rest % grid[static_cast<std::size_t>(d)];
          rest /= grid[static_cast<std::size_t>(d)];
        }
        c.bytes = a.read_chunk_encoded(c.index);
        all.push_back(std::move(c));
      }
    }
    std::map<std::string, std::vector<const Chunk*>> groups;
    for (const auto& c : all) groups[group_of(a.chunk_encoding(), c.bytes)].push_back(&c);
    cuda::DevicePool pool(0);
    cuda::Stream stream;
    std::printf(
        "# gpu_decode_bench: %s, array %s (%s, chunks %s), %s (%d SMs), %d host threads\n\n",
        store_path.c_str(), array_name.c_str(), a.metadata().codecs.c_str(),
        a.metadata().dtype.name().c_str(), info.name.c_str(), info.multiprocessors, threads);
    std::printf(
        "| encoding | chunks | compressed MB | decoded MB | device decode GB/s | host "
        "framing ms | D2D copy GB/s | host decode GB/s (%d threads) | note |\n",
        threads);
    std::printf("|---|---|---|---|---|---|---|---|---|\n");
    std::vector<const Chunk*> everything;
    for (const auto& c : all) everything.push_back(&c);
    groups["all chunks"] = everything;
    for (const auto& [name, chunks] : groups) {
      const Result r = run_group(a, name, chunks, reps, batch_mib << 20, threads, pool, stream);
      std::printf("| %s | %zu | %.1f | %.1f | %.1f | %.2f | %.1f | %.1f | %s |\n", r.group.c_str(),
                  r.chunks, r.compressed_mb, r.decoded_mb, r.device_gbs, r.framing_ms, r.copy_gbs,
                  r.host_gbs, r.note.c_str());
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_decode_bench: %s\n", e.what());
    return 1;
  }
}
