// The agent's process table on disk (fencing): written atomically, read back
// whole, and what it names killed — whole sessions, never a process that
// merely reuses a recorded pid.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "sched/agent/task_records.hpp"

namespace sched::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct TempDir {
  TempDir() {
    std::string name = (fs::temp_directory_path() / "sched-task-records-XXXXXX").string();
    if (::mkdtemp(name.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path = name;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  fs::path path;
};

// A session leader (as the agent's tasks are) with a child in its session:
// sh runs sleep in the background and waits.
pid_t start_session() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    ::execl("/bin/sh", "sh", "-c", "sleep 300 & wait $!", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

// Living (not zombie) processes of the session `sid`.
int session_members(pid_t sid) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0, pgrp = 0, session = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d %d %d", &state, &ppid, &pgrp, &session) ==
            4 &&
        session == sid && state != 'Z') {
      ++count;
    }
  }
  return count;
}

TEST(TaskRecords, WrittenAtomicallyAndReadBack) {
  TempDir dir;
  const std::string path = (dir.path / "tasks").string();
  EXPECT_TRUE(read_task_records(path).empty()) << "a missing file is an empty table";
  const std::vector<TaskRecord> records{{7, 1, 1234, 99}, {8, 2, 4321, 100}};
  write_task_records(path, records);
  EXPECT_EQ(read_task_records(path), records);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  write_task_records(path, {});
  EXPECT_TRUE(read_task_records(path).empty());
}

TEST(TaskRecords, MalformedLinesAreSkipped) {
  TempDir dir;
  const std::string path = (dir.path / "tasks").string();
  std::ofstream(path) << "7 1 1234 99\ngarbage\n8 2 0 5\n9 3 4321 100 extra\n10 4 55 6\n";
  const std::vector<TaskRecord> want{{7, 1, 1234, 99}, {10, 4, 55, 6}};
  EXPECT_EQ(read_task_records(path), want);
}

TEST(TaskRecords, KillRecordedKillsTheWholeSession) {
  const pid_t pid = start_session();
  ASSERT_GT(pid, 0);
  // Until the child has started sleep.
  for (int i = 0; i < 200 && session_members(pid) < 2; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(session_members(pid), 2);
  const TaskRecord record = task_record(5, 1, pid);
  ASSERT_NE(record.start_time, 0u);
  EXPECT_EQ(recorded_processes({record}).size(), 2u);
  EXPECT_TRUE(kill_recorded({record}, 5s).empty());
  EXPECT_EQ(session_members(pid), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  // Killed, or (when its `sleep` died first) the shell saw that (`wait $!`
  // gives 128 + SIGKILL) and ended before its own SIGKILL arrived.
  EXPECT_TRUE(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGKILL))
      << "status " << status;
}

TEST(TaskRecords, AReusedPidIsNotKilled) {
  const pid_t pid = start_session();
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 200 && session_members(pid) < 2; ++i) std::this_thread::sleep_for(10ms);
  TaskRecord stale = task_record(5, 1, pid);
  stale.start_time += 1;  // the recorded process was another one
  EXPECT_TRUE(recorded_processes({stale}).empty());
  EXPECT_TRUE(kill_recorded({stale}, 1s).empty());
  EXPECT_EQ(session_members(pid), 2) << "nothing of the live session was touched";
  ::kill(-pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

}  // namespace
}  // namespace sched::agent
