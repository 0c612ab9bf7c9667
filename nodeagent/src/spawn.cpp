#include "spawn.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sched/agent/processes.hpp"

namespace sched::agent::detail {
namespace {

enum class Stage : int {
  Session,
  Cgroup,
  Groups,
  Gid,
  Uid,
  Workdir,
  Stdin,
  Output,
  Redirect,
  Exec,
  Error,    // -e: stderr's own file
  Affinity  // --cpu-bind
};

struct Failure {
  Stage stage;
  int error;
  int index;  // Cgroup: which cgroup.procs file
};

[[noreturn]] void child_fail(int report_fd, Stage stage, int index = 0) {
  const Failure f{stage, errno, index};
  [[maybe_unused]] const ssize_t n = ::write(report_fd, &f, sizeof f);
  ::_exit(127);
}

// Moves `fd` onto `target` (no-op when equal), closing the old number.
bool move_fd(int fd, int target) {
  if (fd == target) return true;
  if (::dup2(fd, target) < 0) return false;
  ::close(fd);
  return true;
}

struct ChildArgs {
  const SpawnSpec* spec;
  const gid_t* groups;
  std::size_t group_count;
  char* const* argv;
  char* const* envp;
  int report_fd;
  int max_fd;
  const cpu_set_t* cpus;  // null: not pinned
};

// Runs in the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void run_child(const ChildArgs& a) {
  const SpawnSpec& s = *a.spec;
  // The agent's blocked or ignored signals must not leak into the job
  // (exec keeps both); SIGKILL/SIGSTOP and libc-reserved ones refuse, fine.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);

  if (::setsid() < 0) child_fail(a.report_fd, Stage::Session);
  for (std::size_t i = 0; i < s.cgroup_procs.size(); ++i) {
    // "0" is the writer itself (cgroup v1 and v2 alike).
    const int fd = ::open(s.cgroup_procs[i].c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0", 1) != 1)
      child_fail(a.report_fd, Stage::Cgroup, static_cast<int>(i));
    ::close(fd);
  }
  // After the cgroups (a cpuset there bounds what may be asked), before the
  // user switch (the agent's privileges are not needed, but nothing of the
  // job runs unpinned).
  if (a.cpus != nullptr && ::sched_setaffinity(0, sizeof(cpu_set_t), a.cpus) < 0) {
    child_fail(a.report_fd, Stage::Affinity);
  }
  if (s.ids) {
    // Groups first: setgroups and setgid need the privilege setuid drops.
    if (::setgroups(a.group_count, a.groups) < 0) child_fail(a.report_fd, Stage::Groups);
    if (::setresgid(s.ids->gid, s.ids->gid, s.ids->gid) < 0) child_fail(a.report_fd, Stage::Gid);
    if (::setresuid(s.ids->uid, s.ids->uid, s.ids->uid) < 0) child_fail(a.report_fd, Stage::Uid);
    // A uid that is not root can never take root back.
    if (s.ids->uid != 0 && ::setuid(0) == 0) {
      errno = EPERM;
      child_fail(a.report_fd, Stage::Uid);
    }
  }
  if (::chdir(s.workdir.c_str()) < 0) child_fail(a.report_fd, Stage::Workdir);

  const int in = ::open("/dev/null", O_RDONLY);
  if (in < 0 || !move_fd(in, 0)) child_fail(a.report_fd, Stage::Stdin);
  if (!s.output_path.empty()) {
    const int out = ::open(s.output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY, 0644);
    if (out < 0) child_fail(a.report_fd, Stage::Output);
    if ((out != 1 && ::dup2(out, 1) < 0) || (out != 2 && ::dup2(out, 2) < 0)) {
      child_fail(a.report_fd, Stage::Redirect);
    }
    if (out > 2) ::close(out);
    // -e: stderr apart, over the stdout copy made just above.
    if (!s.error_path.empty()) {
      const int err = ::open(s.error_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY, 0644);
      if (err < 0) child_fail(a.report_fd, Stage::Error);
      if (err != 2 && ::dup2(err, 2) < 0) child_fail(a.report_fd, Stage::Redirect);
      if (err > 2) ::close(err);
    }
  } else if (::dup2(s.stdout_fd, 1) < 0 || ::dup2(s.stderr_fd, 2) < 0) {
    child_fail(a.report_fd, Stage::Redirect);
  }

  // The passed descriptor becomes 3; the report pipe moves above it first
  // (it may be 3 itself). dup2 leaves the copy open across exec.
  int report_fd = a.report_fd;
  if (s.pass_fd >= 0) {
    report_fd = ::fcntl(a.report_fd, F_DUPFD_CLOEXEC, 10);
    if (report_fd < 0) child_fail(a.report_fd, Stage::Redirect);
    if (s.pass_fd == 3 ? ::fcntl(3, F_SETFD, 0) < 0 : ::dup2(s.pass_fd, 3) < 0) {
      child_fail(report_fd, Stage::Redirect);
    }
  }
  // Everything else goes, except the report pipe, which exec closes itself.
  const int first = s.pass_fd >= 0 ? 4 : 3;
  const auto report = static_cast<unsigned>(report_fd);
  if (report > static_cast<unsigned>(first) &&
      ::close_range(static_cast<unsigned>(first), report - 1, 0) < 0) {
    for (int fd = first; fd < report_fd; ++fd) ::close(fd);
  }
  if (::close_range(report + 1, ~0U, 0) < 0) {
    for (int fd = report_fd + 1; fd < a.max_fd; ++fd) ::close(fd);
  }

  ::execve(s.exec_path.c_str(), a.argv, a.envp);
  child_fail(report_fd, Stage::Exec);
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

int open_fd_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
      lim.rlim_cur < (1u << 20)) {
    return static_cast<int>(lim.rlim_cur);
  }
  return 1 << 20;
}

std::string sys_error(int error) { return std::strerror(error); }

}  // namespace

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) < 0) throw LaunchError("cannot create a pipe: " + sys_error(errno));
  Pipe p{UniqueFd(fds[0]), UniqueFd(fds[1])};
  for (UniqueFd* end : {&p.read, &p.write}) {
    if (end->get() > 2) continue;
    const int moved = ::fcntl(end->get(), F_DUPFD_CLOEXEC, 3);
    if (moved < 0) throw LaunchError("cannot duplicate a descriptor: " + sys_error(errno));
    end->reset(moved);
  }
  return p;
}

