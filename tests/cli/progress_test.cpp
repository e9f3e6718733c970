// The progress bar: on a terminal by default (a command run under a pseudo-terminal, as a user's
// shell runs it), never when stderr is a file or a pipe; --progress and --no-progress force it.

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "test_util.hpp"

using namespace vcztest;

namespace {

// @p command with stdin, stdout and stderr on a new pseudo-terminal; returns what it drew there.
std::string pty_run(const std::string& command) {
  return python() + " " + tool("pty_run.py") + " " + command;
}

// What progress_bar() draws: "\r[====   ]  42% ...", ending at 100% (drawn whatever the
// throttle, so a short run shows it too).
bool has_bar(const std::string& text) {
  return text.find("\r[") != std::string::npos && text.find("100%") != std::string::npos;
}

}  // namespace

// Before: CLI11's add_flag(name, int&) set the flag's int to 0 (no bar) and --no-progress to -1
// (the value meaning "when stderr is a terminal"), so a terminal got no bar by default.
TEST(CliProgress, BarOnATerminalByDefaultNeverOnAFileOrPipe) {
  TempDir dir;
  const std::string d = shell_quote(dir.path().string());
  const std::string sim = " simulate --samples 50 --variants 3000 --seed 5 ";
  // simulate, on a terminal: the bar (it always draws its last state, 100%).
  auto out = run_ok(pty_run(binary() + sim + d + "/a.vcz"));
  EXPECT_TRUE(has_bar(out)) << out;
  // stderr a file while stdout is the terminal: no bar, neither on the terminal nor in the file.
  out = run_ok(pty_run("sh -c " + shell_quote(binary() + sim + d + "/b.vcz 2>" + d + "/b.err")));
  EXPECT_FALSE(has_bar(out)) << out;
  std::ifstream err_file(dir / "b.err");
  const std::string err((std::istreambuf_iterator<char>(err_file)), {});
  EXPECT_EQ(err.find('['), std::string::npos) << err;
  // --no-progress on a terminal: none; --progress into a pipe: drawn.
  out = run_ok(pty_run(binary() + sim + d + "/c.vcz --no-progress"));
  EXPECT_FALSE(has_bar(out)) << out;
  auto r = run(binary() + sim + d + "/d.vcz --progress");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has_bar(r.err)) << r.err;
  // A pipe by default: none.
  r = run(binary() + sim + d + "/e.vcz");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;

  // A statistic and recompress, on a terminal by default; with a pipe, none.
  const std::string store = shell_quote(dir.path().string() + "/a.vcz");
  for (const std::string& args :
       {"afdist " + store + " -o " + d + "/afdist.tsv",
        "diversity " + store + " --window-size 100000 -o " + d + "/div.tsv",
        "recompress " + store + " " + d + "/r.vcz --codec blosc-lz4 -f"}) {
    out = run_ok(pty_run(binary() + " " + args));
    EXPECT_TRUE(has_bar(out)) << args << "\n" << out;
    r = run(binary() + " " + args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    EXPECT_TRUE(r.err.empty()) << args << "\n" << r.err;
  }
#ifdef VCZSTATS_HAVE_CONVERT
  // convert, reading a plain VCF.
  const std::string vcf = d + "/v.vcf";
  run_ok(python() + " " + tool("random_vcf.py") + " --seed 6 --samples 20 --variants 3000 -o " +
         vcf);
  out = run_ok(pty_run(binary() + " convert " + vcf + " " + d + "/conv.vcz"));
  EXPECT_TRUE(has_bar(out)) << out;
  r = run(binary() + " convert " + vcf + " " + d + "/conv.vcz -f");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
#endif
}
