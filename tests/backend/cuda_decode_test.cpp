// The batched device chunk decoder (src/backend/cuda/decode/chunk_decoder.cuh) on the GPU
// (skipped without one): the LZ4 corpus of liblz4 and the blosc corpus of libblosc (every
// typesize, shuffle, internal codec, split mode and size class) decode to the reference
// libraries' output; every chunk of every decodable array of the zarr fixtures and
// ../shared/data decodes to zarr::Array::read_chunk; absent chunks read as the fill value;
// destinations at odd addresses work; a corrupt chunk in a batch is named by check(), and a
// corrupt header by enqueue(). While the zstd decoder is the stand-in (zstd_stand_in.hpp is
// there), chunks with zstd streams must fail as Unsupported instead of decoding.

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "backend/decode_test_support.hpp"
#include "backend/gpu_test_support.hpp"
#include "vczstats/error.hpp"
#ifdef VCZSTATS_HAVE_CUDA
#include "backend/cuda/decode/chunk_decoder.cuh"
#endif

using namespace decodetest;
using vczstats::FormatError;

#ifdef VCZSTATS_HAVE_CUDA
namespace {

namespace vc = vczstats::cuda;

/// Decodes chunks on the device, one batch per call, into one device buffer whose chunk
/// destinations are at odd offsets every third chunk (unaligned paths).
class DeviceRunner {
 public:
  DeviceRunner() : decoder_(pool_, stream_.get()) {}

  /// Decode @p chunks (nullopt bytes: absent) as one batch; returns the decoded bytes of each.
  /// @throws FormatError from enqueue() or check().
  std::vector<std::vector<std::byte>> decode(
      const std::vector<std::optional<std::span<const std::byte>>>& bytes,
      const std::vector<const zarr::ChunkEncoding*>& encodings,
      const std::vector<std::string>& names) {
    std::vector<std::uint64_t> offsets;
    std::uint64_t total = 0;
    for (std::size_t k = 0; k < encodings.size(); ++k) {
      total = (total + 15) / 16 * 16 + (k % 3 == 2 ? 1 : 0);
      offsets.push_back(total);
      total += encodings[k]->decoded_bytes();
    }
    vc::DeviceBuffer out(pool_, static_cast<std::int64_t>(total + 16), stream_.get());
    batch_.clear();
    for (std::size_t k = 0; k < encodings.size(); ++k)
      batch_.add_bytes(bytes[k], *encodings[k], out.data() + offsets[k], names[k]);
    decoder_.enqueue(batch_.input(), batch_.chunks());
    std::vector<std::byte> host(static_cast<std::size_t>(total));
    if (total > 0)
      VCZ_CUDA_CHECK(
          cudaMemcpyAsync(host.data(), out.data(), total, cudaMemcpyDeviceToHost, stream_.get()));
    stream_.synchronize();
    decoder_.check();
    std::vector<std::vector<std::byte>> result;
    for (std::size_t k = 0; k < encodings.size(); ++k) {
      const auto* p = host.data() + offsets[k];
      result.emplace_back(p, p + encodings[k]->decoded_bytes());
    }
    return result;
  }

  /// The same for corpus chunks.
  std::vector<std::vector<std::byte>> decode(const std::vector<const CorpusChunk*>& chunks) {
    std::vector<std::optional<std::span<const std::byte>>> bytes;
    std::vector<const zarr::ChunkEncoding*> encodings;
    std::vector<std::string> names;
    for (const auto* c : chunks) {
      bytes.emplace_back(std::span<const std::byte>(c->encoded));
      encodings.push_back(&c->encoding);
      names.push_back(c->name);
    }
    return decode(bytes, encodings, names);
  }

  const vc::decode::DeviceChunkDecoder& decoder() const { return decoder_; }

 private:
  vc::DevicePool pool_;
  vc::Stream stream_;
  vc::decode::DeviceChunkDecoder decoder_;
  vc::decode::EncodedBatch batch_;
};

/// Decode @p corpus in batches of @p batch chunks and compare with the expected bytes.
void check_corpus(DeviceRunner& runner, const std::vector<CorpusChunk>& corpus, std::size_t batch) {
  for (std::size_t first = 0; first < corpus.size(); first += batch) {
    std::vector<const CorpusChunk*> chunks;
    for (std::size_t k = first; k < std::min(corpus.size(), first + batch); ++k)
      chunks.push_back(&corpus[k]);
    std::vector<std::vector<std::byte>> got;
    try {
      got = runner.decode(chunks);
    } catch (const FormatError& e) {
      FAIL() << e.what();
    }
    for (std::size_t k = 0; k < chunks.size(); ++k)
      ASSERT_EQ(got[k], chunks[k]->expected) << chunks[k]->name;
  }
}

}  // namespace
#endif

TEST(CudaChunkDecoder, Lz4Corpus) {
  VCZ_REQUIRE_GPU();
#ifdef VCZSTATS_HAVE_CUDA
  DeviceRunner runner;
  check_corpus(runner, lz4_corpus(), 64);
#endif
}

TEST(CudaChunkDecoder, BloscCorpus) {
  VCZ_REQUIRE_GPU();
#ifdef VCZSTATS_HAVE_CUDA
  DeviceRunner runner;
  check_corpus(runner, blosc_corpus(), 200);
#endif
}

