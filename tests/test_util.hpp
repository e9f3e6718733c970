#pragma once
// Helpers shared by the tests: temporary directories, running reference tools, test data.

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace vcztest {

/// A fresh directory removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// Result of a shell command.
struct CommandResult {
  int exit_code = 0;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

/// Run @p command with /bin/sh, capturing stdout and stderr.
CommandResult run(const std::string& command);

/// Run a command and fail the test (with its stderr) unless it exits 0; returns stdout.
std::string run_ok(const std::string& command);

/// Debian's python3 (the one that has zarr, numcodecs and numba), not a pyenv one.
std::string python();

/// Path of a helper script in tests/tools.
std::string tool(const std::string& name);

/// The vczstats binary under test.
std::string binary();

/// ../shared/data of the checkout, or "" when it is absent (a user's clone).
std::filesystem::path shared_data();

/// Quote a string for the shell.
std::string shell_quote(const std::string& s);

/// Whether a program is on PATH.
bool have_program(const std::string& name);

/// Whether a missing reference tool fails a test instead of skipping it: under CI=true, where
/// scripts/setup.sh has installed every tool, a skip would hide a comparison that never ran.
bool reference_tools_required();

/// Whether python() can import zarr, numcodecs and numba (tests/tools/vcf2vcz.py and
/// ref_afdist.py need them; the GPU machine has none of them).
bool have_python_zarr();

/// The value of line "KEY<tab>value" of @p text (`vczstats info`'s TSV), or "".
std::string info_field(const std::string& text, const std::string& key);

/// A store @p name.vcz in @p dir from tests/tools/random_vcf.py @p vcf_args (the VCF kept as
/// @p name.vcf.gz), converted by tests/tools/vcf2vcz.py with @p convert_args; returns its path.
std::string make_random_store(const TempDir& dir, const std::string& name,
                              const std::string& vcf_args, const std::string& convert_args);

/// Debian's shapeit4-example 1000 Genomes reference panel VCF (300 EUR samples, chr20), or ""
/// when the package is not installed.
std::string shapeit4_reference_vcf();

/// chr20:1,000,000-1,400,000 of shapeit4_reference_vcf() (3,244 biallelic sites, no missing
/// calls) written as @p name in @p dir, bgzipped and indexed; returns its path.
std::string make_1kg_subset(const TempDir& dir, const std::string& name);

}  // namespace vcztest

/// Skip the test with a visible message unless ../shared/data exists.
#define VCZ_REQUIRE_SHARED_DATA()                                                           \
  do {                                                                                      \
    if (vcztest::shared_data().empty())                                                     \
      GTEST_SKIP() << "skipped: ../shared/data is absent (it exists only in the project's " \
                      "own checkouts and CI)";                                              \
  } while (0)

/// Skip a test of `vczstats convert` in a build without htslib.
#ifndef VCZSTATS_HAVE_CONVERT
#define VCZ_REQUIRE_CONVERT() GTEST_SKIP() << "skipped: built without htslib (VCZSTATS_CONVERT=OFF)"
#else
#define VCZ_REQUIRE_CONVERT() \
  do {                        \
  } while (0)
#endif

/// Skip unless a reference program is installed (scripts/setup.sh installs them all); under
/// CI=true fail instead.
#define VCZ_REQUIRE_PROGRAM(name)                                                         \
  do {                                                                                    \
    if (!vcztest::have_program(name)) {                                                   \
      if (vcztest::reference_tools_required())                                            \
        FAIL() << name << " is not installed, and CI=true requires every reference tool " \
               << "(run scripts/setup.sh)";                                               \
      GTEST_SKIP() << "skipped: " << name << " is not installed (run scripts/setup.sh)";  \
    }                                                                                     \
  } while (0)

/// Skip unless python() has zarr, numcodecs and numba (scripts/setup.sh installs them); under
/// CI=true fail instead.
#define VCZ_REQUIRE_PYTHON_ZARR()                                                        \
  do {                                                                                   \
    if (!vcztest::have_python_zarr()) {                                                  \
      if (vcztest::reference_tools_required())                                           \
        FAIL() << vcztest::python() << " cannot import zarr, numcodecs and numba, and "  \
               << "CI=true requires them (run scripts/setup.sh)";                        \
      GTEST_SKIP() << "skipped: " << vcztest::python()                                   \
                   << " cannot import zarr, numcodecs and numba (run scripts/setup.sh)"; \
    }                                                                                    \
  } while (0)

/// Skip unless Debian's shapeit4-example (the 1000 Genomes reference panel the comparisons use)
/// is installed; under CI=true fail instead.
#define VCZ_REQUIRE_SHAPEIT4_EXAMPLE()                                                     \
  do {                                                                                     \
    if (vcztest::shapeit4_reference_vcf().empty()) {                                       \
      if (vcztest::reference_tools_required())                                             \
        FAIL() << "shapeit4-example is not installed, and CI=true requires it (run "       \
                  "scripts/setup.sh)";                                                     \
      GTEST_SKIP() << "skipped: shapeit4-example is not installed (run scripts/setup.sh)"; \
    }                                                                                      \
  } while (0)
