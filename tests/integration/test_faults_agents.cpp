// Agent-side faults on a local cluster of real daemons (issue 13): exit
// reports survive a schedd restart, a lost node is fenced (what its dead agent
// left is killed before the node runs anything else; a requeued job never
// runs twice at once), an agent cut off from schedd stops its jobs, a
// restart holds no node for a fixed time, and a node whose agent registers
// unclean takes no work, even on its first registration.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "cluster.hpp"

namespace sched::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

TEST(FaultsAgents, ExitsWhileScheddIsDownAreRecordedWithTheirTrueStatus) {
  ClusterOptions options;
  options.down_after_s = 6;  // the outage is shorter: nothing counts as lost
  LocalCluster cluster(options);
  const int count = 4;
  for (int i = 1; i <= count; ++i) cluster.start_agent("n" + std::to_string(i));
  ASSERT_TRUE(cluster.wait_nodes_up(count)) << cluster.logs();
  const std::string go = cluster.work_dir() + "/go";
  // Each job waits for the go (given while schedd is away), then exits with
  // its own status.
  std::map<std::int64_t, int> status;
  for (int i = 0; i < count; ++i) {
    const int code = i == 2 ? 3 : 0;
    const auto id = cluster.submit("#!/bin/sh\nwhile [ ! -e " + go +
                                   " ]; do sleep 0.05; done\nexit " + std::to_string(code) + "\n");
    status[id] = code;
  }
  for (const auto& [id, code] : status) {
    ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();
  }
  cluster.kill_schedd(SIGKILL);
  std::ofstream(go) << "go\n";
  std::this_thread::sleep_for(seconds(2));  // every job ends; its report waits
  cluster.start_schedd();
  for (const auto& [id, code] : status) {
    const std::string want = code == 0 ? "COMPLETED" : "FAILED";
    ASSERT_TRUE(cluster.wait_state(id, want)) << id << "\n" << cluster.logs();
    EXPECT_EQ(cluster.job(id).exit_status, code) << id;
  }
}

TEST(FaultsAgents, AfterARestartARegisteredNodeIsUsableAtOnce) {
  ClusterOptions options;
  options.down_after_s = 8;  // a fixed wait of the old kind would show
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const Orphans orphans{cluster.work_dir() + "/orphans"};
  const auto lost = cluster.submit("#!/bin/sh\necho $$ >> " + orphans.file + "\nsleep 300\n");
  ASSERT_TRUE(cluster.wait_state(lost, "RUNNING")) << cluster.logs();
  // Both go; the new agent kills what the old one left and so runs nothing.
  cluster.kill_schedd(SIGKILL);
  cluster.kill_agent("n1", SIGKILL);
  cluster.start_agent("n1");
  const auto restarted = steady_clock::now();
  cluster.start_schedd();
  const auto next = cluster.submit("#!/bin/sh\ntrue\n");
  ASSERT_TRUE(cluster.wait_state(next, "COMPLETED")) << cluster.logs();
  EXPECT_LT(steady_clock::now() - restarted, seconds(4)) << cluster.logs();
  EXPECT_EQ(cluster.job(lost).state, "FAILED");
}

TEST(FaultsAgents, AKilledAgentsJobIsGoneBeforeItsNodeRunsAnythingElse) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const Orphans orphans{cluster.work_dir() + "/orphans"};
  const auto first = cluster.submit("#!/bin/sh\necho $$ >> " + orphans.file + "\nsleep 300\n");
  ASSERT_TRUE(cluster.wait_state(first, "RUNNING")) << cluster.logs();
  const pid_t old = read_pid(orphans.file);
  cluster.kill_agent("n1", SIGKILL);
  ASSERT_TRUE(cluster.wait_state(first, "FAILED")) << cluster.logs();
  ASSERT_TRUE(pid_alive(old)) << "a SIGKILLed agent's job runs on";
  // The next job looks for its predecessor's process as it starts.
  const std::string seen = cluster.work_dir() + "/seen";
  const auto next = cluster.submit("#!/bin/sh\nif [ -e /proc/" + std::to_string(old) +
                                   " ] && [ \"$(cut -d')' -f2 /proc/" + std::to_string(old) +
                                   "/stat | cut -c2)\" != Z ]; then echo alive > " + seen +
                                   "; else echo gone > " + seen + "; fi\n");
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_state(next, "COMPLETED")) << cluster.logs();
  EXPECT_EQ(read_file(seen), "gone\n");
  EXPECT_FALSE(pid_alive(old));
}

// Beats: "<pid> <ns>" lines a job's script appends while it runs.
std::map<pid_t, std::pair<long long, long long>> beat_spans(const std::string& path) {
  std::map<pid_t, std::pair<long long, long long>> spans;
  std::ifstream in(path);
  pid_t pid = 0;
  long long ns = 0;
  while (in >> pid >> ns) {
    auto [it, fresh] = spans.try_emplace(pid, ns, ns);
    it->second.first = std::min(it->second.first, ns);
    it->second.second = std::max(it->second.second, ns);
  }
  return spans;
}

