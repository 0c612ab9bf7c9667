// The simulator's own rules (docs/simulator.md): event order at one instant,
// ticks only for time-dependent policies, walltime kills, and a run that ends
// when waiting jobs can no longer be started.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "sched/pass_context.hpp"
#include "sched/sim/native_reader.hpp"
#include "sched/sim/simulator.hpp"
#include "sched/sim/swf_reader.hpp"

namespace sched {
namespace {

class CppPolicy : public Policy {
 public:
  using Fn = std::function<void(PassContext&)>;
  CppPolicy(Fn fn, bool time_dependent) : fn_(std::move(fn)), time_dependent_(time_dependent) {}
  std::string name() const override { return "cpp"; }
  bool time_dependent() const override { return time_dependent_; }
  std::optional<PolicyFailure> schedule(PassContext& ctx) override {
    reasons.push_back(ctx.reason());
    times.push_back(ctx.now());
    fn_(ctx);
    return std::nullopt;
  }
  std::vector<PassReason> reasons;
  std::vector<double> times;

 private:
  Fn fn_;
  bool time_dependent_;
};

void start_all_that_fit(PassContext& ctx) {
  for (const Job* job : ctx.pending()) {
    if (job->spec.nodes <= ctx.nodes_idle()) (void)ctx.start(job->id);
  }
}

sim::Workload two_jobs() {
  return sim::parse_native(R"(
[cluster]
nodes = 4
[[job]]
id = 1
submit = 0
runtime = 100
nodes = 4
walltime = 100
[[job]]
id = 2
submit = 100
runtime = 50
nodes = 4
walltime = 50
)",
                           "two.toml");
}

TEST(Simulator, AJobWaitsForItsBeginTimeOnTheSimulatedClock) {
  sim::Workload workload = two_jobs();
  workload.jobs[1].spec.extra.edit().begin_time =
      300;  // submitted at 100; the nodes are free at 100
  sim::SimConfig config;
  config.tick_s = 0;  // no ticks: the begin time alone wakes the engine
  sim::Simulator simulator(workload, config);
  auto policy = std::make_shared<CppPolicy>(start_all_that_fit, false);
  simulator.set_policy(policy);
  const sim::SimResult result = simulator.run();
  ASSERT_EQ(result.jobs.size(), 2u);
  EXPECT_EQ(result.jobs[1].start, 300);
  EXPECT_EQ(result.jobs[1].end, 350);
}

TEST(Simulator, CompletionAndSubmissionAtOneInstantGiveOnePass) {
  const sim::Workload workload = two_jobs();
  sim::SimConfig config;
  config.tick_s = 0;
  sim::Simulator simulator(workload, config);
  auto policy = std::make_shared<CppPolicy>(start_all_that_fit, false);
  simulator.set_policy(policy);
  const sim::SimResult result = simulator.run();
  // t=0: submission; t=100: job 1 ends and job 2 arrives: one pass, which
  // already sees the freed nodes; t=150: job 2 ends.
  EXPECT_EQ(policy->times, (std::vector<double>{0, 100, 150}));
  EXPECT_EQ(policy->reasons[1], PassReason::Completion);
  ASSERT_EQ(result.jobs.size(), 2u);
  EXPECT_EQ(result.jobs[1].start, 100);
}

TEST(Simulator, TicksOnlyForTimeDependentPolicies) {
  const sim::Workload workload = two_jobs();
  sim::SimConfig config;
  config.tick_s = 30;
  {
    sim::Simulator simulator(workload, config);
    auto policy = std::make_shared<CppPolicy>(start_all_that_fit, false);
    simulator.set_policy(policy);
    simulator.run();
    EXPECT_EQ(policy->times.size(), 3u);
  }
  {
    sim::Simulator simulator(workload, config);
    auto policy = std::make_shared<CppPolicy>(start_all_that_fit, true);
    simulator.set_policy(policy);
    simulator.run();
    int ticks = 0;
    for (PassReason reason : policy->reasons) ticks += reason == PassReason::Tick;
    // Ticks at 30, 60, 90, 120 (100 and 150 are event passes).
    EXPECT_EQ(ticks, 4);
  }
}

TEST(Simulator, WalltimeShorterThanRuntimeEndsAsTimeout) {
  const sim::Workload workload = sim::parse_native(R"(
[cluster]
nodes = 2
[[job]]
id = 7
submit = 0
runtime = 500
walltime = 60
)",
                                                   "short.toml");
  sim::SimConfig config;
  sim::Simulator simulator(workload, config);
  simulator.set_policy(std::make_shared<CppPolicy>(start_all_that_fit, false));
  const sim::SimResult result = simulator.run();
  ASSERT_EQ(result.jobs.size(), 1u);
  EXPECT_EQ(result.jobs[0].state, JobState::Timeout);
  EXPECT_EQ(result.jobs[0].end, 60);
}

