// Jobs on a local cluster of real daemons: schedd and node agents as virtual
// nodes on loopback, running real batch scripts.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cluster.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

TEST(Jobs, AJobRunsToCompletionWithItsOutputAndExitCode) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto ok = cluster.submit(
      "#!/bin/sh\necho \"hello from $SCHED_JOB_ID on $SCHED_JOB_NODELIST ($SCHED_JOB_NUM_NODES)\"\n"
      "pwd\n");
  const auto bad = cluster.submit("#!/bin/sh\necho failing >&2\nexit 3\n");
  ASSERT_TRUE(cluster.wait_state(ok, "COMPLETED")) << cluster.logs();
  ASSERT_TRUE(cluster.wait_state(bad, "FAILED")) << cluster.logs();

  const auto info = cluster.job(ok);
  EXPECT_EQ(info.exit_status, 0);
  EXPECT_EQ(info.nodelist, std::vector<std::string>{"n1"});
  EXPECT_EQ(info.output, cluster.work_dir() + "/sched-" + std::to_string(ok) + ".out");
  EXPECT_EQ(read_file(info.output),
            "hello from " + std::to_string(ok) + " on n1 (1)\n" + cluster.work_dir() + "\n");
  EXPECT_EQ(cluster.job(bad).exit_status, 3);
  EXPECT_EQ(read_file(cluster.job(bad).output), "failing\n");
}

TEST(Jobs, CancelEndsPendingAndRunningJobsWithTheirWholeProcessTree) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string pids = cluster.work_dir() + "/pids";
  const auto running = cluster.submit("#!/bin/sh\nsleep 300 &\necho $! > " + pids + "\nwait\n");
  const auto pending = cluster.submit("#!/bin/sh\ntrue\n");
  ASSERT_TRUE(cluster.wait_state(running, "RUNNING")) << cluster.logs();
  const pid_t child = read_pid(pids);
  ASSERT_GT(child, 0);
  EXPECT_EQ(cluster.job(pending).state, "PENDING");
  EXPECT_EQ(cluster.job(pending).reason, "Resources");

  cluster.client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{pending});
  EXPECT_EQ(cluster.job(pending).state, "CANCELLED");
  cluster.client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{running});
  ASSERT_TRUE(cluster.wait_state(running, "CANCELLED")) << cluster.logs();
  EXPECT_TRUE(eventually([&] { return !pid_alive(child); })) << "the background sleep survived";
  // Cancelling again is a clear error, not a change.
  try {
    cluster.client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{running});
    FAIL() << "a second cancel succeeded";
  } catch (const proto::ProtoError& e) {
    EXPECT_EQ(e.code(), "conflict");
  }
}

TEST(Jobs, AJobOverItsTimeLimitIsKilled) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto id = cluster.submit("#!/bin/sh\nsleep 300\n", 1, /*walltime=*/1);
  ASSERT_TRUE(cluster.wait_state(id, "TIMEOUT")) << cluster.logs();
  const auto info = cluster.job(id);
  ASSERT_TRUE(info.start_time && info.end_time);
  EXPECT_LT(*info.end_time - *info.start_time, 5);
}

TEST(Jobs, AMultiNodeJobGetsItsNodes) {
  LocalCluster cluster;
  for (const char* node : {"n1", "n2", "n3"}) cluster.start_agent(node);
  ASSERT_TRUE(cluster.wait_nodes_up(3)) << cluster.logs();
  const auto id =
      cluster.submit("#!/bin/sh\necho \"$SCHED_JOB_NUM_NODES $SCHED_NODEID $SLURM_NNODES\"\n", 3);
  ASSERT_TRUE(cluster.wait_state(id, "COMPLETED")) << cluster.logs();
  const auto info = cluster.job(id);
  EXPECT_EQ(info.nodelist.size(), 3u);
  EXPECT_EQ(read_file(info.output), "3 0 3\n");
}

TEST(Jobs, AStepRunsOnEveryNodeOfTheJob) {
  LocalCluster cluster;
  for (const char* node : {"n1", "n2", "n3"}) cluster.start_agent(node);
  ASSERT_TRUE(cluster.wait_nodes_up(3)) << cluster.logs();
  proto::SubmitRequest request;
  request.job.name = "steps";
  request.job.nodes = 3;
  request.job.workdir = cluster.work_dir();
  request.job.env["SCHED"] = SCHED_CLI_BIN;
  // One task per node, then six over the three nodes; then a failing step.
  request.job.script = R"(#!/bin/sh
$SCHED run sh -c 'echo "task $SCHED_PROCID of $SCHED_NTASKS on node $SCHED_NODEID"' | sort
$SCHED run -n 6 sh -c 'echo $SCHED_PROCID' | sort -n | tr '\n' ' '; echo
$SCHED run -N 1 sh -c 'exit 7'; echo "status $?"
)";
  const auto id = cluster.client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
  ASSERT_TRUE(cluster.wait_state(id, "COMPLETED"))
      << cluster.logs() << read_file(cluster.job(id).output);
  EXPECT_EQ(read_file(cluster.job(id).output),
            "task 0 of 3 on node 0\ntask 1 of 3 on node 1\ntask 2 of 3 on node 2\n"
            "0 1 2 3 4 5 \n"
            "status 7\n");
}

