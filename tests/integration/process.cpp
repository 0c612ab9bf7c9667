#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace sched::testing {

Process::Process(const std::vector<std::string>& argv, const std::string& stderr_path) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::strerror(errno));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int err_fd =
      stderr_path.empty() ? -1 : ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error(std::strerror(errno));
  if (pid_ == 0) {
    setpgid(0, 0);
    dup2(fds[1], 1);
    dup2(err_fd >= 0 ? err_fd : fds[1], 2);
    execv(args[0], args.data());
    _exit(127);
  }
  if (err_fd >= 0) ::close(err_fd);
  ::close(fds[1]);
  out_fd_ = fds[0];
}

Process::~Process() {
  if (pid_ > 0 && !status_) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  if (out_fd_ >= 0) ::close(out_fd_);
}

std::optional<std::string> Process::read_line(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{out_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char chunk[4096];
    const ssize_t n = ::read(out_fd_, chunk, sizeof chunk);
    if (n <= 0) return std::nullopt;
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

void Process::signal(int sig) {
  if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

std::optional<int> Process::wait(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      status_ = status;
      return status_;
    }
    if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool Process::running() { return !wait(std::chrono::milliseconds(0)).has_value(); }

TempDir::TempDir(const std::string& prefix) {
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() /
          (prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

bool pid_alive(pid_t pid) {
  // A zombie counts as gone: its process has ended.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = content.rfind(')');
  return close != std::string::npos && close + 2 < content.size() && content[close + 2] != 'Z';
}

pid_t read_pid(const std::string& path) {
  pid_t pid = 0;
  eventually([&] {
    std::ifstream in(path);
    return static_cast<bool>(in >> pid);
  });
  return pid;
}

Orphans::~Orphans() {
  std::ifstream in(file);
  for (pid_t pid = 0; in >> pid;) {
    if (pid > 0) ::kill(-pid, SIGKILL);
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace sched::testing
