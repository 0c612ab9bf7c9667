#include "proc_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace sched::agent::detail {
namespace {

// /proc/<pid>/stat is one short line; the command name may hold spaces and
// parentheses, so fields are counted from the last ')'.
std::optional<ProcStat> parse_stat(pid_t pid, const char* text) {
  const char* close = std::strrchr(text, ')');
  if (close == nullptr) return std::nullopt;
  ProcStat s;
  s.ref.pid = pid;
  int ppid = 0, pgrp = 0, session = 0;
  // Fields 3..22 of proc(5): state ppid pgrp session tty_nr tpgid flags
  // minflt cminflt majflt cmajflt utime stime cutime cstime priority nice
  // num_threads itrealvalue starttime.
  const int n = std::sscanf(close + 1,
                            " %c %d %d %d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
                            "%*d %*d %llu",
                            &s.state, &ppid, &pgrp, &session, &s.ref.start_time);
  if (n != 5) return std::nullopt;
  s.ppid = ppid;
  s.pgrp = pgrp;
  s.session = session;
  return s;
}

}  // namespace

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[1024];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buf[n] = '\0';
  return parse_stat(pid, buf);
}

std::vector<ProcStat> scan_processes() {
  std::vector<ProcStat> out;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return out;
  while (const dirent* entry = ::readdir(dir)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    if (auto stat = read_proc_stat(static_cast<pid_t>(pid))) out.push_back(*stat);
  }
  ::closedir(dir);
  return out;
}

std::vector<ProcRef> collect_tree(pid_t leader, const std::vector<ProcRef>& known) {
  const std::vector<ProcStat> all = scan_processes();
  const pid_t self = ::getpid();
  std::unordered_map<pid_t, unsigned long long> known_starts;
  for (const ProcRef& ref : known) known_starts.emplace(ref.pid, ref.start_time);
  std::unordered_map<pid_t, std::vector<std::size_t>> children;
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const ProcStat& p = all[i];
    children[p.ppid].push_back(i);
    const bool in_group =
        leader > 0 && (p.ref.pid == leader || p.pgrp == leader || p.session == leader);
    const auto k = known_starts.find(p.ref.pid);
    if (in_group || (k != known_starts.end() && k->second == p.ref.start_time)) todo.push_back(i);
  }
  std::vector<ProcRef> tree;
  std::unordered_set<pid_t> seen;
  while (!todo.empty()) {
    const ProcStat& p = all[todo.back()];
    todo.pop_back();
    if (p.ref.pid == self || !seen.insert(p.ref.pid).second) continue;
    if (p.state != 'Z' && p.state != 'X') tree.push_back(p.ref);
    if (auto it = children.find(p.ref.pid); it != children.end()) {
      todo.insert(todo.end(), it->second.begin(), it->second.end());
    }
  }
  return tree;
}

void signal_process(const ProcRef& ref, int sig) {
  // Between this check and kill() the process could end and its pid be
  // reused; pidfds would close that gap at the cost of one fd per process.
  const auto now = read_proc_stat(ref.pid);
  if (now && now->ref.start_time == ref.start_time) ::kill(ref.pid, sig);
}

}  // namespace sched::agent::detail
