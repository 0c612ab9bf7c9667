// ctx:release_profile() and ctx:earliest_start(n) (issue 15): the profile of
// free nodes over time that every backfilling policy needs, computed in C++
// from the running jobs' estimated ends, the pass's tentative sizes and the
// jobs started earlier in the same pass.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "lua_test_support.hpp"

namespace sched {
namespace {

using luatest::Harness;
using luatest::LuaData;
using luatest::TempDir;

// Records the profile and an earliest start for each n in `asks`, after
// optionally starting the first pending job (so it joins the profile).
constexpr const char* kRecorder = R"lua(
local P = { api = 1 }
local seen = {}
function P.schedule(ctx)
  if ctx.params.start_first and ctx.pending[1] then ctx:start(ctx.pending[1]) end
  if ctx.params.shrink_first and ctx.running[1] then
    ctx:shrink(ctx.running[1], ctx.running[1].size - 2)
  end
  local pass = { idle = ctx.nodes_idle, profile = {}, asks = {} }
  for i, step in ipairs(ctx:release_profile()) do
    pass.profile[i] = { time = step.time == math.huge and -1 or step.time, free = step.free }
  end
  for _, n in ipairs({ 1, 3, 5, 8, 9 }) do
    local t, spare = ctx:earliest_start(n)
    pass.asks[#pass.asks + 1] = { n = n, time = t == math.huge and -1 or t, spare = spare }
  end
  seen[#seen + 1] = pass
end
function P.save() return seen end
return P
)lua";

// 8 nodes: job 1 (2 nodes, ends t=100), job 2 (3 nodes, ends t=50), job 3
// (1 node, no walltime: never); 2 idle. The clock is at 10.
struct Profiled {
  TempDir dir;
  Harness h{8};
  explicit Profiled(const LuaPolicyOptions& options = luatest::quick_options()) {
    h.submit(luatest::rigid(2, 100));
    h.submit(luatest::rigid(3, 50));
    h.submit(luatest::rigid(1));
    h.start_all();
    h.use(dir.write("p.lua", kRecorder), options);
    h.clock.advance(10);
  }
};

TEST(ReleaseProfile, StepsByEstimatedEndFromTheIdleNodes) {
  Profiled p;
  p.h.ok_pass();
  LuaData seen = LuaData::saved_by(*p.h.policy);
  EXPECT_EQ(seen.integer("1.idle"), 2);
  ASSERT_EQ(seen.length("1.profile"), 4);
  EXPECT_DOUBLE_EQ(seen.num("1.profile.1.time"), 10) << "now, with the idle nodes";
  EXPECT_EQ(seen.integer("1.profile.1.free"), 2);
  EXPECT_DOUBLE_EQ(seen.num("1.profile.2.time"), 50);
  EXPECT_EQ(seen.integer("1.profile.2.free"), 5);
  EXPECT_DOUBLE_EQ(seen.num("1.profile.3.time"), 100);
  EXPECT_EQ(seen.integer("1.profile.3.free"), 7);
  EXPECT_DOUBLE_EQ(seen.num("1.profile.4.time"), -1) << "no walltime: never";
  EXPECT_EQ(seen.integer("1.profile.4.free"), 8);
  EXPECT_DOUBLE_EQ(seen.num("1.asks.1.time"), 10) << "1 node is free now";
  EXPECT_EQ(seen.integer("1.asks.1.spare"), 1);
  EXPECT_DOUBLE_EQ(seen.num("1.asks.2.time"), 50);
  EXPECT_EQ(seen.integer("1.asks.2.spare"), 2);
  EXPECT_DOUBLE_EQ(seen.num("1.asks.3.time"), 50);  // 5 nodes at 50, none to spare
  EXPECT_EQ(seen.integer("1.asks.3.spare"), 0);
  EXPECT_DOUBLE_EQ(seen.num("1.asks.4.time"), -1);  // 8 only when the endless job ends
  EXPECT_EQ(seen.integer("1.asks.4.spare"), 0);
  EXPECT_DOUBLE_EQ(seen.num("1.asks.5.time"), -1);  // 9 never
  EXPECT_EQ(seen.integer("1.asks.5.spare"), 0);
}

TEST(ReleaseProfile, AnEndAlreadyPastCountsAsNow) {
  Profiled p;
  p.h.clock.advance(60);  // t=70: job 2's estimate (50) has passed; it still runs
  p.h.ok_pass();
  LuaData seen = LuaData::saved_by(*p.h.policy);
  EXPECT_DOUBLE_EQ(seen.num("1.profile.1.time"), 70);
  EXPECT_EQ(seen.integer("1.profile.1.free"), 5) << "idle 2 and job 2's 3, both now";
  EXPECT_DOUBLE_EQ(seen.num("1.asks.3.time"), 70);
}

TEST(ReleaseProfile, AJobStartedInThePassCounts) {
  auto options = luatest::quick_options();
  options.params["start_first"] = true;
  Profiled p(options);
  p.h.submit(luatest::rigid(2, 20));  // job 4 starts in the pass, ends at 30
  p.h.ok_pass();
  LuaData seen = LuaData::saved_by(*p.h.policy);
  EXPECT_EQ(seen.integer("1.idle"), 0);
  ASSERT_EQ(seen.length("1.profile"), 5);
  EXPECT_EQ(seen.integer("1.profile.1.free"), 0);
  EXPECT_DOUBLE_EQ(seen.num("1.profile.2.time"), 30) << "the job started in the pass";
  EXPECT_EQ(seen.integer("1.profile.2.free"), 2);
  EXPECT_DOUBLE_EQ(seen.num("1.profile.3.time"), 50);
  EXPECT_EQ(seen.integer("1.profile.3.free"), 5);
}

TEST(ReleaseProfile, AShrinkInThePassGivesBackItsNodesNow) {
  TempDir dir;
  Harness h(8);
  h.submit(luatest::malleable(6, 2, 8));
  h.start_all();
  auto options = luatest::quick_options();
  options.params["shrink_first"] = true;
  h.use(dir.write("p.lua", kRecorder), options);
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  EXPECT_EQ(seen.integer("1.idle"), 4) << "2 idle + 2 shrunk away";
  // The job is left at 4 nodes: it gives back 4, never (no walltime).
  ASSERT_EQ(seen.length("1.profile"), 2);
  EXPECT_EQ(seen.integer("1.profile.1.free"), 4);
  EXPECT_EQ(seen.integer("1.profile.2.free"), 8);
  EXPECT_EQ(seen.integer("1.asks.2.spare"), 1) << "3 of the 4 free now";
  EXPECT_DOUBLE_EQ(seen.num("1.asks.5.time"), -1);
}

}  // namespace
}  // namespace sched
