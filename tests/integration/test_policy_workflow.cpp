// The administrator's policy workflow on a live cluster (issue 22): an edit
// of a lib module of the running policy reloads it (a broken one keeps the
// old); `sched policy check` shows what a candidate would do now, changing
// nothing; `sched policy set`, `history` and `rollback` across a schedd
// restart.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "cluster.hpp"
#include "policy_source.hpp"
#include "users.hpp"

namespace sched::testing {
namespace {

using namespace std::chrono_literals;

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

proto::PolicyInfoReply policy_info(LocalCluster& cluster) {
  return cluster.client().call<proto::PolicyInfoReply>(proto::type::kPolicyInfo, proto::Empty{});
}

std::string describe(const CliRun& run) {
  return "status " + std::to_string(run.status) + "\n--- stdout\n" + run.out + "--- stderr\n" +
         run.err;
}

bool has_line(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_match(line, re)) return true;
  }
  return false;
}

// A policy that starts nothing: jobs wait with idle nodes.
const char* kIdle =
    "local P = { name = 'idle', api = 1 }\nfunction P.schedule(ctx) end\nreturn P\n";

TEST(PolicyWorkflow, EditingALibModuleReloadsAndABrokenOneKeepsTheOld) {
  TempDir dir("sched-policy-lib");
  const std::string path = dir.str() + "/mine.lua";
  write(dir.str() + "/lib/naming.lua", "return { name = 'one' }\n");
  write(path,
        "local naming = require('lib.naming')\n"
        "local P = { name = naming.name, api = 1 }\n"
        "function P.schedule(ctx) end\nreturn P\n");
  ClusterOptions options;
  options.policy = path;
  LocalCluster cluster(options);
  ASSERT_EQ(policy_info(cluster).name, "one");

  write(dir.str() + "/lib/naming.lua", "return { name = 'two' }\n");
  ASSERT_TRUE(eventually([&] { return policy_info(cluster).name == "two"; }))
      << "the module's edit was not reloaded\n"
      << cluster.logs();
  EXPECT_EQ(policy_info(cluster).reloads, 1u);

  write(dir.str() + "/lib/naming.lua", "return { name = \n");
  ASSERT_TRUE(eventually([&] { return policy_info(cluster).failed_reloads > 0; }))
      << cluster.logs();
  const auto info = policy_info(cluster);
  EXPECT_EQ(info.name, "two") << "the old policy keeps running";
  ASSERT_TRUE(info.last_failure);
  EXPECT_EQ(info.last_failure->file.value_or(""), "lib/naming.lua");
  EXPECT_EQ(info.last_failure->line.value_or(0), 2);
}

