// vczstats info: what a store holds, how it is chunked and compressed, and what to watch for.

#include <fmt/format.h>

#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "vczstats/device.hpp"
#include "vczstats/thread_pool.hpp"

namespace vczstats::cli {
namespace {

struct ArrayInfo {
  std::string name, dtype, codecs;
  std::vector<std::int64_t> shape, chunks;
  std::int64_t stored = 0, decoded = -1, chunks_present = 0, chunks_total = 1;
};

std::string join(const std::vector<std::int64_t>& v) {
  return fmt::format("{}", fmt::join(v, " x "));
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", b) : fmt::format("{:.1f} {}", b, units[u]);
}

ArrayInfo describe(const vcz::VczStore& s, const std::string& name) {
  ArrayInfo a;
  auto arr = s.array(name);
  a.name = name;
  a.dtype = arr->dtype().name();
  a.codecs = arr->metadata().codecs;
  a.shape = arr->shape();
  a.chunks = arr->chunks();
  // Products of declared sizes can exceed 64 bits: then they are shown as unknown (-1).
  bool overflow = false;
  for (int d = 0; d < arr->ndim(); ++d)
    overflow =
        overflow || __builtin_mul_overflow(a.chunks_total, arr->num_chunks(d), &a.chunks_total);
  if (overflow) a.chunks_total = -1;
  if (arr->dtype().kind != zarr::DataKind::String) {
    a.decoded = arr->dtype().size;
    for (auto n : a.shape) overflow = overflow || __builtin_mul_overflow(a.decoded, n, &a.decoded);
    if (overflow) a.decoded = -1;
  }
  for (const auto& e : s.store().list(name + "/")) {
    const auto leaf = e.key.substr(e.key.rfind('/') + 1);
    if (leaf == ".zarray" || leaf == ".zattrs" || leaf == "zarr.json") continue;
    a.stored += static_cast<std::int64_t>(e.stored_size);
    ++a.chunks_present;
  }
  return a;
}

}  // namespace

void add_info_command(CLI::App& app) {
  struct Options {
    std::string store, output, format = "text", device = "auto";
    unsigned threads = 0;
    zarr::StoreOptions remote;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "info",
      "Describe a store: samples, variants, contigs, ploidy, and every array's dtype, shape, "
      "chunks, codecs, stored and decoded bytes and compression ratio, with warnings about "
      "chunking that limits parallel decoding.");
  cmd->add_option("STORE", o->store,
                  "VCF Zarr store: a directory, a .zip, or a URL (http(s)://, s3://, gs://)")
      ->required();
  cmd->add_option("-o,--output", o->output, "Output file [default: stdout]");
  cmd->add_option("--format", o->format, "text or json")
      ->check(CLI::IsMember({"text", "json", "tsv"}))
      ->capture_default_str();
  cmd->add_option("-t,--threads", o->threads, "Threads the warnings assume [default: all cores]");
  cmd->add_option("--device", o->device,
                  "auto: report how a GPU run would decode the genotypes only where a GPU is "
                  "usable; gpu: report it anyway (planning a run for a GPU machine); cpu: never")
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}))
      ->capture_default_str();
  add_remote_options(*cmd, o->remote);
  cmd->callback([o] {
    auto s = vcz::VczStore::open(o->store, o->remote);
    const unsigned threads = o->threads ? o->threads : hardware_threads();
    std::vector<ArrayInfo> arrays;
    for (const auto& name : s.array_names()) arrays.push_back(describe(s, name));

    std::int64_t hidden = 0;
    for (const auto& id : s.sample_ids()) hidden += id.empty() ? 1 : 0;
    std::vector<std::string> warnings;
    if (!s.has_genotypes()) warnings.push_back("no call_genotype: a sites-only store");
    const std::int64_t vchunks = s.has_genotypes() ? s.genotypes().num_chunks(0) : 0;
    const std::int64_t schunks = s.has_genotypes() ? s.genotypes().num_chunks(1) : 0;
    const std::int64_t chunk_bytes = s.has_genotypes() ? s.genotypes().chunk_bytes() : 0;
    if (s.has_genotypes() && vchunks < static_cast<std::int64_t>(threads))
      warnings.push_back(fmt::format(
          "call_genotype has {} variant chunks: at most {} of {} threads can decode at once; "
          "rechunk with smaller variant chunks",
          vchunks, vchunks, threads));
    const double chunk_mib = static_cast<double>(chunk_bytes) / (1 << 20);
    if (chunk_mib > 512)
      warnings.push_back(fmt::format(
          "call_genotype chunks decode to {:.0f} MiB each: each thread holds one; memory use "
          "is about (prefetch + threads) x that",
          chunk_mib));
    if (s.has_genotypes() && chunk_bytes < (64 << 10) && vchunks * schunks > 1000)
      warnings.push_back(fmt::format(
          "call_genotype chunks are small ({}): per-chunk overhead will dominate decoding",
          human_bytes(static_cast<double>(chunk_bytes))));
    if (hidden > 0)
      warnings.push_back(fmt::format("{} samples have an empty sample_id and are hidden", hidden));
    // Where a GPU run (--gpu-decode auto) would decode the genotypes: only where one can run.
    const bool have_gpu = o->device == "gpu" || (o->device == "auto" && gpu_count() > 0);
    const GpuDecodeChoice gpu = choose_gpu_decode(s, GpuDecode::Auto);
    const std::string gpu_path =
        gpu.device ? "device" + (gpu.layout.empty() ? "" : " (" + gpu.layout + ")")
                   : "host: " + gpu.why;
    if (have_gpu)
      for (const auto& w : gpu.warnings) warnings.push_back("GPU decode: " + w);
    ThreadPool pool(threads);
    const vcz::Phasing phased = vcz::count_phasing(s, pool);
    const std::string phasing_text = phased.describe(s);

    std::string source;
    if (auto it = s.attributes().find("source"); it != s.attributes().end() && it->is_string())
      source = it->get<std::string>();
    const bool is_zip = zarr::is_remote_url(o->store) ? std::string_view(o->store).ends_with(".zip")
                                                      : !std::filesystem::is_directory(o->store);

    Output out(o->output);
    std::string text;
    if (o->format == "json") {
      nlohmann::json j;
      j["store"] = o->store;
      j["kind"] = is_zip ? "zip" : "directory";
      j["zarr_format"] = s.zarr_format();
      j["vcf_zarr_version"] = s.vcf_zarr_version();
      j["source"] = source;
      j["samples"] = static_cast<std::int64_t>(s.sample_ids().size()) - hidden;
      j["hidden_samples"] = hidden;
      j["variants"] = s.num_variants();
      j["ploidy"] = s.ploidy();
      j["contigs"] = s.contig_ids();
      if (s.contig_lengths()) j["contig_lengths"] = *s.contig_lengths();
      for (const auto& a : arrays)
        j["arrays"].push_back({{"name", a.name},
                               {"dtype", a.dtype},
                               {"shape", a.shape},
                               {"chunks", a.chunks},
                               {"codecs", a.codecs},
                               {"stored_bytes", a.stored},
                               {"decoded_bytes", a.decoded},
                               {"chunks_present", a.chunks_present},
                               {"chunks_total", a.chunks_total}});
      j["phasing"] = {{"state", phasing_text},
                      {"calls", phased.calls},
                      {"unphased_calls", phased.unphased},
                      {"chunks_read", phased.chunks_read},
                      {"chunks_total", phased.chunks_total}};
      if (have_gpu)
        j["gpu_decode"] = {{"path", gpu.device ? "device" : "host"},
                           {"why_not", gpu.why},
                           {"streams_per_unit", gpu.streams_per_unit},
                           {"layout", gpu.layout}};
      j["warnings"] = warnings;
      // The store's path is the one string here not checked for UTF-8 (ids are, when opened).
      text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    } else {
      text += fmt::format("store\t{} ({} store, Zarr v{}, vcf_zarr_version {}{})\n", o->store,
                          is_zip ? "zip" : "directory", s.zarr_format(),
                          s.vcf_zarr_version().empty() ? "absent" : s.vcf_zarr_version(),
                          source.empty() ? "" : ", written by " + source);
      text +=
          fmt::format("samples\t{}{}\n", static_cast<std::int64_t>(s.sample_ids().size()) - hidden,
                      hidden ? fmt::format(" (+{} hidden)", hidden) : "");
      text += fmt::format("variants\t{}\n", s.num_variants());
      text += fmt::format("ploidy\t{}\n", s.ploidy());
      text += fmt::format("phasing\t{}\n", phasing_text);
      std::string contigs;
      for (std::size_t i = 0; i < s.contig_ids().size(); ++i) {
        if (i == 8) {
          contigs += fmt::format(" ... ({} in all)", s.contig_ids().size());
          break;
        }
        contigs += (i ? ", " : "") + s.contig_ids()[i];
        if (s.contig_lengths() && (*s.contig_lengths())[i] > 0)
          contigs += fmt::format(" ({} bp)", (*s.contig_lengths())[i]);
      }
      text += fmt::format("contigs\t{}\n", contigs);
      if (have_gpu) text += fmt::format("gpu_decode\t{}\n", gpu_path);
      text += "\narray\tdtype\tshape\tchunks\tcodecs\tstored\tdecoded\tratio\tchunks_present\n";
      std::int64_t total_stored = 0, total_decoded = 0;
      for (const auto& a : arrays) {
        total_stored += a.stored;
        if (a.decoded > 0 && __builtin_add_overflow(total_decoded, a.decoded, &total_decoded))
          total_decoded = std::numeric_limits<std::int64_t>::max();
        const std::string ratio = a.decoded > 0 && a.stored > 0
                                      ? fmt::format("{:.1f}", static_cast<double>(a.decoded) /
                                                                  static_cast<double>(a.stored))
                                      : "-";
        text += fmt::format(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}/{}\n", a.name, a.dtype, join(a.shape),
            join(a.chunks), a.codecs, human_bytes(static_cast<double>(a.stored)),
            a.decoded >= 0 ? human_bytes(static_cast<double>(a.decoded)) : "-", ratio,
            a.chunks_present, a.chunks_total >= 0 ? std::to_string(a.chunks_total) : "?");
      }
      text += fmt::format("total\t\t\t\t\t{}\t{}\n", human_bytes(static_cast<double>(total_stored)),
                          human_bytes(static_cast<double>(total_decoded)));
      for (const auto& w : warnings) text += "\nwarning\t" + w;
      if (!warnings.empty()) text += "\n";
    }
    write(out, text);
    out.commit();
  });
}

}  // namespace vczstats::cli
