// MTCT over a recent window in the simulator (issue 17 item 5): an AMR-like
// job whose communication share jumps between two phases; a policy that
// asks for data every tick sees the new phase's ratio within one window,
// where the ratio since the start would still hide it.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "sched/pass_context.hpp"
#include "sched/sim/native_reader.hpp"
#include "sched/sim/simulator.hpp"

namespace sched {
namespace {

// Starts what fits; asks every running job for its MTCT each pass and
// records what it sees, by time.
class Watcher : public Policy {
 public:
  std::string name() const override { return "watcher"; }
  bool time_dependent() const override { return true; }
  std::optional<PolicyFailure> schedule(PassContext &ctx) override {
    for (const Job *job : ctx.pending()) {
      if (job->spec.nodes <= ctx.nodes_idle()) (void)ctx.start(job->id);
    }
    for (const Job *job : ctx.running()) {
      if (job->run->mtct) seen[ctx.now()] = *job->run->mtct;
      (void)ctx.request_perf(job->id);
    }
    return std::nullopt;
  }
  std::map<double, double> seen;
};

// Amdahl f = 0.1 on its requested 4 nodes: MTCT f·(n − 1) = 0.3 times the
// phase factor: 0.15 for the first 100 s, 0.6 for the next 100 s.
constexpr const char *kAmr = R"(
[cluster]
nodes = 4
[[job]]
id = 1
submit = 0
runtime = 200
nodes = 4
min_nodes = 1
max_nodes = 4
serial_fraction = 0.1
phases = [0.5, 2.0]
)";

std::map<double, double> watch(double window_s) {
  const sim::Workload workload = sim::parse_native(kAmr, "amr.toml");
  sim::SimConfig config;
  config.tick_s = 5;
  config.engine.mtct_window_s = window_s;
  config.engine.mtct_refresh_fraction = 0.1;
  sim::Simulator simulator(workload, config);
  auto policy = std::make_shared<Watcher>();
  simulator.set_policy(policy);
  simulator.run();
  return policy->seen;
}

TEST(SimMtctWindow, ThePolicySeesAPhaseChangeWithinOneWindow) {
  const auto seen = watch(20);
  ASSERT_FALSE(seen.empty());
  for (const auto &[time, mtct] : seen) {
    if (time <= 100) {
      EXPECT_NEAR(mtct, 0.15, 1e-9) << "t=" << time;
    }
  }
  // The phase changed at t=100: by one window and one tick later the policy
  // sees the new phase alone.
  auto after = seen.lower_bound(125);
  ASSERT_NE(after, seen.end());
  EXPECT_NEAR(after->second, 0.6, 1e-9) << "t=" << after->first;
}

// A window of 0 in the simulator is the model's MTCT at the instant (an
// ideal measurement, what bench/'s experiments and the replay goldens use):
// the first phase's value before t=100, the second's at once after it.
TEST(SimMtctWindow, WithoutAWindowThePolicySeesTheModelsValueAtTheInstant) {
  const auto seen = watch(0);
  ASSERT_FALSE(seen.empty());
  for (const auto &[time, mtct] : seen) {
    if (time < 100) {
      EXPECT_NEAR(mtct, 0.15, 1e-9) << "t=" << time;
    }
  }
  auto after = seen.upper_bound(100);
  ASSERT_NE(after, seen.end());
  EXPECT_NEAR(after->second, 0.6, 1e-9) << "t=" << after->first;
}

}  // namespace
}  // namespace sched
