// Measurements on a local cluster: an application reports its phases
// through the malleable library, the agents sum them per node, and schedd
// gives the job its MTCT (communication over computation time).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "cluster.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

TEST(Measurements, ReportedPhasesBecomeTheJobsMtct) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  proto::SubmitRequest request;
  request.job.name = "amr";
  request.job.nodes = 2;
  request.job.workdir = cluster.work_dir();
  request.job.env["SCHED"] = SCHED_CLI_BIN;
  request.job.env["AMR"] = SCHED_AMR_BIN;
  // 60 iterations of 40 ms: the communication share goes 10%, 40%, 20%.
  request.job.script = "#!/bin/sh\n$SCHED run $AMR 60 40 3\n";
  const auto id = cluster.client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
  ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();
  std::optional<double> mtct;
  ASSERT_TRUE(eventually([&] {
    mtct = cluster.job(id).mtct;
    return mtct.has_value();
  })) << "no MTCT while the job ran\n"
      << cluster.logs();
  // Every phase's ratio lies in [0.1/0.9, 0.4/0.6]; so does any sum of them
  // (sleeps only overshoot a little).
  EXPECT_GT(*mtct, 0.08);
  EXPECT_LT(*mtct, 0.8);
  ASSERT_TRUE(cluster.wait_state(id, "COMPLETED")) << cluster.logs();
  std::ifstream out(cluster.job(id).output);
  std::stringstream text;
  text << out.rdbuf();
  EXPECT_EQ(text.str(), "amr_phases: 60 iterations in 3 phases done\n");
}

// No RAPL counters in a container: the agents fall back to the model meter
// (idle 71 W, a busy node the job's per-node estimate) and report it.
TEST(Measurements, AgentsReportTheirNodesPowerFromTheMeter) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  proto::SubmitRequest request;
  request.job.name = "heat";
  request.job.power_min_w = 200;
  request.job.power_max_w = 300;
  request.job.workdir = cluster.work_dir();
  request.job.script = "#!/bin/sh\nsleep 30\n";
  const auto id = cluster.client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
  ASSERT_TRUE(cluster.wait_state(id, "RUNNING")) << cluster.logs();
  const std::string busy = cluster.job(id).nodelist.front();
  std::map<std::string, double> watts;
  ASSERT_TRUE(eventually([&] {
    const auto nodes =
        cluster.client().call<proto::NodeList>(proto::type::kNodesQuery, proto::Empty{});
    for (const auto& node : nodes.nodes) {
      if (node.power_w) watts[node.name] = *node.power_w;
    }
    return watts.size() == 2 && watts[busy] > 100 && cluster.job(id).power_w.has_value();
  })) << cluster.logs();
  EXPECT_DOUBLE_EQ(watts[busy], 250) << "the midpoint of the job's estimates";
  EXPECT_DOUBLE_EQ(watts[busy == "n1" ? "n2" : "n1"], 71) << "idle";
  EXPECT_DOUBLE_EQ(*cluster.job(id).power_w, 250);
  const auto corridor =
      cluster.client().call<proto::Corridor>(proto::type::kCorridorShow, proto::Empty{});
  EXPECT_DOUBLE_EQ(*corridor.current_w, 250 + 71);
  cluster.client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{id});
}

}  // namespace
}  // namespace sched::testing
