// The simulator's application model in whole runs (docs/app-model.md):
// progress on other sizes, adaptation cost, the time limit a shrink
// stretches, MTCT answers to performance requests, AMR phases and evolving
// jobs' own requests, and the time-limit rule for adapting jobs. Times are
// worked out by hand in each test.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sched/pass_context.hpp"
#include "sched/sim/native_reader.hpp"
#include "sched/sim/simulator.hpp"

namespace sched {
namespace {

class CppPolicy : public Policy {
 public:
  using Fn = std::function<void(PassContext &)>;
  explicit CppPolicy(Fn fn) : fn_(std::move(fn)) {}
  std::string name() const override { return "cpp"; }
  bool time_dependent() const override { return false; }
  std::optional<PolicyFailure> schedule(PassContext &ctx) override {
    fn_(ctx);
    return std::nullopt;
  }

 private:
  Fn fn_;
};

void start_all_that_fit(PassContext &ctx) {
  for (const Job *job : ctx.pending()) {
    if (job->spec.nodes <= ctx.nodes_idle()) (void)ctx.start(job->id);
  }
}

sim::SimResult run(const std::string &toml, CppPolicy::Fn fn) {
  const sim::Workload workload = sim::parse_native(toml, "test.toml");
  sim::SimConfig config;
  config.tick_s = 0;
  sim::Simulator simulator(workload, config);
  simulator.set_policy(std::make_shared<CppPolicy>(std::move(fn)));
  return simulator.run();
}

const sim::JobRecord &record(const sim::SimResult &result, JobId id) {
  for (const auto &r : result.jobs) {
    if (r.id == id) return r;
  }
  throw std::out_of_range("no record");
}

TEST(SimMalleable, AnExpandedJobPausesForTheAdaptationThenRunsFaster) {
  // Linear speedup. Job 1 runs alone on 1 node from 0; job 2's arrival at 10
  // gives a pass that grows job 1 to 2 nodes: 10 s of work done, 2 s of
  // adaptation, then the other 90 s of work at twice the rate: 12 + 45 = 57.
  const auto result =
      run(R"(
[cluster]
nodes = 4
[[job]]
id = 1
submit = 0
runtime = 100
walltime = 100
nodes = 1
min_nodes = 1
max_nodes = 2
serial_fraction = 0
adapt_start_s = 2
adapt_alpha_s = 0
adapt_beta_s = 0
[[job]]
id = 2
submit = 10
runtime = 5
)",
          [](PassContext &ctx) {
            start_all_that_fit(ctx);
            for (const Job *job : ctx.running()) {
              if (job->spec.kind == JobKind::Malleable && job->size() < 2 && ctx.nodes_idle() > 0) {
                (void)ctx.expand(job->id, 2);
              }
            }
          });
  EXPECT_DOUBLE_EQ(record(result, 1).end, 57);
  EXPECT_EQ(record(result, 1).state, JobState::Completed);
  EXPECT_EQ(record(result, 1).resizes, 1);
  ASSERT_EQ(result.resizes.size(), 1u);
  EXPECT_EQ(result.resizes[0].job, 1);
  EXPECT_DOUBLE_EQ(result.resizes[0].time, 12);
  EXPECT_EQ(result.resizes[0].from, 1);
  EXPECT_EQ(result.resizes[0].to, 2);
  EXPECT_DOUBLE_EQ(record(result, 2).end, 15);
  EXPECT_DOUBLE_EQ(result.end_time, 57) << "the superseded time limit at 102 ends nothing";
}

TEST(SimMalleable, AShrunkJobRunsLongerAndItsLimitStretchesWithIt) {
  // 2 nodes. Job 1 (2 nodes, limit 100) is shrunk to 1 at 10 to start job 2;
  // the shrink takes 1 s. 90 s of work left at half the rate: ends at 191.
  // Its limit: 100 + 1 s adapting + the 90 s left of it stretched by 2/1.
  const auto result = run(R"(
[cluster]
nodes = 2
[[job]]
id = 1
submit = 0
runtime = 100
walltime = 100
nodes = 2
min_nodes = 1
max_nodes = 2
serial_fraction = 0
adapt_stop_s = 1
adapt_alpha_s = 0
adapt_beta_s = 0
[[job]]
id = 2
submit = 10
runtime = 5
)",
                          [](PassContext &ctx) {
                            for (const Job *job : ctx.pending()) {
                              if (job->spec.nodes > ctx.nodes_idle()) {
                                for (const Job *r : ctx.running()) {
                                  if (r->spec.kind == JobKind::Malleable && r->size() > 1) {
                                    (void)ctx.shrink(r->id, 1);
                                  }
                                }
                              }
                              if (job->spec.nodes <= ctx.nodes_idle()) (void)ctx.start(job->id);
                            }
                          });
  EXPECT_DOUBLE_EQ(record(result, 1).end, 191);
  EXPECT_EQ(record(result, 1).state, JobState::Completed) << "not killed at its original limit";
  EXPECT_DOUBLE_EQ(record(result, 2).start, 11) << "starts once the shrink has freed the node";
  EXPECT_DOUBLE_EQ(record(result, 2).end, 16);
}