TEST(Simulator, ARunWhoseWaitingJobsCanNeverStartEnds) {
  // A time-dependent policy that starts nothing: without the end rule the
  // ticks would go on forever.
  const sim::Workload workload = two_jobs();
  sim::SimConfig config;
  config.tick_s = 10;
  sim::Simulator simulator(workload, config);
  simulator.set_policy(std::make_shared<CppPolicy>([](PassContext&) {}, true));
  const sim::SimResult result = simulator.run();
  EXPECT_EQ(result.metrics.jobs, 0);
  for (const auto& job : result.jobs) EXPECT_EQ(job.state, JobState::Pending);
}

// The simulator leaves out a time limit that the job's next milestone comes
// before (it would be stale when it came). The end of a stuck run stays as
// it was when every limit was queued: ticks go on until the last one's time.
TEST(Simulator, AStuckRunEndsAsWhenEveryTimeLimitWasQueued) {
  const sim::Workload workload = sim::parse_native(R"(
[cluster]
nodes = 4
[[job]]
id = 1
submit = 0
runtime = 10
nodes = 1
walltime = 95
[[job]]
id = 2
submit = 0
runtime = 10
nodes = 1
)",
                                                   "stuck.toml");
  sim::SimConfig config;
  config.tick_s = 10;
  sim::Simulator simulator(workload, config);
  auto policy = std::make_shared<CppPolicy>(
      [](PassContext& ctx) {
        for (const Job* job : ctx.pending()) {
          if (job->id == 1) (void)ctx.start(job->id);  // job 2 never
        }
      },
      true);
  simulator.set_policy(policy);
  const sim::SimResult result = simulator.run();
  ASSERT_EQ(result.jobs.size(), 2u);
  EXPECT_EQ(result.jobs[0].state, JobState::Completed);
  EXPECT_EQ(result.jobs[0].end, 10);
  EXPECT_EQ(result.jobs[1].state, JobState::Pending);
  // Job 1's limit (95 s) would have been queued: ticks at 10, 20, ... 100.
  EXPECT_EQ(result.end_time, 100);
  ASSERT_FALSE(policy->times.empty());
  EXPECT_EQ(policy->times.back(), 100);
}

// Issue 18 item 5: priorities that change with age are recomputed at the
// calc period on the simulated clock, as schedd does on the wall clock.
TEST(Simulator, AgeReordersTheQueueAtTheCalcPeriod) {
  const sim::Workload workload = sim::parse_native(R"(
[cluster]
nodes = 4
[[job]]
id = 1
submit = 0
runtime = 200
nodes = 4
[[job]]
id = 2
submit = 10
runtime = 50
nodes = 1
[[job]]
id = 3
submit = 150
runtime = 50
nodes = 4
)",
                                                   "age.toml");
  const auto start_of = [&](bool age) {
    sim::SimConfig config;
    config.tick_s = 30;
    config.engine.priority.weights.jobsize = 1000;
    if (age) config.engine.priority.weights.age = 2000;
    config.engine.priority.max_age_s = 100;
    config.engine.priority.calc_period_s = 30;
    sim::Simulator simulator(workload, config);
    simulator.set_policy(std::make_shared<CppPolicy>(start_all_that_fit, false));
    const sim::SimResult result = simulator.run();
    EXPECT_EQ(result.jobs.size(), 3u);
    std::vector<double> starts;
    for (const auto& job : result.jobs) starts.push_back(job.start);
    return starts;
  };
  // Size alone: the 4-node job (1000) before the 1-node one (250).
  EXPECT_EQ(start_of(false), (std::vector<double>{0, 250, 200}));
  // With age, recomputed every 30 s: by t = 180 the 1-node job has waited
  // 170 s (2000 + 250) and the 4-node one 30 s (600 + 1000).
  EXPECT_EQ(start_of(true), (std::vector<double>{0, 200, 250}));
}

// ---------------------------------------------------------------- memory per job (issue 15)