TEST(CudaChunkDecoder, StoresMatchReadChunk) {
  VCZ_REQUIRE_GPU();
#ifdef VCZSTATS_HAVE_CUDA
  const auto stores = test_stores();
  if (stores.empty()) GTEST_SKIP() << "skipped: neither python3-zarr nor ../shared/data is here";
  DeviceRunner runner;
  std::size_t arrays = 0, chunks = 0;
  for (const auto& path : stores) {
    const auto store = zarr::open_store(path);
    for_each_array(store, [&](const zarr::Array& a) {
      if (!zarr::device_decodable(a.chunk_encoding())) return;
      ++arrays;
      const auto indices = chunk_indices(a);
      constexpr std::size_t kBatch = 128;
      for (std::size_t first = 0; first < indices.size(); first += kBatch) {
        std::vector<std::optional<zarr::Bytes>> held;
        std::vector<std::optional<std::span<const std::byte>>> bytes;
        std::vector<const zarr::ChunkEncoding*> encodings;
        std::vector<std::string> names;
        std::vector<std::size_t> which;
        for (std::size_t k = first; k < std::min(indices.size(), first + kBatch); ++k) {
          held.push_back(a.read_chunk_encoded(indices[k]));
          std::optional<std::span<const std::byte>> span;
          if (held.back()) span = held.back()->span();
          bytes.push_back(span);
          encodings.push_back(&a.chunk_encoding());
          names.push_back(a.chunk_key(indices[k]));
          which.push_back(k);
        }
        std::vector<std::vector<std::byte>> got;
        try {
          got = runner.decode(bytes, encodings, names);
        } catch (const FormatError& e) {
          FAIL() << path << ": " << e.what();
        }
        std::vector<std::byte> want(static_cast<std::size_t>(a.chunk_bytes()));
        for (std::size_t j = 0; j < which.size(); ++j) {
          a.read_chunk(indices[which[j]], want);
          ASSERT_EQ(got[j], want) << path << " " << names[j];
          ++chunks;
        }
      }
    });
  }
  std::cout << "decoded " << chunks << " chunks of " << arrays << " arrays on the GPU\n";
  EXPECT_GT(chunks, 100u);
#endif
}

TEST(CudaChunkDecoder, AbsentChunksReadAsFill) {
  VCZ_REQUIRE_GPU();
#ifdef VCZSTATS_HAVE_CUDA
  zarr::ChunkEncoding e = byte_encoding(0, zarr::BytesCodecSpec::Kind::Lz4, "lz4");
  e.shape = {7, 5, 3};
  e.itemsize = 2;
  e.fill_value = {std::byte{0xFE}, std::byte{0xFF}};  // int16 -2
  DeviceRunner runner;
  const auto got = runner.decode({std::nullopt, std::nullopt}, {&e, &e}, {"a", "b"});
  for (const auto& chunk : got) {
    ASSERT_EQ(chunk.size(), 7u * 5 * 3 * 2);
    for (std::size_t i = 0; i < chunk.size(); i += 2) {
      ASSERT_EQ(chunk[i], std::byte{0xFE});
      ASSERT_EQ(chunk[i + 1], std::byte{0xFF});
    }
  }
#endif
}

TEST(CudaChunkDecoder, CorruptChunkIsNamed) {
  VCZ_REQUIRE_GPU();
#ifdef VCZSTATS_HAVE_CUDA
  std::mt19937_64 rng(23);
  std::vector<CorpusChunk> chunks;
  for (int k = 0; k < 6; ++k) {
    chunks.push_back(lz4_chunk(make_data(rng, 20000, 0), 0));
    chunks.back().name = "good-" + std::to_string(k);
  }
  // Chunk 3's LZ4 block loses its last bytes: its header is intact, the stream is truncated.
  chunks[3].name = "store: array call_genotype: chunk call_genotype/3.0.0";
  chunks[3].encoded.resize(chunks[3].encoded.size() - 7);
  std::vector<const CorpusChunk*> ptrs;
  for (const auto& c : chunks) ptrs.push_back(&c);
  DeviceRunner runner;
  try {
    runner.decode(ptrs);
    FAIL() << "a truncated chunk decoded";
  } catch (const FormatError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(chunks[3].name + ": lz4 stream", 0), 0u) << what;
  }
  // A corrupt blosc header is found while framing, before anything is queued.
  auto blosc = blosc_chunk(make_data(rng, 20000, 0), "lz4", 5, 1, 4, 0, BLOSC_ALWAYS_SPLIT);
  blosc.name = "store: array x: chunk x/1";
  blosc.encoded[8] = blosc.encoded[9] = blosc.encoded[10] = blosc.encoded[11] = std::byte{0};
  try {
    runner.decode({&chunks[0], &blosc});
    FAIL() << "a corrupt blosc header was accepted";
  } catch (const FormatError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(blosc.name + ": blosc", 0), 0u) << e.what();
  }
  // The decoder still works after errors.
  const auto again = runner.decode({&chunks[0], &chunks[1]});
  EXPECT_EQ(again[0], chunks[0].expected);
  EXPECT_EQ(again[1], chunks[1].expected);
#endif
}
