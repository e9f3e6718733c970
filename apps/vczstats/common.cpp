#include "common.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <tuple>
#include <utility>

#include "processes.hpp"
#include "statistic_run.hpp"
#include "vczstats/error.hpp"
#include "vczstats/testing.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/zarr_writer.hpp"

namespace vczstats::cli {

void add_filter_options(CLI::App& cmd, CommonOptions& o, FilterSet filters) {
  VariantFilterOptions& f = o.filters;
  const char* group = "Site filters (every statistic sees only the sites that pass)";
  cmd.add_flag("--snps-only", f.snps_only,
               "Keep sites whose alleles are all one base long (plink2 --snps-only)")
      ->group(group);
  cmd.add_option("--min-alleles", f.min_alleles,
                 "Keep sites with at least this many alleles, REF included (bcftools -m)")
      ->group(group);
  cmd.add_option("--max-alleles", f.max_alleles,
                 "Keep sites with at most this many alleles, REF included (bcftools -M)")
      ->group(group);
  cmd.add_option("--apply-filters", o.apply_filters,
                 "Keep sites whose FILTER holds one of these comma-separated names; '.' = no "
                 "filter set (bcftools -f, e.g. PASS or .,PASS)")
      ->group(group);
  cmd.add_option("--min-qual", f.min_qual,
                 "Keep sites whose QUAL is at least this (a missing QUAL fails)")
      ->group(group);
  if (filters == FilterSet::All)
    cmd.add_option("--maf", f.maf,
                   "Keep sites whose minor allele frequency, 1 - the major allele's frequency "
                   "among the selected samples' called alleles, is at least this (plink2 --maf)")
        ->group(group);
  cmd.add_option("--max-maf", f.max_maf,
                 "Keep sites whose minor allele frequency (as --maf) is at most this")
      ->group(group);
  cmd.add_option("--mac", f.mac,
                 "Keep sites whose non-major allele count (called alleles other than the most "
                 "common one) is at least this (plink2 --mac)")
      ->group(group);
  cmd.add_option("--max-mac", f.max_mac, "Keep sites whose non-major allele count is at most this")
      ->group(group);
  cmd.add_option("--geno", f.geno,
                 "Keep sites whose missing-genotype rate among the selected samples is at most "
                 "this (plink2 --geno)")
      ->group(group);
  cmd.add_option("--hwe", f.hwe,
                 "Keep sites whose Hardy-Weinberg exact test p-value (as `hardy`: REF against "
                 "the other alleles) is at least this (plink2 --hwe)")
      ->group(group);
  cmd.add_flag("--hwe-midp", f.hwe_midp, "--hwe with the mid-p test (plink2 --hwe P midp)")
      ->group(group);
  cmd.add_option("--min-gq", f.min_gq,
                 "Count genotypes whose GQ is below this as missing (plink2 --vcf-min-gq; "
                 "bcftools +setGT -n . -i 'FMT/GQ<N')")
      ->group(group);
  cmd.add_option("--min-dp", f.min_dp,
                 "Count genotypes whose DP is below this as missing (plink2 --vcf-min-dp)")
      ->group(group);
  cmd.add_option("-i,--include", f.include,
                 "Keep sites where this bcftools-style expression is true, e.g. 'QUAL>=30 && "
                 "FILTER=\"PASS\"', 'TYPE=\"snp\" && MAF>0.01', 'INFO/DP>10 || F_MISSING<0.05' "
                 "(terms: QUAL FILTER TYPE N_ALT CHROM POS ID REF ALT, INFO fields, AC AN AF MAF "
                 "MAC F_MISSING N_MISSING of the selected samples; FMT/GQ>=N and FMT/DP>=N "
                 "joined by && mask genotypes as --min-gq/--min-dp; docs/filters.md)")
      ->group(group);
  cmd.add_option("-e,--exclude", f.exclude,
                 "Leave out sites where this expression is true (as -i; give one of -i and -e)")
      ->group(group);
}

void add_common_options(CLI::App& cmd, CommonOptions& o, FilterSet filters) {
  cmd.add_option("STORE", o.store,
                 "VCF Zarr store: a directory, a .zip, or a URL (http(s)://, s3://, gs://)")
      ->required();
  cmd.add_option("-r,--regions", o.regions,
                 "Regions chr, chr:pos, chr:beg-end or chr:beg- (1-based, inclusive), "
                 "comma-separated")
      ->group("Selection");
  cmd.add_option("-R,--regions-file", o.regions_file,
                 "Regions file: CHROM POS or CHROM BEG END (1-based), or BED (*.bed, 0-based)")
      ->group("Selection");
  cmd.add_option("--regions-overlap", o.regions_overlap,
                 "Select records whose POS is in a region (pos) or that overlap it (record, "
                 "like bcftools -r)")
      ->check(CLI::IsMember({"pos", "record", "0", "1"}))
      ->group("Selection");
  cmd.add_option("-s,--samples", o.samples,
                 "Samples to include, comma-separated; ^a,b excludes a and b")
      ->group("Selection");
  cmd.add_option("-S,--samples-file", o.samples_file,
                 "File of sample names, one per line; "
                 "a leading ^ on the first excludes")
      ->group("Selection");
  cmd.add_flag("--force-samples", o.force_samples, "Ignore requested samples absent from the store")
      ->group("Selection");
  cmd.add_option("-t,--threads", o.threads, "Decode/compute threads [default: all cores]")
      ->group("Execution");
  cmd.add_option("--prefetch", o.prefetch,
                 "Work units decoded ahead (bounds memory) [default: 2 x threads]")
      ->group("Execution");
  cmd.add_option("--device", o.device,
                 "cpu, gpu (CUDA device 0), gpu:N (device N), several GPUs shared by one "
                 "process (gpu:0,1 or gpu:all; under MPI a rank each), or auto (GPU 0 when one "
                 "is usable)")
      ->check([](const std::string& v) {
        try {
          parse_device(v);
          return std::string();
        } catch (const UsageError& e) {
          return std::string(e.what());
        }
      })
      ->capture_default_str()
      ->group("Execution");
  // Benchmark and testing options: accepted, hidden from the help (group "").
  cmd.add_flag("--gpu-seed-baseline", o.gpu_seed_baseline,
               "Benchmarks only: run the GPU as the seed implementations did (one thread per "
               "variant, pageable copies, no overlap)")
      ->group("");
  cmd.add_option("--thread-shares", o.thread_shares,
                 "Tests only: share the run among N threads of this process on its one device, "
                 "as gpu:0,1 shares it among GPUs")
      ->group("");
  cmd.add_flag("--two-pass-filters", o.two_pass_filters,
               "Tests and benchmarks only: the count filters' counting pass first, even where "
               "the statistic's own pass decides them")
      ->group("");
  cmd.add_flag("--pinned-hostalloc", o.pinned_hostalloc,
               "Benchmarks only: pinned host buffers from cudaHostAlloc, not huge pages "
               "(bench/gpu_pinned_ab.sh)")
      ->group("");
  cmd.add_flag("--no-gpu-prestart", o.no_gpu_prestart,
               "Benchmarks only: start CUDA when the run first needs it, not on a thread at "
               "process start (processes.cpp, bench/gpu_startup.sh)")
      ->group("");
  cmd.add_option("--gpu-streams", o.gpu_streams,
                 "CUDA streams of the GPU pipeline (copies and kernels overlap across them) "
                 "[default: 3]")
      ->group("Execution");
  cmd.add_option("--gpu-decode", o.gpu_decode,
                 "GPU runs: decode the genotype chunks on the device (on), on the host (off), or "
                 "on the device when every codec of call_genotype has a device decoder and a work "
                 "unit has enough chunks to decode in parallel (auto; -v says why not; `info` "
                 "shows the choice)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str()
      ->group("Execution");
  cmd.add_option("--max-unit-variants", o.max_unit_variants,
                 "Split work units to at most this many variants (testing; 0 = one chunk)")
      ->group("");
  cmd.add_option("-o,--output", o.output, "Output file [default: stdout]")->group("Output");
  cmd.add_option("--format", o.format, "tsv or json")
      ->check(CLI::IsMember({"tsv", "json"}))
      ->capture_default_str()
      ->group("Output");
  add_progress_flag(cmd, o.progress)->group("Output");
  cmd.add_flag("-v,--verbose", o.verbose, "Timing breakdown on stderr")->group("Output");
  cmd.add_option("--log", o.log,
                 "Write the run's notes (window conventions, methods) and the -v report to this "
                 "file; tables hold only the header and rows")
      ->group("Output");
  add_remote_options(cmd, o.remote);
  add_filter_options(cmd, o, filters);
}

CLI::Option* add_progress_flag(CLI::App& cmd, int& progress) {
  // Not add_flag(name, int&): it sets the int to 0 (no bar) before parsing and gives -1 for
  // --no-progress, the value that means "when stderr is a terminal".
  return cmd
      .add_flag_function(
          "--progress,!--no-progress",
          [&progress](std::int64_t count) { progress = count > 0 ? 1 : 0; },
          "Progress bar on stderr [default: when stderr is a terminal]")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

void add_bp_window_options(CLI::App& cmd, WindowOptions& w, const std::string& what) {
  auto length = [] {
    return CLI::Validator(
        [](std::string& text) {
          try {
            text = std::to_string(parse_bp_length(text, ""));  // CLI11 names the option
            return std::string();
          } catch (const UsageError& e) {
            return std::string(e.what());
          }
        },
        "LENGTH");
  };
  cmd.add_option("--window-size", w.size,
                 "bp windows of " + what +
                     " (a number of bp, or with kb/Mb: 100kb, 1.5Mb), 1-based inclusive, over "
                     "each contig or region as --window-span says")
      ->transform(length())
      ->group("Windows");
  cmd.add_option("--window-step", w.step,
                 "Step between window starts, bp or kb/Mb [default: window size]")
      ->transform(length())
      ->group("Windows");
  cmd.add_option("--window-span", w.span,
                 "Where --window-size windows (and the one window per contig without window "
                 "options) start and end: data = the first to the last selected site of each "
                 "contig (as scikit-allel; a region's own bounds with -r), the last window "
                 "ending at the last site; contig = base 1 to the contig length (vcftools), or "
                 "the region with -r [default: data]")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, stats::WindowSpan>{{"data", stats::WindowSpan::Data},
                                                   {"contig", stats::WindowSpan::Contig}},
          CLI::ignore_case))
      ->group("Windows");
}

void add_remote_options(CLI::App& cmd, zarr::StoreOptions& o) {
  const char* group = "Remote stores (STORE as http(s)://, s3://bucket/prefix, gs://bucket/prefix)";
  cmd.add_option("--s3-endpoint", o.s3_endpoint,
                 "S3-compatible server URL [default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, "
                 "~/.aws/config endpoint_url, else AWS]")
      ->group(group);
  cmd.add_option("--s3-region", o.s3_region,
                 "Signing region [default: AWS_REGION, AWS_DEFAULT_REGION, ~/.aws/config, the "
                 "bucket's region on AWS, else us-east-1]")
      ->group(group);
  cmd.add_flag("--anonymous", o.anonymous,
               "Unsigned S3 requests (public buckets); without credentials they are anonymous "
               "anyway")
      ->group(group);
  cmd.add_option("--cache-dir", o.cache_dir,
                 "Keep fetched chunks in DIR (keyed by URL, ETag and size) and reuse them")
      ->group(group);
  cmd.add_option("--max-requests", o.max_requests, "HTTP requests in flight [default: 256]")
      ->group(group);
  cmd.add_option("--max-retries", o.max_retries,
                 "Retries of a request after a 5xx, a timeout or a cut body")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--stall-timeout", o.stall_seconds,
                 "Seconds without data (or below --min-speed) before a request is retried")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--min-speed", o.min_bytes_per_second,
                 "Slowest transfer accepted, in bytes a second (0: only silence is cut)")
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--max-object-size", o.max_object_bytes,
                 "Largest object fetched whole (chunk, metadata, listing) in bytes, and the most "
                 "such bodies in flight hold together (0: no limit)")
      ->capture_default_str()
      ->group(group);
}

