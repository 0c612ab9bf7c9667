// Suspend and resume in virtual time (issue 17 item 3): a suspended job
// makes no progress and its time limit waits; resumed, it runs the rest of
// its work. Through the bundled easy_backfill (lib/urgent.lua).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "sched/lua_policy.hpp"
#include "sched/sim/native_reader.hpp"
#include "sched/sim/simulator.hpp"
#include "test_paths.hpp"

namespace sched {
namespace {

// Job 1: rigid, 4 nodes, 100 s of work; job 2: urgent, 2 nodes, 30 s,
// arriving at t=40. Job 1 is suspended at 40 (60 s of work left) and
// resumed at 70, when job 2 ends: it ends at 130.
sim::Workload urgent_workload(double walltime) {
  return sim::parse_native(R"(
[cluster]
nodes = 4
[[job]]
id = 1
submit = 0
runtime = 100
nodes = 4
walltime = )" + std::to_string(walltime) +
                               R"(
[[job]]
id = 2
submit = 40
runtime = 30
nodes = 2
walltime = 30
urgent = true
)",
                           "urgent.toml");
}

sim::SimResult run(const sim::Workload& workload) {
  sim::SimConfig config;
  config.tick_s = 0;
  sim::Simulator simulator(workload, config);
  LuaPolicyOptions options;
  simulator.set_policy(std::shared_ptr<LuaPolicy>(
      LuaPolicy::load(std::string(SCHED_SOURCE_POLICY_DIR) + "/easy_backfill.lua", options)));
  return simulator.run();
}

TEST(SimSuspend, ASuspendedJobResumesAndCompletesWithItsRemainingTime) {
  const sim::SimResult result = run(urgent_workload(200));
  ASSERT_EQ(result.jobs.size(), 2u);
  EXPECT_EQ(result.jobs[1].start, 40) << "the urgent job starts at once";
  EXPECT_EQ(result.jobs[1].end, 70);
  EXPECT_EQ(result.jobs[0].start, 0);
  EXPECT_DOUBLE_EQ(result.jobs[0].end, 130) << "40 s before, 60 s after the suspension";
  EXPECT_EQ(result.jobs[0].state, JobState::Completed);
  // 4 nodes × 100 s of running: none charged while suspended.
  EXPECT_DOUBLE_EQ(result.jobs[0].node_seconds, 400);
}

TEST(SimSuspend, TheTimeLimitWaitsWhileSuspended) {
  // A limit of 110 s: it would strike at 110 if it ran on; paused for 30 s,
  // it falls at 140, after the work's end at 130.
  const sim::SimResult result = run(urgent_workload(110));
  ASSERT_EQ(result.jobs.size(), 2u);
  EXPECT_EQ(result.jobs[0].state, JobState::Completed);
  EXPECT_DOUBLE_EQ(result.jobs[0].end, 130);
}

TEST(SimSuspend, ALimitShorterThanTheWorkStillStrikes) {
  // 90 s of limit for 100 s of work: paused 30 s, it falls at 120.
  const sim::SimResult result = run(urgent_workload(90));
  ASSERT_EQ(result.jobs.size(), 2u);
  EXPECT_EQ(result.jobs[0].state, JobState::Timeout);
  EXPECT_DOUBLE_EQ(result.jobs[0].end, 120);
}

}  // namespace
}  // namespace sched