// schedd forgets its steps when it dies; the agents tell the new one which
// steps run, and `sched run` attaches to its step again: the step's output
// and end still reach the job.
TEST(Jobs, AStepRunsOnThroughASchedRestart) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  proto::SubmitRequest request;
  request.job.name = "restart";
  request.job.nodes = 2;
  request.job.workdir = cluster.work_dir();
  request.job.env["SCHED"] = SCHED_CLI_BIN;
  const std::string began = cluster.work_dir() + "/began";
  request.job.script = "#!/bin/sh\n$SCHED run sh -c 'touch " + began +
                       "; sleep 4; echo task $SCHED_PROCID done' | sort\necho \"status $?\"\n";
  const auto id = cluster.client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(began); })) << cluster.logs();
  cluster.kill_schedd(SIGKILL);
  cluster.start_schedd();
  ASSERT_TRUE(cluster.wait_state(id, "COMPLETED", std::chrono::seconds(30)))
      << read_file(cluster.job(id).output) << cluster.logs();
  EXPECT_EQ(read_file(cluster.job(id).output), "task 0 done\ntask 1 done\nstatus 0\n");
}

TEST(Jobs, AKilledAgentsNodeGoesDownAndItsJobFailsWhileOthersRun) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  const Orphans orphans{cluster.work_dir() + "/orphans"};
  const auto doomed = cluster.submit("#!/bin/sh\necho $$ >> " + orphans.file + "\nsleep 300\n", 2);
  ASSERT_TRUE(cluster.wait_state(doomed, "RUNNING")) << cluster.logs();
  const std::string leader = cluster.job(doomed).nodelist.front();
  const std::string other = leader == "n1" ? "n2" : "n1";
  cluster.kill_agent(leader, SIGKILL);
  ASSERT_TRUE(cluster.wait_state(doomed, "FAILED")) << cluster.logs();
  const auto nodes =
      cluster.client().call<proto::NodeList>(proto::type::kNodesQuery, proto::Empty{});
  for (const auto& node : nodes.nodes) {
    EXPECT_EQ(node.state, node.name == leader ? "down" : "idle") << node.name;
  }
  // The cluster keeps scheduling on what is left.
  const auto next = cluster.submit("#!/bin/sh\necho still here\n");
  ASSERT_TRUE(cluster.wait_state(next, "COMPLETED")) << cluster.logs();
  EXPECT_EQ(cluster.job(next).nodelist, std::vector<std::string>{other});
}

TEST(Jobs, WithRequeueAJobOnALostNodeRunsAgainElsewhere) {
  ClusterOptions options;
  options.on_failure = "requeue";
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  const std::string runs = cluster.work_dir() + "/runs";
  const Orphans orphans{cluster.work_dir() + "/orphans"};
  const auto id = cluster.submit("#!/bin/sh\necho $$ >> " + orphans.file +
                                 "\necho $SCHED_JOB_NODELIST >> " + runs + "\nsleep 300\n");
  ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();
  const std::string first = cluster.job(id).nodelist.front();
  cluster.kill_agent(first, SIGKILL);
  ASSERT_TRUE(eventually([&] {
    const auto job = cluster.job(id);
    return job.state == "RUNNING" && job.requeues == 1 && job.nodelist.front() != first;
  })) << cluster.logs();
  EXPECT_TRUE(eventually([&] { return read_file(runs).size() > first.size() + 1; }));
  EXPECT_EQ(read_file(runs), first + "\n" + cluster.job(id).nodelist.front() + "\n");
}