zarr::StoreOptions remote_options(const zarr::StoreOptions& o, bool verbose) {
  zarr::StoreOptions r = o;
  if (verbose) r.log = [](const std::string& m) { fmt::print(stderr, "vczstats: {}\n", m); };
  return r;
}

void report_io(const zarr::IoStats& io, std::FILE* f) {
  if (io.requests == 0 && io.cache_hits == 0) return;
  fmt::print(f,
             "vczstats:   {:<12} {:9.3f} s  {:.1f} MB in {} requests ({} retries), {:.1f} MB/s "
             "while fetching; {} cache hits ({:.1f} MB)\n",
             "remote", io.seconds, static_cast<double>(io.bytes_fetched) * 1e-6, io.requests,
             io.retries,
             io.seconds > 0 ? static_cast<double>(io.bytes_fetched) * 1e-6 / io.seconds : 0.0,
             io.cache_hits, static_cast<double>(io.cache_bytes) * 1e-6);
}

namespace {
// The store the command opened, for report_run's remote line (one command per process).
std::weak_ptr<const zarr::Store> g_query_store;
}  // namespace

void add_population_option(CLI::App& cmd, CommonOptions& o) {
  cmd.add_option("-P,--pops", o.pops,
                 "Populations file: two columns (sample population), plink's three (FID IID "
                 "POP), or a header naming the columns, as a 1000 Genomes .panel file (sample "
                 "pop super_pop gender); only its samples are analysed, each statistic reported "
                 "per population [default: one population 'all' of the selected samples]")
      ->group("Selection");
  cmd.add_option("--pop-column", o.pop_column,
                 "The population column of a -P file with a header, e.g. super_pop [default: "
                 "the first of population, pop, group, cluster, super_pop]")
      ->group("Selection");
}

