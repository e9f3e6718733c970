#pragma once
// Real servers for the remote-store tests, started on 127.0.0.1 on free ports and stopped (their
// whole process group) when the object dies, also when a test fails: Debian's nginx, the
// S3-compatible s3rver (npm, installed by scripts/setup.sh into .tools/), and
// tests/tools/fault_server.py.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.hpp"

namespace vcztest::remote {

namespace fs = std::filesystem;

/// A port that was free a moment ago on 127.0.0.1.
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return 0;
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

/// Whether something accepts connections on 127.0.0.1:@p port.
inline bool port_open(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

/// A child process in its own process group; stdout goes to a file the test can read.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(o, 1);
      ::dup2(e, 2);
      const int in = ::open("/dev/null", O_RDONLY);
      ::dup2(in, 0);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      _exit(127);
    }
    if (pid_ > 0) ::setpgid(pid_, pid_);
  }
  ~Process() { stop(); }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(-pid_, SIGTERM);
    for (int i = 0; i < 50; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }

 private:
  pid_t pid_ = -1;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Wait until @p ready() holds or @p seconds pass.
template <class Ready>
bool wait_until(Ready&& ready, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ready();
}

/// The port a server prints once it listens (first group of @p re in its @p out file), or 0
/// when it exits or says nothing within @p seconds.
inline int announced_port(Process& process, const fs::path& out, const std::regex& re,
                          double seconds) {
  int port = 0;
  wait_until(
      [&] {
        std::smatch m;
        const std::string text = slurp(out);
        if (std::regex_search(text, m, re)) port = std::stoi(m[1]);
        return port != 0 || !process.running();
      },
      seconds);
  return port;
}

/// Debian's nginx serving @p root (autoindex on, byte ranges, ETags) on a free port.
class Nginx {
 public:
  explicit Nginx(const fs::path& root) {
    for (int attempt = 0; attempt < 5 && port_ == 0; ++attempt) {
      const int port = free_port();
      const fs::path conf = dir_ / "nginx.conf";
      std::ofstream(conf) << "worker_processes 2;\n"
                          << (::geteuid() == 0 ? "user root root;\n" : "") << "pid "
                          << (dir_ / "nginx.pid").string() << ";\n"
                          << "error_log " << (dir_ / "error.log").string() << ";\n"
                          << "events { worker_connections 512; }\n"
                          << "http {\n"
                          << "  access_log off;\n"
                          << "  client_body_temp_path " << dir_.path().string() << ";\n"
                          << "  proxy_temp_path " << dir_.path().string() << ";\n"
                          << "  fastcgi_temp_path " << dir_.path().string() << ";\n"
                          << "  uwsgi_temp_path " << dir_.path().string() << ";\n"
                          << "  scgi_temp_path " << dir_.path().string() << ";\n"
                          << "  keepalive_requests 100000;\n"
                          << "  types { } default_type application/octet-stream;\n"
                          << "  server {\n"
                          << "    listen 127.0.0.1:" << port << ";\n"
                          << "    root " << fs::absolute(root).string() << ";\n"
                          << "    autoindex on;\n"
                          << "  }\n"
                          << "}\n";
      process_.emplace(
          std::vector<std::string>{"nginx", "-e", (dir_ / "error.log").string(), "-p",
                                   dir_.path().string(), "-c", conf.string(), "-g", "daemon off;"},
          dir_ / "stdout", dir_ / "stderr");
      if (wait_until([&] { return port_open(port) || !process_->running(); }, 10) &&
          process_->running())
        port_ = port;
      else
        process_.reset();
    }
  }
  bool ok() const { return port_ != 0; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string log() const { return slurp(dir_ / "error.log") + slurp(dir_ / "stderr"); }

 private:
  TempDir dir_;
  std::optional<Process> process_;
  int port_ = 0;
};

/// tests/tools/fault_server.py serving @p root with the given fault options.
class FaultServer {
 public:
  FaultServer(const fs::path& root, const std::vector<std::string>& options) {
    std::vector<std::string> argv{python(), tool("fault_server.py"),
                                  "--root", root.string(),
                                  "--log",  (dir_ / "requests.log").string()};
    argv.insert(argv.end(), options.begin(), options.end());
    process_.emplace(argv, dir_ / "stdout", dir_ / "stderr");
    port_ = announced_port(*process_, dir_ / "stdout", std::regex("PORT ([0-9]+)"), 20);
  }
  bool ok() const { return port_ != 0; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string requests() const { return slurp(dir_ / "requests.log"); }
  std::string log() const { return slurp(dir_ / "stderr"); }

 private:
  TempDir dir_;
  std::optional<Process> process_;
  int port_ = 0;
};

/// The s3rver binary scripts/setup.sh installs, or "" when it is absent.
inline std::string s3rver_binary() {
  const fs::path p = fs::path(VCZ_SOURCE_DIR) / ".tools/s3rver/node_modules/.bin/s3rver";
  return fs::exists(p) && have_program("node") ? p.string() : std::string();
}

/// s3rver (an S3-compatible server on npm) with bucket @p bucket. It checks access key ids
/// (S3RVER is its one key; its secret is S3RVER too) but not Signature V4 bytes: the signature
/// tests use fault_server.py --sigv4.
class S3Server {
 public:
  explicit S3Server(const std::string& bucket) : bucket_(bucket) {
    const std::string bin = s3rver_binary();
    if (bin.empty()) return;
    process_.emplace(std::vector<std::string>{bin, "-d", (dir_ / "data").string(), "-a",
                                              "127.0.0.1", "-p", "0", "--configure-bucket", bucket},
                     dir_ / "stdout", dir_ / "stderr");
    port_ = announced_port(*process_, dir_ / "stdout",
                           std::regex("listening on 127\\.0\\.0\\.1:([0-9]+)"), 30);
  }
  bool ok() const { return port_ != 0; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  /// Upload @p paths (folders recursively) below @p prefix.
  void put(const std::string& prefix, const std::vector<fs::path>& paths) const {
    std::string cmd = python();
    for (const std::string& arg :
         {shell_quote(tool("s3_put.py")), url(), bucket_, shell_quote(prefix)}) {
      cmd += ' ';
      cmd += arg;
    }
    for (const auto& p : paths) {
      cmd += ' ';
      cmd += shell_quote(p.string());
    }
    run_ok(cmd);
  }
  std::string log() const { return slurp(dir_ / "stdout") + slurp(dir_ / "stderr"); }

 private:
  std::string bucket_;
  TempDir dir_;
  std::optional<Process> process_;
  int port_ = 0;
};

/// Skip unless nginx is installed (scripts/setup.sh installs it).
#define VCZ_REQUIRE_NGINX() VCZ_REQUIRE_PROGRAM("nginx")

/// Skip unless s3rver is installed (scripts/setup.sh installs it into .tools/).
#define VCZ_REQUIRE_S3RVER()                                                                 \
  do {                                                                                       \
    if (vcztest::remote::s3rver_binary().empty())                                            \
      GTEST_SKIP() << "skipped: s3rver is not installed (scripts/setup.sh installs it into " \
                      ".tools/ with npm)";                                                   \
  } while (0)

}  // namespace vcztest::remote