TEST(SimMalleable, AJobStartedBelowItsSizeHasItsLimitStretched) {
  // Job 1 asks for 4 nodes and 100 s (limit 100) and is started on 1: with
  // linear speedup it needs 400 s, and its limit is 100·4/1.
  const auto result = run(R"(
[cluster]
nodes = 4
[[job]]
id = 1
submit = 0
runtime = 100
walltime = 100
nodes = 4
min_nodes = 1
max_nodes = 4
serial_fraction = 0
)",
                          [](PassContext &ctx) {
                            for (const Job *job : ctx.pending()) (void)ctx.start(job->id, 1);
                          });
  EXPECT_DOUBLE_EQ(record(result, 1).end, 400);
  EXPECT_EQ(record(result, 1).state, JobState::Completed) << "not killed at 100 s";
}

TEST(SimMalleable, PerformanceRequestsAreAnsweredWithTheModelsMtct) {
  // Amdahl f = 0.1 on 3 nodes: mtct = f·(n − 1) = 0.2, times the phase
  // factor of the first half (1.5).
  std::vector<double> seen;
  run(R"(
[cluster]
nodes = 4
[[job]]
id = 1
submit = 0
runtime = 100
nodes = 3
min_nodes = 1
max_nodes = 4
serial_fraction = 0.1
phases = [1.5, 0.5]
[[job]]
id = 2
submit = 10
runtime = 5
)",
      [&](PassContext &ctx) {
        start_all_that_fit(ctx);
        for (const Job *job : ctx.running()) {
          if (job->spec.kind != JobKind::Malleable) continue;
          if (job->run->mtct) {
            seen.push_back(*job->run->mtct);
          } else {
            (void)ctx.request_perf(job->id);
          }
        }
      });
  ASSERT_FALSE(seen.empty()) << "the answer gives a pass that sees the data";
  EXPECT_NEAR(seen.front(), 0.3, 1e-12);
}

TEST(SimMalleable, PhasesChangeTheRateOffTheRequestedSize) {
  // f = 0.5; started on 2 nodes though it asked for 1. Communication share
  // on 2 nodes is 0.5: phase 1 (φ = 1) runs at 4/3, phase 2 (φ = 2) at 1.
  // 50 s of work each: 37.5 + 50 = 87.5.
  const auto result = run(R"(
[cluster]
nodes = 2
[[job]]
id = 1
submit = 0
runtime = 100
nodes = 1
min_nodes = 1
max_nodes = 2
serial_fraction = 0.5
phases = [1, 2]
)",
                          [](PassContext &ctx) {
                            for (const Job *job : ctx.pending()) (void)ctx.start(job->id, 2);
                          });
  EXPECT_DOUBLE_EQ(record(result, 1).end, 87.5);
}

TEST(SimMalleable, AnEvolvingJobAsksAndIsGrantedMidRun) {
  // Linear speedup; at half its work (t = 50) the job asks for 3 nodes; the
  // pass grants it; 2 s to start two nodes' processes; 50 s of work left at
  // three times the rate: 52 + 50/3.
  std::vector<std::string> reasons;
  const auto result = run(
      R"(
[cluster]
nodes = 4
[[job]]
id = 1
submit = 0
runtime = 100
kind = "evolving"
nodes = 1
min_nodes = 1
max_nodes = 3
serial_fraction = 0
adapt_start_s = 1
adapt_alpha_s = 0
adapt_beta_s = 0
[[job.request]]
at = 0.5
op = "expand"
by = 2
)",
      [&](PassContext &ctx) {
        reasons.emplace_back(to_string(ctx.reason()));
        start_all_that_fit(ctx);
        for (const Job *job : ctx.running()) {
          if (job->run->request && job->run->request->op == ResizeRequest::Op::Expand) {
            (void)ctx.expand(job->id, job->run->request->nodes);
          }
        }
      });
  EXPECT_NEAR(record(result, 1).end, 52 + 50.0 / 3, 1e-9);
  ASSERT_EQ(result.resizes.size(), 1u);
  EXPECT_DOUBLE_EQ(result.resizes[0].time, 52);
  EXPECT_EQ(result.resizes[0].to, 3);
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "request"), reasons.end());
}

