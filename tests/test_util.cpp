#include "test_util.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "vczstats/device.hpp"

namespace vcztest {
namespace fs = std::filesystem;

namespace {
/// ctest with a resource spec (tests/gpu_tests.cmake) gives a GPU test a slot of GPU k, the
/// k-th visible one, in CTEST_RESOURCE_GROUP_0_GPUS ("id:k,slots:1"): before anything starts
/// CUDA, narrow CUDA_VISIBLE_DEVICES to it, for this process and the vczstats it runs.
[[maybe_unused]] const bool g_gpu_slot_bound = [] {
  const char* slot = std::getenv("CTEST_RESOURCE_GROUP_0_GPUS");
  if (!slot) return false;
  const std::string s = slot;
  if (!s.starts_with("id:")) return false;
  try {
    vczstats::bind_process_to_gpu(std::stoi(s.substr(3)));
  } catch (const std::exception&) {
    return false;
  }
  return true;
}();
}  // namespace

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto p = fs::temp_directory_path() / ("vczstats-test-" + std::to_string(rd()));
    if (fs::create_directory(p)) {
      path_ = p;
      return;
    }
  }
  throw std::runtime_error("cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

static std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CommandResult run(const std::string& command) {
  TempDir tmp;
  auto out = tmp / "out";
  auto err = tmp / "err";
  std::string full = "( " + command + " ) >" + shell_quote(out.string()) + " 2>" +
                     shell_quote(err.string()) + " </dev/null";
  int status = std::system(full.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::string run_ok(const std::string& command) {
  auto r = run(command);
  EXPECT_EQ(r.exit_code, 0) << "command failed: " << command << "\nstderr:\n" << r.err;
  return r.out;
}

std::string python() {
  return "/usr/bin/python3";
}

std::string tool(const std::string& name) {
  return std::string(VCZ_TOOLS_DIR) + "/" + name;
}

std::string binary() {
  // VCZSTATS_BINARY runs the CLI tests against another build of the same tree.
  if (const char* env = std::getenv("VCZSTATS_BINARY")) return env;
  return VCZ_BINARY;
}

fs::path shared_data() {
  auto p = fs::path(VCZ_SOURCE_DIR).parent_path() / "shared" / "data";
  if (const char* env = std::getenv("VCZSTATS_SHARED_DATA")) p = env;
  return fs::is_directory(p) ? p : fs::path();
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

bool have_program(const std::string& name) {
  return run("command -v " + shell_quote(name)).exit_code == 0;
}

bool reference_tools_required() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

bool have_python_zarr() {
  static const bool have =
      run(shell_quote(python()) + " -c 'import zarr, numcodecs, numba'").exit_code == 0;
  return have;
}

std::string info_field(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + "\t", 0) == 0) return line.substr(key.size() + 1);
  return "";
}

std::string make_random_store(const TempDir& dir, const std::string& name,
                              const std::string& vcf_args, const std::string& convert_args) {
  const auto vcf = (dir / (name + ".vcf.gz")).string();
  const auto store = (dir / (name + ".vcz")).string();
  run_ok(python() + " " + tool("random_vcf.py") + " " + vcf_args + " -o " + vcf);
  run_ok(python() + " " + tool("vcf2vcz.py") + " " + vcf + " " + store + " " + convert_args);
  return store;
}

std::string shapeit4_reference_vcf() {
  const std::string path = "/usr/share/doc/shapeit4/examples/test/reference.vcf.gz";
  return std::filesystem::exists(path) ? path : "";
}

std::string make_1kg_subset(const TempDir& dir, const std::string& name) {
  const std::string out = (dir / name).string();
  run_ok("bcftools view -r 20:1000000-1400000 -Oz -o " + shell_quote(out) + " " +
         shell_quote(shapeit4_reference_vcf()) + " && bcftools index -t " + shell_quote(out));
  return out;
}

}  // namespace vcztest
