// The time-limit rule in whole simulated runs (Engine::expire_time_limit,
// docs/simulator.md): a job that is ADAPTING is never timed out while it
// adapts; the time it spends adapting is added to its limit when the
// adaptation ends, and the limit is checked again from then on. The engine's
// own tests of the rule are TimeLimitRule.* in tests/engine; the daemon's in
// tests/integration. Times are worked out by hand in each test.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

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
  std::optional<std::string> schedule(PassContext &ctx) override {
    fn_(ctx);
    return std::nullopt;
  }

 private:
  Fn fn_;
};

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

// Job 1 (malleable, 1..2 nodes, limit 100) runs beside job 2 (rigid, 2
// nodes, 95 s) on 3 nodes. When job 2 ends at 95, job 1 grows to 2 nodes;
// the expansion costs 10 s (adapt_start_s), so job 1 adapts from 95 to 105,
// across its original limit, and its limit becomes 110.
std::string grow_across_the_limit(double runtime) {
  return R"(
[cluster]
nodes = 3
[[job]]
id = 1
submit = 0
runtime = )" + std::to_string(runtime) +
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
submit = 0
runtime = 95
nodes = 2
)";
}

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
constexpr const char *kWaitForANode = R"(
[cluster]
nodes = 3
[[job]]
id = 1
submit = 0
runtime = 300
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
submit = 90
runtime = 1
nodes = 1
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
  const auto result = run(kWaitForANode, give_job_3s_node_to_job_1);
  EXPECT_EQ(record(result, 1).state, JobState::Timeout);
  EXPECT_DOUBLE_EQ(record(result, 1).end, 130) << "not at 100, while it was ADAPTING";
  EXPECT_EQ(record(result, 1).resizes, 1);
}

TEST(TimeLimitRule, AnExpansionRolledBackPastTheLimitStopsTheJobAtOnce) {
  // The same, but the node job 1 waits for goes down at 105: the expansion
  // is rolled back without ever stopping the job, so its limit stays 100,
  // long passed: it ends at 105.
  std::string toml = kWaitForANode;
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

}  // namespace
}  // namespace sched
