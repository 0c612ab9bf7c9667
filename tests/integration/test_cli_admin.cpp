// The administrative `sched` commands (nodes, policy, corridor, events,
// stats, acct) run as the real binary against a local cluster.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cluster.hpp"
#include "sched/auth/credential.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

using namespace std::chrono_literals;

// Whether some line of `text` matches `pattern` as a whole.
bool has_line(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_match(line, re)) return true;
  }
  return false;
}

std::string describe(const CliRun& run) {
  return "status " + std::to_string(run.status) + "\n--- stdout\n" + run.out + "--- stderr\n" +
         run.err;
}

TEST(CliAdmin, NodesListsTheAgentsAsSummaryPerNodeAndJson) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  cluster.start_agent("n2", 2);
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();

  const auto summary = run_sched(cluster, {"nodes"});
  ASSERT_EQ(summary.status, 0) << describe(summary);
  EXPECT_TRUE(has_line(summary.out, R"(STATE\s+NODES\s+NODELIST)")) << summary.out;
  EXPECT_TRUE(has_line(summary.out, R"(idle\s+2\s+n\[1-2\])")) << summary.out;

  const auto per_node = run_sched(cluster, {"nodes", "-N"});
  ASSERT_EQ(per_node.status, 0) << describe(per_node);
  EXPECT_TRUE(has_line(per_node.out, R"(NODE\s+STATE\s+CPUS\s+JOBS)")) << per_node.out;
  EXPECT_TRUE(has_line(per_node.out, R"(n1\s+idle\s+1\s+-)")) << per_node.out;
  EXPECT_TRUE(has_line(per_node.out, R"(n2\s+idle\s+2\s+-)")) << per_node.out;

  const auto json = run_sched(cluster, {"nodes", "--json"});
  ASSERT_EQ(json.status, 0) << describe(json);
  const auto doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc["nodes"].size(), 2u) << json.out;
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& node : doc["nodes"]) by_name[node["name"]] = node;
  EXPECT_EQ(by_name["n1"]["state"], "idle");
  EXPECT_EQ(by_name["n2"]["cores"], 2);
  EXPECT_TRUE(by_name["n2"]["jobs"].empty());
}

TEST(CliAdmin, DrainAndResumeShowInTheNodeList) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();

  auto run = run_sched(cluster, {"nodes", "drain", "n1", "--reason", "new fans"});
  ASSERT_EQ(run.status, 0) << describe(run);
  run = run_sched(cluster, {"nodes", "-N"});
  EXPECT_TRUE(has_line(run.out, R"(n1\s+drain\s+1\s+-)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(n2\s+idle\s+1\s+-)")) << run.out;
  run = run_sched(cluster, {"nodes"});
  EXPECT_TRUE(has_line(run.out, R"(drain\s+1\s+n1)")) << run.out;

  // A drained node takes no job: this one goes to n2, which then drains
  // while its job runs.
  const auto id = cluster.submit("#!/bin/sh\nsleep 30\n");
  ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();
  ASSERT_EQ(cluster.job(id).nodelist, std::vector<std::string>{"n2"});
  ASSERT_EQ(run_sched(cluster, {"nodes", "drain", "n2"}).status, 0);
  run = run_sched(cluster, {"nodes", "-N"});
  EXPECT_TRUE(has_line(run.out, R"(n2\s+drng\s+1\s+)" + std::to_string(id))) << run.out;

  ASSERT_EQ(run_sched(cluster, {"nodes", "resume", "n1"}).status, 0);
  ASSERT_EQ(run_sched(cluster, {"nodes", "resume", "n2"}).status, 0);
  run = run_sched(cluster, {"nodes", "-N"});
  EXPECT_TRUE(has_line(run.out, R"(n1\s+idle\s+1\s+-)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(n2\s+alloc\s+1\s+)" + std::to_string(id))) << run.out;

  const auto unknown = run_sched(cluster, {"nodes", "drain", "n9"});
  EXPECT_EQ(unknown.status, 1) << describe(unknown);
  EXPECT_TRUE(has_line(unknown.err, "sched: .*n9.*")) << unknown.err;
}

