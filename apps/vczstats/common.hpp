#pragma once
// Options and plumbing shared by the subcommands: store queries (regions, samples), threads and
// device, output to a file written atomically, progress bar and -v timing report.

#include <CLI/CLI.hpp>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "vczstats/bins.hpp"  // parse_bp_length, parse_bin_edges
#include "vczstats/compute.hpp"
#include "vczstats/filters.hpp"
#include "vczstats/query.hpp"
#include "vczstats/run.hpp"
#include "vczstats/simulate.hpp"
#include "vczstats/table.hpp"
#include "vczstats/table_writer.hpp"

namespace vczstats::cli {

/// Options of every statistic command (design.md §4).
struct CommonOptions {
  std::string store;
  std::string regions, regions_file, regions_overlap = "record";
  std::string samples, samples_file;
  bool force_samples = false;
  unsigned threads = 0;
  unsigned prefetch = 0;
  unsigned gpu_streams = 0;
  bool gpu_seed_baseline = false;  // hidden benchmark options (vczstats/testing.hpp)
  bool pinned_hostalloc = false;
  bool two_pass_filters = false;
  int thread_shares = 0;
  bool no_gpu_prestart = false;  // read before parsing (processes.cpp); accepted here
  std::string gpu_decode = "auto";
  std::string device = "auto";
  std::string output;
  std::string format = "tsv";
  int progress = -1;  // -1: when stderr is a terminal
  bool verbose = false;
  std::string log;                     // --log FILE: notes and the -v report
  std::int64_t max_unit_variants = 0;  // hidden testing option (vczstats/testing.hpp)
  std::string pops;                    // -P/--pops (commands that add_population_option)
  std::string pop_column;              // --pop-column
  zarr::StoreOptions remote;           // URLs: --s3-endpoint, --anonymous, --cache-dir, ...
  VariantFilterOptions filters;        // --snps-only, --maf, --geno, --hwe, ... (filters.hpp)
  std::string apply_filters;           // --apply-filters LIST (into filters)
};

/// Which site filters a command takes: all, or all but --maf (the command has a --maf of its own
/// meaning: the matrix family, the EHH scans).
enum class FilterSet { All, NoMaf };

/// Add the options of remote stores (--s3-endpoint, --s3-region, --anonymous, --cache-dir,
/// --max-requests, --max-retries, --stall-timeout) to a command that reads a store.
void add_remote_options(CLI::App& cmd, zarr::StoreOptions& o);

/// The store options of a command: @p o with, under -v, retries and notes logged on stderr.
zarr::StoreOptions remote_options(const zarr::StoreOptions& o, bool verbose);

/// Print a remote store's -v line (bytes, requests, retries, cache hits, throughput); nothing
/// for a local store.
void report_io(const zarr::IoStats& io, std::FILE* f = stderr);

/// Add STORE and the common options to a subcommand, with the site filters of @p filters.
void add_common_options(CLI::App& cmd, CommonOptions& o, FilterSet filters = FilterSet::All);

/// Add the site filters (group "Site filters") to a command.
void add_filter_options(CLI::App& cmd, CommonOptions& o, FilterSet filters);

/// Add --progress/--no-progress, setting @p progress to 1 or 0 when given (leaving -1, "when
/// stderr is a terminal", otherwise).
CLI::Option* add_progress_flag(CLI::App& cmd, int& progress);

/// Add -P/--pops to a subcommand that reports per population.
void add_population_option(CLI::App& cmd, CommonOptions& o);

/// Add --window-size and --window-step (bp, or with kb/Mb suffixes) and --window-span to a
/// command; @p what says what the windows are of.
void add_bp_window_options(CLI::App& cmd, WindowOptions& w, const std::string& what);

/// The library's query options from the common options (windows etc. are added by commands;
/// --max-unit-variants by build_query).
QueryOptions query_options(const CommonOptions& o);

/// Build the query (printing its warnings, e.g. regions on contigs the store lacks), with work
/// units of at most c.max_unit_variants variants (the hidden testing option,
/// vczstats/testing.hpp). Its count filters stay pending: StatisticRun's Runner gets them
/// applied, in the run's pass or by a counting pass first (prepare_count_filters in
/// vczstats/compute.hpp decides).
Query build_query(const QueryOptions& o, const CommonOptions& c);
/// @brief Print the query's warnings from the @p from-th on (on the writing process only: once,
/// not once per MPI rank).
void print_warnings(const Query& q, std::size_t from = 0);

RunOptions run_options(const CommonOptions& o);

/// Print the -v report of a run to stderr (warnings always), and to the --log file when given.
void report_run(const CommonOptions& o, const RunStats& s);

/// A table's note (run metadata: conventions, methods): on stderr under -v, and in the --log
/// file when given. Tables themselves hold only the header line and rows.
void report_note(const CommonOptions& o, const std::string& note);

/// Where -o writes (design.md §4): stdout for "" or "-"; a regular file (new or existing, also
/// reached through symlinks) is written to a temporary sibling of the link's final target and
/// renamed over that target by commit(), so readers never see half a table and the link stays a
/// link; anything else that exists (a character device such as /dev/null, a FIFO, a socket,
/// /dev/stdout, /dev/fd/N, a terminal) is written directly, never replaced.
class Output {
 public:
  explicit Output(const std::string& path);
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  std::FILE* file() { return file_; }
  void commit();