QueryOptions query_options(const CommonOptions& o) {
  QueryOptions q;
  q.store = o.store;
  q.regions = o.regions;
  q.regions_file = o.regions_file;
  q.overlap = o.regions_overlap == "pos" || o.regions_overlap == "0" ? vcz::RegionOverlap::Pos
                                                                     : vcz::RegionOverlap::Record;
  if (!o.samples.empty()) {
    q.samples = vcz::split_list(o.samples);
    if (q.samples.empty()) throw UsageError("-s/--samples: no sample named");
  }
  q.samples_file = o.samples_file;
  q.force_samples = o.force_samples;
  q.pops_file = o.pops;
  q.pop_column = o.pop_column;
  q.store_options = remote_options(o.remote, o.verbose);
  q.filters = o.filters;
  if (!o.apply_filters.empty()) {
    q.filters.apply_filters = vcz::split_list(o.apply_filters);
    if (q.filters.apply_filters.empty()) throw UsageError("--apply-filters: no filter named");
  }
  return q;
}

Query build_query(const QueryOptions& o, const CommonOptions& c) {
  Query q = hooks::make_query(o, c.max_unit_variants);
  g_query_store = q.store.store_ptr();
  print_warnings(q);
  return q;
}

void print_warnings(const Query& q, std::size_t from) {
  if (!primary_process()) return;
  for (std::size_t i = from; i < q.warnings.size(); ++i)
    fmt::print(stderr, "vczstats: warning: {}\n", q.warnings[i]);
}

