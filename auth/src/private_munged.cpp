#include "sched/auth/private_munged.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "sched/auth/munge.hpp"

namespace sched::auth {
namespace fs = std::filesystem;
namespace {

// munged lives in sbin, which a user's PATH may lack.
std::string find_munged() {
  std::vector<fs::path> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream list(path);
    for (std::string dir; std::getline(list, dir, ':');) dirs.emplace_back(dir);
  }
  for (const char* dir : {"/usr/sbin", "/sbin", "/usr/local/sbin"}) dirs.emplace_back(dir);
  for (const fs::path& dir : dirs) {
    if (::access((dir / "munged").c_str(), X_OK) == 0) return (dir / "munged").string();
  }
  throw std::runtime_error("cannot find munged (install the munge package)");
}

void create_key(const fs::path& key) {
  if (fs::exists(key)) return;
  // munged refuses a key others can read.
  const int fd = ::open(key.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0400);
  if (fd < 0)
    throw std::runtime_error("cannot create " + key.string() + ": " + std::strerror(errno));
  unsigned char bytes[1024];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    }
    got += static_cast<std::size_t>(n);
  }
  const bool written = ::write(fd, bytes, sizeof bytes) == static_cast<ssize_t>(sizeof bytes);
  ::close(fd);
  if (!written) throw std::runtime_error("cannot write " + key.string());
}

pid_t read_pid(const fs::path& file) {
  std::ifstream in(file);
  long pid = 0;
  return in >> pid && pid > 0 ? static_cast<pid_t>(pid) : 0;
}

std::string read_all(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string private_munged_socket(const std::string& dir) {
  return (fs::path(dir) / "munge.socket").string();
}

std::string start_private_munged(const std::string& dir) {
  const fs::path d(dir);
  fs::create_directories(d);
  fs::permissions(d, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                         fs::perms::others_read | fs::perms::others_exec);
  create_key(d / "munge.key");
  const std::string socket = private_munged_socket(dir);
  if (munge_answers(socket)) return socket;  // already running
  std::vector<std::string> argv = {find_munged(),
                                   "--socket=" + socket,
                                   "--key-file=" + (d / "munge.key").string(),
                                   "--pid-file=" + (d / "munged.pid").string(),
                                   "--log-file=" + (d / "munged.log").string(),
                                   "--seed-file=" + (d / "munged.seed").string()};
  if (::geteuid() == 0) argv.push_back("--force");
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  // munged forks into the background once set up; its first process ends.
  int status = 0;
  waitpid(pid, &status, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!munge_answers(socket)) {
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("munged did not start in " + dir + ": " +
                               read_all(d / "munged.log"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return socket;
}

bool stop_private_munged(const std::string& dir) {
  const fs::path pid_file = fs::path(dir) / "munged.pid";
  const pid_t pid = read_pid(pid_file);
  // A stale pid file may name another program by now.
  if (pid <= 0 || read_all("/proc/" + std::to_string(pid) + "/comm").rfind("munged", 0) != 0 ||
      ::kill(pid, SIGTERM) != 0) {
    return false;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (::kill(pid, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (::kill(pid, 0) == 0) ::kill(pid, SIGKILL);
  return true;
}

}  // namespace sched::auth
