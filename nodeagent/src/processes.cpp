#include "sched/agent/processes.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "launch_plan.hpp"
#include "proc_tree.hpp"
#include "spawn.hpp"
#include "unique_fd.hpp"

namespace sched::agent {

using detail::ProcRef;
using detail::UniqueFd;

struct ProcessTable::Task {
  JobId job = 0;
  detail::Spawned proc;
  std::string script_path;            // batch: removed once reaped
  UniqueFd out, err;                  // step: read ends of its stdout and stderr
  bool killed = false;                // kill() was called
  std::optional<SteadyTime> sigkill;  // when the SIGKILL of a kill() is due
  std::vector<ProcRef> tree;          // collected by kill(): may have left the group
};

struct ProcessTable::Leftover {
  std::vector<ProcRef> procs;
  SteadyTime sigkill;
};

namespace {

// Per stream and call of read_output(), so one chatty task cannot hold the loop.
constexpr std::size_t kReadBudget = std::size_t{64} * 1024;
// What reap() still reads of an ended step: bounded, as a process that left
// the group may keep writing.
constexpr std::size_t kDrainBudget = std::size_t{16} * 1024 * 1024;
// Exit status reported when someone else reaped the process (the daemon
// ignoring SIGCHLD or calling wait() for any child).
constexpr int kStatusLost = 255;

struct Ended {
  int status = 0;
  bool lost = false;  // the exit status went to someone else
};

// Whether the process has ended, leaving it unreaped (WNOWAIT): while it
// stays a zombie its pid still names its group and session.
std::optional<Ended> peek_exit(pid_t pid) {
  siginfo_t info{};
  while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
    if (errno != EINTR) return Ended{kStatusLost, true};
  }
  if (info.si_pid == 0) return std::nullopt;
  return Ended{info.si_code == CLD_EXITED ? info.si_status : -info.si_status, false};
}

void reap_zombie(pid_t pid) {
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

void read_into(UniqueFd& fd, Stream stream, std::size_t budget, std::vector<OutputChunk>& out) {
  std::string bytes;
  char buf[16 * 1024];
  while (fd && bytes.size() < budget) {
    const ssize_t n = ::read(fd.get(), buf, std::min(sizeof buf, budget - bytes.size()));
    if (n > 0) {
      bytes.append(buf, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      break;
    } else {
      fd.reset();  // end of file, or an error that will not go away
    }
  }
  if (!bytes.empty()) out.push_back(OutputChunk{stream, std::move(bytes)});
}

void signal_tree(pid_t group, const std::vector<ProcRef>& tree, int sig) {
  // The group signal also reaches members forked since the tree was read.
  if (group > 0) ::kill(-group, sig);
  for (const ProcRef& p : tree) detail::signal_process(p, sig);
}

}  // namespace

ProcessTable::ProcessTable(Clock clock)
    : clock_(std::move(clock)), inherited_env_(detail::inherited_environment()) {}

ProcessTable::~ProcessTable() {
  for (auto& [id, task] : tasks_) {
    const pid_t pid = task->proc.pid();
    signal_tree(pid, detail::collect_tree(pid, task->tree), SIGKILL);
  }
  for (auto& left : leftovers_) signal_tree(0, detail::collect_tree(0, left->procs), SIGKILL);
  for (auto& [id, task] : tasks_) {
    // SIGKILL ends a process at once unless it sleeps uninterruptibly in the
    // kernel (a hung file system); do not hang the agent's exit for that.
    const pid_t pid = task->proc.pid();
    int tries = 0;
    while (!peek_exit(pid) && ++tries < 500) {
      const timespec pause{0, 10'000'000};
      ::nanosleep(&pause, nullptr);
    }
    if (peek_exit(pid)) {
      reap_zombie(pid);
    } else {
      spdlog::warn("task {} (pid {}) did not end after SIGKILL; left unreaped", id, pid);
    }
    if (!task->script_path.empty()) {
      std::error_code ec;
      std::filesystem::remove(task->script_path, ec);
    }
  }
}

TaskId ProcessTable::launch_batch(const BatchLaunch& launch) {
  auto task = std::make_unique<Task>();
  task->job = launch.job;
  const detail::SpawnSpec spec = detail::plan_batch(launch, inherited_env_, &task->script_path);
  try {
    task->proc = detail::spawn(spec);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(task->script_path, ec);
    throw;
  }
  return add(std::move(task));
}

TaskId ProcessTable::launch_step(const StepLaunch& launch) {
  auto task = std::make_unique<Task>();
  task->job = launch.job;
  detail::SpawnSpec spec = detail::plan_step(launch, inherited_env_);
  spec.pass_fd = launch.pmi_fd;
  detail::Pipe out = detail::make_pipe();
  detail::Pipe err = detail::make_pipe();
  spec.stdout_fd = out.write.get();
  spec.stderr_fd = err.write.get();
  task->proc = detail::spawn(spec);
  // The write ends close here: the child holds its own copies, and EOF
  // then comes when the last writer is gone.
  ::fcntl(out.read.get(), F_SETFL, O_NONBLOCK);
  ::fcntl(err.read.get(), F_SETFL, O_NONBLOCK);
  task->out = std::move(out.read);
  task->err = std::move(err.read);
  return add(std::move(task));
}

TaskId ProcessTable::add(std::unique_ptr<Task> task) {
  const TaskId id = next_id_++;
  spdlog::debug("task {} of job {} started as pid {}", id, task->job, task->proc.pid());
  tasks_.emplace(id, std::move(task));
  return id;
}

std::vector<OutputChunk> ProcessTable::read_output(TaskId id) {
  std::vector<OutputChunk> out;
  const auto it = tasks_.find(id);
  if (it == tasks_.end()) return out;
  read_into(it->second->out, Stream::Out, kReadBudget, out);
  read_into(it->second->err, Stream::Err, kReadBudget, out);
  return out;
}

std::vector<TaskExit> ProcessTable::reap() {
  poll_timers();
  std::vector<TaskExit> exits;
  for (auto it = tasks_.begin(); it != tasks_.end();) {
    const auto ended = peek_exit(it->second->proc.pid());
    if (!ended) {
      ++it;
      continue;
    }
    exits.push_back(finish(it->first, *it->second, ended->status));
    if (ended->lost) exits.back().error = "exit status lost: the process was reaped elsewhere";
    it = tasks_.erase(it);
  }
  return exits;
}

TaskExit ProcessTable::finish(TaskId id, Task& task, int status) {
  const pid_t pid = task.proc.pid();
  // The process is a zombie: its pid still names its group and session, so
  // what it left behind can be found and signalled without pid-reuse races.
  std::vector<ProcRef> rest = detail::collect_tree(pid, task.tree);
  const SteadyTime now = clock_();
  if (task.sigkill && *task.sigkill > now && !rest.empty()) {
    leftovers_.push_back(std::make_unique<Leftover>(Leftover{std::move(rest), *task.sigkill}));
  } else {
    signal_tree(pid, rest, SIGKILL);
  }

  TaskExit exit;
  exit.task = id;
  exit.job = task.job;
  exit.status = status;
  exit.killed = task.killed;
  exit.error = task.proc.start_failure();
  read_into(task.out, Stream::Out, kDrainBudget, exit.output);
  read_into(task.err, Stream::Err, kDrainBudget, exit.output);
  reap_zombie(pid);
  if (!task.script_path.empty()) {
    std::error_code ec;
    std::filesystem::remove(task.script_path, ec);
  }
  spdlog::debug("task {} of job {} ended with status {}", id, task.job, status);
  return exit;
}

bool ProcessTable::kill(TaskId id, std::chrono::duration<double> grace) {
  const auto it = tasks_.find(id);
  if (it == tasks_.end()) return false;
  Task& task = *it->second;
  const pid_t pid = task.proc.pid();
  const SteadyTime now = clock_();
  const SteadyTime due =
      grace.count() > 0 ? now + std::chrono::duration_cast<SteadyTime::duration>(grace) : now;
  if (!task.killed) {
    task.killed = true;
    // Collected before any signal: once a parent dies, its children are
    // reparented and the links that find them are gone.
    task.tree = detail::collect_tree(pid, {});
    if (due > now) signal_tree(pid, task.tree, SIGTERM);
  }
  if (!task.sigkill || due < *task.sigkill) task.sigkill = due;
  if (due <= now) poll_timers();
  return true;
}

bool ProcessTable::signal(TaskId id, int sig) {
  const auto it = tasks_.find(id);
  if (it == tasks_.end()) return false;
  const pid_t pid = it->second->proc.pid();
  signal_tree(pid, detail::collect_tree(pid, {}), sig);
  return true;
}

int ProcessTable::set_affinity(TaskId id, const std::vector<int>& cpus) {
  const auto it = tasks_.find(id);
  if (it == tasks_.end() || cpus.empty()) return 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  }
  const pid_t pid = it->second->proc.pid();
  int pinned = 0;
  for (const ProcRef& proc : detail::collect_tree(pid, {})) {
    // Every thread: a threaded application's workers have their own mask.
    std::error_code ec;
    const std::filesystem::path threads = "/proc/" + std::to_string(proc.pid) + "/task";
    for (const auto& entry : std::filesystem::directory_iterator(threads, ec)) {
      const pid_t tid = static_cast<pid_t>(std::atoi(entry.path().filename().c_str()));
      if (tid > 0 && ::sched_setaffinity(tid, sizeof(set), &set) == 0) ++pinned;
    }
  }
  return pinned;
}

void ProcessTable::poll_timers() {
  const SteadyTime now = clock_();
  for (auto& [id, task] : tasks_) {
    if (!task->sigkill || *task->sigkill > now) continue;
    const pid_t pid = task->proc.pid();
    // Walk again from what was found at kill(): it may have forked since.
    task->tree = detail::collect_tree(pid, task->tree);
    signal_tree(pid, task->tree, SIGKILL);
    task->sigkill.reset();
  }
  std::erase_if(leftovers_, [&](const std::unique_ptr<Leftover>& left) {
    if (left->sigkill > now) return false;
    signal_tree(0, detail::collect_tree(0, left->procs), SIGKILL);
    return true;
  });
}

std::optional<SteadyTime> ProcessTable::next_deadline() const {
  std::optional<SteadyTime> next;
  const auto consider = [&](SteadyTime t) {
    if (!next || t < *next) next = t;
  };
  for (const auto& [id, task] : tasks_) {
    if (task->sigkill) consider(*task->sigkill);
  }
  for (const auto& left : leftovers_) consider(left->sigkill);
  return next;
}

std::vector<TaskFd> ProcessTable::poll_fds() const {
  std::vector<TaskFd> fds;
  for (const auto& [id, task] : tasks_) {
    if (task->out) fds.push_back(TaskFd{id, task->out.get(), FdEvent::Stdout});
    if (task->err) fds.push_back(TaskFd{id, task->err.get(), FdEvent::Stderr});
    if (task->proc.exit_fd() >= 0) fds.push_back(TaskFd{id, task->proc.exit_fd(), FdEvent::Exited});
  }
  return fds;
}

bool ProcessTable::alive(TaskId id) const {
  const auto it = tasks_.find(id);
  return it != tasks_.end() && !peek_exit(it->second->proc.pid());
}

std::optional<int> ProcessTable::pid(TaskId id) const {
  const auto it = tasks_.find(id);
  if (it == tasks_.end()) return std::nullopt;
  return it->second->proc.pid();
}

std::vector<TaskId> ProcessTable::tasks_of(JobId job) const {
  std::vector<TaskId> ids;
  for (const auto& [id, task] : tasks_) {
    if (task->job == job) ids.push_back(id);
  }
  return ids;
}

}  // namespace sched::agent
