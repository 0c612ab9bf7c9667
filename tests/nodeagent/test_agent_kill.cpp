// Killing whole process trees: the task's group, descendants that left it,
// SIGTERM then SIGKILL after the grace period (on an injected clock).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
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
    std::string name = (fs::temp_directory_path() / "sched-agent-kill-XXXXXX").string();
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

bool eventually(const std::function<bool()>& condition) {
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < give_up) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

// Gone: no such process, or a zombie that its new parent has not reaped yet
// (in a container, pid 1 may never reap the orphans it inherits).
bool gone(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return true;
  const auto close = stat.rfind(')');
  return close == std::string::npos || stat.compare(close, 3, ") Z") == 0;
}

// The pid a script wrote into `file`, once it has.
pid_t pid_from(const fs::path& file) {
  pid_t pid = 0;
  eventually([&] {
    std::ifstream in(file);
    return static_cast<bool>(in >> pid) && pid > 0;
  });
  return pid;
}

class AgentKill : public ::testing::Test {
 protected:
  TaskId launch(const std::string& script) {
    BatchLaunch b;
    b.job = 5;
    b.script = script;
    b.workdir = dir_.path().string();
    b.output_path = (dir_.path() / "out.txt").string();
    b.spool_dir = (dir_.path() / "spool").string();
    return table_.launch_batch(b);
  }
  std::optional<TaskExit> wait_exit(TaskId task) {
    std::optional<TaskExit> found;
    eventually([&] {
      for (auto& exit : table_.reap()) {
        if (exit.task == task) found = exit;
      }
      return found.has_value();
    });
    return found;
  }
  fs::path file(const char* name) const { return dir_.path() / name; }

  TempDir dir_;
  SteadyTime now_ = SteadyTime{} + 1000s;  // moved by hand: no test waits out a grace
  ProcessTable table_{[this] { return now_; }};
};

TEST_F(AgentKill, EndsTheGroupAndDescendantsThatLeftIt) {
  const TaskId id = launch(
      "sh -c 'echo $$ > bg.pid; exec sleep 300' &\n"
      "setsid sh -c 'echo $$ > escaped.pid; exec sleep 300' &\n"
      "wait\n");
  const pid_t leader = *table_.pid(id);
  const pid_t bg = pid_from(file("bg.pid"));
  const pid_t escaped = pid_from(file("escaped.pid"));
  ASSERT_GT(bg, 0);
  ASSERT_GT(escaped, 0);
  EXPECT_EQ(::getpgid(bg), leader);
  EXPECT_NE(::getpgid(escaped), leader);
  EXPECT_NE(::getsid(escaped), leader);

  ASSERT_TRUE(table_.kill(id, 10s));
  const auto exit = wait_exit(id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, -SIGTERM);
  EXPECT_TRUE(exit->killed);
  EXPECT_TRUE(eventually([&] { return gone(bg) && gone(escaped); }));
}

TEST_F(AgentKill, IgnoredSigtermIsFollowedBySigkillAfterTheGrace) {
  const TaskId id = launch(
      "trap '' TERM\n"
      "sh -c 'echo $$ > child.pid; exec sleep 300' &\n"
      "wait\n");
  const pid_t child = pid_from(file("child.pid"));
  ASSERT_GT(child, 0);
  ASSERT_TRUE(table_.kill(id, 30s));
  EXPECT_EQ(table_.next_deadline(), now_ + 30s);

  // Within the grace, SIGTERM has been ignored.
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(table_.reap().empty());
  EXPECT_TRUE(table_.alive(id));
  EXPECT_FALSE(gone(child));

  now_ += 31s;
  const auto exit = wait_exit(id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, -SIGKILL);
  EXPECT_TRUE(eventually([&] { return gone(child); }));
  EXPECT_FALSE(table_.next_deadline());
}

TEST_F(AgentKill, ShorterSecondKillSendsSigkillAtOnce) {
  const TaskId id = launch("trap '' TERM\necho $$ > ready.pid\nsleep 300\n");
  ASSERT_GT(pid_from(file("ready.pid")), 0);  // SIGTERM is ignored from here on
  ASSERT_TRUE(table_.kill(id, 60s));
  ASSERT_TRUE(table_.kill(id, 0s));
  const auto exit = wait_exit(id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, -SIGKILL);
}

TEST_F(AgentKill, WhatATaskLeavesBehindDiesWithIt) {
  const TaskId id = launch("sleep 300 &\necho $! > bg.pid\nexit 0\n");
  const auto exit = wait_exit(id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, 0);
  const pid_t bg = pid_from(file("bg.pid"));
  ASSERT_GT(bg, 0);
  EXPECT_TRUE(eventually([&] { return gone(bg); }));
}

TEST_F(AgentKill, EscapeeIgnoringSigtermIsKilledAfterItsTaskWasReaped) {
  const TaskId id = launch(
      "(trap '' TERM; exec setsid sh -c 'echo $$ > escaped.pid; exec sleep 300') &\n"
      "wait\n");
  const pid_t escaped = pid_from(file("escaped.pid"));
  ASSERT_GT(escaped, 0);
  ASSERT_TRUE(table_.kill(id, 30s));
  const auto exit = wait_exit(id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, -SIGTERM);
  // The grace still runs for what the task left behind.
  EXPECT_FALSE(gone(escaped));
  EXPECT_EQ(table_.next_deadline(), now_ + 30s);

  now_ += 31s;
  table_.poll_timers();
  EXPECT_TRUE(eventually([&] { return gone(escaped); }));
  EXPECT_FALSE(table_.next_deadline());
}

}  // namespace
}  // namespace sched::agent
