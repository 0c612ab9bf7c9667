// The simulator's own rules (docs/simulator.md): event order at one instant,
// ticks only for time-dependent policies, walltime kills, and a run that ends
// when waiting jobs can no longer be started.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "sched/pass_context.hpp"
#include "sched/sim/native_reader.hpp"
#include "sched/sim/simulator.hpp"

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
  workload.jobs[1].spec.begin_time = 300;  // submitted at 100; the nodes are free at 100
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

}  // namespace
}  // namespace sched
