// Live adaptations on a local cluster (docs/design.md §6, docs/protocol.md §8): real
// agents start and stop real processes of a running step, which follow the
// expansions and shrinks through the malleable library. A policy that
// resizes is switched in by editing the policy file once the application
// runs, as an administrator would.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cluster.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

// FCFS only: nothing is resized until the file is replaced.
constexpr const char* kHoldPolicy = R"(
local P = { name = "hold", api = 1 }
function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then break end
  end
end
return P
)";

// FCFS, then every steady malleable job grows to its largest size.
constexpr const char* kGrowPolicy = R"(
local P = { name = "grow", api = 1 }
function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then break end
  end
  for _, job in ipairs(ctx.running) do
    if job.kind == "malleable" and job.state == "RUNNING" and job.size < job.max_nodes and
       ctx.nodes_idle > 0 then
      ctx:expand(job, math.min(job.max_nodes, job.size + ctx.nodes_idle))
    end
  end
end
return P
)";

void write_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".new";
  std::ofstream(temporary) << text;
  std::filesystem::rename(temporary, path);  // the daemon never reads half a file
}

// Every process a test's jobs started (their pids, from $MALL_PROBE_PIDS),
// killed at the end whatever happened: an agent killed with SIGKILL leaves
// its processes behind.
struct Pids {
  std::string file;
  std::vector<pid_t> read() const {
    std::ifstream in(file);
    std::vector<pid_t> pids;
    for (pid_t pid = 0; in >> pid;) pids.push_back(pid);
    return pids;
  }
  bool all_gone() const {
    for (pid_t pid : read()) {
      if (::kill(pid, 0) == 0) return false;
    }
    return true;
  }
  ~Pids() {
    for (pid_t pid : read()) ::kill(pid, SIGKILL);
  }
};

class Adaptation : public ::testing::Test {
 protected:
  void start(ClusterOptions options, std::initializer_list<const char*> nodes) {
    // Policies here may require the shipped libraries (lib/*.lua).
    std::filesystem::create_directory_symlink(std::string(SCHED_SOURCE_POLICY_DIR) + "/lib",
                                              dir_.str() + "/lib");
    options.policy = policy_;
    write_file(policy_, kHoldPolicy);
    cluster_ = std::make_unique<LocalCluster>(options);
    for (const char* node : nodes) cluster_->start_agent(node);
    ASSERT_TRUE(cluster_->wait_nodes_up(static_cast<int>(nodes.size()))) << cluster_->logs();
    pids_.file = cluster_->work_dir() + "/pids";
    stop_ = cluster_->work_dir() + "/stop";
  }

  // A malleable job of 1 to max_nodes nodes running mall_probe as a step.
  std::int64_t submit_malleable(int max_nodes, int probe_ms, int nodes = 1, double walltime = 0) {
    proto::SubmitRequest request;
    request.job.name = "mall";
    request.job.kind = "malleable";
    request.job.nodes = nodes;
    request.job.min_nodes = 1;
    request.job.max_nodes = max_nodes;
    request.job.walltime = walltime;
    request.job.workdir = cluster_->work_dir();
    request.job.env["SCHED"] = SCHED_CLI_BIN;
    request.job.env["APP"] = SCHED_MALL_PROBE_BIN;
    request.job.env["MALL_PROBE_PIDS"] = pids_.file;
    // A process left waiting by a killed agent gives up soon.
    request.job.env["SCHED_MALL_TIMEOUT_MS"] = mall_timeout_ms_;
    request.job.script = "#!/bin/sh\n$SCHED run $APP " + std::to_string(probe_ms) + " " + stop_ +
                         "\necho \"step status $?\"\n";
    return cluster_->client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
  }

  std::string output(std::int64_t id) { return read_file(cluster_->job(id).output); }

  // Waits until the job's application runs, then lets the policy resize.
  void grow_once_running(std::int64_t id) {
    ASSERT_TRUE(eventually([&] { return output(id).find("start on") != std::string::npos; }))
        << output(id) << cluster_->logs();
    leader_ = cluster_->job(id).nodelist.front();
    write_file(policy_, kGrowPolicy);
  }

  std::map<std::string, std::string> node_states() {
    std::map<std::string, std::string> states;
    const auto nodes =
        cluster_->client().call<proto::NodeList>(proto::type::kNodesQuery, proto::Empty{});
    for (const auto& node : nodes.nodes) states[node.name] = node.state;
    return states;
  }

