#include "sched/agent/task_records.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "proc_tree.hpp"

namespace sched::agent {
namespace {

// The processes of one record, with their identity (pid + start time).
std::vector<detail::ProcRef> processes_of(const TaskRecord& record) {
  if (record.session <= 0) return {};
  if (const auto leader = detail::read_proc_stat(record.session)) {
    // A reused pid: the kernel reuses no pid still naming a session or group,
    // so the recorded session is gone entirely.
    if (leader->ref.start_time != record.start_time) return {};
  }
  std::vector<detail::ProcRef> out;
  for (const detail::ProcRef& ref : detail::collect_tree(record.session, {})) {
    // Everything of the task started after its leader.
    if (ref.start_time >= record.start_time) out.push_back(ref);
  }
  return out;
}

}  // namespace

TaskRecord task_record(JobId job, TaskId task, pid_t pid) {
  TaskRecord record{job, task, pid, 0};
  if (const auto stat = detail::read_proc_stat(pid)) record.start_time = stat->ref.start_time;
  return record;
}

void write_task_records(const std::string& path, const std::vector<TaskRecord>& records) {
  std::ostringstream text;
  for (const TaskRecord& r : records) {
    text << r.job << ' ' << r.task << ' ' << r.session << ' ' << r.start_time << '\n';
  }
  const std::string bytes = text.str();
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot write " + temp + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw std::runtime_error("cannot write " + temp + ": " + why);
    }
    done += static_cast<std::size_t>(n);
  }
  // The rename must not reach the disk before the contents do.
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || ::rename(temp.c_str(), path.c_str()) != 0) {
    throw std::runtime_error("cannot replace " + path + ": " + std::strerror(errno));
  }
}

std::vector<TaskRecord> read_task_records(const std::string& path) {
  std::vector<TaskRecord> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    TaskRecord r;
    std::string rest;
    if (fields >> r.job >> r.task >> r.session >> r.start_time && !(fields >> rest) &&
        r.session > 0) {
      out.push_back(r);
    }
  }
  return out;
}

std::vector<pid_t> recorded_processes(const std::vector<TaskRecord>& records) {
  std::vector<pid_t> out;
  for (const TaskRecord& record : records) {
    for (const detail::ProcRef& ref : processes_of(record)) out.push_back(ref.pid);
  }
  return out;
}

std::vector<TaskRecord> kill_recorded(const std::vector<TaskRecord>& records,
                                      std::chrono::duration<double> timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<TaskRecord> left = records;
  while (true) {
    std::vector<TaskRecord> alive;
    for (const TaskRecord& record : left) {
      const auto procs = processes_of(record);
      if (procs.empty()) continue;
      alive.push_back(record);
      for (const detail::ProcRef& ref : procs) detail::signal_process(ref, SIGKILL);
    }
    left = std::move(alive);
    if (left.empty() || std::chrono::steady_clock::now() >= deadline) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace sched::agent