namespace {
struct ProgressBar {
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last{};
  void update(std::int64_t done, std::int64_t total, std::int64_t variants) {
    const auto now = std::chrono::steady_clock::now();
    if (done != total && now - last < std::chrono::milliseconds(100)) return;
    last = now;
    const double secs = std::chrono::duration<double>(now - start).count();
    const int width = 30;
    const int fill = total ? static_cast<int>(width * done / total) : width;
    std::string fetched;  // a remote store: what came over the network so far
    if (auto store = g_query_store.lock(); store && store->io_stats().requests > 0)
      fetched = fmt::format(", {:.1f} MB fetched",
                            static_cast<double>(store->io_stats().bytes_fetched) * 1e-6);
    fmt::print(stderr, "\r[{:=<{}}{:<{}}] {:3d}% {}{:.1f} s{}", "", fill, "", width - fill,
               total ? static_cast<int>(100 * done / total) : 100,
               variants >= 0 ? fmt::format("{} variants ", variants) : "", secs, fetched);
    if (done == total) fmt::print(stderr, "\n");
    std::fflush(stderr);
  }
};
}  // namespace

RunOptions run_options(const CommonOptions& o) {
  RunOptions r;
  r.threads = o.threads;
  r.prefetch = o.prefetch;
  r.gpu_streams = o.gpu_streams;
  // The hidden benchmark options: process-wide switches (one command per process).
  hooks::set_gpu_seed_baseline(o.gpu_seed_baseline);
  hooks::set_pinned_hostalloc(o.pinned_hostalloc);
  hooks::set_two_pass_count_filters(o.two_pass_filters);
  hooks::set_thread_shares(o.thread_shares);
  r.device = parse_device(o.device);
  // One statistic per process: CUDA initialises the devices the run uses and no other.
  if (!mpi_ranks()) r.device = bind_process_to_device(r.device);
  r.gpu_decode = parse_gpu_decode(o.gpu_decode);
  r.progress = progress_bar(o.progress);
  return r;
}