TEST(CliAdmin, PolicyShowsTheConfiguredPolicyAndARefusedReloadFails) {
  // A copy of fcfs, so that the test can break it.
  TempDir dir("sched-cli-policy");
  const std::string path = dir.str() + "/fcfs.lua";
  std::filesystem::copy_file(std::string(SCHED_SOURCE_POLICY_DIR) + "/fcfs.lua", path);
  ClusterOptions options;
  options.policy = path;
  LocalCluster cluster(options);

  auto run = run_sched(cluster, {"policy"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_TRUE(has_line(run.out, R"(Policy:\s+fcfs)")) << run.out;
  EXPECT_NE(run.out.find("Path:            " + path + "\n"), std::string::npos) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(Failed reloads:\s+0)")) << run.out;
  const auto json = run_sched(cluster, {"policy", "info", "--json"});
  ASSERT_EQ(json.status, 0) << describe(json);
  EXPECT_EQ(nlohmann::json::parse(json.out)["name"], "fcfs");

  run = run_sched(cluster, {"policy", "reload"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_TRUE(has_line(run.out, R"(Reloads:\s+1)")) << run.out;

  std::ofstream(path) << "this is not lua\n";
  run = run_sched(cluster, {"policy", "reload"});
  EXPECT_EQ(run.status, 1) << describe(run);
  EXPECT_TRUE(has_line(run.err, "sched: reload refused.*")) << run.err;
  run = run_sched(cluster, {"policy"});
  EXPECT_TRUE(has_line(run.out, R"(Policy:\s+fcfs)")) << "the old policy keeps running\n"
                                                      << run.out;
}

TEST(CliAdmin, CorridorSetShowAndClear) {
  LocalCluster cluster;
  auto run = run_sched(cluster, {"corridor", "show"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_TRUE(has_line(run.out, R"(Corridor:\s+no corridor)")) << run.out;

  ASSERT_EQ(run_sched(cluster, {"corridor", "set", "100", "900.5"}).status, 0);
  run = run_sched(cluster, {"corridor", "show"});
  EXPECT_TRUE(has_line(run.out, R"(Lower:\s+100 W)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(Upper:\s+900\.5 W)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(Current:\s+.*)")) << run.out;
  const auto json = run_sched(cluster, {"corridor", "show", "--json"});
  EXPECT_EQ(nlohmann::json::parse(json.out)["upper_w"], 900.5) << json.out;

  const auto bad = run_sched(cluster, {"corridor", "set", "500", "100"});
  EXPECT_EQ(bad.status, 1) << describe(bad);
  EXPECT_TRUE(has_line(bad.err, "sched: .*corridor.*")) << bad.err;
  run = run_sched(cluster, {"corridor", "show"});
  EXPECT_TRUE(has_line(run.out, R"(Lower:\s+100 W)")) << "a refused corridor changes nothing\n"
                                                      << run.out;

  ASSERT_EQ(run_sched(cluster, {"corridor", "clear"}).status, 0);
  run = run_sched(cluster, {"corridor", "show"});
  EXPECT_TRUE(has_line(run.out, R"(Corridor:\s+no corridor)")) << run.out;
}

TEST(CliAdmin, EventsPrintsTheJobEventsOfAJobSubmittedAfterSubscribing) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  Process events({SCHED_CLI_BIN, "--endpoint", cluster.client_endpoint(), "events", "--count", "2",
                  "--topic", "job."});
  // ZeroMQ's slow joiner: what is published before the subscription is in
  // place is lost, and nothing tells when it is.
  std::this_thread::sleep_for(500ms);
  const auto id = cluster.submit("#!/bin/sh\ntrue\n");

  std::vector<nlohmann::json> lines;
  while (lines.size() < 2) {
    const auto line = events.read_line(5s);
    ASSERT_TRUE(line) << "only " << lines.size() << " events\n" << cluster.logs();
    lines.push_back(nlohmann::json::parse(*line));
  }
  EXPECT_EQ(lines[0]["topic"], "job.submitted") << lines[0];
  EXPECT_EQ(lines[0]["job"], id);
  EXPECT_EQ(lines[0]["state"], "PENDING");
  EXPECT_EQ(lines[1]["topic"].get<std::string>().rfind("job.", 0), 0u) << lines[1];
  EXPECT_EQ(lines[1]["job"], id);
  EXPECT_GT(lines[1]["seq"], lines[0]["seq"]);
  const auto status = events.wait(5s);
  ASSERT_TRUE(status) << "sched events did not stop after --count 2";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
}

TEST(CliAdmin, EventsEndsCleanlyOnItsTimeoutAndOnSignals) {
  LocalCluster cluster;
  const auto start = std::chrono::steady_clock::now();
  const auto quiet = run_sched(cluster, {"events", "--topic", "nothing.", "--timeout", "0.5"});
  EXPECT_EQ(quiet.status, 0) << describe(quiet);
  EXPECT_EQ(quiet.out, "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);

  for (int sig : {SIGINT, SIGTERM}) {
    Process events({SCHED_CLI_BIN, "--endpoint", cluster.client_endpoint(), "events"});
    std::this_thread::sleep_for(500ms);
    events.signal(sig);
    const auto status = events.wait(3s);
    ASSERT_TRUE(status) << strsignal(sig) << " did not end sched events";
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << strsignal(sig);
  }
}

TEST(CliAdmin, StatsCountsSubmissionsAndNodes) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto first = cluster.submit("#!/bin/sh\ntrue\n");
  cluster.submit("#!/bin/sh\ntrue\n");
  ASSERT_TRUE(cluster.wait_state(first, "COMPLETED")) << cluster.logs();

  const auto run = run_sched(cluster, {"stats"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_TRUE(has_line(run.out, R"(\s*Submitted:\s+2)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(Nodes:\s+1 up of 1)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(\s*Mean pass time:\s+[0-9.]+ ms)")) << run.out;
  EXPECT_TRUE(has_line(run.out, R"(Messages:\s+[0-9]+ \(0 bad\))")) << run.out;

  const auto json = run_sched(cluster, {"stats", "--json"});
  ASSERT_EQ(json.status, 0) << describe(json);
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["jobs_submitted"], 2);
  EXPECT_EQ(doc["nodes_up"], 1);
  EXPECT_EQ(doc["event_endpoint"], cluster.event_endpoint());
}

TEST(CliAdmin, AcctListsEndedJobsWithExitCodesAndFilters) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto ok = cluster.submit("#!/bin/sh\ntrue\n", 1, 0, "good");
  const auto bad = cluster.submit("#!/bin/sh\nexit 3\n", 1, 0, "bad");
  ASSERT_TRUE(cluster.wait_state(ok, "COMPLETED")) << cluster.logs();
  ASSERT_TRUE(cluster.wait_state(bad, "FAILED")) << cluster.logs();
  // The jobs are their submitter's: the user of this process's credential.
  const std::string me = auth::user_name(::geteuid());
  const std::string ok_line = std::to_string(ok) + R"(\s+good\s+)" + me +
                              R"(\s+COMPLETED\s+0:0\s+)" + R"(\d\d:\d\d:\d\d\s+1\s+n1\s+\S+\s+\S+)";
  const std::string bad_line =
      std::to_string(bad) + R"(\s+bad\s+)" + me + R"(\s+FAILED\s+3:0\s+.*)";

  auto run = run_sched(cluster, {"acct"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_TRUE(has_line(run.out, R"(JobID\s+JobName\s+User\s+State\s+ExitCode.*)")) << run.out;
  EXPECT_TRUE(has_line(run.out, ok_line)) << run.out;
  EXPECT_TRUE(has_line(run.out, bad_line)) << run.out;

  run = run_sched(cluster, {"acct", "-s", "F"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_FALSE(has_line(run.out, ok_line)) << run.out;
  EXPECT_TRUE(has_line(run.out, bad_line)) << run.out;

  run = run_sched(cluster, {"acct", "-j", std::to_string(ok), "-S", "now-1hour", "--json"});
  ASSERT_EQ(run.status, 0) << describe(run);
  const auto doc = nlohmann::json::parse(run.out);
  ASSERT_EQ(doc["jobs"].size(), 1u) << run.out;
  EXPECT_EQ(doc["jobs"][0]["id"], ok);
  EXPECT_EQ(doc["jobs"][0]["exit_status"], 0);

  // Both ended just now: nothing ended before an hour ago.
  run = run_sched(cluster, {"acct", "-S", "2000-01-01", "-E", "now-1hour"});
  ASSERT_EQ(run.status, 0) << describe(run);
  EXPECT_FALSE(has_line(run.out, std::to_string(ok) + R"(\s+.*)")) << run.out;

  const auto bad_state = run_sched(cluster, {"acct", "-s", "XX"});
  EXPECT_EQ(bad_state.status, 1) << describe(bad_state);
  EXPECT_TRUE(has_line(bad_state.err, "sched: unknown job state 'XX'.*")) << bad_state.err;
  const auto bad_time = run_sched(cluster, {"acct", "-S", "2020-02-30"});
  EXPECT_EQ(bad_time.status, 1) << describe(bad_time);
}

TEST(CliAdmin, ADeadEndpointExitsWithStatusTwoNamingIt) {
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(proto::free_tcp_port());
  const auto run = run_sched(endpoint, {"--timeout", "0.5", "nodes"});
  EXPECT_EQ(run.status, 2) << describe(run);
  EXPECT_EQ(run.out, "");
  EXPECT_NE(run.err.find(endpoint), std::string::npos) << run.err;
}

}  // namespace
}  // namespace sched::testing
