// vczstats convert: VCF / VCF.gz / BCF (htslib) or ms/scrm output (no htslib) to a VCF Zarr
// store (bio2zarr's layout), directory or zip.

#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/error.hpp"
#include "vczstats/simulate.hpp"
#include "vczstats/thread_pool.hpp"

#ifdef VCZSTATS_HAVE_CONVERT
#include "vczstats/convert.hpp"
#endif

namespace vczstats::cli {
namespace {

struct ConvertCliOptions : StoreWriteOptions {
  std::string input, from = "vcf";
  bool skip_bad = false;
  int ploidy = 2;           // --from ms
  std::int64_t length = 0;  // --from ms
  bool first_replicate = false;
};

/// @throws UsageError when OUT is the input itself: with -f it would replace it.
void refuse_output_over_input(const ConvertCliOptions& o) {
  std::error_code ec;
  if (o.input != "-" && std::filesystem::equivalent(o.input, o.output, ec) && !ec)
    throw UsageError(
        fmt::format("OUT {} is the input {}: give another output path", o.output, o.input));
}

void run_convert_ms(const ConvertCliOptions& o) {
  refuse_output_over_input(o);
  OutputStore out(o.output, o.force);
  simulate::MsOptions m;
  m.ploidy = o.ploidy;
  m.length = o.length;
  m.first_only = o.first_replicate;
  m.variants_chunk_size = o.variants_chunk_size;
  m.samples_chunk_size = o.samples_chunk_size;
  m.zarr_format = o.zarr_format;
  m.threads = o.threads;
  m.cancelled = &out.cancelled();
  if (auto bar = progress_bar(o.progress))
    m.progress = [bar](std::int64_t done, std::int64_t total) { bar(done, total, done); };
  const auto store = out.work() / "store";
  const auto r = simulate::ms_to_vcz(o.input, store, m);
  out.commit_store(store);
  if (o.verbose) report_store_written(o.output, r);
}

#ifdef VCZSTATS_HAVE_CONVERT
void run_convert(const ConvertCliOptions& o) {
  refuse_output_over_input(o);
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
  out.commit_store(store);
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
#endif  // VCZSTATS_HAVE_CONVERT

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
      "position.\n"
      "--from ms reads ms or scrm output instead (text: `//`, `segsites:`, `positions:`, one 0/1 "
      "line per haplotype): every replicate becomes a contig named 1, 2, ... of --length bp "
      "(--first-replicate: the first only); consecutive haplotypes form a sample of --ploidy "
      "(phased; samples tsk_0, tsk_1, ...); positions x in [0, 1] become floor(x * length) + 1, "
      "colliding ones moved up by the fewest bp that make them strictly increasing (and down "
      "at the contig's end); REF A, ALT T for ms's 0 and 1. This needs no htslib.");
  cmd->add_option("IN", o->input,
                  "Input VCF, VCF.gz (BGZF) or BCF, or ms output; - for standard input")
      ->required();
  add_store_write_options(*cmd, *o,
                          "Threads encoding chunks (and decompressing BGZF) [default: all cores]");
  cmd->add_option("--from", o->from, "Input format: vcf (VCF or BCF, through htslib) or ms")
      ->check(CLI::IsMember({"vcf", "ms"}))
      ->capture_default_str();
  cmd->add_option("--ploidy", o->ploidy, "--from ms: haplotypes per sample")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--length", o->length,
                  "--from ms: bp per replicate [default: NSITES of the command line's -r, else "
                  "1000000]")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{2147483646}));
  cmd->add_flag("--first-replicate", o->first_replicate,
                "--from ms: convert only the first replicate");
  cmd->add_flag("--skip-bad", o->skip_bad,
                "Skip malformed records (counted and reported) instead of failing");
  cmd->callback([o] {
    run_store_command([&] {
      if (o->from == "ms") {
        run_convert_ms(*o);
        return;
      }
#ifdef VCZSTATS_HAVE_CONVERT
      run_convert(*o);
#else
      throw UsageError(
          "this vczstats was built without htslib (VCZSTATS_CONVERT=OFF): only --from ms is "
          "available");
#endif
    });
  });
}

}  // namespace vczstats::cli