  TempDir dir_{"sched-adapt-test"};
  std::string policy_ = dir_.str() + "/policy.lua";
  std::unique_ptr<LocalCluster> cluster_;
  Pids pids_;
  std::string stop_;
  std::string leader_;  // the job's first node
  // How long a new process waits for its adaptation window before it gives
  // up (and the adaptation is rolled back).
  std::string mall_timeout_ms_ = "5000";
};

TEST_F(Adaptation, AStepGrowsAndShrinksWithItsJob) {
  start({}, {"n1", "n2", "n3"});
  const auto id = submit_malleable(3, 2);
  grow_once_running(id);
  ASSERT_TRUE(eventually([&] {
    const auto job = cluster_->job(id);
    return job.state == "RUNNING" && job.nodes == 3;
  })) << cluster_->logs();
  EXPECT_NE(output(id).find("resized 1->3"), std::string::npos) << output(id);
  EXPECT_EQ(pids_.read().size(), 3u) << "two processes started on the added nodes";
  // A rigid job of two nodes waits; a policy that shrinks makes room.
  write_file(policy_, R"(
local P = { name = "shrink", api = 1 }
function P.schedule(ctx)
  local head = ctx.pending[1]
  for _, job in ipairs(ctx.running) do
    if head and job.kind == "malleable" and job.state == "RUNNING" and job.size > 1 then
      ctx:shrink(job, 1)
    end
  end
  for _, job in ipairs(ctx.pending) do
    if job.nodes > ctx.nodes_idle or not ctx:start(job) then break end
  end
end
return P
)");
  const auto rigid = cluster_->submit("#!/bin/sh\necho rigid on $SCHED_JOB_NODELIST\n", 2);
  ASSERT_TRUE(cluster_->wait_state(rigid, "COMPLETED")) << cluster_->logs();
  const auto job = cluster_->job(id);
  EXPECT_EQ(job.nodes, 1);
  EXPECT_EQ(job.nodelist, std::vector<std::string>{leader_}) << "the leader stays";
  EXPECT_NE(output(id).find("resized 3->1"), std::string::npos) << output(id);
  // The processes on the nodes that left have ended; the step goes on.
  std::ofstream(stop_) << "stop\n";
  ASSERT_TRUE(cluster_->wait_state(id, "COMPLETED")) << output(id) << cluster_->logs();
  EXPECT_NE(output(id).find("done on 1\nstep status 0\n"), std::string::npos) << output(id);
  EXPECT_TRUE(eventually([&] { return pids_.all_gone(); }));
}

// Draining a node under a malleable job shrinks the job off that node (issue
// 17 item 4): here a middle node of three, not the newest; the process there
// leaves and the step goes on with the two others.
TEST_F(Adaptation, DrainingANodeShrinksAMalleableJobOffIt) {
  start({}, {"n1", "n2", "n3"});
  const auto id = submit_malleable(3, 2);
  grow_once_running(id);
  ASSERT_TRUE(eventually([&] {
    const auto job = cluster_->job(id);
    return job.state == "RUNNING" && job.nodes == 3;
  })) << cluster_->logs();
  write_file(policy_, kHoldPolicy);
  const std::vector<std::string> before = cluster_->job(id).nodelist;
  ASSERT_EQ(before.size(), 3u);
  const std::string drained = before[1];
  const auto run = run_sched(*cluster_, {"nodes", "drain", drained, "--reason", "fan"});
  ASSERT_EQ(run.status, 0) << run.err;
  ASSERT_TRUE(eventually([&] {
    const auto job = cluster_->job(id);
    return job.state == "RUNNING" && job.nodes == 2;
  })) << cluster_->logs();
  EXPECT_EQ(cluster_->job(id).nodelist, (std::vector<std::string>{before[0], before[2]}));
  EXPECT_TRUE(eventually([&] { return node_states()[drained] == "drain"; }))
      << "free and drained: " << node_states()[drained];
  EXPECT_TRUE(eventually([&] { return output(id).find("resized 3->2") != std::string::npos; }))
      << output(id);
  std::ofstream(stop_) << "stop\n";
  ASSERT_TRUE(cluster_->wait_state(id, "COMPLETED")) << output(id) << cluster_->logs();
  EXPECT_NE(output(id).find("done on 2\nstep status 0\n"), std::string::npos) << output(id);
  EXPECT_TRUE(eventually([&] { return pids_.all_gone(); }));
}