TEST(FaultsAgents, WithRequeueAJobWhoseAgentWasKilledNeverRunsTwiceAtOnce) {
  ClusterOptions options;
  options.on_failure = "requeue";
  options.fence_timeout_s = 30;  // the agent is back well before
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  const Orphans orphans{cluster.work_dir() + "/orphans"};
  const std::string beats = cluster.work_dir() + "/beats";
  const auto id = cluster.submit("#!/bin/sh\necho $$ >> " + orphans.file +
                                 "\nwhile :; do echo \"$$ $(date +%s%N)\" >> " + beats +
                                 "; sleep 0.05; done\n");
  ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();
  const std::string first = cluster.job(id).nodelist.front();
  cluster.kill_agent(first, SIGKILL);
  // Lost after 1.5 s; not requeued while its old run may go on.
  std::this_thread::sleep_for(seconds(3));
  EXPECT_EQ(cluster.job(id).requeues, 0) << cluster.logs();
  EXPECT_EQ(beat_spans(beats).size(), 1u);
  cluster.start_agent(first);
  ASSERT_TRUE(eventually([&] {
    const auto job = cluster.job(id);
    return job.state == "RUNNING" && job.requeues == 1;
  })) << cluster.logs();
  ASSERT_TRUE(eventually([&] { return beat_spans(beats).size() == 2; })) << cluster.logs();
  std::this_thread::sleep_for(milliseconds(500));
  const auto spans = beat_spans(beats);
  ASSERT_EQ(spans.size(), 2u);
  const pid_t old = read_pid(orphans.file);
  const auto& before = spans.at(old);
  for (const auto& [pid, span] : spans) {
    if (pid == old) continue;
    EXPECT_LT(before.second, span.first) << "the two runs overlap";
  }
}

TEST(FaultsAgents, AnAgentCutOffLongerThanTheDownTimeoutKillsItsJobs) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const Orphans orphans{cluster.work_dir() + "/orphans"};
  const auto id = cluster.submit("#!/bin/sh\necho $$ >> " + orphans.file + "\nsleep 300\n");
  ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();
  const pid_t pid = read_pid(orphans.file);
  // schedd hears nothing and says nothing: to the agent, a partition.
  cluster.signal_schedd(SIGSTOP);
  const bool gone = eventually([&] { return !pid_alive(pid); }, seconds(6));
  cluster.signal_schedd(SIGCONT);
  EXPECT_TRUE(gone) << "the job outlived the down timeout";
  ASSERT_TRUE(cluster.wait_state(id, "FAILED")) << cluster.logs();
  EXPECT_EQ(cluster.job(id).exit_status, -SIGKILL);
}

TEST(FaultsAgents, ANewNodeWhoseAgentRegistersUncleanStaysDown) {
  LocalCluster cluster;
  // The first registration schedd sees from n1 (a node it has never known):
  // its agent could not kill all that an earlier agent left.
  // It speaks by hand with n1's CURVE key, as n1's agent would.
  zmq::context_t context(1);
  zmq::socket_t agent(context, zmq::socket_type::dealer);
  agent.set(zmq::sockopt::linger, 0);
  proto::curve::make_client(agent, cluster.agent_key("n1"), cluster.schedd_key().public_key);
  agent.connect(cluster.agent_endpoint());
  proto::AgentRegister reg;
  reg.node = "n1";
  reg.cores = 1;
  reg.clean = false;
  const std::string request = proto::encode_request(proto::type::kAgentRegister, 1, reg);
  ASSERT_TRUE(agent.send(zmq::buffer(request), zmq::send_flags::dontwait));
  bool registered = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!registered && std::chrono::steady_clock::now() < deadline) {
    zmq::pollitem_t item{agent.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    zmq::message_t reply;
    if (!agent.recv(reply, zmq::recv_flags::dontwait)) continue;
    const auto envelope = proto::decode(reply.data(), reply.size());
    if (!envelope.is_reply() || envelope.seq != 1) continue;
    ASSERT_FALSE(envelope.error) << envelope.error->message << cluster.logs();
    registered = true;
  }
  ASSERT_TRUE(registered) << "no reply to agent.register\n" << cluster.logs();
  const auto nodes =
      cluster.client().call<proto::NodeList>(proto::type::kNodesQuery, proto::Empty{});
  ASSERT_EQ(nodes.nodes.size(), 1u);
  EXPECT_EQ(nodes.nodes[0].state, "down");
  EXPECT_EQ(nodes.nodes[0].reason, "not clean: processes of an earlier agent are left");
  // It takes no work.
  const auto id = cluster.submit("#!/bin/sh\ntrue\n");
  std::this_thread::sleep_for(milliseconds(600));  // a few ticks and passes
  EXPECT_EQ(cluster.job(id).state, "PENDING");
}

}  // namespace
}  // namespace sched::testing
