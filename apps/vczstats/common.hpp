#pragma once
// Options and plumbing shared by the subcommands: store queries (regions, samples), threads and
// device, output to a file written atomically, progress bar and -v timing report.

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "vczstats/engine.hpp"
#include "vczstats/vcz.hpp"

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
  std::string device = "auto";
  std::string output;
  std::string format = "tsv";
  int progress = -1;  // -1: when stderr is a terminal
  bool verbose = false;
  std::int64_t max_unit_variants = 0;
};

/// Add STORE and the common options to a subcommand.
void add_common_options(CLI::App& cmd, CommonOptions& o);

/// What a command needs to run: the opened store, the plan and the sample selection.
struct Query {
  vcz::VczStore store;
  vcz::ChunkPlan plan;
  vcz::SampleSelection samples;
};
Query build_query(const CommonOptions& o);
RunOptions run_options(const CommonOptions& o);

/// Print the -v report of a run to stderr.
void report_run(const CommonOptions& o, const RunStats& s);

/// stdout, or a file written to a temporary sibling and renamed into place by commit().
class Output {
 public:
  explicit Output(const std::string& path);
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  std::FILE* file() { return file_; }
  void commit();

 private:
  std::filesystem::path path_, tmp_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

/// Write a string to an Output, checking for errors.
void write(Output& out, const std::string& text);

}  // namespace vczstats::cli
