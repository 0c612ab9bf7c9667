// issue 19: schedd's [log] keys, `schedd --check-config` (config_check.hpp)
// and what SIGHUP applies live (config_reload.hpp).
#include <gtest/gtest.h>

#include <algorithm>

#include "config_check.hpp"
#include "config_reload.hpp"
#include "daemon_config.hpp"
#include "lua_test_support.hpp"
#include "test_paths.hpp"

namespace sched::daemon {
namespace {

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

TEST(LogConfig, TheKeysAreReadAndABadLevelIsRefusedByKey) {
  luatest::TempDir dir;
  const DaemonConfig c =
      load_config(dir.write("ok.toml", "[log]\nlevel = \"warn\"\nfile = \"/var/log/s.log\"\n"));
  EXPECT_EQ(c.log_level, "warn");
  EXPECT_EQ(c.log_file, "/var/log/s.log");
  EXPECT_EQ(DaemonConfig{}.log_level, "info");
  const std::string bad = dir.write("bad.toml", "[log]\nlevel = \"loud\"\n");
  try {
    load_config(bad);
    FAIL() << "a bad level was read";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad + ": log.level: expected", 0), 0u) << e.what();
  }
}

// issue 16 item 2: [jobs] mpi_default names what `sched run` serves without
// --mpi; pmix (Open MPI) is one, a name schedd does not serve is refused.
TEST(JobsConfig, MpiDefaultTakesPmixAndRefusesAnUnknownName) {
  luatest::TempDir dir;
  EXPECT_EQ(load_config(dir.write("pmix.toml", "[jobs]\nmpi_default = \"pmix\"\n")).mpi_default,
            "pmix");
  EXPECT_EQ(load_config(dir.write("pmi2.toml", "[jobs]\nmpi_default = \"pmi2\"\n")).mpi_default,
            "pmi2");
  const std::string bad = dir.write("bad.toml", "[jobs]\nmpi_default = \"openmpi\"\n");
  try {
    load_config(bad);
    FAIL() << "an unknown mpi_default was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad + ": jobs.mpi_default: expected"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("\"pmix\""), std::string::npos) << e.what();
  }
}

DaemonConfig usable(const luatest::TempDir& dir) {
  DaemonConfig c;
  c.state_dir = (dir.path() / "state").string();
  c.policy_dir = SCHED_SOURCE_POLICY_DIR;
  c.policy = "fcfs";
  complete_config(c);
  return c;
}

TEST(CheckConfig, AUsableConfigHasNoProblemAndNothingIsMade) {
  luatest::TempDir dir;
  EXPECT_EQ(check_config(usable(dir), "s.toml"), std::vector<std::string>{});
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "state"));
  // schedd makes missing parents too.
  DaemonConfig deeper = usable(dir);
  deeper.state_dir = (dir.path() / "a/b/state").string();
  deeper.authorized_agents_file = default_authorized_agents_file(deeper);
  deeper.secret_key_file = default_secret_key_file(deeper);
  EXPECT_EQ(check_config(deeper, "s.toml"), std::vector<std::string>{});
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "a"));
}

TEST(CheckConfig, EachProblemNamesFileAndKey) {
  luatest::TempDir dir;
  DaemonConfig c = usable(dir);
  c.policy = "no_such";
  c.state_dir = dir.write("a-file", "") + "/sub/state";          // under a file: cannot be made
  c.authorized_agents_file = default_authorized_agents_file(c);  // made at start: no problem
  c.secret_key_file = "/no/such.key";
  c.client_endpoint = "127.0.0.1:7100";
  c.log_file = "/no/such/dir/s.log";
  const auto problems = check_config(c, "s.toml");
  ASSERT_EQ(problems.size(), 5u) << ::testing::PrintToString(problems);
  EXPECT_EQ(problems[0].rfind("s.toml: scheduler.policy: no file no_such", 0), 0u);
  EXPECT_EQ(problems[1], "s.toml: server.state_dir: " + c.state_dir + " cannot be made: " +
                             (dir.path() / "a-file").string() + " is no folder");
  EXPECT_EQ(problems[2], "s.toml: security.secret_key_file: no such file: /no/such.key");
  EXPECT_EQ(problems[3].rfind("s.toml: log.file: ", 0), 0u);
  EXPECT_EQ(problems[4].rfind("s.toml: server.client_endpoint: expected", 0), 0u);
}

TEST(CheckConfig, APolicyThatDoesNotLoadIsAProblem) {
  luatest::TempDir dir;
  DaemonConfig c = usable(dir);
  c.policy = dir.write("broken.lua", "this is not lua\n");
  const auto problems = check_config(c, "s.toml");
  ASSERT_EQ(problems.size(), 1u) << ::testing::PrintToString(problems);
  EXPECT_NE(problems[0].find("scheduler.policy: " + c.policy + " does not load"), std::string::npos)
      << problems[0];
}

TEST(ConfigReload, LiveKeysAreAppliedAndTheOthersWaitForARestart) {
  DaemonConfig running;
  DaemonConfig fresh;
  fresh.max_pending_jobs_per_user = 5;
  fresh.log_level = "debug";
  fresh.admins = {"ops"};
  fresh.client_endpoint = "tcp://127.0.0.1:9100";
  fresh.priority.weights.age = 10;
  std::vector<std::string> restart;
  const auto applied = apply_live_config(running, fresh, restart);
  EXPECT_EQ(applied, (std::vector<std::string>{"log.level", "limits.max_pending_jobs_per_user",
                                               "auth.admins"}));
  EXPECT_EQ(restart, (std::vector<std::string>{"server.client_endpoint", "priority"}));
  EXPECT_EQ(running.max_pending_jobs_per_user, 5);
  EXPECT_EQ(running.log_level, "debug");
  EXPECT_EQ(running.admins, std::vector<std::string>{"ops"});
  // What waits for a restart is not taken.
  EXPECT_EQ(running.client_endpoint, DaemonConfig{}.client_endpoint);
  EXPECT_EQ(running.priority.weights.age, 0);
  EXPECT_TRUE(has(restart, "priority"));
}

// issue 15: how long an ended job stays in schedd's memory (Slurm's
// MinJobAge), applied live; a negative age is refused by key.
TEST(ConfigReload, MinJobAgeIsReadCheckedAndAppliedLive) {
  luatest::TempDir dir;
  EXPECT_EQ(DaemonConfig{}.min_job_age_s, 300);
  EXPECT_EQ(load_config(dir.write("age.toml", "[scheduler]\nmin_job_age_s = 5\n")).min_job_age_s,
            5);
  const std::string bad = dir.write("bad.toml", "[scheduler]\nmin_job_age_s = -1\n");
  try {
    load_config(bad);
    FAIL() << "a negative min_job_age_s was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad + ": scheduler.min_job_age_s"), std::string::npos)
        << e.what();
  }
  DaemonConfig running;
  DaemonConfig fresh;
  fresh.min_job_age_s = 0;
  std::vector<std::string> restart;
  EXPECT_EQ(apply_live_config(running, fresh, restart),
            std::vector<std::string>{"scheduler.min_job_age_s"});
  EXPECT_TRUE(restart.empty());
  EXPECT_EQ(running.min_job_age_s, 0);
}

TEST(ConfigReload, TheSameConfigChangesNothing) {
  DaemonConfig running;
  std::vector<std::string> restart;
  EXPECT_TRUE(apply_live_config(running, DaemonConfig{}, restart).empty());
  EXPECT_TRUE(restart.empty());
}

}  // namespace
}  // namespace sched::daemon