std::function<void(std::int64_t, std::int64_t, std::int64_t)> progress_bar(int flag) {
  const bool show = flag == -1 ? isatty(STDERR_FILENO) != 0 : flag > 0;
  if (!show) return {};
  auto bar = std::make_shared<ProgressBar>();
  return [bar](std::int64_t d, std::int64_t t, std::int64_t v) { bar->update(d, t, v); };
}

namespace {
// The -v report of a run, to stderr or the --log file.
void print_run(std::FILE* f, const RunStats& s) {
  if (!s.note.empty()) fmt::print(f, "vczstats: note: {}\n", s.note);
  const double wall = s.wall_seconds > 0 ? s.wall_seconds : 1e-9;
  if (s.setup.total() > 0)
    fmt::print(f,
               "vczstats: setup {:.3f} s: open store {:.3f} s, read samples {:.3f} s, "
               "selection {:.3f} s, populations {:.3f} s\n",
               s.setup.total(), s.setup.open_store, s.setup.read_samples, s.setup.selection,
               s.setup.populations);
  fmt::print(f, "vczstats: device {}; {} variants in {} work units; {} genotype calls\n", s.device,
             s.variants, s.units, s.calls);
  auto stage = [&](const char* name, double secs, const char* how) {
    fmt::print(f, "vczstats:   {:<12} {:9.3f} s  {}\n", name, secs, how);
  };
  if (s.device_decode) {
    fmt::print(f, "vczstats:   {:<12} {:9.3f} s  {:.3f} GB compressed, summed over threads\n",
               "read", s.read_decode_seconds, static_cast<double>(s.encoded_bytes) * 1e-9);
    fmt::print(f,
               "vczstats:   {:<12} {:9.3f} s  {:.3f} GB compressed (and the job lists), summed "
               "over streams\n",
               "host->device", s.h2d_seconds, static_cast<double>(s.h2d_bytes) * 1e-9);
    fmt::print(f,
               "vczstats:   {:<12} {:9.3f} s  {:.2f} GB decoded on the device, sample subsets "
               "gathered (CUDA events, summed over streams)\n",
               "decode", s.device_decode_seconds, static_cast<double>(s.decoded_bytes) * 1e-9);
  } else {
    stage("read+decode", s.read_decode_seconds, "summed over threads");
    stage("gather", s.gather_seconds, "summed over threads (sample subsets)");
    if (s.h2d_bytes > 0)
      fmt::print(f, "vczstats:   {:<12} {:9.3f} s  {:.2f} GB copied, summed over streams\n",
                 "host->device", s.h2d_seconds, static_cast<double>(s.h2d_bytes) * 1e-9);
  }
  stage("compute", s.compute_seconds,
        s.h2d_bytes > 0 ? "heavy-pass and histogram kernels (CUDA events, summed over streams)"
                        : "summed over threads (heavy pass)");
  if (s.h2d_bytes > 0) stage("device->host", s.d2h_seconds, "histogram");
  if (s.device_pairs > 0)
    fmt::print(f, "vczstats:   {:<12} {:9d}    variant pairs summed into bins on the device\n",
               "pairs", s.device_pairs);
  stage("reduce", s.reduce_seconds, "merging block counts, per-site reduction (consumer)");
  if (auto store = g_query_store.lock()) report_io(store->io_stats(), f);
  fmt::print(f, "vczstats:   {:<12} {:9.3f} s  {:.3g} calls/s, {:.3f} GB/s decoded\n", "total",
             s.wall_seconds, static_cast<double>(s.calls) / wall,
             static_cast<double>(s.decoded_bytes) / wall * 1e-9);
  // Threads follow the work: a small store starts few, whatever -t or the cores.
  fmt::print(f, "vczstats:   {:<12} {:9d}    worker threads started in this process\n", "threads",
             ThreadPool::shared().threads_started());
}

// The --log file: replaced by the first write of the process, appended to after.
void to_log(const std::string& path, const std::function<void(std::FILE*)>& write) {
  static bool opened = false;
  std::FILE* f = std::fopen(path.c_str(), opened ? "a" : "w");
  if (!f) throw IoError("--log " + path + ": " + std::strerror(errno));
  opened = true;
  write(f);
  if (std::fclose(f) != 0) throw IoError("--log " + path + ": " + std::strerror(errno));
}
}  // namespace

