// -o and store outputs (design.md §4): a regular file is replaced atomically, through symbolic
// links to their target; a character device, FIFO or /dev/fd/N is written directly and never
// replaced. The tests run as root in CI, where replacing /dev/null would succeed.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "test_util.hpp"

using namespace vcztest;
namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// A small simulated store (no Python or htslib needed), made once per test binary.
const std::string& store() {
  static TempDir dir;
  static const std::string path = [] {
    const auto p = (dir / "o.vcz").string();
    run_ok(binary() + " simulate " + p + " --samples 6 --variants 40 --seed 7 --no-progress");
    return p;
  }();
  return path;
}

std::string afdist(const std::string& more = "") {
  return binary() + " afdist " + store() + " --no-progress " + more;
}

bool is_char_device(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}
}  // namespace

TEST(CliOutput, CharacterDeviceIsWrittenNotReplaced) {
  const std::string expect = run_ok(afdist());
  ASSERT_FALSE(expect.empty());
  if (::geteuid() == 0) {
    // First a private copy of /dev/null (major 1, minor 3): if -o replaced devices, only this
    // node would be lost, and the test stops before it touches the real one.
    TempDir dir;
    const auto node = dir / "null";
    ASSERT_EQ(::mknod(node.c_str(), S_IFCHR | 0666, ::makedev(1, 3)), 0) << std::strerror(errno);
    auto r = run(afdist("-o " + node.string()));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(is_char_device(node)) << "-o replaced a character device";
    for (const auto& e : fs::directory_iterator(dir.path()))
      EXPECT_EQ(e.path().filename(), "null") << "left behind: " << e.path();
  }
  auto r = run(afdist("-o /dev/null"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(is_char_device("/dev/null")) << "-o replaced /dev/null";
  EXPECT_EQ(slurp("/dev/null"), "");  // still discards what is written
}

TEST(CliOutput, FifoIsWrittenForItsReader) {
  const std::string expect = run_ok(afdist());
  TempDir dir;
  const auto fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });  // blocks in open until the writer opens it
  auto r = run(afdist("-o " + fifo.string()));
  reader.join();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(got, expect);
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "-o replaced the FIFO";
}

TEST(CliOutput, SymlinkTargetIsReplacedAndTheLinkStays) {
  const std::string expect = run_ok(afdist());
  TempDir dir;
  fs::create_directory(dir / "real");
  { std::ofstream(dir / "real" / "target.tsv") << "old contents\n"; }
  ::chmod((dir / "real" / "target.tsv").c_str(), 0640);
  fs::create_symlink("real/target.tsv", dir / "link.tsv");  // relative, into another folder
  fs::create_symlink("link.tsv", dir / "link2.tsv");        // a chain of two
  auto r = run(afdist("-o " + (dir / "link2.tsv").string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir / "link2.tsv"));
  EXPECT_TRUE(fs::is_symlink(dir / "link.tsv"));
  EXPECT_EQ(slurp(dir / "real" / "target.tsv"), expect);
  EXPECT_EQ(fs::status(dir / "real" / "target.tsv").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read)
      << "replacing a file keeps its mode";
  // No temporary is left beside the link or the target.
  for (const auto& folder : {dir.path(), dir / "real"})
    for (const auto& e : fs::directory_iterator(folder))
      EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
  // A dangling link: its target is created, as a shell's > creates it.
  fs::create_symlink("real/new.tsv", dir / "dangling.tsv");
  r = run(afdist("-o " + (dir / "dangling.tsv").string()));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir / "dangling.tsv"));
  EXPECT_EQ(slurp(dir / "real" / "new.tsv"), expect);
}

TEST(CliOutput, DescriptorsAndProcessSubstitutionAreWrittenThrough) {
  VCZ_REQUIRE_PROGRAM("bash");
  const std::string expect = run_ok(afdist());
  TempDir dir;
  const auto file = dir / "fd3.tsv";
  // /dev/fd/N of a descriptor the shell opened.
  run_ok("bash -c " + shell_quote(afdist("-o /dev/fd/3") + " 3>" + file.string()));
  EXPECT_EQ(slurp(file), expect);
  // Process substitution: a pipe's /dev/fd/63.
  const auto gz = dir / "x.tsv";
  run_ok("bash -c " + shell_quote(afdist("-o >(cat > " + gz.string() + ")") + "; wait"));
  // The substituted process may finish after the shell; give it a moment.
  for (int i = 0; i < 50 && slurp(gz) != expect; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(slurp(gz), expect);
  // /dev/stdout appended to a log keeps what the log held.
  const auto log = dir / "log.tsv";
  { std::ofstream(log) << "first line\n"; }
  run_ok("bash -c " + shell_quote(afdist("-o /dev/stdout") + " >> " + log.string()));
  EXPECT_EQ(slurp(log), "first line\n" + expect);
  EXPECT_TRUE(fs::is_symlink("/dev/stdout") || !fs::exists("/dev/stdout"));
}

TEST(CliOutput, StoreThroughASymlinkReplacesTheTarget) {
  TempDir dir;
  fs::create_directory(dir / "stores");
  const auto target = dir / "stores" / "sim.vcz";
  const std::string sim = binary() + " simulate --samples 4 --variants 10 --seed 3 --no-progress ";
  run_ok(sim + target.string());
  fs::create_symlink("stores/sim.vcz", dir / "link.vcz");
  // Without --force an existing output (through the link) is refused.
  auto r = run(sim + (dir / "link.vcz").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run(sim + "--force " + (dir / "link.vcz").string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir / "link.vcz"));
  EXPECT_TRUE(fs::is_directory(target));
  EXPECT_EQ(run_ok(binary() + " afdist --no-progress " + (dir / "link.vcz").string()),
            run_ok(binary() + " afdist --no-progress " + target.string()));
  // A device is no place for a store.
  r = run(sim + "--force /dev/null");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("/dev/null"), std::string::npos) << r.err;
  EXPECT_TRUE(is_char_device("/dev/null"));
}