TEST(SimMalleable, AnUngrantedRequestLeavesTheJobAtItsSize) {
  const auto result = run(R"(
[cluster]
nodes = 4
[[job]]
id = 1
submit = 0
runtime = 100
kind = "evolving"
nodes = 1
min_nodes = 1
max_nodes = 3
[[job.request]]
at = 0.2
op = "expand"
to = 3
)",
                          start_all_that_fit);
  EXPECT_DOUBLE_EQ(record(result, 1).end, 100);
  EXPECT_TRUE(result.resizes.empty());
}

// ---------------------------------------------------------------- time limits
// The time-limit rule in whole runs (Engine::expire_time_limit,
// docs/simulator.md): a job that is ADAPTING is never timed out while it
// adapts; the time it spends adapting is added to its limit when the
// adaptation ends, and the limit is checked again from then on. The
// engine's and the daemon's tests of the same rule are TimeLimitRule.* in
// tests/engine and tests/integration.

// 3 nodes. Job 1: malleable, 1..2 nodes, limit 100, linear speedup, an
// expansion costs 10 s (adapt_start_s); job 2: rigid, beside it.
std::string job_1_and_2(double runtime_1, double submit_2, double runtime_2, int nodes_2) {
  return R"(
[cluster]
nodes = 3
[[job]]
id = 1
submit = 0
runtime = )" +
         std::to_string(runtime_1) +
         R"(
walltime = 100
nodes = 1
min_nodes = 1
max_nodes = 2
serial_fraction = 0
adapt_start_s = 10
adapt_alpha_s = 0
adapt_beta_s = 0
[[job]]
id = 2
submit = )" +
         std::to_string(submit_2) + "\nruntime = " + std::to_string(runtime_2) +
         "\nnodes = " + std::to_string(nodes_2) + "\n";
}

// Job 2 takes 2 nodes for 95 s; when it ends, job 1 grows to 2 nodes and
// adapts from 95 to 105, across its original limit, which becomes 110.
std::string grow_across_the_limit(double runtime) { return job_1_and_2(runtime, 0, 95, 2); }

void start_then_grow(PassContext &ctx) {
  for (const Job *job : ctx.pending()) {
    if (job->spec.nodes <= ctx.nodes_idle()) (void)ctx.start(job->id);
  }
  for (const Job *job : ctx.running()) {
    if (job->spec.kind == JobKind::Malleable && job->state == JobState::Running &&
        job->size() < 2 && ctx.nodes_idle() > 0) {
      (void)ctx.expand(job->id, 2);
    }
  }
}

TEST(TimeLimitRule, AMalleableJobResizedAcrossItsLimitIsNotTimedOut) {
  // 95 s of its 100 done at 95; the other 5 at twice the rate after 105.
  const auto result = run(grow_across_the_limit(100), start_then_grow);
  ASSERT_EQ(result.resizes.size(), 1u);
  EXPECT_DOUBLE_EQ(result.resizes[0].time, 105);
  EXPECT_EQ(record(result, 1).state, JobState::Completed) << "not timed out at 100 while adapting";
  EXPECT_DOUBLE_EQ(record(result, 1).end, 107.5);
}

TEST(TimeLimitRule, AfterTheAdaptationItsExtendedLimitIsCheckedAgain) {
  // The same job with 200 s of work (its limit too short): 105 s left after
  // the expansion would end at 157.5; its limit, 100 + 10 s adapting, ends it.
  const auto result = run(grow_across_the_limit(200), start_then_grow);
  ASSERT_EQ(result.resizes.size(), 1u);
  EXPECT_EQ(record(result, 1).state, JobState::Timeout);
  EXPECT_DOUBLE_EQ(record(result, 1).end, 110);
}