void report_run(const CommonOptions& o, const RunStats& s) {
  for (const auto& w : s.warnings) fmt::print(stderr, "vczstats: warning: {}\n", w);
  if (o.verbose) print_run(stderr, s);
  if (!o.log.empty()) to_log(o.log, [&s](std::FILE* f) { print_run(f, s); });
}

void report_note(const CommonOptions& o, const std::string& note) {
  if (note.empty()) return;
  if (o.verbose) fmt::print(stderr, "vczstats: note: {}\n", note);
  if (!o.log.empty())
    to_log(o.log, [&note](std::FILE* f) { fmt::print(f, "vczstats: note: {}\n", note); });
}

namespace {
// The temporary output being written, for the signal handler: an interrupted run (Ctrl-C,
// kill) removes it, then dies of the signal as it would have, so nothing half-written is left.
char g_tmp_path[4096];
volatile std::sig_atomic_t g_tmp_active = 0;

extern "C" void remove_tmp_and_die(int sig) {
  if (g_tmp_active) ::unlink(g_tmp_path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void track_tmp(const std::filesystem::path& p) {
  const std::string s = p.string();
  if (s.size() >= sizeof g_tmp_path) return;  // too long to track; still removed on errors
  std::memcpy(g_tmp_path, s.c_str(), s.size() + 1);
  g_tmp_active = 1;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    // A signal the caller ignores (SIGINT of a background job, nohup's SIGHUP) stays ignored.
    if (std::signal(sig, remove_tmp_and_die) == SIG_IGN) std::signal(sig, SIG_IGN);
  }
}

void untrack_tmp() {
  g_tmp_active = 0;
}
}  // namespace

namespace {
/// The descriptor that @p path names when it is /dev/stdout, /dev/stderr, /dev/fd/N or
/// /proc/self/fd/N of this process (`-o >(gzip > x.gz)`, `-o /dev/stdout >> log`), else -1.
/// Such a path is written through the descriptor: opening or replacing what it points to would
/// truncate a file the shell opened for appending, or fail for a pipe's pseudo-name.
int named_descriptor(const std::string& path) {
  int fd = -1;
  if (path == "/dev/stdout") fd = 1;
  if (path == "/dev/stderr") fd = 2;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!path.starts_with(prefix) || path.size() == prefix.size() ||
        path.size() > prefix.size() + 9)
      continue;
    const std::string digits = path.substr(prefix.size());
    if (std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      fd = std::stoi(digits);
  }
  return fd >= 0 && ::fcntl(fd, F_GETFD) != -1 ? fd : -1;
}

/// The final target of @p p through symbolic links, which need not exist (a dangling link's
/// target is created, as a shell's > creates it).
std::filesystem::path link_target(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    const fs::path t = fs::read_symlink(p, ec);
    if (ec)
      throw IoError(fmt::format("{}: cannot read the symbolic link: {}", p.string(), ec.message()));
    p = t.is_absolute() ? t : p.parent_path() / t;
  }
  throw IoError(fmt::format("{}: too many levels of symbolic links", path.string()));
}
}  // namespace

