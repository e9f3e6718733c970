#pragma once
// Running the CLI on hostile input: with a time limit and (outside ASan, which reserves
// terabytes of address space) a memory limit, and checking that it failed cleanly.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace vcztest::hostile {

/// @p command under a 60 s time limit and, unless built with AddressSanitizer, an address-space
/// limit of @p memory_mib MiB (so a run that would exhaust memory fails fast instead). Two malloc
/// arenas at most: glibc reserves 64 MiB of address space for each thread's arena otherwise,
/// which on a many-core machine alone would exceed the limit.
inline std::string limited(const std::string& command, int memory_mib = 4096) {
  std::string prefix = "export MALLOC_ARENA_MAX=2; ";
#ifndef VCZ_SANITIZE
  prefix += "ulimit -v " + std::to_string(memory_mib * 1024) + "; ";
#else
  (void)memory_mib;
#endif
  return prefix + "timeout 60 " + command;
}

/// Run @p command (limited) and expect a clean failure: exit @p code, exactly one line on
/// stderr, "vczstats: error: " and each of @p words in it, no internal error, and nothing at
/// @p output (when given) nor a temporary sibling of it.
inline void expect_clean_failure(const std::string& command, int code,
                                 const std::vector<std::string>& words, int memory_mib = 0,
                                 const std::string& output = "") {
  const auto r = run(memory_mib > 0 ? limited(command, memory_mib) : limited(command));
  EXPECT_EQ(r.exit_code, code) << command << "\nstderr: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << command << "\nstderr: " << r.err;
  EXPECT_EQ(r.err.rfind("vczstats: error: ", 0), 0u) << command << "\nstderr: " << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << command << "\n" << r.err;
  for (const auto& w : words)
    EXPECT_NE(r.err.find(w), std::string::npos)
        << command << "\nmissing '" << w << "' in: " << r.err;
  if (!output.empty()) {
    const std::filesystem::path out(output);
    EXPECT_FALSE(std::filesystem::exists(out)) << output;
    const auto parent = out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path();
    for (const auto& e : std::filesystem::directory_iterator(parent))
      EXPECT_EQ(e.path().filename().string().find(out.filename().string() + ".tmp"),
                std::string::npos)
          << e.path();
  }
}

}  // namespace vcztest::hostile
