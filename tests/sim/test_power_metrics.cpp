// Cluster power over a run (sim/power.hpp): violations of the corridor,
// energy, power.csv, and the series a simulated run records.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "sched/pass_context.hpp"
#include "sched/sim/native_reader.hpp"
#include "sched/sim/power.hpp"
#include "sched/sim/simulator.hpp"

namespace sched::sim {
namespace {

TEST(PowerMetrics, EnergyIsTheIntegralOfTheSteps) {
  const PowerMetrics m = compute_power_metrics({{0, 100, 0, 0}, {10, 300, 0, 0}}, 20, 0);
  EXPECT_DOUBLE_EQ(m.energy_j, 100 * 10 + 300 * 10);
  EXPECT_EQ(m.violations, 0) << "no corridor, no violation";
}

TEST(PowerMetrics, AnIntervalOutsideCountsOnceWhenLongerThanTheGrace) {
  // Above the corridor from 10 to 100 (the power changes inside, still
  // above), back inside at 100; below it from 200 to 230 (within a 60 s
  // grace); below again from 300 to the end at 400.
  const std::vector<PowerSample> samples = {
      {0, 500, 400, 600},   {10, 700, 400, 600},  {50, 650, 400, 600},  {100, 500, 400, 600},
      {200, 300, 400, 600}, {230, 500, 400, 600}, {300, 500, 550, 600},
  };
  const PowerMetrics m = compute_power_metrics(samples, 400, 60);
  EXPECT_EQ(m.violations, 2);
  ASSERT_EQ(m.violation_intervals.size(), 2u);
  EXPECT_DOUBLE_EQ(m.violation_intervals[0].from, 10);
  EXPECT_DOUBLE_EQ(m.violation_intervals[0].to, 100);
  EXPECT_DOUBLE_EQ(m.violation_intervals[1].from, 300);
  EXPECT_DOUBLE_EQ(m.violation_intervals[1].to, 400);
  EXPECT_EQ(compute_power_metrics(samples, 400, 0).violations, 3);
  EXPECT_EQ(compute_power_metrics(samples, 400, 1000).violations, 0);
}

TEST(PowerMetrics, ACorridorChangeCanEndAViolation) {
  const std::vector<PowerSample> samples = {{0, 800, 400, 600}, {120, 800, 700, 900}};
  EXPECT_EQ(compute_power_metrics(samples, 500, 60).violations, 1);
  EXPECT_EQ(compute_power_metrics(samples, 500, 200).violations, 0);
}

TEST(PowerMetrics, PowerCsvHasARowPerSample) {
  const auto path = (std::filesystem::temp_directory_path() / "sched-power-test.csv").string();
  write_power_csv(path, {{0, 142, 0, 0}, {2.5, 482.5, 1700, 2500}});
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "time,watts,lower_w,upper_w\n0,142,0,0\n2.5,482.5,1700,2500\n");
  std::filesystem::remove(path);
  EXPECT_THROW(write_power_csv("/nonexistent-dir/p.csv", {}), std::runtime_error);
}

class StartAll : public Policy {
 public:
  std::string name() const override { return "start_all"; }
  bool time_dependent() const override { return false; }
  std::optional<PolicyFailure> schedule(PassContext &ctx) override {
    for (const Job *job : ctx.pending()) {
      if (job->spec.nodes <= ctx.nodes_idle()) (void)ctx.start(job->id);
    }
    return std::nullopt;
  }
};

TEST(PowerMetrics, ASimulatedRunRecordsPowerAndCountsViolations) {
  // 4 nodes at 71 W idle. Job 1 (2 nodes at 250 W) runs 0–100, job 2 (1 node
  // at 170 W) 50–150. The corridor [400, 600] from 0: 2·250 + 2·71 = 642 W
  // from 0 to 50 is above it; 2·250 + 170 + 71 = 741 W until 100, above;
  // 170 + 3·71 = 383 W until 150, below; then 284 W idle.
  const Workload workload = parse_native(R"(
[cluster]
nodes = 4
[[job]]
id = 1
submit = 0
runtime = 100
nodes = 2
power_min_w = 250
power_max_w = 250
[[job]]
id = 2
submit = 50
runtime = 100
power_min_w = 170
power_max_w = 170
[[event]]
time = 0
type = "corridor"
lower_w = 400
upper_w = 600
)",
                                         "p.toml");
  SimConfig config;
  config.tick_s = 0;
  config.power_grace_s = 30;
  Simulator simulator(workload, config);
  simulator.set_policy(std::make_shared<StartAll>());
  const SimResult result = simulator.run();
  ASSERT_EQ(result.power.size(), 4u);
  EXPECT_DOUBLE_EQ(result.power[0].watts, 642);
  EXPECT_DOUBLE_EQ(result.power[0].lower_w, 400);
  EXPECT_DOUBLE_EQ(result.power[1].time, 50);
  EXPECT_DOUBLE_EQ(result.power[1].watts, 741);
  EXPECT_DOUBLE_EQ(result.power[2].watts, 383);
  EXPECT_DOUBLE_EQ(result.power[3].time, 150);
  EXPECT_DOUBLE_EQ(result.power[3].watts, 284);
  // Above from 0 to 100, then below from 100 to the end: the power never
  // comes back inside, so it is one maximal interval outside (docs/design.md §8).
  EXPECT_EQ(result.metrics.violations, 1);
  EXPECT_DOUBLE_EQ(result.metrics.energy_j, 642 * 50 + 741 * 50 + 383 * 50);
}

}  // namespace
}  // namespace sched::sim
