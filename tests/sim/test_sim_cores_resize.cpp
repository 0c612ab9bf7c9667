// Malleable jobs by cores in virtual time (issue 20 item 2): in a [cluster]
// of kind "cores", a malleable job grows into the cores another job gives
// back, and the application model runs it at the speedup of its cores.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>

#include "lua_test_support.hpp"
#include "sched/lua_policy.hpp"
#include "sched/sim/native_reader.hpp"
#include "sched/sim/simulator.hpp"

namespace sched {
namespace {

// One node of 4 cores. Job 1 (rigid, 2 cores) ends at t=50. Job 2
// (malleable, 2 to 4 cores, 100 s of work at 2 cores, linear speedup, no
// adaptation cost) runs beside it, then grows to 4 cores: its other 50 s of
// work take 25 s, so it ends at t=75 instead of t=100.
constexpr const char* kWorkload = R"(
[cluster]
nodes = 1
cores_per_node = 4
kind = "cores"
[[job]]
id = 1
submit = 0
runtime = 50
cores = 2
[[job]]
id = 2
submit = 0
runtime = 100
cores = 2
min_cores = 2
max_cores = 4
speedup = "linear"
adapt_start_s = 0
adapt_stop_s = 0
adapt_alpha_s = 0
adapt_beta_s = 0
)";

// FCFS, then every malleable job grows into the free cores.
constexpr const char* kGrowPolicy = R"(
local P = { name = "grow_cores", api = 1 }
function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do ctx:start(job) end
  local free = 0
  for _, node in pairs(ctx:free_cores()) do free = free + node.free end
  for _, job in ipairs(ctx.running) do
    if job.max_cores and job.state == "RUNNING" and job.core_count < job.max_cores and free > 0 then
      ctx:expand(job, math.min(job.max_cores, job.core_count + free))
      free = 0
    end
  end
end
return P
)";

sim::SimResult run(const sim::Workload& workload, const char* policy) {
  luatest::TempDir dir;
  sim::SimConfig config;
  config.tick_s = 0;
  sim::Simulator simulator(workload, config);
  LuaPolicyOptions options;
  simulator.set_policy(
      std::shared_ptr<LuaPolicy>(LuaPolicy::load(dir.write("grow.lua", policy), options)));
  return simulator.run();
}

TEST(SimCoresResize, AMalleableJobGrowsIntoFreedCoresAndRunsFaster) {
  const sim::Workload workload = sim::parse_native(kWorkload, "cores.toml");
  ASSERT_EQ(workload.jobs[1].spec.kind, JobKind::Malleable) << "min_cores makes it malleable";
  EXPECT_EQ(workload.jobs[1].spec.layout->min_cores, 2);
  EXPECT_EQ(workload.jobs[1].spec.layout->max_cores, 4);
  const sim::SimResult result = run(workload, kGrowPolicy);
  ASSERT_EQ(result.jobs.size(), 2u);
  EXPECT_EQ(result.jobs[0].end, 50);
  EXPECT_EQ(result.jobs[1].start, 0);
  EXPECT_EQ(result.jobs[1].resizes, 1);
  EXPECT_DOUBLE_EQ(result.jobs[1].end, 75) << "50 s of work at twice the cores";
  for (const auto& job : result.jobs) EXPECT_EQ(job.state, JobState::Completed);
}

TEST(SimCoresResize, WithoutGrowingItKeepsItsPace) {
  const sim::Workload workload = sim::parse_native(kWorkload, "cores.toml");
  constexpr const char* kStartOnly = R"(
local P = { name = "start_only", api = 1 }
function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do ctx:start(job) end
end
return P
)";
  const sim::SimResult result = run(workload, kStartOnly);
  ASSERT_EQ(result.jobs.size(), 2u);
  EXPECT_EQ(result.jobs[1].resizes, 0);
  EXPECT_DOUBLE_EQ(result.jobs[1].end, 100);
}

TEST(SimCoresResize, ACoreRangeOutsideItsStartIsRefusedByTheEngine) {
  sim::Workload workload = sim::parse_native(kWorkload, "cores.toml");
  workload.jobs[1].spec.layout.edit().min_cores = 3;  // start 2 below min 3
  const sim::SimResult result = run(workload, kGrowPolicy);
  EXPECT_EQ(result.rejected, 1) << "the engine refuses it at submit, as schedd does";
  EXPECT_EQ(result.jobs.size(), 1u);
}

}  // namespace
}  // namespace sched