Output::Output(const std::string& path) {
  if (path.empty() || path == "-") {
    file_ = stdout;
    return;
  }
  path_ = path;
  auto open_direct = [&](std::FILE* f) {
    if (!f)
      throw IoError(fmt::format("{}: cannot open the output: {}", path, std::strerror(errno)));
    file_ = f;
    direct_ = true;
  };
  if (const int fd = named_descriptor(path); fd >= 0) {
    const int copy = ::dup(fd);
    open_direct(copy >= 0 ? ::fdopen(copy, "wb") : nullptr);
    return;
  }
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;  // through symbolic links
  if (exists && S_ISDIR(st.st_mode))
    throw IoError(fmt::format("{}: is a directory; -o names the output file", path));
  if (exists && !S_ISREG(st.st_mode)) {  // a device, FIFO, socket or terminal: write into it
    open_direct(std::fopen(path.c_str(), "wb"));
    return;
  }
  // A regular file, or nothing yet: build it beside the final target of any links, then rename.
  target_ = link_target(path_);
  std::random_device rd;
  tmp_ = target_;
  tmp_ += fmt::format(".tmp{:08x}", rd());
  track_tmp(tmp_);  // before the file exists: a signal right after fopen must remove it too
  file_ = std::fopen(tmp_.c_str(), "wb");
  if (!file_) untrack_tmp();
  if (!file_)
    throw IoError(
        fmt::format("{}: cannot create output file: {}", tmp_.string(), std::strerror(errno)));
  // Replacing a file keeps its permissions, as writing into it with > would.
  if (exists) ::fchmod(::fileno(file_), st.st_mode & 07777);
}

Output::~Output() {
  if (file_ && file_ != stdout) {
    std::fclose(file_);
    if (!direct_) {
      if (!committed_) std::filesystem::remove(tmp_);
      untrack_tmp();
    }
  }
}

void Output::commit() {
  if (file_ == stdout) {
    if (std::fflush(stdout) != 0) throw IoError("error writing to standard output");
    return;
  }
  const bool failed = std::ferror(file_) != 0;
  const bool close_failed = std::fclose(file_) != 0;
  file_ = nullptr;
  if (direct_) {
    if (failed || close_failed) throw IoError(path_.string() + ": write failed");
    committed_ = true;
    return;
  }
  if (failed || close_failed) {
    std::filesystem::remove(tmp_);
    untrack_tmp();
    throw IoError(path_.string() + ": write failed");
  }
  std::error_code ec;
  std::filesystem::rename(tmp_, target_, ec);
  if (ec) {  // e.g. the path became a directory meanwhile: leave nothing behind
    std::filesystem::remove(tmp_);
    untrack_tmp();
    throw IoError(fmt::format("{}: cannot write the output: {}", path_.string(), ec.message()));
  }
  untrack_tmp();
  committed_ = true;
}

namespace {
// Signals while an OutputStore is active: the handler only records them (the work directory
// cannot be removed from a signal handler); a second signal kills at once.
std::atomic<bool> g_store_cancelled{false};
volatile std::sig_atomic_t g_store_signal = 0;

extern "C" void note_signal(int sig) {
  if (g_store_signal != 0) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  g_store_signal = sig;
  g_store_cancelled.store(true);
}
}  // namespace

OutputStore::OutputStore(const std::string& path, bool force) : force_(force) {
  namespace fs = std::filesystem;
  if (path.empty()) throw UsageError("no output path");
  std::error_code ec;
  if (fs::exists(fs::symlink_status(path, ec)) && !force_)
    throw UsageError(path + " exists (use --force to replace it)");
  // Through symbolic links the store replaces the link's target; the link stays.
  path_ = link_target(path);
  const auto st = fs::status(path_, ec);
  if (fs::exists(st) && !fs::is_directory(st) && !fs::is_regular_file(st))
    throw UsageError(path +
                     " is not a folder or a file: a store is written as a directory or a .zip");
  fs::path parent = path_.parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(parent))
    throw IoError(fmt::format("{}: the output's folder does not exist", parent.string()));
  std::random_device rd;
  for (int attempt = 0; attempt < 100 && work_.empty(); ++attempt) {
    const fs::path p = parent / fmt::format(".{}.tmp{:08x}", path_.filename().string(), rd());
    if (fs::create_directory(p, ec)) work_ = p;
  }
  if (work_.empty())
    throw IoError(fmt::format("{}: cannot create a temporary folder", parent.string()));
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    if (std::signal(sig, note_signal) == SIG_IGN) std::signal(sig, SIG_IGN);
  }
}

OutputStore::~OutputStore() {
  std::error_code ec;
  std::filesystem::remove_all(work_, ec);
}

const std::atomic<bool>& OutputStore::cancelled() const {
  return g_store_cancelled;
}

void OutputStore::commit(const std::filesystem::path& built) {
  namespace fs = std::filesystem;
  if (g_store_cancelled.load()) throw IoError(path_.string() + ": interrupted");
  std::error_code ec;
  if (force_ && fs::exists(fs::symlink_status(path_, ec))) fs::remove_all(path_);
  fs::rename(built, path_);
}