// Job 1 (malleable, 1..2, limit 100) and job 3 (malleable, 2 nodes, 1..2)
// fill 3 nodes. At 90 job 2 arrives and a pass shrinks job 3 to 1 node and
// gives that node to job 1: job 1 is ADAPTING from 90 but waits for the node
// until job 3's shrink ends at 120 (30 s); only then does its own expansion
// (10 s) stop it. Its limit grows by those 10 s only: 110, which has passed
// when the expansion ends at 130.
std::string wait_for_a_node() {
  return job_1_and_2(300, 90, 1, 1) + R"(
[[job]]
id = 3
submit = 0
runtime = 1000
nodes = 2
min_nodes = 1
max_nodes = 2
serial_fraction = 0
adapt_stop_s = 30
adapt_alpha_s = 0
adapt_beta_s = 0
)";
}

void give_job_3s_node_to_job_1(PassContext &ctx) {
  for (const Job *job : ctx.pending()) {
    if (job->spec.nodes <= ctx.nodes_idle()) (void)ctx.start(job->id);
  }
  const Job *one = ctx.job(1);
  const Job *three = ctx.job(3);
  if (ctx.now() == 90 && one && three && three->size() == 2) {
    EXPECT_EQ(ctx.shrink(3, 1), std::nullopt);
    EXPECT_EQ(ctx.expand(1, 2), std::nullopt);
  }
}

TEST(TimeLimitRule, AJobWaitingForItsExpansionPastItsLimitStopsOnceTheAdaptationEnds) {
  const auto result = run(wait_for_a_node(), give_job_3s_node_to_job_1);
  EXPECT_EQ(record(result, 1).state, JobState::Timeout);
  EXPECT_DOUBLE_EQ(record(result, 1).end, 130) << "not at 100, while it was ADAPTING";
  EXPECT_EQ(record(result, 1).resizes, 1);
}

TEST(TimeLimitRule, AnExpansionRolledBackPastTheLimitStopsTheJobAtOnce) {
  // The same, but the node job 1 waits for goes down at 105: the expansion
  // is rolled back without ever stopping the job, so its limit stays 100,
  // long passed: it ends at 105.
  std::string toml = wait_for_a_node();
  toml += R"(
[[event]]
time = 105
type = "node_down"
node = "n0003"
)";
  const auto result = run(toml, give_job_3s_node_to_job_1);
  EXPECT_EQ(record(result, 1).state, JobState::Timeout);
  EXPECT_DOUBLE_EQ(record(result, 1).end, 105);
  EXPECT_EQ(record(result, 1).resizes, 0);
}

// A workload's node_drain under a malleable job shrinks the job off the node
// (issue 17 item 4), as live; a job whose min_nodes forbids it keeps it.
TEST(SimMalleable, ADrainedNodeIsShrunkOffAMalleableJob) {
  const sim::Workload workload = sim::parse_native(R"(
[cluster]
nodes = 8
[[job]]
id = 1
submit = 0
runtime = 100
nodes = 4
min_nodes = 1
max_nodes = 4
[[job]]
id = 2
submit = 0
runtime = 100
nodes = 4
min_nodes = 4
max_nodes = 8
[[event]]
time = 10
type = "node_drain"
node = "n0003"
[[event]]
time = 10
type = "node_drain"
node = "n0007"
)",
                                                   "test.toml");
  for (const auto &job : workload.jobs) ASSERT_EQ(job.spec.kind, JobKind::Malleable);
  sim::SimConfig config;
  config.tick_s = 0;
  sim::Simulator simulator(workload, config);
  simulator.set_policy(std::make_shared<CppPolicy>(start_all_that_fit));
  struct Recorder : EventSink {
    std::vector<Event> events;
    void on_event(const Event &event) override { events.push_back(event); }
  } recorder;
  simulator.engine().add_sink(&recorder);
  const auto result = simulator.run();
  ASSERT_EQ(result.resizes.size(), 1u);
  EXPECT_EQ(result.resizes[0].job, 1);
  EXPECT_EQ(result.resizes[0].from, 4);
  EXPECT_EQ(result.resizes[0].to, 3);
  std::vector<std::string> adapting, drains;
  for (const Event &event : recorder.events) {
    if (event.type == EventType::JobAdapting) adapting.push_back(event.message);
    if (event.type == EventType::NodeDrain) drains.push_back(event.message);
  }
  EXPECT_EQ(adapting, std::vector<std::string>{"shrink 4 -> 3: off draining n0003"});
  ASSERT_EQ(drains.size(), 2u);
  EXPECT_EQ(drains[0], "workload event");
  EXPECT_NE(drains[1].find("job 2 keeps n0007 until it ends"), std::string::npos) << drains[1];
  EXPECT_EQ(record(result, 1).resizes, 1);
  EXPECT_EQ(record(result, 2).resizes, 0);
}

}  // namespace
}  // namespace sched
