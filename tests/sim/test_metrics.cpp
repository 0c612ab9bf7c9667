#include <gtest/gtest.h>

#include <vector>

#include "sched/sim/metrics.hpp"

namespace sched::sim {
namespace {

JobRecord record(JobId id, double submit, double start, double end, int nodes,
                 JobState state = JobState::Completed) {
  JobRecord job;
  job.id = id;
  job.submit = submit;
  job.start = start;
  job.end = end;
  job.nodes = nodes;
  job.state = state;
  job.node_seconds = start >= 0 && end >= 0 ? nodes * (end - start) : 0;
  return job;
}

// Four jobs on a 4-node cluster:
//   id submit start end nodes | wait response runtime bsld              node-s
//   1     0     0   100   2   |   0    100      100    max(1,100/100)=1   200
//   2    10    20    25   1   |  10     15        5    15/max(5,10)=1.5     5
//   3    20   100   200   4   |  80    180      100    180/100=1.8        400
//   4    50   100   150   2   |  50    100       50    100/50=2           100
// avg wait = 140/4 = 35; avg response = 395/4 = 98.75;
// avg bsld = (1 + 1.5 + 1.8 + 2)/4 = 6.3/4 = 1.575;
// makespan = 200 − 0 = 200; utilization = 705 / (200 × 4) = 0.88125.
TEST(Metrics, HandComputedExample) {
  const std::vector<JobRecord> jobs = {record(1, 0, 0, 100, 2), record(2, 10, 20, 25, 1),
                                       record(3, 20, 100, 200, 4), record(4, 50, 100, 150, 2)};
  const auto metrics = compute_metrics(jobs, 4, 3);
  EXPECT_EQ(metrics.jobs, 4);
  EXPECT_EQ(metrics.skipped, 3);
  EXPECT_EQ(metrics.nodes, 4);
  EXPECT_DOUBLE_EQ(metrics.makespan, 200);
  EXPECT_DOUBLE_EQ(metrics.avg_wait, 35);
  EXPECT_DOUBLE_EQ(metrics.avg_response, 98.75);
  EXPECT_DOUBLE_EQ(metrics.avg_bsld, 1.575);
  EXPECT_DOUBLE_EQ(metrics.utilization, 0.88125);
}

TEST(Metrics, BoundedSlowdownFloorsRuntimeAtTenSeconds) {
  // Waited 30 s, ran 2 s: response 32, bsld = 32 / max(2, 10) = 3.2 (not 16).
  EXPECT_DOUBLE_EQ(compute_metrics({record(1, 0, 30, 32, 1)}, 1, 0).avg_bsld, 3.2);
  // Waited 2 s, ran 1 s: 3 / 10 = 0.3, raised to the minimum of 1.
  EXPECT_DOUBLE_EQ(compute_metrics({record(1, 0, 2, 3, 1)}, 1, 0).avg_bsld, 1);
  // A zero-length job does not divide by zero.
  EXPECT_DOUBLE_EQ(compute_metrics({record(1, 0, 40, 40, 1)}, 1, 0).avg_bsld, 4);
}

// Job 1 finishes (wait 0, response 100); job 2 started but never ended and
// held 2 nodes for 50 s; job 3 never started. Averages cover job 1 only.
// makespan = 110 − 0 (job 3's submit is the first) = 110; utilization counts
// job 2's node time too: (100 + 100) / (110 × 2).
TEST(Metrics, UnfinishedJobsAreNotAveraged) {
  auto running = record(2, 10, 50, -1, 2, JobState::Running);
  running.node_seconds = 100;
  const std::vector<JobRecord> jobs = {record(1, 10, 10, 110, 1), running,
                                       record(3, 0, -1, -1, 4, JobState::Pending)};
  const auto metrics = compute_metrics(jobs, 2, 0);
  EXPECT_EQ(metrics.jobs, 1);
  EXPECT_DOUBLE_EQ(metrics.avg_wait, 0);
  EXPECT_DOUBLE_EQ(metrics.avg_response, 100);
  EXPECT_DOUBLE_EQ(metrics.avg_bsld, 1);
  EXPECT_DOUBLE_EQ(metrics.makespan, 110);
  EXPECT_DOUBLE_EQ(metrics.utilization, 200.0 / 220.0);
}

TEST(Metrics, EmptyRunIsAllZero) {
  const auto metrics = compute_metrics({}, 8, 2);
  EXPECT_EQ(metrics.jobs, 0);
  EXPECT_EQ(metrics.skipped, 2);
  EXPECT_EQ(metrics.nodes, 8);
  EXPECT_EQ(metrics.makespan, 0);
  EXPECT_EQ(metrics.avg_wait, 0);
  EXPECT_EQ(metrics.avg_bsld, 0);
  EXPECT_EQ(metrics.utilization, 0);
}

TEST(Metrics, ZeroMakespanGivesZeroUtilization) {
  const auto metrics = compute_metrics({record(1, 0, 0, 0, 1)}, 4, 0);
  EXPECT_EQ(metrics.jobs, 1);
  EXPECT_EQ(metrics.makespan, 0);
  EXPECT_EQ(metrics.utilization, 0);
}

}  // namespace
}  // namespace sched::sim
