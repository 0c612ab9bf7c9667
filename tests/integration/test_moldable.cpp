// Issue 17 item 2 on a real local cluster: a moldable job (`-N 2-4`) starts
// at once on the nodes that are idle instead of waiting for its largest size.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cluster.hpp"

namespace sched::testing {
namespace {

std::string describe(const CliRun& run) {
  return "exit " + std::to_string(run.status) + "\nstdout:\n" + run.out + "stderr:\n" + run.err;
}

TEST(Moldable, AJobOfTwoToFourNodesStartsOnTheTwoIdleNodesUnderEasyBackfill) {
  ClusterOptions options;
  options.policy = "easy_backfill";
  LocalCluster cluster(options);
  for (const char* node : {"n1", "n2", "n3"}) cluster.start_agent(node);
  ASSERT_TRUE(cluster.wait_nodes_up(3)) << cluster.logs();
  std::filesystem::create_directories(cluster.work_dir());

  const std::int64_t busy = cluster.submit("#!/bin/sh\nsleep 30\n", 1, 60, "busy");
  ASSERT_TRUE(cluster.wait_state(busy, "RUNNING")) << cluster.logs();

  const CliRun submitted = run_sched(cluster, {"submit", "--parsable", "-D", cluster.work_dir(),
                                               "-N", "2-4", "-t", "1", "--wrap", "sleep 1"});
  ASSERT_EQ(submitted.status, 0) << describe(submitted);
  const std::int64_t moldable = std::stoll(submitted.out);
  ASSERT_TRUE(cluster.wait_state(moldable, "RUNNING")) << cluster.logs();
  const proto::JobInfo info = cluster.job(moldable);
  EXPECT_EQ(info.nodes, 2) << "the two idle nodes, not a wait for four";
  EXPECT_EQ(info.min_nodes, 2);
  EXPECT_EQ(info.max_nodes, 4);
  EXPECT_TRUE(cluster.wait_state(moldable, "COMPLETED")) << cluster.logs();

  const CliRun cancelled = run_sched(cluster, {"cancel", std::to_string(busy)});
  EXPECT_EQ(cancelled.status, 0) << describe(cancelled);
}

}  // namespace
}  // namespace sched::testing
