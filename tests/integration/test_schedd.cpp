// schedd on its own (no agents yet): it answers, it refuses bad input with
// error replies and keeps answering, and its journal survives a restart.
#include <gtest/gtest.h>

#include <csignal>

#include "cluster.hpp"

namespace sched::testing {
namespace {

TEST(Schedd, AnswersQueriesWithNoNodes) {
  LocalCluster cluster;
  const auto stats = cluster.client().call<proto::StatsReply>(proto::type::kStats, proto::Empty{});
  EXPECT_EQ(stats.nodes, 0u);
  EXPECT_EQ(stats.pending, 0u);
  const auto policy =
      cluster.client().call<proto::PolicyInfoReply>(proto::type::kPolicyInfo, proto::Empty{});
  EXPECT_EQ(policy.name, "fcfs");
  EXPECT_EQ(error_of([&] { cluster.submit("#!/bin/sh\ntrue\n"); }),
            "invalid: job needs 1 nodes; the cluster has 0");
}

TEST(Schedd, MalformedMessagesGetErrorRepliesAndChangeNothing) {
  LocalCluster cluster;
  auto& client = cluster.client();
  const auto garbage = client.raw("\xc1 not msgpack at all");
  ASSERT_TRUE(garbage.error);
  EXPECT_EQ(garbage.error->code, "bad_message");

  EXPECT_EQ(error_of([&] { client.call<proto::Empty>("launch.missiles", proto::Empty{}); }),
            "unknown_type: unknown message type 'launch.missiles'");
  EXPECT_EQ(error_of([&] { client.call<proto::Empty>(proto::type::kCancel, proto::Empty{}); }),
            "bad_field: body.id: missing");
  EXPECT_EQ(error_of([&] { client.call<proto::Empty>(proto::type::kCancel, proto::JobRef{99}); }),
            "not_found: no job 99");

  // Over the 4 MiB protocol limit: an error reply, not a dropped peer.
  proto::SubmitRequest huge;
  huge.job.script.assign(5 << 20, 'x');
  const auto too_large = client.raw(proto::encode_request(proto::type::kSubmit, 1, huge));
  ASSERT_TRUE(too_large.error);
  EXPECT_EQ(too_large.error->code, "too_large");

  const auto stats = client.call<proto::StatsReply>(proto::type::kStats, proto::Empty{});
  EXPECT_EQ(stats.jobs_submitted, 0u);
  EXPECT_GE(stats.bad_messages, 4u);
}

TEST(Schedd, TheCorridorIsSetShownAndKeptAcrossARestart) {
  LocalCluster cluster;
  proto::Corridor corridor;
  corridor.lower_w = 1000;
  corridor.upper_w = 1700;
  cluster.client().call<proto::Empty>(proto::type::kCorridorSet, corridor);
  corridor.lower_w = 2000;
  corridor.upper_w = 100;
  EXPECT_EQ(error_of([&] {
              cluster.client().call<proto::Empty>(proto::type::kCorridorSet, corridor);
            }).substr(0, 7),
            "invalid");
  cluster.kill_schedd(SIGKILL);
  cluster.start_schedd();
  const auto shown =
      cluster.client().call<proto::Corridor>(proto::type::kCorridorShow, proto::Empty{});
  EXPECT_DOUBLE_EQ(shown.lower_w, 1000);
  EXPECT_DOUBLE_EQ(shown.upper_w, 1700);
}

}  // namespace
}  // namespace sched::testing