 private:
  std::filesystem::path path_, target_, tmp_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
  bool direct_ = false;  // written in place: nothing to rename or remove
};

/// A progress bar on stderr: fn(done, total, variants); variants < 0 are not shown. Empty when @p
/// flag is 0, or -1 and stderr is not a terminal.
std::function<void(std::int64_t, std::int64_t, std::int64_t)> progress_bar(int flag);

/// A store (directory or file) being built: everything goes into a temporary sibling
/// directory (work()), and commit() renames the result into place. SIGINT, SIGTERM and SIGHUP
/// set cancelled() instead of killing the process; the command stops, the destructor removes
/// the temporary directory, and then die_if_signalled() ends the process by that signal. A failed
/// or interrupted run therefore leaves nothing at the output path.
class OutputStore {
 public:
  /// @throws UsageError when @p path exists and @p force is false.
  OutputStore(const std::string& path, bool force);
  ~OutputStore();
  OutputStore(const OutputStore&) = delete;
  OutputStore& operator=(const OutputStore&) = delete;
  const std::filesystem::path& work() const { return work_; }
  const std::atomic<bool>& cancelled() const;
  /// Move @p built (inside work()) to the output path, replacing it when forced.
  void commit(const std::filesystem::path& built);
  /// Commit the directory store @p store (inside work()): zipped first when the output path
  /// ends in .zip.
  void commit_store(const std::filesystem::path& store);
  /// Whether the output path names a zip store.
  bool zip() const;
  /// When a signal arrived, die of it now (after the destructor cleaned up).
  static void die_if_signalled();

 private:
  std::filesystem::path path_, work_;
  bool force_ = false;
};

/// Options of the commands that write a store (convert, simulate, recompress).
struct StoreWriteOptions {
  std::string output;
  std::int64_t variants_chunk_size = 1000, samples_chunk_size = 10000;  // 0: as the input's
  int zarr_format = 2;
  unsigned threads = 0;
  bool force = false, verbose = false;
  int progress = -1;
};

/// Add OUT, the chunk sizes, --zarr-format, -t, -f, --progress and -v to a command.
void add_store_write_options(CLI::App& cmd, StoreWriteOptions& o, const std::string& threads_help);

/// Run a store-writing command: when a signal interrupted it, die of that signal (after the
/// OutputStore removed its work folder) instead of reporting an error.
void run_store_command(const std::function<void()>& command);

/// The -v summary of a store written by simulate or convert --from ms, on stderr.
void report_store_written(const std::string& path, const simulate::WriteReport& r);

/// Write a string to an Output, checking for errors.
void write(Output& out, const std::string& text);

// Tables: vczstats::TableWriter and its cell helpers (vczstats/table_writer.hpp, the library),
// written to an Output's file.
using vczstats::format_number;
using vczstats::table_cells;
using vczstats::table_columns;
using vczstats::TableWriter;

/// Write a whole result table to -o in --format; its note goes to report_note().
void write_table(const CommonOptions& o, const Table& t);

/// Run the statistic @p make builds over @p q (in this process, or across MPI ranks: see
/// statistic_run.hpp) and stream its table to -o: rows are written as the statistic finishes
/// them (after each unit), the rest at the end; then @p written (when set) with the finished
/// statistic, on the writing process (a second output); then the -v report.
void run_table_command(const CommonOptions& o, Query& q,
                       const std::function<std::unique_ptr<Statistic>()>& make,
                       const std::function<void(Statistic&)>& written = {});

}  // namespace vczstats::cli
