// Launching and watching job processes with real /bin/sh scripts and
// commands; every wait is a poll with a deadline of a few seconds.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "sched/agent/processes.hpp"

namespace sched::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class TempDir {
 public:
  TempDir() {
    std::string name = (fs::temp_directory_path() / "sched-agent-proc-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = fs::canonical(name);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class AgentProcesses : public ::testing::Test {
 protected:
  BatchLaunch batch(const std::string& script, JobId job = 1) const {
    BatchLaunch b;
    b.job = job;
    b.script = script;
    b.workdir = dir_.path().string();
    b.output_path = (dir_.path() / "out.txt").string();
    b.spool_dir = (dir_.path() / "spool").string();
    return b;
  }
  StepLaunch step(std::vector<std::string> argv, JobId job = 1) const {
    StepLaunch s;
    s.job = job;
    s.argv = std::move(argv);
    s.workdir = dir_.path().string();
    return s;
  }
  std::string output() const { return slurp(dir_.path() / "out.txt"); }

  // Reaps until `task` ends, gathering a step's output on the way; exits of
  // other tasks wait for their turn.
  std::optional<TaskExit> wait_exit(TaskId task, std::string* out = nullptr,
                                    std::string* err = nullptr) {
    const auto give_up = std::chrono::steady_clock::now() + 5s;
    const auto collect = [&](const std::vector<OutputChunk>& chunks) {
      for (const auto& c : chunks) {
        std::string* to = c.stream == Stream::Out ? out : err;
        if (to != nullptr) *to += c.bytes;
      }
    };
    while (std::chrono::steady_clock::now() < give_up) {
      collect(table_.read_output(task));
      for (auto& exit : table_.reap()) reaped_.emplace(exit.task, std::move(exit));
      if (const auto it = reaped_.find(task); it != reaped_.end()) {
        collect(it->second.output);
        return it->second;
      }
      std::this_thread::sleep_for(5ms);
    }
    return std::nullopt;
  }

  TempDir dir_;
  ProcessTable table_;
  std::map<TaskId, TaskExit> reaped_;
};

TEST_F(AgentProcesses, BatchScriptRunsInItsWorkdirWithItsEnvironment) {
  fs::create_directory(dir_.path() / "work");
  BatchLaunch b = batch(
      "echo \"dir=$(pwd)\"\n"
      "echo \"var=$MY_VAR path=${PATH:+set}\"\n"
      "echo \"mode=$(stat -c %a \"$0\")\"\n"
      "read line || echo stdin-empty\n"
      "echo to-stderr >&2\n");
  b.workdir = (dir_.path() / "work").string();
  b.env = {{"MY_VAR", "hello"}};
  const TaskId id = table_.launch_batch(b);

  const auto exit = wait_exit(id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, 0);
  EXPECT_EQ(exit->job, 1);
  EXPECT_FALSE(exit->killed);
  EXPECT_EQ(exit->error, "");
  const std::string out = output();
  EXPECT_NE(out.find("dir=" + b.workdir + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("var=hello path=set\n"), std::string::npos) << out;
  EXPECT_NE(out.find("mode=700\n"), std::string::npos) << out;
  EXPECT_NE(out.find("stdin-empty\n"), std::string::npos) << out;
  EXPECT_NE(out.find("to-stderr\n"), std::string::npos) << out;

  struct stat st {};
  ASSERT_EQ(::stat((dir_.path() / "out.txt").c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0644u & ~mask);
  // The spooled script is gone once the task is reaped.
  EXPECT_FALSE(fs::exists(dir_.path() / "spool" / "job-1.sh"));
  EXPECT_FALSE(table_.alive(id));
  EXPECT_EQ(table_.size(), 0u);
}

TEST_F(AgentProcesses, ErrorPathTakesStderrApartAndArgumentsReachTheScript) {
  BatchLaunch b = batch("echo \"out $# [$1] [$2]\"\necho err >&2\n");
  b.error_path = "err.txt";  // relative: inside the workdir
  b.args = {"a b", "-N"};
  const auto exit = wait_exit(table_.launch_batch(b));
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, 0) << exit->error;
  EXPECT_EQ(output(), "out 2 [a b] [-N]\n");
  EXPECT_EQ(slurp(dir_.path() / "err.txt"), "err\n");
}

TEST_F(AgentProcesses, AMissingErrorFileDirectoryIsALaunchError) {
  BatchLaunch b = batch("true\n");
  b.error_path = (dir_.path() / "gone" / "err.txt").string();
  try {
    table_.launch_batch(b);
    FAIL() << "launched";
  } catch (const LaunchError& e) {
    EXPECT_EQ(std::string(e.what()),
              "directory of error file '" + b.error_path + "' does not exist");
  }
}

TEST_F(AgentProcesses, ExitCodeIsReported) {
  const TaskId id = table_.launch_batch(batch("exit 3\n"));
  const auto exit = wait_exit(id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, 3);
}

TEST_F(AgentProcesses, DeathBySignalIsReportedNegative) {
  const TaskId id = table_.launch_batch(batch("kill -USR1 $$\nsleep 5\n"));
  const auto exit = wait_exit(id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, -SIGUSR1);
}

TEST_F(AgentProcesses, ShebangPicksTheInterpreterElseShell) {
  BatchLaunch with_bash = batch("#!/bin/bash\r\necho \"bash=${BASH_VERSION:-none}\"\n", 1);
  with_bash.output_path = "bash.txt";  // relative: inside the workdir
  BatchLaunch plain = batch("echo \"plain=${BASH_VERSION:-none}\"\n", 2);
  plain.output_path = "plain.txt";
  const TaskId a = table_.launch_batch(with_bash);
  const TaskId b = table_.launch_batch(plain);
  ASSERT_TRUE(wait_exit(a));
  ASSERT_TRUE(wait_exit(b));
  const std::string bash_out = slurp(dir_.path() / "bash.txt");
  EXPECT_EQ(bash_out.rfind("bash=", 0), 0u) << bash_out;
  EXPECT_EQ(bash_out.find("none"), std::string::npos) << bash_out;
  EXPECT_EQ(slurp(dir_.path() / "plain.txt"), "plain=none\n");  // /bin/sh is not bash
}

TEST_F(AgentProcesses, MistakesFoundBeforeForkingAreLaunchErrors) {
  BatchLaunch b = batch("true\n");
  b.workdir = (dir_.path() / "missing").string();
  try {
    table_.launch_batch(b);
    FAIL() << "launched with a missing working directory";
  } catch (const LaunchError& e) {
    EXPECT_NE(std::string(e.what()).find(b.workdir), std::string::npos) << e.what();
  }
  EXPECT_THROW(table_.launch_batch(batch("#!/no/such/interpreter\ntrue\n")), LaunchError);
  EXPECT_THROW(table_.launch_step(step({"no-such-command-sched-test"})), LaunchError);
  EXPECT_THROW(table_.launch_step(step({})), LaunchError);
  StepLaunch bad_env = step({"true"});
  bad_env.env = {{"A=B", "c"}};
  EXPECT_THROW(table_.launch_step(bad_env), LaunchError);
  EXPECT_EQ(table_.size(), 0u);
}

TEST_F(AgentProcesses, FailureAfterForkIsReportedWithTheExit) {
  fs::create_directory(dir_.path() / "a-directory");
  BatchLaunch b = batch("true\n");
  b.output_path = (dir_.path() / "a-directory").string();  // cannot be opened for writing
  const TaskId id = table_.launch_batch(b);
  const auto exit = wait_exit(id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, 127);
  EXPECT_NE(exit->error.find("cannot open output file"), std::string::npos) << exit->error;
}

TEST_F(AgentProcesses, StepOutputIsCapturedPerStream) {
  StepLaunch s = step({"sh", "-c", "echo hello; echo err >&2; echo \"$GREETING\"; exit 4"});
  s.env = {{"GREETING", "hi"}};
  const TaskId id = table_.launch_step(s);

  bool out_fd = false, err_fd = false, exit_fd = false;
  for (const TaskFd& f : table_.poll_fds()) {
    EXPECT_EQ(f.task, id);
    out_fd |= f.event == FdEvent::Stdout;
    err_fd |= f.event == FdEvent::Stderr;
    exit_fd |= f.event == FdEvent::Exited;
  }
  EXPECT_TRUE(out_fd && err_fd);
  (void)exit_fd;  // a pidfd where the kernel has them

  std::string out, err;
  const auto exit = wait_exit(id, &out, &err);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, 4);
  EXPECT_EQ(out, "hello\nhi\n");
  EXPECT_EQ(err, "err\n");
}

// --mpi (issue 16 item 2): the rank's PMI connection is its descriptor 3,
// and no other descriptor of the agent reaches it.
TEST_F(AgentProcesses, PmiFdBecomesTheTasksDescriptor3) {
  int ends[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
  StepLaunch s = step({"sh", "-c", "echo cmd=init >&3; ls /proc/self/fd"});
  s.pmi_fd = ends[1];
  const TaskId id = table_.launch_step(s);
  ::close(ends[1]);
  std::string out;
  const auto exit = wait_exit(id, &out);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, 0) << exit->error;
  char buf[64] = {};
  EXPECT_EQ(::read(ends[0], buf, sizeof buf - 1), 9);
  EXPECT_STREQ(buf, "cmd=init\n");
  // ls sees 0-2, 3 and its own directory descriptor: nothing else.
  std::istringstream fds(out);
  std::vector<int> seen;
  for (int fd; fds >> fd;) seen.push_back(fd);
  ASSERT_GE(seen.size(), 4u) << out;
  EXPECT_EQ(std::vector<int>(seen.begin(), seen.begin() + 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_LE(seen.size(), 5u) << out;
  ::close(ends[0]);
}

TEST_F(AgentProcesses, ExitFdBecomesReadableWhenTheTaskEnds) {
  const TaskId id = table_.launch_step(step({"true"}));
  int fd = -1;
  for (const TaskFd& f : table_.poll_fds()) {
    if (f.event == FdEvent::Exited) fd = f.fd;
  }
  if (fd < 0) GTEST_SKIP() << "no pidfd support";
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1);
  const auto exits = table_.reap();
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_EQ(exits[0].task, id);
  EXPECT_EQ(exits[0].status, 0);
}

TEST_F(AgentProcesses, TasksAreListedByJob) {
  const TaskId a = table_.launch_step(step({"sleep", "30"}, 7));
  const TaskId b = table_.launch_step(step({"sleep", "30"}, 7));
  const TaskId c = table_.launch_step(step({"sleep", "30"}, 8));
  EXPECT_EQ(table_.tasks_of(7), (std::vector<TaskId>{a, b}));
  EXPECT_EQ(table_.tasks_of(8), (std::vector<TaskId>{c}));
  EXPECT_TRUE(table_.tasks_of(9).empty());
  EXPECT_TRUE(table_.alive(a));
  ASSERT_TRUE(table_.pid(a));
  // Once past its setsid(), the child leads its own session and group.
  const pid_t pid = *table_.pid(a);
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (::getsid(pid) != pid && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(::getsid(pid), pid);
  EXPECT_EQ(::getpgid(pid), pid);
  EXPECT_FALSE(table_.kill(999, 0s));
  // The destructor ends them.
}

// --cpu-bind (issue 16 item 1): the child pins itself before it execs.
TEST_F(AgentProcesses, StepIsPinnedToItsCpus) {
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GE(online, 1);
  const int last = static_cast<int>(online) - 1;  // a CPU this machine has
  StepLaunch s = step({"sh", "-c", "grep Cpus_allowed_list /proc/self/status"});
  s.cpus = {last};
  std::string out;
  auto exit = wait_exit(table_.launch_step(s), &out);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, 0) << exit->error;
  EXPECT_EQ(out, "Cpus_allowed_list:\t" + std::to_string(last) + "\n");

  // Unpinned: the step may run where the agent may (not just one CPU when
  // there are several).
  std::string free_out;
  exit = wait_exit(table_.launch_step(step({"grep", "Cpus_allowed_list", "/proc/self/status"})),
                   &free_out);
  ASSERT_TRUE(exit);
  if (online > 1) {
    EXPECT_NE(free_out, out);
  }
}

TEST_F(AgentProcesses, BindingToACpuOutsideTheSetIsALaunchError) {
  StepLaunch s = step({"true"});
  s.cpus = {1 << 20};
  EXPECT_THROW(table_.launch_step(s), LaunchError);
}

TEST(AgentProcessesLifetime, DestructorLeavesNoZombies) {
  TempDir dir;
  std::vector<pid_t> leaders;
  {
    ProcessTable table;
    BatchLaunch b;
    b.job = 1;
    b.script = "sleep 300 &\nsetsid sleep 300 &\nwait\n";
    b.workdir = dir.path().string();
    b.output_path = (dir.path() / "out.txt").string();
    b.spool_dir = (dir.path() / "spool").string();
    leaders.push_back(*table.pid(table.launch_batch(b)));
    StepLaunch s;
    s.job = 2;
    s.argv = {"sleep", "300"};
    s.workdir = dir.path().string();
    leaders.push_back(*table.pid(table.launch_step(s)));
    const TaskId quick = table.launch_step(s);  // ends before the destructor runs
    table.kill(quick, 0s);
    leaders.push_back(*table.pid(quick));
  }
  for (const pid_t pid : leaders) {
    errno = 0;
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1) << "pid " << pid << " still a child";
    EXPECT_EQ(errno, ECHILD);
  }
  EXPECT_FALSE(fs::exists(dir.path() / "spool" / "job-1.sh"));
}

}  // namespace
}  // namespace sched::agent