TEST(Jobs, MalformedAgentMessagesAreRefusedAndChangeNothing) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  zmq::context_t context(1);
  zmq::socket_t rogue(context, zmq::socket_type::dealer);
  rogue.set(zmq::sockopt::linger, 0);
  // The agent socket is CURVE: the rogue has n1's own key (what it may not
  // do with it is test_security.cpp's).
  proto::curve::make_client(rogue, cluster.agent_key("n1"), cluster.schedd_key().public_key);
  rogue.connect(cluster.agent_endpoint());
  const auto answer = [&](const std::string& bytes) {
    rogue.send(zmq::buffer(bytes), zmq::send_flags::none);
    zmq::pollitem_t item{rogue.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::seconds(5));
    zmq::message_t reply;
    if (!rogue.recv(reply, zmq::recv_flags::dontwait)) return std::string("no reply");
    const auto envelope = proto::decode(reply.data(), reply.size());
    return envelope.error ? envelope.error->code : std::string("ok");
  };
  EXPECT_EQ(answer("garbage"), "bad_message");
  // A heartbeat for a node this connection did not register, and an exit
  // report for a job it does not run: refused, nothing ends.
  const auto id = cluster.submit("#!/bin/sh\nsleep 300\n");
  ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();
  proto::AgentHeartbeat beat;
  beat.node = "n1";
  EXPECT_EQ(answer(proto::encode_request(proto::type::kAgentHeartbeat, 1, beat)), "not_found");
  proto::TaskExited exited;
  exited.node = "n1";
  exited.job = id;
  exited.status = 0;
  EXPECT_EQ(answer(proto::encode_request(proto::type::kTaskExited, 2, exited)), "not_found");
  EXPECT_EQ(cluster.job(id).state, "RUNNING");
  const auto nodes =
      cluster.client().call<proto::NodeList>(proto::type::kNodesQuery, proto::Empty{});
  ASSERT_EQ(nodes.nodes.size(), 1u);
  EXPECT_EQ(nodes.nodes[0].state, "alloc");
}

TEST(Jobs, ScheddKilledAndRestartedLosesAndRepeatsNothing) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const std::string marks = cluster.work_dir() + "/marks";
  // One job runs across the restart; three wait behind it.
  const auto first = cluster.submit("#!/bin/sh\necho start >> " + marks + "\nsleep 2\n");
  std::vector<std::int64_t> queued;
  for (int i = 0; i < 3; ++i) {
    queued.push_back(
        cluster.submit("#!/bin/sh\necho " + std::to_string(i) + " >> " + marks + "\n"));
  }
  ASSERT_TRUE(cluster.wait_state(first, "RUNNING")) << cluster.logs();
  cluster.kill_schedd(SIGKILL);
  cluster.start_schedd();
  // Same queue, same order, before anything else happens.
  const auto after =
      cluster.client().call<proto::JobList>(proto::type::kJobsQuery, proto::JobsQuery{});
  ASSERT_EQ(after.jobs.size(), 4u) << cluster.logs();
  EXPECT_EQ(after.jobs[0].id, first);
  for (std::size_t i = 0; i < queued.size(); ++i) EXPECT_EQ(after.jobs[i + 1].id, queued[i]);

  for (auto id : queued) ASSERT_TRUE(cluster.wait_state(id, "COMPLETED")) << cluster.logs();
  EXPECT_EQ(cluster.job(first).state, "COMPLETED") << "re-adopted, not run again";
  EXPECT_EQ(read_file(marks), "start\n0\n1\n2\n");
  // Ids continue above every id ever used.
  const auto fresh = cluster.submit("#!/bin/sh\ntrue\n");
  EXPECT_GT(fresh, queued.back());
}

TEST(Jobs, ABrokenPolicyEditKeepsTheOldPolicyScheduling) {
  TempDir policies("sched-policy");
  const std::string path = policies.str() + "/mine.lua";
  std::filesystem::copy_file(std::string(SCHED_SOURCE_POLICY_DIR) + "/fcfs.lua", path);
  ClusterOptions options;
  options.policy = path;
  LocalCluster cluster(options);
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  const auto running = cluster.submit("#!/bin/sh\nsleep 1\n");
  ASSERT_TRUE(cluster.wait_state(running, "RUNNING")) << cluster.logs();

  std::ofstream(path, std::ios::app) << "\nthis is not lua (\n";
  ASSERT_TRUE(eventually([&] {
    return cluster.client()
               .call<proto::PolicyInfoReply>(proto::type::kPolicyInfo, proto::Empty{})
               .failed_reloads > 0;
  })) << cluster.logs();
  const auto after = cluster.submit("#!/bin/sh\ntrue\n");
  ASSERT_TRUE(cluster.wait_state(running, "COMPLETED")) << cluster.logs();
  ASSERT_TRUE(cluster.wait_state(after, "COMPLETED")) << "the old policy stopped scheduling";
  const auto info =
      cluster.client().call<proto::PolicyInfoReply>(proto::type::kPolicyInfo, proto::Empty{});
  EXPECT_EQ(info.name, "fcfs");
}

}  // namespace
}  // namespace sched::testing