namespace memory {

// An SWF trace (fields as sim/swf_reader.hpp reads them): submissions out of
// order, one job too large (skipped), one at the same submit time as another.
const char* kTrace =
    "; MaxProcs: 4\n"
    "3 20 -1 30 2 -1 -1 2 60 -1 1 7 -1 -1 0 -1 -1 -1\n"
    "1 0 -1 100 4 -1 -1 4 100 -1 1 5 -1 -1 0 -1 -1 -1\n"
    "2 10 -1 50 1 -1 -1 1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"
    "4 20 -1 10 8 -1 -1 8 10 -1 1 5 -1 -1 0 -1 -1 -1\n"
    "5 20 -1 40 1 -1 -1 1 50 -1 1 6 -1 -1 0 -1 -1 -1\n";

std::vector<sim::JobRecord> run(sim::Simulator& simulator) {
  simulator.set_policy(std::make_shared<CppPolicy>(start_all_that_fit, false));
  return simulator.run().jobs;
}

void expect_same(const std::vector<sim::JobRecord>& a, const std::vector<sim::JobRecord>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE("job " + std::to_string(a[i].id));
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].submit, b[i].submit);
    EXPECT_EQ(a[i].start, b[i].start);
    EXPECT_EQ(a[i].end, b[i].end);
    EXPECT_EQ(a[i].nodes, b[i].nodes);
    EXPECT_EQ(a[i].state, b[i].state);
    EXPECT_EQ(a[i].node_seconds, b[i].node_seconds);
    EXPECT_EQ(a[i].start_nodes, b[i].start_nodes);
    EXPECT_EQ(a[i].end_nodes, b[i].end_nodes);
  }
}

TEST(SimulatorMemory, EndedJobsAreDroppedAndTheirRecordsKept) {
  std::istringstream in(kTrace);
  const sim::Workload workload = sim::parse_swf(in, "t.swf", {});
  ASSERT_EQ(workload.jobs.size(), 4u);

  sim::SimConfig keep;
  keep.forget_ended_jobs = false;
  sim::Simulator kept(workload, keep);
  const auto kept_jobs = run(kept);
  EXPECT_EQ(kept.engine().jobs().size(), 4u) << "forget_ended_jobs = false keeps them";
  EXPECT_EQ(kept.engine().forgotten_jobs(), 0u);

  sim::Simulator dropped(workload, sim::SimConfig{});
  const auto dropped_jobs = run(dropped);
  EXPECT_TRUE(dropped.engine().jobs().empty()) << "every job ended and was dropped";
  EXPECT_EQ(dropped.engine().forgotten_jobs(), 4u);
  ASSERT_EQ(dropped_jobs.size(), 4u);
  EXPECT_EQ(dropped_jobs[0].id, 1);
  EXPECT_EQ(dropped_jobs[0].state, JobState::Completed);
  EXPECT_EQ(dropped_jobs[0].start_nodes, 4);
  EXPECT_EQ(dropped_jobs[3].id, 5);
  expect_same(kept_jobs, dropped_jobs);
}

TEST(SimulatorMemory, AJobSourceReplaysAsTheWholeWorkload) {
  std::istringstream whole_in(kTrace);
  const sim::Workload workload = sim::parse_swf(whole_in, "t.swf", {});
  std::istringstream trace_in(kTrace);
  const sim::SwfTrace trace = sim::parse_swf_trace(trace_in, "t.swf", {});
  ASSERT_EQ(trace.size(), workload.jobs.size());
  EXPECT_TRUE(trace.header.jobs.empty());
  EXPECT_EQ(trace.header.nodes, workload.nodes);
  EXPECT_EQ(trace.header.skipped, 1);
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const sim::WorkloadJob made = trace.make(i);
    EXPECT_EQ(made.id, workload.jobs[i].id);
    EXPECT_EQ(made.submit, workload.jobs[i].submit);
    EXPECT_EQ(made.spec.name, workload.jobs[i].spec.name);
    EXPECT_EQ(made.spec.user, workload.jobs[i].spec.user);
    EXPECT_EQ(made.spec.walltime, workload.jobs[i].spec.walltime);
  }

  sim::Simulator from_workload(workload, sim::SimConfig{});
  const auto expected = run(from_workload);
  sim::Simulator from_source(trace.header, trace, sim::SimConfig{});
  const auto got = run(from_source);
  expect_same(expected, got);
  for (const auto& record : got) EXPECT_EQ(record.state, JobState::Completed) << record.id;
  EXPECT_TRUE(from_source.engine().jobs().empty());

  EXPECT_THROW({ sim::Simulator both(workload, trace, sim::SimConfig{}); }, std::invalid_argument)
      << "jobs from the workload and a source at once";
}

}  // namespace memory

}  // namespace
}  // namespace sched