bool OutputStore::zip() const {
  const std::string s = path_.string();
  return s.size() > 4 && s.ends_with(".zip");
}

void OutputStore::commit_store(const std::filesystem::path& store) {
  if (!zip()) {
    commit(store);
    return;
  }
  const auto file = work_ / "store.zip";
  zarr::zip_directory(store, file, &g_store_cancelled);
  commit(file);
}

void OutputStore::die_if_signalled() {
  const int sig = g_store_signal;
  if (sig == 0) return;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void add_store_write_options(CLI::App& cmd, StoreWriteOptions& o, const std::string& threads_help) {
  cmd.add_option("OUT", o.output, "Output store: a directory, or a .zip")->required();
  for (auto [name, value, what] :
       {std::tuple{"--variants-chunk-size", &o.variants_chunk_size, "Variants per chunk"},
        std::tuple{"--samples-chunk-size", &o.samples_chunk_size, "Samples per chunk"}}) {
    auto* opt = cmd.add_option(name, *value, what)
                    ->check(CLI::Range(std::int64_t{1}, std::int64_t{1} << 40));
    if (*value > 0)
      opt->capture_default_str();
    else
      opt->description(std::string(what) + " [default: as the input]");
  }
  auto* format = cmd.add_option("--zarr-format", o.zarr_format, "Zarr format version, 2 or 3")
                     ->check(CLI::IsMember({2, 3}));
  if (o.zarr_format > 0)
    format->capture_default_str();
  else
    format->description("Zarr format version, 2 or 3 [default: as the input]");
  cmd.add_option("-t,--threads", o.threads, threads_help);
  cmd.add_flag("-f,--force", o.force, "Replace OUT when it exists");
  add_progress_flag(cmd, o.progress);
  cmd.add_flag("-v,--verbose", o.verbose, "Summary and throughput on stderr");
}

void run_store_command(const std::function<void()>& command) {
  try {
    command();
  } catch (...) {
    OutputStore::die_if_signalled();  // interrupted: the work folder is gone; die of it
    throw;
  }
}

void report_store_written(const std::string& path, const simulate::WriteReport& r) {
  const double s = r.seconds > 0 ? r.seconds : 1e-9;
  const double decoded = static_cast<double>(r.calls);  // int8 genotypes
  fmt::print(stderr,
             "vczstats: wrote {}: {} variants x {} samples x ploidy {} on {} contig(s) of {} bp; "
             "{:.1f} MiB stored, call_genotype {:.1f} MiB ({:.1f}x compression)\n",
             path, r.variants, r.samples, r.ploidy, r.contigs, r.length,
             static_cast<double>(r.stored_bytes) / (1 << 20),
             static_cast<double>(r.genotype_stored_bytes) / (1 << 20),
             decoded / std::max(1.0, static_cast<double>(r.genotype_stored_bytes)));
  fmt::print(stderr, "vczstats: {:.3f} s: {:.0f} variants/s, {:.3g} genotype calls/s\n", r.seconds,
             static_cast<double>(r.variants) / s, static_cast<double>(r.calls) / s);
}

void write(Output& out, const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), out.file()) != text.size())
    throw IoError("write failed: " + std::string(std::strerror(errno)));
}

void run_table_command(const CommonOptions& o, Query& q,
                       const std::function<std::unique_ptr<Statistic>()>& make,
                       const std::function<void(Statistic&)>& written) {
  StatisticRun run(o, q, make);
  std::optional<Output> out;
  if (primary_process()) out.emplace(o.output);
  TableSink table(run.statistic(), out ? TableWriter::to_file(out->file()) : TableWriter::Sink{},
                  o.format);
  if (!run.compute(table.rows())) return;  // another MPI rank writes
  const std::string note = table.finish(run.statistic());
  out->commit();
  if (written) written(run.statistic());
  report_note(o, note);
  run.report();
}

void write_table(const CommonOptions& o, const Table& t) {
  Output out(o.output);
  TableWriter w(out.file(), o.format, table_columns(t));
  w.rows(t);
  w.finish(t.note);
  out.commit();
  report_note(o, t.note);
}

}  // namespace vczstats::cli
