// Real processes for integration tests: start a program, read what it
// prints, signal it, wait for it. A Process that goes out of scope kills its
// process group, so a failed test leaves nothing running.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace sched::testing {

class Process {
 public:
  // Starts argv[0] with the given arguments in its own process group, its
  // stdout (and stderr, unless stderr_path names a file for it) to a pipe.
  Process(const std::vector<std::string>& argv, const std::string& stderr_path = "");
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  // The next line of output, waiting up to `timeout`; nothing on timeout or
  // end of output.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout);
  // Sends a signal to the process (not its group).
  void signal(int sig);
  // Waits for the end; the wait status, or nothing on timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  bool running();

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string buffer_;
  std::optional<int> status_;
};

// A fresh folder under the system's temporary folder, removed at the end.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// A whole file's text ("" when it cannot be read).
std::string read_file(const std::string& path);

// Polls `done` until it is true or `timeout` passes; returns its last value.
template <class F>
bool eventually(F done, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Whether the process runs: false once it is gone or a zombie nobody reaped.
bool pid_alive(pid_t pid);

// The pid a script wrote to a file, waiting until it is there (0 if it never
// is).
pid_t read_pid(const std::string& path);

// Scripts on a node whose agent the test kills with SIGKILL outlive it (as
// they would not outlive a crashed node): they write their pid to `file`,
// and this kills their process groups when the test ends, should an
// assertion fail midway.
struct Orphans {
  std::string file;
  ~Orphans();
};

}  // namespace sched::testing
