// Lower bounds on makespan (sim/bounds.hpp) and the paper's count of corridor
// violations (sim/power.hpp, corridor_failures), on workloads and power
// series small enough to work out by hand.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "sched/sim/bounds.hpp"
#include "sched/sim/power.hpp"

namespace sched::sim {
namespace {

WorkloadJob malleable(double runtime, int nodes, int lo, int hi, double watts,
                      double serial_fraction) {
  WorkloadJob job;
  job.runtime = runtime;
  job.spec.kind = JobKind::Malleable;
  job.spec.nodes = nodes;
  job.spec.min_nodes = lo;
  job.spec.max_nodes = hi;
  job.spec.power_min_w = job.spec.power_max_w = watts;
  job.model.speedup.serial_fraction = serial_fraction;
  return job;
}

TimedEvent corridor(double time, double lower, double upper) {
  TimedEvent event;
  event.time = time;
  event.lower_w = lower;
  event.upper_w = upper;
  return event;
}

TEST(Bounds, AJobRunsItsRuntimeAtItsRequestAndLongerOnFewerNodes) {
  const WorkloadJob job = malleable(240, 4, 1, 14, 250, 0.02);
  EXPECT_DOUBLE_EQ(job_seconds_on(job, 4), 240);
  const double s4 = job.model.speedup.speedup(4);  // 1 / (0.02 + 0.98 / 4)
  EXPECT_NEAR(job_seconds_on(job, 1), 240 * s4, 1e-9);
  // Amdahl: node-seconds grow with the size, so the cheapest is 1 node.
  EXPECT_NEAR(least_node_seconds(job), 240 * s4, 1e-9);
  EXPECT_LT(least_node_seconds(job), 4 * 240.0);
}

TEST(Bounds, PhasesAreRunEachAtTheirOwnFactor) {
  WorkloadJob job = malleable(100, 2, 1, 2, 0, 0.5);
  job.model.phases = {0.5, 1.5};
  const double expected = 50 / job.model.rate(1, 2, 0.5) + 50 / job.model.rate(1, 2, 1.5);
  EXPECT_NEAR(job_seconds_on(job, 1), expected, 1e-9);
  EXPECT_GT(job_seconds_on(job, 1), 100);
}

// Two nodes, idle 10 W; a job of 100 node-seconds (perfect speedup) at
// 110 W per node. Under [0, 120] the budget over the idle cluster (20 W) is
// 100 W: one busy node; from 50 s the corridor [0, 1000] lets both work.
// 50 node-seconds by 50 s, the other 50 on 2 nodes by 75 s.
TEST(Bounds, TheCorridorLimitsHowManyNodesMayWork) {
  Workload workload;
  workload.nodes = 2;
  workload.jobs.push_back(malleable(100, 1, 1, 2, 110, 0));
  workload.events = {corridor(0, 0, 120), corridor(50, 0, 1000)};
  EXPECT_NEAR(corridor_makespan_bound(workload, 10), 75, 1e-6);
  // Without a corridor: the job on both nodes, 50 s.
  workload.events.clear();
  EXPECT_NEAR(corridor_makespan_bound(workload, 10), 50, 1e-6);
}

// The cheaper job class goes where power is short: a Pi-like job (60 W over
// idle) and a heat-like one (100 W over idle), 100 node-seconds each, on 2
// nodes at idle 0 W. Budget 100 W until 100 s: 100 s · 100 W = 10,000 W·s
// buys 100 Pi node-seconds (6,000 W·s) and 40 heat node-seconds (4,000):
// 140 by 100 s, 60 left on 2 nodes under [0, 1000]: 130 s.
TEST(Bounds, TheProgramPutsTheCheaperWorkUnderTheTighterCorridor) {
  Workload workload;
  workload.nodes = 2;
  workload.jobs.push_back(malleable(100, 1, 1, 2, 60, 0));
  workload.jobs.push_back(malleable(100, 1, 1, 2, 100, 0));
  workload.events = {corridor(0, 0, 100), corridor(100, 0, 1000)};
  EXPECT_NEAR(corridor_makespan_bound(workload, 0), 130, 1e-6);
}

TEST(Bounds, ALateJobBoundsTheMakespanByItsShortestRun) {
  Workload workload;
  workload.nodes = 4;
  WorkloadJob late = malleable(100, 1, 1, 4, 0, 0);
  late.submit = 1000;
  workload.jobs.push_back(late);
  EXPECT_NEAR(corridor_makespan_bound(workload, 10), 1025, 1e-6);
}

TEST(Bounds, NoPowerForTheJobsAfterTheLastChangeIsAnError) {
  Workload workload;
  workload.nodes = 2;
  workload.jobs.push_back(malleable(100, 1, 1, 2, 110, 0));
  workload.events = {corridor(0, 0, 20)};  // the idle cluster draws all of it
  EXPECT_THROW(corridor_makespan_bound(workload, 10), std::invalid_argument);
}

// Inside until 30, outside from 30 to 200, inside after. Checks every 60 s:
// at 60 the corridor has been broken 30 s (within 60 s allowed), at 120 and
// 180 for longer: 2 failures; one interval.
TEST(CorridorFailures, EveryCheckAfterTheAllowedTimeOutsideIsAFailure) {
  const std::vector<PowerSample> samples = {
      {0, 100, 50, 150}, {30, 200, 50, 150}, {90, 180, 50, 150}, {200, 100, 50, 150}};
  EXPECT_EQ(corridor_failures(samples, 400, 60, 60), 2);
  EXPECT_EQ(corridor_failures(samples, 400, 60, 0), 3) << "checks at 60, 120, 180";
  EXPECT_EQ(corridor_failures(samples, 400, 60, 200), 0);
  EXPECT_EQ(compute_power_metrics(samples, 400, 60).violations, 1);
  // Checks stop at the end.
  EXPECT_EQ(corridor_failures(samples, 150, 60, 60), 1);
}

TEST(CorridorFailures, ReturningInsideBetweenChecksRestartsTheClock) {
  // Outside 10-50 and 70-130: at 60 inside; at 120 outside for 50 s only.
  const std::vector<PowerSample> samples = {{0, 100, 50, 150},
                                            {10, 200, 50, 150},
                                            {50, 100, 50, 150},
                                            {70, 20, 50, 150},
                                            {130, 100, 50, 150}};
  EXPECT_EQ(corridor_failures(samples, 300, 60, 60), 0);
  EXPECT_EQ(corridor_failures(samples, 300, 60, 50), 1);
}

TEST(CorridorFailures, NoCorridorNoFailureAndBadArgumentsThrow) {
  EXPECT_EQ(corridor_failures({{0, 5000, 0, 0}}, 600, 60, 0), 0);
  EXPECT_THROW(corridor_failures({}, 100, 0, 60), std::invalid_argument);
  EXPECT_THROW(corridor_failures({}, 100, 60, -1), std::invalid_argument);
}

}  // namespace
}  // namespace sched::sim