TEST(PolicyWorkflow, CheckShowsWhatACandidateWouldDoAndChangesNothing) {
  TempDir dir("sched-policy-check");
  const std::string idle = dir.str() + "/idle.lua";
  write(idle, kIdle);
  ClusterOptions options;
  options.policy = idle;
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  const auto job = cluster.submit("#!/bin/sh\ntrue\n", 2);

  // The bundled easy_backfill would start it.
  auto run = run_sched(cluster, {"policy", "check", "easy_backfill"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_TRUE(has_line(run.out, R"(Policy:\s+easy_backfill)")) << run.out;
  EXPECT_TRUE(has_line(
      run.out,
      R"(Files:\s+.*easy_backfill.lua .*lib/easy.lua .*lib/moldable.lua .*lib/urgent.lua)"))
      << run.out;
  EXPECT_TRUE(has_line(run.out, R"(Result:\s+ok.*)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(\s+start job )" + std::to_string(job) + " on 2 node\\(s\\)"))
      << run.out;
  // ... but nothing happened.
  EXPECT_EQ(cluster.job(job).state, "PENDING");
  EXPECT_EQ(policy_info(cluster).name, "idle");
  EXPECT_EQ(policy_info(cluster).reloads, 0u);

  // A policy that starts nothing prints no start.
  run = run_sched(cluster, {"policy", "check", idle});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_TRUE(has_line(run.out, R"(Actions:\s+0)")) << run.out;
  EXPECT_EQ(run.out.find("start job"), std::string::npos) << run.out;

  // JSON: the same, as the wire has it.
  run = run_sched(cluster, {"policy", "check", "fcfs", "--json"});
  ASSERT_EQ(run.status, 0) << describe(run);
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["ok"], true);
  ASSERT_EQ(json["actions"].size(), 1u) << json;
  EXPECT_EQ(json["actions"][0]["action"], "start");
  EXPECT_EQ(json["actions"][0]["job"], job);
  EXPECT_EQ(json["actions"][0]["nodes"], 2);

  // A broken file: its error with its line, exit 1.
  const std::string broken = dir.str() + "/broken.lua";
  write(broken, "local P = { api = 1 }\nif then\n");
  run = run_sched(cluster, {"policy", "check", broken});
  EXPECT_EQ(run.status, 1) << describe(run);
  EXPECT_TRUE(has_line(run.out, R"(Result:\s+refused: .*broken.lua:2:.*)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(\s+Where:\s+broken.lua:2)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(\s+Kind:\s+syntax)")) << run.out;
  // No such file.
  run = run_sched(cluster, {"policy", "check", dir.str() + "/absent.lua"});
  EXPECT_EQ(run.status, 1) << describe(run);
  EXPECT_NE(run.err.find("no policy"), std::string::npos) << run.err;
  EXPECT_EQ(cluster.job(job).state, "PENDING");
}

TEST(PolicyWorkflow, SetHistoryAndRollbackAcrossARestart) {
  TempDir dir("sched-policy-set");
  const std::string idle = dir.str() + "/idle.lua";
  write(idle, kIdle);
  ClusterOptions options;
  options.policy = idle;
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto waiting = cluster.submit("#!/bin/sh\ntrue\n");

  // A broken one is refused and changes nothing.
  const std::string broken = dir.str() + "/broken.lua";
  write(broken, "return 42\n");
  auto run = run_sched(cluster, {"policy", "set", broken});
  EXPECT_EQ(run.status, 1) << describe(run);
  EXPECT_NE(run.err.find("refused"), std::string::npos) << run.err;
  EXPECT_EQ(policy_info(cluster).name, "idle");

  run = run_sched(cluster, {"policy", "set", "fcfs", "--param", "depth=3"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_TRUE(has_line(run.out, R"(Policy:\s+fcfs)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(\s+depth = 3)")) << run.out;
  ASSERT_TRUE(cluster.wait_state(waiting, "COMPLETED")) << "fcfs runs live\n" << cluster.logs();

  run = run_sched(cluster, {"policy", "rollback"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_EQ(policy_info(cluster).name, "idle");
  // The rolled-back version's file was edited since: the journaled text runs.
  write(idle, "this is not lua\n");
  run = run_sched(cluster, {"policy", "set", "fcfs"});
  ASSERT_EQ(run.status, 0) << describe(run);
  run = run_sched(cluster, {"policy", "rollback", "1"});
  ASSERT_EQ(run.status, 0) << describe(run);
  auto info = policy_info(cluster);
  EXPECT_EQ(info.name, "idle");
  EXPECT_NE(info.path.find("policy-versions/1/idle.lua"), std::string::npos) << info.path;

  run = run_sched(cluster, {"policy", "history"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_TRUE(has_line(run.out, R"(\s+1\s+\S+\s+schedd\s+load\s+idle\s+.*)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(\s+2\s+\S+\s+\S+\s+set\s+fcfs\s+.* depth=3)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(\s+3\s+\S+\s+\S+\s+rollback to 1\s+idle\s+.*)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(\*\s+5\s+\S+\s+\S+\s+rollback to 1\s+idle\s+.*)")) << run.out;

  // After a restart the last deployed version runs, not the configured file
  // (now broken); history is intact.
  run = run_sched(cluster, {"policy", "set", "fcfs", "--param", "depth=4"});
  ASSERT_EQ(run.status, 0) << describe(run);
  cluster.kill_schedd(SIGKILL);
  cluster.start_schedd();
  info = policy_info(cluster);
  EXPECT_EQ(info.name, "fcfs");
  EXPECT_EQ(info.params["depth"], "4") << "the version's parameters came back";
  const auto history =
      cluster.client().call<proto::PolicyHistoryReply>(proto::type::kPolicyHistory, proto::Empty{});
  ASSERT_EQ(history.versions.size(), 6u);
  EXPECT_TRUE(history.versions.back().current);
  EXPECT_EQ(history.versions.back().how, "set");
  EXPECT_EQ(history.versions.back().name, "fcfs");
  EXPECT_EQ(history.versions[1].hash, history.versions[3].hash) << "fcfs is fcfs";
  EXPECT_EQ(history.versions[0].hash, history.versions[2].hash);
  EXPECT_EQ(history.versions[0].files, std::vector<std::string>{"idle.lua"});
  // Jobs start under it.
  const auto after = cluster.submit("#!/bin/sh\ntrue\n");
  EXPECT_TRUE(cluster.wait_state(after, "COMPLETED")) << cluster.logs();
  // And rolling back goes on from the journal.
  run = run_sched(cluster, {"policy", "rollback", "99"});
  EXPECT_EQ(run.status, 1) << describe(run);
  EXPECT_NE(run.err.find("no policy version 99"), std::string::npos) << run.err;
}

// Issue 20 item 1: a partition's own policy is versioned as the [scheduler]
// policy is: set, listed, rolled back, and run again after a restart.
TEST(PolicyWorkflow, APartitionsOwnPolicyIsSetListedRolledBackAndKeptAcrossARestart) {
  TempDir dir("sched-policy-partition");
  const std::string idle = dir.str() + "/idle.lua";
  write(idle, kIdle);
  ClusterOptions options;
  options.policy = "fcfs";
  options.extra_config =
      "[partitions.batch]\nnodes = [\"n1\"]\ndefault = true\n\n"
      "[partitions.gpu]\nnodes = [\"n2\"]\npolicy = \"" +
      idle + "\"\n";
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  proto::SubmitRequest request;
  request.job.name = "gpu-job";
  request.job.nodes = 1;
  request.job.workdir = cluster.work_dir();
  request.job.script = "#!/bin/sh\ntrue\n";
  request.job.partition = "gpu";
  const auto waiting = cluster.submit(request);

  // batch has no policy of its own: nothing to set there.
  auto run = run_sched(cluster, {"policy", "set", "fcfs", "-p", "batch"});
  EXPECT_EQ(run.status, 1) << describe(run);
  EXPECT_NE(run.err.find("has no policy of its own"), std::string::npos) << run.err;
  run = run_sched(cluster, {"policy", "set", "fcfs", "-p", "nosuch"});
  EXPECT_NE(run.err.find("no partition nosuch"), std::string::npos) << run.err;

  run = run_sched(cluster, {"policy", "set", "fcfs", "-p", "gpu"});
  ASSERT_EQ(run.status, 0) << describe(run);
  ASSERT_TRUE(cluster.wait_state(waiting, "COMPLETED")) << "gpu's fcfs runs\n" << cluster.logs();
  EXPECT_EQ(policy_info(cluster).name, "fcfs") << "[scheduler]'s is untouched";

  run = run_sched(cluster, {"policy", "history", "-p", "gpu"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_TRUE(has_line(run.out, R"(\s+\d+\s+gpu\s+\S+\s+schedd\s+load\s+idle\s+.*)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(\*\s+\d+\s+gpu\s+\S+\s+\S+\s+set\s+fcfs\s+.*)")) << run.out;
  EXPECT_FALSE(has_line(run.out, R"(.*\s-\s.*)")) << "only gpu's versions\n" << run.out;

  // Back to idle: a new gpu job waits.
  run = run_sched(cluster, {"policy", "rollback", "-p", "gpu"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_TRUE(has_line(run.out, R"(Policy:\s+idle)")) << run.out;
  const auto second = cluster.submit(request);
  // After a crash gpu runs its last version (idle) again, not the config's
  // file, which is broken now; the journal's copy runs.
  write(idle, "this is not lua\n");
  cluster.kill_schedd(SIGKILL);
  cluster.start_schedd();
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  const auto history =
      cluster.client().call<proto::PolicyHistoryReply>(proto::type::kPolicyHistory, proto::Empty{});
  const auto current =
      std::find_if(history.versions.begin(), history.versions.end(),
                   [](const auto& v) { return v.current && v.partition.value_or("") == "gpu"; });
  ASSERT_NE(current, history.versions.end());
  EXPECT_EQ(current->name, "idle");
  EXPECT_EQ(cluster.job(second).state, "PENDING") << "idle starts nothing";
  // Rolling gpu back to [scheduler]'s version is refused.
  run = run_sched(cluster, {"policy", "rollback", "1", "-p", "gpu"});
  EXPECT_EQ(run.status, 1) << describe(run);
  EXPECT_NE(run.err.find("is the [scheduler] policy's"), std::string::npos) << run.err;
}

TEST(PolicyWorkflow, AVersionTheEngineGaveUpIsNotTheOneARestartRuns) {
  TempDir dir("sched-policy-revert");
  const std::string good = dir.str() + "/good.lua";
  const std::string bad = dir.str() + "/bad.lua";
  write(good, luatest::policy("good"));
  // Passes its dry pass, fails every live one.
  write(bad, luatest::policy("bad", "if not ctx.dry then error('live passes fail') end"));
  ClusterOptions options;
  options.policy = good;
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  ASSERT_TRUE(cluster.wait_state(cluster.submit("#!/bin/sh\ntrue\n"), "COMPLETED"))
      << cluster.logs();

  const auto run = run_sched(cluster, {"policy", "set", bad});
  ASSERT_EQ(run.status, 0) << describe(run);
  ASSERT_TRUE(cluster.wait_state(cluster.submit("#!/bin/sh\ntrue\n"), "COMPLETED"))
      << "the engine went back to good\n"
      << cluster.logs();
  const auto history = [&] {
    return cluster.client().call<proto::PolicyHistoryReply>(proto::type::kPolicyHistory,
                                                            proto::Empty{});
  };
  ASSERT_TRUE(eventually([&] { return history().versions.back().how == "revert to 1"; }))
      << "the revert was not journaled\n"
      << cluster.logs();
  EXPECT_EQ(history().versions.back().name, "good");

  cluster.kill_schedd(SIGKILL);
  cluster.start_schedd();
  EXPECT_EQ(policy_info(cluster).name, "good");
  EXPECT_EQ(history().versions.size(), 3u);
}

TEST(PolicyWorkflow, OnlyAdminsCheckSetOrRollBackAnyoneListsHistory) {
  const auto bob = ensure_user("sched_bob");
  if (!bob) GTEST_SKIP() << "needs root, to create a test user and run as them";
  LocalCluster cluster;
  const auto as_bob = [&](std::string_view type, const auto& body) {
    return answer_as(*bob, cluster, [&](proto::Client& client) {
      client.call<proto::Empty>(type, body);
      return std::string("ok");
    });
  };
  proto::PolicyFileRequest request;
  request.policy = "fcfs";
  EXPECT_EQ(as_bob(proto::type::kPolicyCheck, request),
            "permission_denied: permission denied: checking a policy is for administrators "
            "(sched_bob is not one)");
  EXPECT_EQ(as_bob(proto::type::kPolicySet, request),
            "permission_denied: permission denied: setting the policy is for administrators "
            "(sched_bob is not one)");
  EXPECT_EQ(as_bob(proto::type::kPolicyRollback, proto::PolicyRollbackRequest{}),
            "permission_denied: permission denied: rolling the policy back is for administrators "
            "(sched_bob is not one)");
  const std::string history = answer_as(*bob, cluster, [](proto::Client& client) {
    return std::to_string(
        client.call<proto::PolicyHistoryReply>(proto::type::kPolicyHistory, proto::Empty{})
            .versions.size());
  });
  EXPECT_EQ(history, "1");
  EXPECT_EQ(policy_info(cluster).name, "fcfs");
}

}  // namespace
}  // namespace sched::testing
