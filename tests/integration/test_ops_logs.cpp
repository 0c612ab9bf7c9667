// schedd's log (issue 19 item 2, docs/admin.md "Logs"): each event once, as
// key=value; a policy failing on live passes logged with file and line and
// shown by `sched policy`; SIGHUP re-reads the config, applies what it can
// live and says what waits for a restart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include "cluster.hpp"
#include "policy_source.hpp"
#include "sched/auth/credential.hpp"

namespace sched::testing {
namespace {

using namespace std::chrono_literals;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The sched.toml LocalCluster writes, beside the state folder.
std::string config_path(const LocalCluster& cluster) {
  return (std::filesystem::path(cluster.state_dir()).parent_path() / "sched.toml").string();
}

proto::PolicyInfoReply policy_info(LocalCluster& cluster) {
  return cluster.client().call<proto::PolicyInfoReply>(proto::type::kPolicyInfo, proto::Empty{});
}

TEST(OpsLogs, EachJobStateChangeIsLoggedOnceWithUserNameAndExit) {
  ClusterOptions options;
  options.log_level = "info";
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto id = cluster.submit("#!/bin/sh\nexit 3\n", 1, 0, "three");
  ASSERT_TRUE(cluster.wait_state(id, "FAILED")) << cluster.logs();
  const std::string job =
      " job=" + std::to_string(id) + " user=" + auth::user_name(::getuid()) + " name=three from=";
  std::string logs;
  ASSERT_TRUE(eventually([&] {
    logs = cluster.logs();
    return logs.find("event=job.failed seq=") != std::string::npos;
  })) << logs;
  EXPECT_EQ(count(logs, "event=job.submitted seq="), 1u) << logs;
  // submitted, starting, started, failed at least
  EXPECT_GE(count(logs, job), 4u) << logs;
  EXPECT_NE(logs.find(job + "STARTING to=RUNNING"), std::string::npos) << logs;
  const auto at = logs.find("event=job.failed seq=");
  const std::string failed = logs.substr(at, logs.find('\n', at) - at);
  EXPECT_NE(failed.find(job), std::string::npos) << failed;
  EXPECT_NE(failed.find(" to=FAILED "), std::string::npos) << failed;
  EXPECT_NE(failed.find(" exit=3"), std::string::npos) << failed;
  EXPECT_NE(logs.find("event=node.up seq="), std::string::npos) << logs;
  EXPECT_EQ(logs.find("event=sched.pass"), std::string::npos) << "passes are debug\n" << logs;
}

TEST(OpsLogs, APolicyFailingOnLivePassesIsLoggedWithFileAndLineAndShownBySchedPolicy) {
  TempDir dir("sched-policy");
  const std::string path = dir.str() + "/mine.lua";
  std::ofstream(path) << luatest::policy("bad",
                                         "if not ctx.dry then error('live passes fail') end");
  ClusterOptions options;
  options.policy = path;
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  cluster.submit("#!/bin/sh\ntrue\n");  // pending: the pass has a job to fail on
  ASSERT_TRUE(eventually([&] { return policy_info(cluster).failed_passes >= 1; }))
      << cluster.logs();
  std::string logs;
  ASSERT_TRUE(eventually([&] {
    logs = cluster.logs();
    return logs.find("event=policy.error seq=") != std::string::npos;
  })) << logs;
  EXPECT_NE(logs.find("event=policy.error seq="), std::string::npos) << logs;
  const auto at = logs.find("event=policy.error seq=");
  const std::string line = logs.substr(at, logs.find('\n', at) - at);
  EXPECT_NE(line.find(" code=runtime file=mine.lua line=3 message="), std::string::npos) << line;
  EXPECT_NE(line.find("live passes fail"), std::string::npos) << line;
  EXPECT_NE(logs.substr(0, at).rfind("[error]"), std::string::npos) << "logged as an error";

  const CliRun run = run_sched(cluster, {"policy"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("live passes fail"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("Where:         mine.lua:3"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("When:"), std::string::npos) << run.out;
}

TEST(OpsLogs, SighupAppliesLiveKeysNamesThoseWaitingForARestartAndRefusesABrokenConfig) {
  ClusterOptions options;
  options.log_level = "info";
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  // One job holds the node; the others wait.
  const std::string script = "#!/bin/sh\nsleep 60\n";
  ASSERT_TRUE(cluster.wait_state(cluster.submit(script), "RUNNING")) << cluster.logs();
  cluster.submit(script);
  cluster.submit(script);  // no limit yet: two pending

  const std::string original = [&] {
    std::ifstream in(config_path(cluster));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  std::ofstream(config_path(cluster))
      << original << "\n[limits]\nmax_pending_jobs_per_user = 2\n[power]\nidle_w_per_node = 50.0\n";
  cluster.signal_schedd(SIGHUP);
  ASSERT_TRUE(eventually([&] {
    return cluster.logs().find(
               "config=reloaded applied=limits.max_pending_jobs_per_user "
               "restart=power.idle_w_per_node") != std::string::npos;
  })) << cluster.logs();
  const std::string refused = error_of([&] { cluster.submit(script); });
  EXPECT_NE(refused.find("max_pending_jobs_per_user = 2"), std::string::npos) << refused;
  // Logged once, as its auth.denied event; another refusal as itself.
  EXPECT_NE(cluster.logs().find("event=auth.denied seq="), std::string::npos) << cluster.logs();
  EXPECT_NE(cluster.logs().find("request=submit code=limit"), std::string::npos) << cluster.logs();
  EXPECT_EQ(cluster.logs().find("refused peer=client type=submit"), std::string::npos)
      << cluster.logs();
  proto::JobTaskRef missing;
  missing.id = 999;
  EXPECT_NE(error_of([&] { cluster.client().call<proto::Empty>(proto::type::kCancel, missing); }),
            "no error");
  EXPECT_TRUE(eventually([&] {
    return cluster.logs().find("refused peer=client type=cancel code=not_found user=") !=
           std::string::npos;
  })) << cluster.logs();

  // A config that does not load changes nothing.
  std::ofstream(config_path(cluster)) << original << "\n[limits]\nmax_pending = 100\n";
  cluster.signal_schedd(SIGHUP);
  ASSERT_TRUE(eventually([&] {
    return cluster.logs().find("config=refused message=") != std::string::npos;
  })) << cluster.logs();
  EXPECT_NE(cluster.logs().find("limits.max_pending: unknown key"), std::string::npos)
      << cluster.logs();
  EXPECT_NE(error_of([&] { cluster.submit(script); }).find("max_pending_jobs_per_user = 2"),
            std::string::npos);
}

}  // namespace
}  // namespace sched::testing
