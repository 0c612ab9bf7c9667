// An invasive partition in virtual time (issue 20 item 2): a native workload
// whose [cluster] is of kind "cores" runs its jobs by cores through the same
// engine, several on a node, and a job that does not fit waits for cores.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "sched/lua_policy.hpp"
#include "sched/sim/native_reader.hpp"
#include "sched/sim/simulator.hpp"
#include "test_paths.hpp"

namespace sched {
namespace {

// One node of 4 cores in 2 sockets. Jobs 1 and 2 (2 cores each) share it
// from t=0; job 3 (2 cores) waits for job 1's cores (t=100); job 4 (4
// cores) waits for the whole node (t=150, when jobs 2 and 3 have ended).
sim::Workload cores_workload() {
  return sim::parse_native(R"(
[cluster]
nodes = 1
cores_per_node = 4
sockets_per_node = 2
kind = "cores"
[[job]]
id = 1
submit = 0
runtime = 100
cores = 2
[[job]]
id = 2
submit = 0
runtime = 150
cores = 2
[[job]]
id = 3
submit = 1
runtime = 50
cores = 2
[[job]]
id = 4
submit = 2
runtime = 10
cores = 4
)",
                           "cores.toml");
}

sim::SimResult run(const sim::Workload& workload) {
  sim::SimConfig config;
  config.tick_s = 0;
  sim::Simulator simulator(workload, config);
  LuaPolicyOptions options;
  simulator.set_policy(std::shared_ptr<LuaPolicy>(
      LuaPolicy::load(std::string(SCHED_SOURCE_POLICY_DIR) + "/fcfs.lua", options)));
  return simulator.run();
}

TEST(SimCores, JobsShareANodeByCoresAndWaitForCores) {
  const sim::Workload workload = cores_workload();
  EXPECT_TRUE(workload.cores_partition);
  EXPECT_EQ(workload.jobs[3].spec.layout->cores, 4);
  const sim::SimResult result = run(workload);
  ASSERT_EQ(result.jobs.size(), 4u);
  EXPECT_EQ(result.jobs[0].start, 0);
  EXPECT_EQ(result.jobs[1].start, 0) << "beside job 1 on the one node";
  EXPECT_EQ(result.jobs[2].start, 100) << "job 1's cores";
  EXPECT_EQ(result.jobs[2].end, 150);
  EXPECT_EQ(result.jobs[3].start, 150) << "the whole node, once 2 and 3 ended";
  EXPECT_EQ(result.jobs[3].end, 160);
  for (const auto& job : result.jobs) EXPECT_EQ(job.state, JobState::Completed);
}

TEST(SimCores, AWorkloadAskingMoreCoresThanTheClusterHasIsRefused) {
  sim::Workload workload = cores_workload();
  workload.jobs[3].spec.layout.edit().cores = 5;
  const sim::SimResult result = run(workload);
  // The engine refuses it at submit, as schedd does; the others run.
  EXPECT_EQ(result.rejected, 1);
  ASSERT_EQ(result.jobs.size(), 3u);
  for (const auto& job : result.jobs) EXPECT_EQ(job.state, JobState::Completed);
}

TEST(SimCores, AnUnknownClusterKindIsAnError) {
  EXPECT_THROW(sim::parse_native("[cluster]\nnodes = 1\nkind = \"sockets\"\n", "bad.toml"),
               sim::WorkloadError);
}

}  // namespace
}  // namespace sched