Spawned spawn(const SpawnSpec& spec) {
  auto [report_read, report_write] = make_pipe();
  ::fcntl(report_read.get(), F_SETFL, O_NONBLOCK);

  const std::vector<char*> argv = c_strings(spec.argv);
  const std::vector<char*> envp = c_strings(spec.envp);
  const std::vector<gid_t> groups = spec.ids ? spec.ids->groups : std::vector<gid_t>{};
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int cpu : spec.cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
      throw LaunchError("cannot bind to CPU " + std::to_string(cpu) + ": outside 0-" +
                        std::to_string(CPU_SETSIZE - 1));
    }
    CPU_SET(cpu, &cpus);
  }
  const ChildArgs args{
      &spec,       groups.data(),      groups.size(),   argv.data(),
      envp.data(), report_write.get(), open_fd_limit(), spec.cpus.empty() ? nullptr : &cpus};

  const pid_t pid = ::fork();
  if (pid < 0) throw LaunchError("cannot fork: " + sys_error(errno));
  if (pid == 0) run_child(args);

  Spawned child;
  child.pid_ = pid;
  child.report_ = std::move(report_read);
  // Through syscall(): glibc 2.36's <sys/pidfd.h> lacks extern "C". The fd
  // is close-on-exec; without one (old kernel) the loop reaps on a timer.
  child.pidfd_ = UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  child.workdir_ = spec.workdir;
  child.output_path_ = spec.output_path;
  child.error_path_ = spec.error_path;
  child.exec_path_ = spec.exec_path;
  child.uid_ = spec.ids ? spec.ids->uid : ::geteuid();
  child.cgroups_ = spec.cgroup_procs;
  child.cpus_ = spec.cpus;
  return child;
}

std::string Spawned::start_failure() {
  if (!report_) return "";
  Failure f{};
  const ssize_t n = ::read(report_.get(), &f, sizeof f);
  report_.reset();
  if (n != static_cast<ssize_t>(sizeof f)) return "";
  const std::string why = sys_error(f.error);
  const std::string as = " as uid " + std::to_string(uid_);
  switch (f.stage) {
    case Stage::Session:
      return "cannot start a new session: " + why;
    case Stage::Cgroup:
      return "cannot join the job's cgroup (" +
             (f.index >= 0 && static_cast<std::size_t>(f.index) < cgroups_.size()
                  ? cgroups_[static_cast<std::size_t>(f.index)]
                  : std::string("?")) +
             "): " + why;
    case Stage::Groups:
      return "cannot set the job user's groups: " + why;
    case Stage::Gid:
      return "cannot set the job user's group id: " + why;
    case Stage::Uid:
      return "cannot switch to the job's user (uid " + std::to_string(uid_) + "): " + why;
    case Stage::Workdir:
      return "cannot enter working directory '" + workdir_ + "'" + as + ": " + why;
    case Stage::Stdin:
      return "cannot open /dev/null for stdin: " + why;
    case Stage::Output:
      return "cannot open output file '" + output_path_ + "'" + as + ": " + why;
    case Stage::Error:
      return "cannot open error file '" + error_path_ + "'" + as + ": " + why;
    case Stage::Redirect:
      return "cannot redirect stdout/stderr: " + why;
    case Stage::Exec:
      return "cannot execute '" + exec_path_ + "': " + why;
    case Stage::Affinity: {
      std::string list;
      for (int cpu : cpus_) list += (list.empty() ? "" : ",") + std::to_string(cpu);
      return "cannot bind the task to CPUs " + list + " (--cpu-bind): " + why;
    }
  }
  return "cannot start: " + why;
}

}  // namespace sched::agent::detail
