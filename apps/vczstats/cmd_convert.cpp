// vczstats convert: VCF / VCF.gz / BCF to a VCF Zarr store (bio2zarr's layout), directory or zip.

#include <fmt/format.h>

#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/error.hpp"
#include "vczstats/thread_pool.hpp"

#ifdef VCZSTATS_HAVE_CONVERT
#include "vczstats/convert.hpp"
#include "vczstats/zarr_writer.hpp"

namespace vczstats::cli {
namespace {

struct ConvertCliOptions {
  std::string input, output;
  std::int64_t variants_chunk_size = 1000, samples_chunk_size = 10000;
  int zarr_format = 2;
  unsigned threads = 0;
  bool skip_bad = false, force = false, verbose = false;
  int progress = -1;
};

void run_convert(const ConvertCliOptions& o) {
  OutputStore out(o.output, o.force);
  convert::ConvertOptions c;
  c.variants_chunk_size = o.variants_chunk_size;
  c.samples_chunk_size = o.samples_chunk_size;
  c.zarr_format = o.zarr_format;
  c.threads = o.threads;
  c.skip_bad = o.skip_bad;
  c.cancelled = &out.cancelled();
  if (auto bar = progress_bar(o.progress)) {
    // The fraction of the input read drives the bar; variants are shown beside it.
    c.progress = [bar](std::int64_t variants, double fraction) {
      const auto done = fraction < 0 ? std::int64_t{0} : static_cast<std::int64_t>(fraction * 1000);
      bar(done, 1000, variants);
    };
  }
  const auto store = out.work() / "store";
  const auto report = convert::vcf_to_vcz(o.input, store, c);
  const bool zip = o.output.size() > 4 && o.output.ends_with(".zip");
  if (zip) {
    zarr::zip_directory(store, out.work() / "store.zip", &out.cancelled());
    out.commit(out.work() / "store.zip");
  } else {
    out.commit(store);
  }
  for (const auto& w : report.warnings) fmt::print(stderr, "vczstats: warning: {}\n", w);
  if (report.skipped > 0)
    fmt::print(stderr, "vczstats: skipped {} malformed records of {}\n", report.skipped, o.input);
  if (o.verbose) {
    const double s = report.seconds > 0 ? report.seconds : 1e-9;
    fmt::print(stderr,
               "vczstats: wrote {}: {} variants x {} samples x ploidy {}, up to {} alleles, {} "
               "arrays, {:.1f} MiB stored\n",
               o.output, report.variants, report.samples, report.ploidy, report.max_alleles,
               report.arrays, static_cast<double>(report.stored_bytes) / (1 << 20));
    fmt::print(stderr,
               "vczstats: conversion {:.3f} s: {:.0f} variants/s, {:.3g} genotype calls/s; {} "
               "arrays rewritten for a grown dimension\n",
               report.seconds, static_cast<double>(report.variants) / s,
               static_cast<double>(report.calls) / s, report.rewrites);
  }
}

}  // namespace

void add_convert_command(CLI::App& app) {
  auto o = std::make_shared<ConvertCliOptions>();
  auto* cmd = app.add_subcommand(
      "convert",
      "Convert a VCF, bgzipped VCF or BCF into a VCF Zarr store with the layout bio2zarr writes "
      "(vcf_zarr_version 0.4): every INFO and FORMAT field, genotypes, phasing and masks; blosc "
      "zstd compression. OUT is a directory, or a zip store when it ends in .zip. The store is "
      "built in a temporary sibling and renamed into place at the end, so a failed or "
      "interrupted conversion leaves nothing at OUT. Input must be sorted by contig and "
      "position.");
  cmd->add_option("IN", o->input, "Input VCF, VCF.gz (BGZF) or BCF; - for standard input")
      ->required();
  cmd->add_option("OUT", o->output, "Output store: a directory, or a .zip")->required();
  cmd->add_option("--variants-chunk-size", o->variants_chunk_size, "Variants per chunk")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--samples-chunk-size", o->samples_chunk_size, "Samples per chunk")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--zarr-format", o->zarr_format, "Zarr format version, 2 or 3")
      ->check(CLI::IsMember({2, 3}))
      ->capture_default_str();
  cmd->add_option("-t,--threads", o->threads,
                  "Threads encoding chunks (and decompressing BGZF) [default: all cores]");
  cmd->add_flag("--skip-bad", o->skip_bad,
                "Skip malformed records (counted and reported) instead of failing");
  cmd->add_flag("-f,--force", o->force, "Replace OUT when it exists");
  cmd->add_flag("--progress,!--no-progress", o->progress,
                "Progress bar on stderr [default: when stderr is a terminal]");
  cmd->add_flag("-v,--verbose", o->verbose, "Summary and throughput on stderr");
  cmd->callback([o] {
    try {
      run_convert(*o);
    } catch (...) {
      OutputStore::die_if_signalled();  // interrupted: the work folder is gone; die of it
      throw;
    }
  });
}

}  // namespace vczstats::cli

#endif  // VCZSTATS_HAVE_CONVERT