// The heat solver moves its grid rows on every resize: grown 1→4 and shrunk
// 4→1 while it iterates, it must end with the grid of a run on one node.
TEST_F(Adaptation, TheHeatSolverGrowsAndShrinksAndEndsWithTheGridOfAFixedRun) {
  start({}, {"n1", "n2", "n3", "n4"});
  const std::string args = "--nx 48 --ny 40 --iters 1500 --probe-every 5 --sleep-ms 2";
  auto heat_job = [&](const std::string& kind, const std::string& grid) {
    proto::SubmitRequest request;
    request.job.name = "heat";
    request.job.kind = kind;
    request.job.nodes = 1;
    request.job.min_nodes = 1;
    request.job.max_nodes = kind == "malleable" ? 4 : 1;
    request.job.workdir = cluster_->work_dir();
    request.job.env["SCHED"] = SCHED_CLI_BIN;
    request.job.env["HEAT"] = SCHED_HEAT_BIN;
    request.job.env["SCHED_MALL_RENDEZVOUS_DIR"] = cluster_->work_dir() + "/rendezvous-" + grid;
    request.job.script = "#!/bin/sh\n$SCHED run $HEAT " + args + " --out " + cluster_->work_dir() +
                         "/" + grid + "\n";
    return cluster_->client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
  };
  const auto fixed = heat_job("rigid", "fixed.grid");
  ASSERT_TRUE(cluster_->wait_state(fixed, "COMPLETED", std::chrono::seconds(60)))
      << output(fixed) << cluster_->logs();

  const auto id = heat_job("malleable", "resized.grid");
  // Its phase reports (an MTCT) say the solver runs.
  ASSERT_TRUE(eventually([&] { return cluster_->job(id).mtct.has_value(); })) << cluster_->logs();
  write_file(policy_, kGrowPolicy);
  ASSERT_TRUE(eventually([&] {
    const auto job = cluster_->job(id);
    return job.state == "RUNNING" && job.nodes == 4;
  })) << cluster_->logs();
  write_file(policy_, R"(
local P = { name = "one", api = 1 }
function P.schedule(ctx)
  for _, job in ipairs(ctx.running) do
    if job.state == "RUNNING" and job.size > 1 then ctx:shrink(job, 1) end
  end
end
return P
)");
  ASSERT_TRUE(eventually([&] { return cluster_->job(id).nodes == 1; })) << cluster_->logs();
  ASSERT_TRUE(cluster_->wait_state(id, "COMPLETED", std::chrono::seconds(60)))
      << output(id) << cluster_->logs();
  const auto info = cluster_->job(id);
  EXPECT_EQ(info.expansions, 1);
  EXPECT_EQ(info.shrinks, 1);
  const std::string expected = read_file(cluster_->work_dir() + "/fixed.grid");
  ASSERT_FALSE(expected.empty()) << output(fixed);
  EXPECT_EQ(read_file(cluster_->work_dir() + "/resized.grid"), expected) << output(id);
}

TEST_F(Adaptation, TwoJobsAdaptAtTheSameTime) {
  start({}, {"n1", "n2", "n3", "n4"});
  const auto a = submit_malleable(2, 2);
  const auto b = submit_malleable(2, 2);
  for (auto id : {a, b}) {
    ASSERT_TRUE(eventually([&] { return output(id).find("start on") != std::string::npos; }))
        << cluster_->logs();
  }
  write_file(policy_, kGrowPolicy);  // one pass grows both
  for (auto id : {a, b}) {
    ASSERT_TRUE(eventually([&] {
      const auto job = cluster_->job(id);
      return job.state == "RUNNING" && job.nodes == 2;
    })) << cluster_->logs();
    EXPECT_NE(output(id).find("resized 1->2"), std::string::npos) << output(id);
  }
  std::ofstream(stop_) << "stop\n";
  for (auto id : {a, b}) {
    ASSERT_TRUE(cluster_->wait_state(id, "COMPLETED")) << output(id) << cluster_->logs();
    EXPECT_NE(output(id).find("done on 2\nstep status 0\n"), std::string::npos) << output(id);
  }
}

