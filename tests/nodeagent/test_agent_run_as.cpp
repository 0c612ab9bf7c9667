// Jobs run as their user: the identity lookups, the rules an agent follows
// (root runs each job as its user, root jobs only when allowed, an
// unprivileged agent only its own user's), and real processes started as a
// real test user (created when the tests run as root; skipped, saying so,
// otherwise).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "sched/agent/processes.hpp"
#include "sched/agent/run_as.hpp"
#include "test_users.hpp"

namespace sched::agent {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "no error";
}

TEST(RunAs, LooksUpUsersWithTheirGroups) {
  const UserIdentity root = lookup_user("root");
  EXPECT_EQ(root.uid, 0u);
  EXPECT_EQ(root.gid, 0u);
  EXPECT_FALSE(root.groups.empty());
  EXPECT_FALSE(root.home.empty());
  EXPECT_EQ(error_of([] { lookup_user("no-such-user-sched14"); }),
            "unknown user 'no-such-user-sched14' on this node");
  EXPECT_EQ(error_of([] { lookup_user(""); }), "the job names no user");
}

TEST(RunAs, RootAgentRunsEachJobAsItsUserAndRootOnlyWhenAllowed) {
  const UserIdentity agent = lookup_user("root");
  EXPECT_EQ(job_identity("root", agent, true).uid, 0u);
  // No user named: the agent's own, here root, so only where root may run.
  EXPECT_EQ(job_identity("", agent, true).uid, 0u);
  EXPECT_EQ(error_of([&] { job_identity("", agent, false); }),
            "jobs of root are not allowed on this node (allow_root_jobs)");
  EXPECT_EQ(error_of([&] { job_identity("root", agent, false); }),
            "jobs of root are not allowed on this node (allow_root_jobs)");
  EXPECT_EQ(error_of([&] { job_identity("no-such-user-sched14", agent, true); }),
            "unknown user 'no-such-user-sched14' on this node");
  const auto alice = testing::ensure_user("alice");
  if (!alice) GTEST_SKIP() << "no user alice and not root to create one";
  const UserIdentity who = job_identity("alice", agent, false);
  EXPECT_EQ(who.uid, alice->uid);
  EXPECT_EQ(who.gid, alice->gid);
}

TEST(RunAs, UnprivilegedAgentRunsOnlyItsOwnUser) {
  UserIdentity agent;
  agent.name = "dev";
  agent.uid = 4242;
  EXPECT_EQ(job_identity("dev", agent, false), agent);
  EXPECT_EQ(job_identity("", agent, false), agent);
  EXPECT_EQ(error_of([&] { job_identity("alice", agent, false); }),
            "this node's agent runs unprivileged as 'dev' and runs only that user's jobs (this "
            "job's user is 'alice')");
}

TEST(RunAs, LoginEnvironmentIsTheUsersOnly) {
  UserIdentity user;
  user.name = "alice";
  user.home = "/home/alice";
  user.shell = "/bin/bash";
  ::setenv("SCHED_SECRET_OF_THE_AGENT", "x", 1);
  ::setenv("SCHED_MUNGE_SOCKET", "/tmp/some/munge.socket", 1);
  const EnvPairs env = login_environment(user);
  ::unsetenv("SCHED_SECRET_OF_THE_AGENT");
  ::unsetenv("SCHED_MUNGE_SOCKET");
  const auto value = [&](const std::string& name) -> std::string {
    for (const auto& [n, v] : env) {
      if (n == name) return v;
    }
    return "(unset)";
  };
  EXPECT_EQ(value("USER"), "alice");
  EXPECT_EQ(value("LOGNAME"), "alice");
  EXPECT_EQ(value("HOME"), "/home/alice");
  EXPECT_EQ(value("SHELL"), "/bin/bash");
  EXPECT_NE(value("PATH"), "(unset)");
  EXPECT_EQ(value("SCHED_MUNGE_SOCKET"), "/tmp/some/munge.socket")
      << "for the job's sched commands";
  for (const auto& [name, v] : env) {
    EXPECT_TRUE(name == "USER" || name == "LOGNAME" || name == "HOME" || name == "SHELL" ||
                name == "PATH" || name == "LANG" || name == "SCHED_MUNGE_SOCKET")
        << name;
  }
}

std::optional<TaskExit> wait_exit(ProcessTable& table, TaskId task, std::string* out = nullptr) {
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < give_up) {
    for (const auto& chunk : table.read_output(task)) {
      if (out) *out += chunk.bytes;
    }
    for (auto& exit : table.reap()) {
      if (exit.task != task) continue;
      for (const auto& chunk : exit.output) {
        if (out) *out += chunk.bytes;
      }
      return exit;
    }
    std::this_thread::sleep_for(5ms);
  }
  return std::nullopt;
}

