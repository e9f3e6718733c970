// The built CLI's dynamic section: its RUNPATH (the folders of libraries outside the system's)
// has no empty entry, which the loader reads as the current directory (a library file in the
// folder a user runs vczstats from would then be loaded in place of the system's).

#include <gtest/gtest.h>

#include <regex>

#include "test_util.hpp"

using namespace vcztest;

TEST(CliBinary, RunPathHasNoEmptyEntry) {
  VCZ_REQUIRE_PROGRAM("readelf");
  const std::string d = run_ok("readelf -d " + shell_quote(binary()));
  std::smatch m;
  const std::regex path(R"(\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[([^\]]*)\])");
  if (!std::regex_search(d, m, path)) GTEST_SKIP() << "skipped: the binary has no run path";
  const std::string p = m[1];
  EXPECT_FALSE(p.empty() || p.front() == ':' || p.back() == ':' ||
               p.find("::") != std::string::npos)
      << "run path [" << p << "] has an empty entry (the current directory)";
}
