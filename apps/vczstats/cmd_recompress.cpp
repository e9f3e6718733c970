// vczstats recompress: rechunk and re-encode a store (all arrays or some), directory or zip.

#include <fmt/format.h>

#include <memory>
#include <sstream>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/error.hpp"
#include "vczstats/recompress.hpp"

namespace vczstats::cli {
namespace {

struct RecompressCliOptions : StoreWriteOptions {
  RecompressCliOptions() {
    variants_chunk_size = 0;  // as the input's
    samples_chunk_size = 0;
    zarr_format = 0;
  }
  std::string input, arrays, codec = "blosc-zstd", shuffle = "auto", preset;
  int clevel = -1;
  bool verify = false;
  zarr::StoreOptions remote;
};

void run_recompress(RecompressCliOptions& o) {
  if (o.preset == "gpu") {
    // Device decode (issue 10): blosc's blocks are independent streams the device decodes in
    // parallel, and bit shuffle keeps the ratio of genotype data. Of the candidates measured on
    // the H100 (bench/gpu_preset_candidates.sh, README), zstd level 3 in blosc gave the fastest
    // end-to-end run and about the best decode throughput x ratio (2x bio2zarr's level 7 decode
    // rate at 0.9x its ratio; LZ4 decodes no faster on the device and compresses half as well).
    o.codec = "blosc-zstd";
    o.shuffle = "bit";
    if (o.clevel < 0) o.clevel = 3;
  }
  recompress::RecompressOptions r;
  std::istringstream list(o.arrays);
  for (std::string a; std::getline(list, a, ',');)
    if (!a.empty()) r.arrays.push_back(a);
  if (o.codec == "none") {
    r.compression.kind = zarr::Compression::Kind::None;
  } else if (o.codec == "zstd") {
    r.compression.kind = zarr::Compression::Kind::Zstd;
  } else {
    r.compression.kind = zarr::Compression::Kind::Blosc;
    r.compression.blosc_cname = o.codec == "blosc-lz4" ? "lz4" : "zstd";
  }
  r.compression.level = o.clevel >= 0 ? o.clevel : o.codec == "blosc-lz4" ? 5 : 7;
  r.auto_shuffle = o.shuffle == "auto";
  r.compression.shuffle = o.shuffle == "bit"    ? zarr::Shuffle::Bit
                          : o.shuffle == "byte" ? zarr::Shuffle::Byte
                                                : zarr::Shuffle::None;
  r.variants_chunk_size = o.variants_chunk_size;
  r.samples_chunk_size = o.samples_chunk_size;
  r.zarr_format = o.zarr_format;
  r.threads = o.threads;
  r.input_store = remote_options(o.remote, o.verbose);
  OutputStore out(o.output, o.force);
  r.cancelled = &out.cancelled();
  if (auto bar = progress_bar(o.progress))
    r.progress = [bar](std::int64_t done, std::int64_t total) { bar(done, total, -1); };
  const auto store = out.work() / "store";
  const auto report = recompress::recompress(o.input, store, r);
  if (o.verify) recompress::verify_same(o.input, store, o.threads, r.input_store);
  out.commit_store(store);
  if (o.verbose) {
    const double s = report.seconds > 0 ? report.seconds : 1e-9;
    fmt::print(stderr,
               "vczstats: wrote {}: {} arrays ({} re-encoded, {} copied), {:.1f} MiB stored from "
               "{:.1f} MiB{}\n",
               o.output, report.arrays, report.rewritten, report.arrays - report.rewritten,
               static_cast<double>(report.output_stored_bytes) / (1 << 20),
               static_cast<double>(report.input_stored_bytes) / (1 << 20),
               o.verify ? "; verified: every array equals the input's" : "");
    fmt::print(stderr, "vczstats: {:.3f} s: {:.3f} GB/s decoded, {:.0f} variants/s\n",
               report.seconds, static_cast<double>(report.decoded_bytes) / s * 1e-9,
               static_cast<double>(report.variants) / s);
    report_io(report.input_io);
  }
}

}  // namespace

void add_recompress_command(CLI::App& app) {
  auto o = std::make_shared<RecompressCliOptions>();
  auto* cmd = app.add_subcommand(
      "recompress",
      "Rechunk and re-encode a Zarr store (directory or zip, v2 or v3) into OUT (a directory, "
      "or a zip store when it ends in .zip). Every array is re-encoded with --codec, chunked "
      "along its 'variants' and 'samples' dimensions as asked (other dimensions keep their "
      "chunks); with --arrays, only those, and the others are copied byte for byte (or, when "
      "--zarr-format changes, re-encoded with blosc zstd 7 and their own chunks). Streamed: "
      "one block at a time, a box whose sides are multiples of both the input and the output "
      "chunk sizes (up to 256 MiB, more when their least common multiple is larger), decoded "
      "and encoded on -t threads; every input chunk is decoded once. --verify reads OUT back "
      "and compares every array and attribute with IN. Output is unsharded (v3 sharding is not "
      "written). Built in a temporary sibling and renamed into place.");
  cmd->add_option("IN", o->input,
                  "Input store: a directory, a .zip, or a URL (http(s)://, s3://, gs://)")
      ->required();
  add_remote_options(*cmd, o->remote);
  add_store_write_options(*cmd, *o, "Threads decoding and encoding [default: all cores]");
  cmd->add_option("--arrays", o->arrays, "Arrays to re-encode, comma-separated [default: all]");
  cmd->add_option("--codec", o->codec, "Codec: blosc-zstd, blosc-lz4, zstd or none")
      ->check(CLI::IsMember({"blosc-zstd", "blosc-lz4", "zstd", "none"}))
      ->capture_default_str();
  cmd->add_option("--shuffle", o->shuffle,
                  "Blosc shuffle: auto (bit for 1-byte elements, byte otherwise), none, byte, bit")
      ->check(CLI::IsMember({"auto", "none", "byte", "bit"}))
      ->capture_default_str();
  auto* preset = cmd->add_option("--preset", o->preset,
                                 "gpu: an encoding for device decode (--gpu-decode): blosc zstd "
                                 "with bit shuffle, level 3 unless --clevel")
                     ->check(CLI::IsMember({"gpu"}));
  preset->excludes(cmd->get_option("--codec"))->excludes(cmd->get_option("--shuffle"));
  cmd->add_option("--clevel", o->clevel, "Compression level [default: 7; 5 for blosc-lz4]")
      ->check(CLI::Range(0, 22));
  cmd->add_flag("--verify", o->verify, "Read the output back and compare every array with IN");
  cmd->callback([o] { run_store_command([&] { run_recompress(*o); }); });
}

}  // namespace vczstats::cli