TEST_F(Adaptation, PerfAwareShrinksAMalleableJobToStartAWaitingRigidOne) {
  ClusterOptions options;
  start(options, {"n1", "n2"});
  const auto id = submit_malleable(2, 2);
  ASSERT_TRUE(eventually([&] { return output(id).find("start on") != std::string::npos; }))
      << cluster_->logs();
  write_file(policy_, read_file(std::string(SCHED_SOURCE_POLICY_DIR) + "/perf_aware.lua"));
  // perf_aware gives the idle node to the malleable job...
  ASSERT_TRUE(eventually([&] { return cluster_->job(id).nodes == 2; })) << cluster_->logs();
  ASSERT_TRUE(eventually([&] { return cluster_->job(id).state == "RUNNING"; }));
  // ...and takes it back to start a rigid job that waits.
  const auto rigid = cluster_->submit("#!/bin/sh\necho rigid\n", 1);
  ASSERT_TRUE(cluster_->wait_state(rigid, "COMPLETED")) << cluster_->logs();
  EXPECT_NE(output(id).find("resized 2->1"), std::string::npos) << output(id);
  std::ofstream(stop_) << "stop\n";
  ASSERT_TRUE(cluster_->wait_state(id, "COMPLETED")) << output(id) << cluster_->logs();
  EXPECT_NE(output(id).find("step status 0"), std::string::npos) << output(id);
}

TEST_F(Adaptation, AnAgentKilledDuringAnExpansionRollsItBack) {
  ClusterOptions options;
  options.adapt_timeout_s = 60;  // the lost node, not the timeout, ends it
  options.adapt_backoff_s = 60;  // and no second try during the test
  start(options, {"n1", "n2", "n3"});
  // The existing process probes every 30 s: the window cannot open before
  // the agent is killed.
  const auto id = submit_malleable(2, 30000);
  grow_once_running(id);
  std::string added;
  ASSERT_TRUE(eventually([&] {
    if (cluster_->job(id).state != "ADAPTING") return false;
    for (const auto& [node, state] : node_states()) {
      if (node != leader_ && state == "alloc") added = node;
    }
    return !added.empty() && pids_.read().size() == 2;  // the new process runs
  })) << cluster_->logs();
  cluster_->kill_agent(added, SIGKILL);
  ASSERT_TRUE(eventually([&] {
    const auto job = cluster_->job(id);
    return job.state == "RUNNING" && job.nodes == 1;
  })) << cluster_->logs();
  EXPECT_EQ(cluster_->job(id).nodelist, std::vector<std::string>{leader_});
  const auto states = node_states();
  EXPECT_EQ(states.at(added), "down");
  // No node is lost to the job's bookkeeping: the third one takes work.
  std::string other;
  for (const char* node : {"n1", "n2", "n3"}) {
    if (node != leader_ && node != added) other = node;
  }
  EXPECT_EQ(states.at(other), "idle");
  const auto rigid = cluster_->submit("#!/bin/sh\necho rigid\n", 1);
  ASSERT_TRUE(cluster_->wait_state(rigid, "COMPLETED")) << cluster_->logs();
  EXPECT_EQ(cluster_->job(rigid).nodelist, std::vector<std::string>{other});
  // The job itself never noticed.
  std::ofstream(stop_) << "stop\n";
  ASSERT_TRUE(cluster_->wait_state(id, "COMPLETED", std::chrono::seconds(40)))
      << output(id) << cluster_->logs();
  EXPECT_NE(output(id).find("done on 1\nstep status 0\n"), std::string::npos) << output(id);
}

TEST_F(Adaptation, AProcessThatNeverReachesItsWindowTimesOutAndIsRolledBack) {
  ClusterOptions options;
  options.adapt_timeout_s = 1.5;
  options.adapt_backoff_s = 60;
  start(options, {"n1", "n2"});
  const auto id = submit_malleable(2, 0);  // never probes
  grow_once_running(id);
  ASSERT_TRUE(eventually([&] { return pids_.read().size() == 2; })) << cluster_->logs();
  ASSERT_TRUE(eventually([&] {
    const auto job = cluster_->job(id);
    const auto states = node_states();
    return job.state == "RUNNING" && states.at("n1") != states.at("n2");
  })) << cluster_->logs();
  EXPECT_EQ(cluster_->job(id).nodes, 1);
  // The process the expansion started is gone; the first one runs on.
  const pid_t first = pids_.read().front();
  const pid_t second = pids_.read().back();
  EXPECT_TRUE(eventually([&] { return ::kill(second, 0) != 0; }));
  EXPECT_EQ(::kill(first, 0), 0);
  std::ofstream(stop_) << "stop\n";
  ASSERT_TRUE(cluster_->wait_state(id, "COMPLETED")) << output(id) << cluster_->logs();
  EXPECT_NE(output(id).find("done on 1\nstep status 0\n"), std::string::npos) << output(id);
}