class RunAsAlice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0)
      GTEST_SKIP() << "switching users needs root (the tests run as root in CI)";
    alice_ = testing::ensure_user("alice");
    ASSERT_TRUE(alice_) << "useradd alice failed";
    dir_.emplace(*alice_);
    identity_ = lookup_user("alice");
  }
  BatchLaunch batch(const std::string& script) const {
    BatchLaunch b;
    b.job = 14;
    b.user = identity_;
    b.script = script;
    b.workdir = dir_->path().string();
    b.output_path = (dir_->path() / "out.txt").string();
    b.spool_dir = (dir_->path() / "spool").string();
    b.env = {{"MY_VAR", "given"}, {"HOME", "/root"}, {"USER", "root"}};
    return b;
  }

  std::optional<testing::TestUser> alice_;
  std::optional<testing::UserDir> dir_;
  UserIdentity identity_;
  ProcessTable table_;
};

TEST_F(RunAsAlice, BatchRunsWithHerIdsHerCleanEnvironmentAndWritesHerFile) {
  const TaskId id =
      table_.launch_batch(batch("echo \"uid=$(id -u) gid=$(id -g) groups=$(id -G)\"\n"
                                "echo \"user=$USER logname=$LOGNAME home=$HOME var=$MY_VAR\"\n"
                                "env | cut -d= -f1 | sort | tr '\\n' ' '\n"
                                "touch made-by-job\n"));
  const auto exit = wait_exit(table_, id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->error, "");
  EXPECT_EQ(exit->status, 0);
  const std::string out = slurp(dir_->path() / "out.txt");
  EXPECT_NE(out.find("uid=" + std::to_string(alice_->uid) + " gid=" + std::to_string(alice_->gid)),
            std::string::npos)
      << out;
  // Root's group is not among hers.
  EXPECT_EQ(out.find("groups=0"), std::string::npos) << out;
  EXPECT_EQ(out.find(" 0\n"), std::string::npos) << out;
  // Her identity, whatever the job's variables said; its own variable kept.
  EXPECT_NE(out.find("user=alice logname=alice home=" + identity_.home + " var=given"),
            std::string::npos)
      << out;
  // Nothing of the agent's environment beyond a login's.
  EXPECT_EQ(out.find("GTEST"), std::string::npos) << out;
  EXPECT_EQ(out.find("OLDPWD"), std::string::npos) << out;
  for (const char* file : {"out.txt", "made-by-job"}) {
    struct stat st {};
    ASSERT_EQ(::stat((dir_->path() / file).c_str(), &st), 0) << file;
    EXPECT_EQ(st.st_uid, alice_->uid) << file;
  }
}

TEST_F(RunAsAlice, StepRunsAsHer) {
  StepLaunch s;
  s.job = 14;
  s.user = identity_;
  s.argv = {"id", "-u"};
  s.workdir = dir_->path().string();
  const TaskId id = table_.launch_step(s);
  std::string out;
  const auto exit = wait_exit(table_, id, &out);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, 0) << exit->error;
  EXPECT_EQ(out, std::to_string(alice_->uid) + "\n");
}

TEST_F(RunAsAlice, AWorkdirSheCannotEnterFailsClearlyAndRunsNothing) {
  const fs::path closed = dir_->path() / "closed";
  fs::create_directory(closed);
  fs::permissions(closed, fs::perms::owner_all);  // root's, 0700
  BatchLaunch b = batch("touch ran\n");
  b.workdir = closed.string();
  b.output_path = (dir_->path() / "out.txt").string();
  const TaskId id = table_.launch_batch(b);
  const auto exit = wait_exit(table_, id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, 127);
  EXPECT_EQ(exit->error, "cannot enter working directory '" + closed.string() + "' as uid " +
                             std::to_string(alice_->uid) + ": Permission denied");
  EXPECT_FALSE(fs::exists(closed / "ran"));
}

TEST_F(RunAsAlice, AnOutputFileSheCannotWriteFailsClearly) {
  const fs::path closed = dir_->path() / "root-only";
  fs::create_directory(closed);
  fs::permissions(closed, fs::perms::owner_all | fs::perms::others_exec);
  BatchLaunch b = batch("touch ran\n");
  b.output_path = (closed / "out.txt").string();
  const TaskId id = table_.launch_batch(b);
  const auto exit = wait_exit(table_, id);
  ASSERT_TRUE(exit);
  EXPECT_EQ(exit->status, 127);
  EXPECT_EQ(exit->error, "cannot open output file '" + b.output_path + "' as uid " +
                             std::to_string(alice_->uid) + ": Permission denied");
  EXPECT_FALSE(fs::exists(dir_->path() / "ran"));
}

}  // namespace
}  // namespace sched::agent