TEST_F(Adaptation, ACancelDuringAnAdaptationEndsEveryProcessOfTheJob) {
  ClusterOptions options;
  options.adapt_timeout_s = 60;
  start(options, {"n1", "n2"});
  const auto id = submit_malleable(2, 0);
  grow_once_running(id);
  ASSERT_TRUE(eventually([&] {
    return cluster_->job(id).state == "ADAPTING" && pids_.read().size() == 2;
  })) << cluster_->logs();
  cluster_->client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{id});
  ASSERT_TRUE(cluster_->wait_state(id, "CANCELLED")) << cluster_->logs();
  EXPECT_TRUE(eventually([&] { return pids_.all_gone(); })) << cluster_->logs();
  EXPECT_TRUE(eventually([&] {
    const auto states = node_states();
    return states.at("n1") == "idle" && states.at("n2") == "idle";
  }));
}

// The daemon applies the engine's one time-limit rule (Engine::
// expire_time_limits): a job that is ADAPTING is never timed out while it
// adapts; the time it adapts is added to its limit when the adaptation
// ends, and the limit is enforced from then on. The engine's and the
// simulator's tests of the same rule are TimeLimitRule.* in tests/engine and
// tests/sim.
class TimeLimitRule : public Adaptation {
 protected:
  static double epoch_now() {
    using namespace std::chrono;
    return duration<double>(system_clock::now().time_since_epoch()).count();
  }
};

TEST_F(TimeLimitRule, AnAdaptingJobIsNotTimedOutWhileItAdaptsPastItsLimit) {
  ClusterOptions options;
  options.adapt_timeout_s = 8;   // the expansion is rolled back 8 s after it began
  options.adapt_backoff_s = 60;  // and not tried again
  start(options, {"n1", "n2"});
  mall_timeout_ms_ = "30000";  // the new process waits out the adaptation
  // A 5 s limit; the process never probes, so the expansion never reaches
  // its window and the job stays ADAPTING until the timeout rolls it back.
  constexpr double kWalltime = 5;
  const auto id = submit_malleable(2, 0, 1, kWalltime);
  grow_once_running(id);
  ASSERT_TRUE(eventually([&] { return cluster_->job(id).state == "ADAPTING"; }))
      << cluster_->logs();
  const auto adapting = cluster_->job(id);
  ASSERT_TRUE(adapting.start_time.has_value());
  const double limit = *adapting.start_time + kWalltime;
  ASSERT_LT(epoch_now(), limit) << "the adaptation must begin before the limit for this test";
  // Past its limit, and several ticks more, it still adapts.
  while (epoch_now() < limit + 1.5) {
    ASSERT_EQ(cluster_->job(id).state, "ADAPTING") << "timed out while adapting\n"
                                                   << cluster_->logs();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // Rolled back after 8 s, it runs on; its limit grew by those 8 s and is
  // enforced from then on.
  ASSERT_TRUE(
      eventually([&] { return cluster_->job(id).state != "ADAPTING"; }, std::chrono::seconds(20)))
      << cluster_->logs();
  ASSERT_TRUE(cluster_->wait_state(id, "TIMEOUT", std::chrono::seconds(20)))
      << output(id) << cluster_->logs();
  const auto ended = cluster_->job(id);
  EXPECT_EQ(ended.expansions, 0);
  ASSERT_TRUE(ended.end_time.has_value());
  EXPECT_GE(*ended.end_time, limit + options.adapt_timeout_s)
      << "stopped at its limit extended by the time it adapted, not before";
  EXPECT_TRUE(eventually([&] { return pids_.all_gone(); }));
}

}  // namespace
}  // namespace sched::testing
