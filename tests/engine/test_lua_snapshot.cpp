// What a Lua policy sees in a pass (docs/design.md §4): every field of ctx and of a
// job table, typed policy parameters, read-only job tables that keep their
// identity across passes, the read-only pending sequence and the sortable
// running list, and the tentative idle count.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "lua_test_support.hpp"
#include "sched/lua_policy.hpp"

namespace sched {
namespace {

using luatest::Harness;
using luatest::LuaData;
using luatest::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---------------------------------------------------------------- parameters

TEST(LuaParams, ParseParamTypesTheValue) {
  auto flag = parse_param("flag=true");
  ASSERT_TRUE(flag);
  EXPECT_EQ(flag->first, "flag");
  ASSERT_TRUE(std::holds_alternative<bool>(flag->second));
  EXPECT_TRUE(std::get<bool>(flag->second));

  auto off = parse_param("off=false");
  ASSERT_TRUE(off && std::holds_alternative<bool>(off->second));
  EXPECT_FALSE(std::get<bool>(off->second));

  auto count = parse_param("count=3");
  ASSERT_TRUE(count && std::holds_alternative<long long>(count->second));
  EXPECT_EQ(std::get<long long>(count->second), 3);

  auto negative = parse_param("delta=-4");
  ASSERT_TRUE(negative && std::holds_alternative<long long>(negative->second));
  EXPECT_EQ(std::get<long long>(negative->second), -4);

  auto ratio = parse_param("ratio=2.5");
  ASSERT_TRUE(ratio && std::holds_alternative<double>(ratio->second));
  EXPECT_DOUBLE_EQ(std::get<double>(ratio->second), 2.5);

  auto word = parse_param("mode=fast");
  ASSERT_TRUE(word && std::holds_alternative<std::string>(word->second));
  EXPECT_EQ(std::get<std::string>(word->second), "fast");

  // Only the first '=' splits; text that merely starts like a number is text.
  auto text = parse_param("expr=a=b");
  ASSERT_TRUE(text && std::holds_alternative<std::string>(text->second));
  EXPECT_EQ(text->first, "expr");
  EXPECT_EQ(std::get<std::string>(text->second), "a=b");
  auto mixed = parse_param("n=3x");
  ASSERT_TRUE(mixed && std::holds_alternative<std::string>(mixed->second));
  EXPECT_EQ(std::get<std::string>(mixed->second), "3x");

  auto empty = parse_param("empty=");
  ASSERT_TRUE(empty && std::holds_alternative<std::string>(empty->second));
  EXPECT_EQ(std::get<std::string>(empty->second), "");

  EXPECT_FALSE(parse_param("novalue"));
  EXPECT_FALSE(parse_param("=5"));
}

// ---------------------------------------------------------------- every field

// Copies everything it sees into a log that P.save() returns, and follows a
// small plan: start job 1 at 4 nodes, reserve job 2, grow job 1 to 8, shrink
// it to 6.
constexpr const char* kRecorder = R"lua(
local P = { name = 'recorder', api = 1 }
local log = {}
local n = 0
local FIELDS = { 'id', 'name', 'user', 'kind', 'state', 'nodes', 'size', 'min_nodes',
  'max_nodes', 'node_constraint', 'tasks_per_node', 'walltime', 'power_min_w', 'power_max_w',
  'urgent', 'submit_time', 'start_time', 'est_end', 'elapsed', 'adapting', 'mtct', 'power_w',
  'expected_start', 'expansions', 'shrinks', 'gain', 'leader' }

local function copy_job(job)
  local t = {}
  for _, k in ipairs(FIELDS) do t[k] = job[k] end
  if job.request ~= nil then
    t.request = { op = job.request.op, nodes = job.request.nodes }
  end
  t.allocation = {}
  for i, name in ipairs(job.allocation) do t.allocation[i] = name end
  return t
end

function P.schedule(ctx)
  n = n + 1
  local rec = {
    now = ctx.now, reason = ctx.reason, nodes_total = ctx.nodes_total,
    nodes_idle = ctx.nodes_idle,
    power = { lower = ctx.power.lower, upper = ctx.power.upper,
              current_w = ctx.power.current_w, idle_w_per_node = ctx.power.idle_w_per_node },
    params = {}, jobs = {}, pending = {}, running = {},
  }
  for k, v in pairs(ctx.params) do rec.params[k] = v end
  for i, job in ipairs(ctx.pending) do
    rec.pending[i] = job.id
    rec.jobs[job.id] = copy_job(job)
  end
  for i, job in ipairs(ctx.running) do
    rec.running[i] = job.id
    rec.jobs[job.id] = copy_job(job)
  end
  log[n] = rec

  for _, job in ipairs(ctx.pending) do
    if job.id == 1 then
      rec.start_ok = ctx:start(job)
      rec.idle_after_start = ctx.nodes_idle
    elseif job.id == 2 and job.expected_start == nil then
      rec.reserve_ok = ctx:reserve(job, 500)
    end
  end
  for _, job in ipairs(ctx.running) do
    if job.id == 1 and not job.adapting then
      if job.size == 4 then
        rec.expand_ok = ctx:expand(job, 8)
        rec.idle_after_expand = ctx.nodes_idle
      elseif job.size == 8 then
        rec.shrink_ok = ctx:shrink(job, 6)
        rec.idle_after_shrink = ctx.nodes_idle
      end
    end
  end
end

function P.save() return { passes = log } end

return P
)lua";

TEST(LuaSnapshot, PolicySeesEveryCtxAndJobField) {
  TempDir dir;
  EngineConfig config;
  config.idle_w_per_node = 50;
  Harness h(8, config);
  auto options = luatest::quick_options();
  for (const char* text : {"flag=true", "off=false", "count=3", "ratio=2.5", "mode=fast"}) {
    auto param = parse_param(text);
    ASSERT_TRUE(param);
    options.params[param->first] = param->second;
  }
  LuaPolicy& policy = h.use(dir.write("recorder.lua", kRecorder), options);
  h.engine.set_corridor(1000, 3000);

  h.clock.set(10);
  JobSpec heat = luatest::malleable(4, 2, 8, NodeConstraint::Even);
  heat.name = "heat";
  heat.user = "alice";
  heat.tasks_per_node = 3;
  heat.walltime = 900;
  heat.power_min_w = 100;
  heat.power_max_w = 250.5;
  ASSERT_EQ(h.submit(heat), 1);
  JobSpec wait = luatest::rigid(8);
  wait.name = "wait";
  wait.user = "bob";
  wait.urgent = true;
  ASSERT_EQ(h.submit(wait), 2);

  h.clock.set(20);
  h.ok_pass(PassReason::Submit);  // 1: start job 1, reserve job 2
  h.confirm_starts();
  h.clock.set(30);
  h.ok_pass(PassReason::Tick);  // 2: expand 4 -> 8
  h.clock.set(35);
  h.ok_pass(PassReason::Adaptation);  // 3: job 1 is adapting
  h.engine.adaptation_done(1, true);
  h.clock.set(40);
  h.ok_pass(PassReason::Completion);  // 4: shrink 8 -> 6
  h.engine.adaptation_done(1, true);
  h.engine.perf_report(1, 0.25);
  h.engine.power_report(1, 180.5);
  {
    // Only evolving jobs ask to resize (Engine::resize_request); to see the
    // field on this malleable job, set it directly and mark the job changed.
    auto& job = const_cast<Job&>(h.job(1));
    job.run.edit().request = ResizeRequest{ResizeRequest::Op::Expand, 8};
    ++job.version;
  }
  h.clock.set(100);
  h.ok_pass(PassReason::Corridor);  // 5: just looks

  EXPECT_THAT(h.enactor.calls, ElementsAre("start 1 on 4", "expand 1 4->8", "shrink 1 8->6"));
  LuaData s = LuaData::saved_by(policy);
  ASSERT_EQ(s.error(), "");
  ASSERT_EQ(s.length("passes"), 5);

  // ---- pass 1: both jobs pending
  EXPECT_DOUBLE_EQ(s.num("passes.1.now"), 20);
  EXPECT_EQ(s.str("passes.1.reason"), "submit");
  EXPECT_EQ(s.integer("passes.1.nodes_total"), 8);
  EXPECT_EQ(s.integer("passes.1.nodes_idle"), 8);
  EXPECT_TRUE(s.boolean("passes.1.start_ok"));
  EXPECT_EQ(s.integer("passes.1.idle_after_start"), 4) << "ctx.nodes_idle falls after a start";
  EXPECT_TRUE(s.boolean("passes.1.reserve_ok"));
  EXPECT_DOUBLE_EQ(s.num("passes.1.power.current_w"), 8 * 50);
  ASSERT_EQ(s.length("passes.1.pending"), 2);
  EXPECT_EQ(s.integer("passes.1.pending.1"), 2) << "urgent jobs come first";
  EXPECT_EQ(s.integer("passes.1.pending.2"), 1);
  EXPECT_EQ(s.length("passes.1.running"), 0);
  EXPECT_EQ(s.str("passes.1.jobs.1.state"), "PENDING");
  EXPECT_EQ(s.integer("passes.1.jobs.1.size"), 0);
  EXPECT_TRUE(s.is_nil("passes.1.jobs.1.start_time"));
  EXPECT_TRUE(s.is_nil("passes.1.jobs.1.est_end"));
  EXPECT_TRUE(s.is_nil("passes.1.jobs.1.elapsed"));
  EXPECT_TRUE(s.is_nil("passes.1.jobs.1.leader"));
  EXPECT_EQ(s.type("passes.1.jobs.1.allocation"), "table");
  EXPECT_EQ(s.length("passes.1.jobs.1.allocation"), 0);

  // ---- passes 2 to 4: the adaptations
  EXPECT_EQ(s.str("passes.2.reason"), "tick");
  EXPECT_TRUE(s.boolean("passes.2.expand_ok"));
  EXPECT_EQ(s.integer("passes.2.nodes_idle"), 4);
  EXPECT_EQ(s.integer("passes.2.idle_after_expand"), 0);
  EXPECT_EQ(s.str("passes.2.jobs.1.state"), "RUNNING");
  EXPECT_FALSE(s.boolean("passes.2.jobs.1.adapting"));
  EXPECT_DOUBLE_EQ(s.num("passes.2.jobs.1.elapsed"), 10);
  EXPECT_EQ(s.str("passes.3.reason"), "adaptation");
  EXPECT_EQ(s.str("passes.3.jobs.1.state"), "ADAPTING");
  EXPECT_TRUE(s.boolean("passes.3.jobs.1.adapting"));
  EXPECT_EQ(s.str("passes.4.reason"), "completion");
  EXPECT_EQ(s.integer("passes.4.jobs.1.size"), 8);
  EXPECT_TRUE(s.boolean("passes.4.shrink_ok"));
  EXPECT_EQ(s.integer("passes.4.idle_after_shrink"), 2) << "ctx.nodes_idle rises after a shrink";

  // ---- pass 5: ctx
  const std::string p = "passes.5.";
  EXPECT_DOUBLE_EQ(s.num(p + "now"), 100);
  EXPECT_EQ(s.str(p + "reason"), "corridor");
  EXPECT_EQ(s.integer(p + "nodes_total"), 8);
  EXPECT_EQ(s.integer(p + "nodes_idle"), 2);
  EXPECT_DOUBLE_EQ(s.num(p + "power.lower"), 1000);
  EXPECT_DOUBLE_EQ(s.num(p + "power.upper"), 3000);
  EXPECT_DOUBLE_EQ(s.num(p + "power.current_w"), 6 * 180.5 + 2 * 50);
  EXPECT_DOUBLE_EQ(s.num(p + "power.idle_w_per_node"), 50);
  EXPECT_EQ(s.type(p + "params.flag"), "boolean");
  EXPECT_TRUE(s.boolean(p + "params.flag"));
  EXPECT_FALSE(s.boolean(p + "params.off"));
  EXPECT_TRUE(s.is_integer(p + "params.count"));
  EXPECT_EQ(s.integer(p + "params.count"), 3);
  EXPECT_FALSE(s.is_integer(p + "params.ratio"));
  EXPECT_DOUBLE_EQ(s.num(p + "params.ratio"), 2.5);
  EXPECT_EQ(s.str(p + "params.mode"), "fast");
  ASSERT_EQ(s.length(p + "pending"), 1);
  EXPECT_EQ(s.integer(p + "pending.1"), 2);
  ASSERT_EQ(s.length(p + "running"), 1);
  EXPECT_EQ(s.integer(p + "running.1"), 1);

  // ---- pass 5: the running malleable job
  const std::string j = p + "jobs.1.";
  EXPECT_EQ(s.integer(j + "id"), 1);
  EXPECT_EQ(s.str(j + "name"), "heat");
  EXPECT_EQ(s.str(j + "user"), "alice");
  EXPECT_EQ(s.str(j + "kind"), "malleable");
  EXPECT_EQ(s.str(j + "state"), "RUNNING");
  EXPECT_EQ(s.integer(j + "nodes"), 4);
  EXPECT_EQ(s.integer(j + "size"), 6);
  EXPECT_EQ(s.integer(j + "min_nodes"), 2);
  EXPECT_EQ(s.integer(j + "max_nodes"), 8);
  EXPECT_EQ(s.str(j + "node_constraint"), "even");
  EXPECT_EQ(s.integer(j + "tasks_per_node"), 3);
  EXPECT_DOUBLE_EQ(s.num(j + "walltime"), 900);
  EXPECT_DOUBLE_EQ(s.num(j + "power_min_w"), 100);
  EXPECT_DOUBLE_EQ(s.num(j + "power_max_w"), 250.5);
  EXPECT_FALSE(s.boolean(j + "urgent"));
  EXPECT_DOUBLE_EQ(s.num(j + "submit_time"), 10);
  EXPECT_DOUBLE_EQ(s.num(j + "start_time"), 20);
  // 20 + 900, plus 5 s spent adapting (30–35), plus the rest of the limit
  // stretched by 8/6 at the shrink at 40: (925 − 40) × (8/6 − 1) = 295.
  EXPECT_DOUBLE_EQ(s.num(j + "est_end"), 1220);
  EXPECT_DOUBLE_EQ(s.num(j + "elapsed"), 80);
  EXPECT_FALSE(s.boolean(j + "adapting"));
  EXPECT_DOUBLE_EQ(s.num(j + "mtct"), 0.25);
  EXPECT_DOUBLE_EQ(s.num(j + "power_w"), 180.5);
  EXPECT_TRUE(s.is_nil(j + "expected_start"));
  EXPECT_EQ(s.integer(j + "expansions"), 1);
  EXPECT_EQ(s.integer(j + "shrinks"), 1);
  EXPECT_EQ(s.integer(j + "gain"), 2);
  EXPECT_EQ(s.str(j + "request.op"), "expand");
  EXPECT_EQ(s.integer(j + "request.nodes"), 8);
  ASSERT_EQ(s.length(j + "allocation"), 6);
  for (int i = 1; i <= 6; ++i) {
    EXPECT_EQ(s.str(j + "allocation." + std::to_string(i)), "c0" + std::to_string(i));
  }
  EXPECT_EQ(s.str(j + "leader"), "c01");

  // ---- pass 5: the pending rigid job
  const std::string k = p + "jobs.2.";
  EXPECT_EQ(s.integer(k + "id"), 2);
  EXPECT_EQ(s.str(k + "name"), "wait");
  EXPECT_EQ(s.str(k + "user"), "bob");
  EXPECT_EQ(s.str(k + "kind"), "rigid");
  EXPECT_EQ(s.str(k + "state"), "PENDING");
  EXPECT_EQ(s.integer(k + "nodes"), 8);
  EXPECT_EQ(s.integer(k + "size"), 0);
  EXPECT_EQ(s.integer(k + "min_nodes"), 8);
  EXPECT_EQ(s.integer(k + "max_nodes"), 8);
  EXPECT_EQ(s.str(k + "node_constraint"), "none");
  EXPECT_EQ(s.integer(k + "tasks_per_node"), 1);
  EXPECT_DOUBLE_EQ(s.num(k + "walltime"), 0);
  EXPECT_DOUBLE_EQ(s.num(k + "power_min_w"), 0);
  EXPECT_DOUBLE_EQ(s.num(k + "power_max_w"), 0);
  EXPECT_TRUE(s.boolean(k + "urgent"));
  EXPECT_DOUBLE_EQ(s.num(k + "submit_time"), 10);
  EXPECT_TRUE(s.is_nil(k + "start_time"));
  EXPECT_TRUE(s.is_nil(k + "est_end"));
  EXPECT_TRUE(s.is_nil(k + "elapsed"));
  EXPECT_FALSE(s.boolean(k + "adapting"));
  EXPECT_TRUE(s.is_nil(k + "mtct"));
  EXPECT_TRUE(s.is_nil(k + "power_w"));
  EXPECT_DOUBLE_EQ(s.num(k + "expected_start"), 500);
  EXPECT_EQ(s.integer(k + "expansions"), 0);
  EXPECT_EQ(s.integer(k + "shrinks"), 0);
  EXPECT_EQ(s.integer(k + "gain"), 0);
  EXPECT_TRUE(s.is_nil(k + "request"));
  EXPECT_EQ(s.length(k + "allocation"), 0);
  EXPECT_TRUE(s.is_nil(k + "leader"));
}

TEST(LuaSnapshot, NodesIdleIsTentativeWithinAPass) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local seen = {}
function P.schedule(ctx)
  seen[#seen + 1] = ctx.nodes_idle
  for _, job in ipairs(ctx.pending) do
    ctx:start(job)
    seen[#seen + 1] = ctx.nodes_idle
  end
end
function P.save() return seen end
return P
)lua"));
  h.submit(luatest::rigid(1));
  h.submit(luatest::rigid(2));
  h.submit(luatest::rigid(3));  // refused: 1 idle
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  ASSERT_EQ(seen.length(""), 4);
  EXPECT_EQ(seen.integer("1"), 4);
  EXPECT_EQ(seen.integer("2"), 3);
  EXPECT_EQ(seen.integer("3"), 1);
  EXPECT_EQ(seen.integer("4"), 1) << "a refused start leaves nodes_idle alone";
  // The next pass starts from the engine's own count again.
  h.confirm_starts();
  h.ok_pass();
  LuaData again = LuaData::saved_by(*h.policy);
  EXPECT_EQ(again.integer("5"), 1);
}

// ctx.suspended_count is #ctx.suspended, kept without building the list
// (issue 15: lib/urgent.lua checks it every pass), and follows suspensions
// and resumptions.
TEST(LuaSnapshot, SuspendedCountIsTheLengthOfSuspended) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local seen = {}
local n = 0
function P.schedule(ctx)
  n = n + 1
  seen[#seen + 1] = ctx.suspended_count
  seen[#seen + 1] = #ctx.suspended
  if n == 1 then
    for _, job in ipairs(ctx.pending) do ctx:start(job) end
  elseif n == 2 then
    for _, job in ipairs(ctx.running) do ctx:suspend(job) end
  elseif n == 3 then
    ctx:resume(ctx.suspended[1])
  end
end
function P.save() return seen end
return P
)lua"));
  h.submit(luatest::rigid(1));
  h.submit(luatest::rigid(2));
  h.ok_pass();  // starts both
  h.confirm_starts();
  h.ok_pass();  // suspends both
  h.ok_pass();  // resumes one
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  ASSERT_EQ(seen.length(""), 8);
  const int expected[] = {0, 0, 0, 0, 2, 2, 1, 1};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(seen.integer(std::to_string(i + 1)), expected[i]) << i;
}

// ---------------------------------------------------------------- job tables

// Job tables are plain tables kept across passes (issue 15: a proxy cost a
// policy several times more per field read). New fields and the metatable
// are guarded; the engine's next refresh of a changed job rewrites every
// field, so an assignment to an existing field lasts until the job changes.
TEST(LuaSnapshot, JobTablesRefuseNewFieldsAndKeepTheirMetatable) {
  TempDir dir;
  Harness h(2);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local seen = {}
function P.schedule(ctx)
  local job = ctx.pending[1]
  local ok, err = pcall(function() job.extra = 'x' end)
  seen.new_ok, seen.new_err = ok, tostring(err)
  ok, err = pcall(setmetatable, job, nil)
  seen.setmt_ok = ok
  seen.mt = getmetatable(job)
  seen.nodes = job.nodes
  seen.text = tostring(job)
  seen.keys = 0
  for _ in pairs(job) do seen.keys = seen.keys + 1 end
end
function P.save() return seen end
return P
)lua"));
  h.submit(luatest::rigid(2));
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  EXPECT_FALSE(seen.boolean("new_ok"));
  EXPECT_THAT(seen.str("new_err"), HasSubstr("read-only"));
  EXPECT_FALSE(seen.boolean("setmt_ok")) << "the metatable is protected";
  EXPECT_EQ(seen.str("mt"), "sched.job");
  EXPECT_EQ(seen.integer("nodes"), 2);
  EXPECT_EQ(seen.str("text"), "job 1");
  EXPECT_GE(seen.integer("keys"), 20) << "pairs() walks the job's fields";
}

TEST(LuaSnapshot, AddingAFieldToAJobFailsThePass) {
  TempDir dir;
  Harness h(2);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
function P.schedule(ctx)
  local job = ctx.pending[1]
  ctx:start(job)
  job.planned = true
end
return P
)lua"));
  h.submit(luatest::rigid(1));
  auto error = h.pass();
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("read-only"));
  EXPECT_EQ(h.job(1).state, JobState::Pending);
}

// What a job's table shows follows the job: a change made by the engine
// between passes is there in the next one, in the same table.
TEST(LuaSnapshot, AJobTableFollowsItsJobAcrossPasses) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local kept
local seen = {}
function P.schedule(ctx)
  if not kept then
    kept = ctx.pending[1]
    seen.first = kept.state
    ctx:start(kept)
    return
  end
  seen[#seen + 1] = { state = kept.state, same = rawequal(kept, ctx.running[1]),
                      elapsed = ctx.running[1].elapsed, size = kept.size }
end
function P.save() return seen end
return P
)lua"));
  h.submit(luatest::rigid(2));
  h.ok_pass();
  h.confirm_starts();
  h.clock.advance(5);
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  EXPECT_EQ(seen.str("first"), "PENDING");
  ASSERT_EQ(seen.length(""), 1);
  EXPECT_EQ(seen.str("1.state"), "RUNNING");
  EXPECT_TRUE(seen.boolean("1.same"));
  EXPECT_EQ(seen.integer("1.size"), 2);
  EXPECT_DOUBLE_EQ(seen.num("1.elapsed"), 5.0);
}

// A job's table holds the fields a pass over the queue reads; another one
// enters it on its first read and, if it changes with the job, is
// rewritten there when the job changes (issue 15: a table costs nothing to
// keep up to date until the policy reads such a field).
TEST(LuaSnapshot, AJobTableTakesAFieldOnFirstReadAndKeepsItUpToDate) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local kept
local seen = {}
function P.schedule(ctx)
  if not kept then
    kept = ctx.pending[1]
    seen.nodes_held = rawget(kept, "nodes")
    seen.state_before = rawget(kept, "state") == nil
    seen.state = kept.state
    seen.state_after = rawget(kept, "state")
    seen.min_nodes = kept.min_nodes
    seen.min_held = rawget(kept, "min_nodes")
    seen.name_held = rawget(kept, "name") == nil and kept.name == "job"
    ctx:start(kept)
    return
  end
  -- Raw reads: what the engine wrote into the table, not __index.
  seen.state_next = rawget(kept, "state")
  seen.start_time_absent = rawget(kept, "start_time") == nil
  seen.start_time = kept.start_time
end
function P.save() return seen end
return P
)lua"));
  JobSpec spec = luatest::rigid(2);
  spec.name = "job";
  h.submit(spec);
  h.ok_pass();
  h.confirm_starts();
  h.clock.advance(5);
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  EXPECT_EQ(seen.integer("nodes_held"), 2);
  EXPECT_TRUE(seen.boolean("state_before"));
  EXPECT_EQ(seen.str("state"), "PENDING");
  EXPECT_EQ(seen.str("state_after"), "PENDING");
  EXPECT_EQ(seen.integer("min_nodes"), 2);
  EXPECT_EQ(seen.integer("min_held"), 2);
  EXPECT_TRUE(seen.boolean("name_held"));
  EXPECT_EQ(seen.str("state_next"), "RUNNING");
  EXPECT_TRUE(seen.boolean("start_time_absent"));
  EXPECT_DOUBLE_EQ(seen.num("start_time"), h.job(1).start_time);
}

// The tables of ended jobs are forgotten once they pile up, and their
// places in the engine's store of tables taken by new jobs' tables: a job
// that runs on keeps its table, and a new job never shows an old job's.
TEST(LuaSnapshot, NewJobsGetTheirOwnTablesAfterOldOnesAreForgotten) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local seen = {}
local long
function P.schedule(ctx)
  local ids = {}
  for _, job in ipairs(ctx.running) do
    long = long or job
    ids[#ids + 1] = (rawequal(long, job) and "same:" or "other:") .. job.id .. ":" .. job.state
  end
  for _, job in ipairs(ctx.pending) do
    ids[#ids + 1] = job.id .. ":" .. job.nodes .. ":" .. job.state
    ctx:start(job)
  end
  seen[#seen + 1] = table.concat(ids, ",")
end
function P.save() return seen end
return P
)lua"));
  const JobId long_job = h.submit(luatest::rigid(1));  // runs to the end
  std::vector<std::string> expected{std::to_string(long_job) + ":1:PENDING"};
  h.ok_pass();
  h.confirm_starts();
  for (int round = 0; round < 400; ++round) {
    std::string ids = "same:" + std::to_string(long_job) + ":RUNNING";
    for (int k = 0; k < 2; ++k) {
      const int nodes = 1 + (round + k) % 2;
      const JobId id = h.submit(luatest::rigid(nodes));
      ids += "," + std::to_string(id) + ":" + std::to_string(nodes) + ":PENDING";
    }
    expected.push_back(ids);
    h.ok_pass();
    h.confirm_starts();
    for (const auto& [id, job] : h.engine.jobs()) {
      if (id != long_job && job->state == JobState::Running) h.engine.job_ended(id, 0);
    }
  }
  LuaData seen = LuaData::saved_by(*h.policy);
  ASSERT_EQ(seen.length(""), static_cast<int>(expected.size()));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(seen.str(std::to_string(i + 1)), expected[i]) << "pass " << i + 1;
  }
}

TEST(LuaSnapshot, AnUnchangedJobIsTheSameTableAcrossPasses) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local first_pending, first_running
local seen = {}
function P.schedule(ctx)
  local pending, running = ctx.pending[1], ctx.running[1]
  if first_pending == nil then
    first_pending, first_running = pending, running
  else
    seen[#seen + 1] = { pending = rawequal(first_pending, pending),
                        running = rawequal(first_running, running),
                        pending_id = pending.id, running_id = running.id }
  end
end
function P.save() return seen end
return P
)lua"));
  h.submit(luatest::rigid(2));
  h.start_all();                // job 1 runs
  h.submit(luatest::rigid(4));  // job 2 waits
  h.ok_pass();
  h.clock.advance(10);  // time passes, nothing else changes
  h.ok_pass();
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  ASSERT_EQ(seen.length(""), 2);
  for (const char* pass : {"1.", "2."}) {
    SCOPED_TRACE(pass);
    EXPECT_EQ(seen.integer(std::string(pass) + "pending_id"), 2);
    EXPECT_EQ(seen.integer(std::string(pass) + "running_id"), 1);
    EXPECT_TRUE(seen.boolean(std::string(pass) + "pending"));
    EXPECT_TRUE(seen.boolean(std::string(pass) + "running"));
  }
}

// ---------------------------------------------------------------- lists

// ctx.pending is a plain sequence kept across passes: ipairs, pairs, # and
// indexing work; appending and table.sort/insert/remove/move on it fail.
TEST(LuaSnapshot, PendingIsAGuardedSequence) {
  TempDir dir;
  Harness h(1);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local seen = {}
local earlier
function P.schedule(ctx)
  if earlier then
    seen.same_table = rawequal(earlier, ctx.pending)
    return
  end
  earlier = ctx.pending
  seen.len = #ctx.pending
  seen.ids = {}
  for i, job in ipairs(ctx.pending) do seen.ids[i] = job.id end
  seen.second = ctx.pending[2].id
  seen.beyond = ctx.pending[4] == nil
  seen.pairs = 0
  for _, job in pairs(ctx.pending) do seen.pairs = seen.pairs + 1 end
  local ok, err = pcall(function() ctx.pending[#ctx.pending + 1] = 'x' end)
  seen.append_ok, seen.append_err = ok, tostring(err)
  ok = pcall(table.sort, ctx.pending, function(a, b) return a.id < b.id end)
  seen.sort_ok = ok
  ok = pcall(table.remove, ctx.pending, 1)
  seen.remove_ok = ok
  ok = pcall(table.insert, ctx.pending, 1, ctx.pending[3])
  seen.insert_ok = ok
  ok = pcall(table.move, {1, 2}, 1, 2, 1, ctx.pending)
  seen.move_ok = ok
  ok = pcall(setmetatable, ctx.pending, nil)
  seen.setmt_ok = ok
  local copy = {table.unpack(ctx.pending)}
  table.sort(copy, function(a, b) return a.id < b.id end)
  seen.copy_first = copy[1].id
  seen.len_after = #ctx.pending
  seen.after = {}
  for i, job in ipairs(ctx.pending) do seen.after[i] = job.id end
end
function P.save() return seen end
return P
)lua"));
  h.submit(luatest::rigid(1));
  h.submit(luatest::rigid(1));
  JobSpec urgent = luatest::rigid(1);
  urgent.urgent = true;
  h.submit(urgent);
  h.ok_pass();
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  EXPECT_EQ(seen.integer("len"), 3);
  ASSERT_EQ(seen.length("ids"), 3);
  EXPECT_EQ(seen.integer("ids.1"), 3) << "priority order: urgent first";
  EXPECT_EQ(seen.integer("ids.2"), 1);
  EXPECT_EQ(seen.integer("ids.3"), 2);
  EXPECT_EQ(seen.integer("second"), 1);
  EXPECT_TRUE(seen.boolean("beyond"));
  EXPECT_EQ(seen.integer("pairs"), 3);
  EXPECT_FALSE(seen.boolean("append_ok")) << "appending to ctx.pending must fail";
  EXPECT_THAT(seen.str("append_err"), HasSubstr("read-only"));
  EXPECT_FALSE(seen.boolean("sort_ok")) << "sorting ctx.pending in place must fail";
  EXPECT_FALSE(seen.boolean("remove_ok")) << "table.remove on ctx.pending must fail";
  EXPECT_FALSE(seen.boolean("insert_ok")) << "table.insert on ctx.pending must fail";
  EXPECT_FALSE(seen.boolean("move_ok")) << "table.move into ctx.pending must fail";
  EXPECT_FALSE(seen.boolean("setmt_ok"));
  EXPECT_EQ(seen.integer("copy_first"), 1) << "a copy sorts";
  EXPECT_EQ(seen.integer("len_after"), 3);
  ASSERT_EQ(seen.length("after"), 3);
  EXPECT_EQ(seen.integer("after.1"), 3) << "the queue the policy sees is unchanged";
  EXPECT_EQ(seen.integer("after.2"), 1);
  EXPECT_EQ(seen.integer("after.3"), 2);
  EXPECT_TRUE(seen.boolean("same_table")) << "one list for the life of the policy";
}

// The list kept across passes is patched from the queue's change log:
// whatever the engine did in between (starts at the head, submissions at the
// tail and in front, cancels, a hold and its release), each pass's
// ctx.pending is the queue, in order.
TEST(LuaSnapshot, PendingFollowsTheQueueThroughEveryKindOfChange) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local seen = {}
function P.schedule(ctx)
  local ids = {}
  for i, job in ipairs(ctx.pending) do ids[i] = job.id end
  seen[#seen + 1] = table.concat(ids, ",")
  -- Starting the head takes it out of the queue by the next pass.
  local head = ctx.pending[1]
  if head and head.nodes <= ctx.nodes_idle then ctx:start(head) end
end
function P.save() return seen end
return P
)lua"));
  std::vector<std::string> expected;
  const auto queue_now = [&] {
    std::string ids;
    for (const Job* job : h.engine.pending_jobs()) {
      if (!ids.empty()) ids += ",";
      ids += std::to_string(job->id);
    }
    return ids;
  };
  const auto pass = [&] {
    expected.push_back(queue_now());
    h.ok_pass();
  };
  for (int i = 0; i < 6; ++i) h.submit(luatest::rigid(1 + i % 3));
  pass();                       // built from scratch
  h.submit(luatest::rigid(2));  // at the tail
  pass();
  JobSpec urgent = luatest::rigid(1);
  urgent.urgent = true;
  h.submit(urgent);                      // in front
  ASSERT_TRUE(h.engine.cancel(3).ok());  // from the middle
  pass();
  h.submit(luatest::rigid(4));
  ASSERT_TRUE(h.engine.cancel(7).ok());
  h.submit(luatest::rigid(1));
  pass();
  ASSERT_TRUE(h.engine.hold(5, /*admin=*/true).ok());  // out of the offered queue
  pass();
  ASSERT_TRUE(h.engine.release(5).ok());  // back in its place
  pass();
  pass();  // nothing changed
  LuaData seen = LuaData::saved_by(*h.policy);
  ASSERT_EQ(seen.length(""), static_cast<int>(expected.size()));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(seen.str(std::to_string(i + 1)), expected[i]) << "pass " << i + 1;
  }
}

// The same when passes read only part of the list: positions are filled on
// first read, and patches keep the filled part true (a pass that reads the
// first two, one that reads them all, in turn).
TEST(LuaSnapshot, APartlyReadPendingListFollowsTheQueue) {
  TempDir dir;
  Harness h(3);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local seen = {}
local n = 0
function P.schedule(ctx)
  n = n + 1
  local ids = {}
  if n % 2 == 1 then
    for i = 1, 2 do ids[i] = ctx.pending[i] and ctx.pending[i].id or 0 end
    ids[3] = #ctx.pending
  else
    for i, job in ipairs(ctx.pending) do ids[i] = job.id end
    local count = 0
    for _ in pairs(ctx.pending) do count = count + 1 end
    ids[#ids + 1] = count
  end
  seen[#seen + 1] = table.concat(ids, ",")
  local head = ctx.pending[1]
  if n % 3 == 0 and head and head.nodes <= ctx.nodes_idle then ctx:start(head) end
end
function P.save() return seen end
return P
)lua"));
  std::vector<std::string> expected;
  int n = 0;
  const auto pass = [&] {
    ++n;
    const auto jobs = h.engine.pending_jobs();
    std::string ids;
    const auto add = [&](long long v) { ids += (ids.empty() ? "" : ",") + std::to_string(v); };
    if (n % 2 == 1) {
      for (std::size_t i = 0; i < 2; ++i) add(i < jobs.size() ? jobs[i]->id : 0);
      add(static_cast<long long>(jobs.size()));
    } else {
      for (const Job* job : jobs) add(job->id);
      add(static_cast<long long>(jobs.size()));
    }
    expected.push_back(ids);
    h.ok_pass();
  };
  for (int i = 0; i < 12; ++i) h.submit(luatest::rigid(1 + i % 2));
  pass();
  pass();
  ASSERT_TRUE(h.engine.cancel(2).ok());
  ASSERT_TRUE(h.engine.cancel(9).ok());
  pass();  // starts the head
  JobSpec urgent = luatest::rigid(1);
  urgent.urgent = true;
  h.submit(urgent);
  pass();
  ASSERT_TRUE(h.engine.cancel(5).ok());
  h.submit(luatest::rigid(1));
  pass();
  pass();  // starts the head
  ASSERT_TRUE(h.engine.cancel(3).ok());
  pass();
  pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  ASSERT_EQ(seen.length(""), static_cast<int>(expected.size()));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(seen.str(std::to_string(i + 1)), expected[i]) << "pass " << i + 1;
  }
}

// One change between passes (the common pass: one submission or one start)
// is patched on its own: a removal or an insertion inside the filled part of
// a longer list shifts it and fills its last position again; one past it
// leaves the filled part alone.
TEST(LuaSnapshot, OneChangeKeepsAPartlyFilledPendingListTrue) {
  TempDir dir;
  Harness h(2);  // the policy starts nothing
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local seen = {}
function P.schedule(ctx)
  local ids = {}
  for i = 1, 4 do ids[i] = ctx.pending[i] and ctx.pending[i].id or 0 end
  ids[5] = #ctx.pending
  seen[#seen + 1] = table.concat(ids, ",")
end
function P.save() return seen end
return P
)lua"));
  std::vector<std::string> expected;
  const auto pass = [&] {
    const auto jobs = h.engine.pending_jobs();
    std::string ids;
    for (std::size_t i = 0; i < 4; ++i) {
      ids += std::to_string(i < jobs.size() ? jobs[i]->id : 0) + ",";
    }
    ids += std::to_string(jobs.size());
    expected.push_back(ids);
    h.ok_pass();
  };
  for (int i = 0; i < 10; ++i) h.submit(luatest::rigid(2));
  pass();
  ASSERT_TRUE(h.engine.cancel(2).ok());  // inside the filled part
  pass();
  JobSpec urgent = luatest::rigid(2);
  urgent.urgent = true;
  h.submit(urgent);  // in front
  pass();
  ASSERT_TRUE(h.engine.cancel(9).ok());  // past the filled part
  pass();
  h.submit(luatest::rigid(2));  // at the tail
  pass();
  for (const JobId id : {1, 3, 4, 5, 6, 7}) {
    ASSERT_TRUE(h.engine.cancel(id).ok());  // one at a time, down to a short list
    pass();
  }
  LuaData seen = LuaData::saved_by(*h.policy);
  ASSERT_EQ(seen.length(""), static_cast<int>(expected.size()));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(seen.str(std::to_string(i + 1)), expected[i]) << "pass " << i + 1;
  }
}

TEST(LuaSnapshot, RunningIsAFreshSortableTableEachPass) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local seen = {}
function P.schedule(ctx)
  local order = {}
  for i, job in ipairs(ctx.running) do order[i] = job.id end
  seen[#seen + 1] = order
  table.sort(ctx.running, function(a, b) return a.id > b.id end)
  local sorted = {}
  for i, job in ipairs(ctx.running) do sorted[i] = job.id end
  seen[#seen + 1] = sorted
  ctx.running[#ctx.running + 1] = 'mine'
end
function P.save() return seen end
return P
)lua"));
  h.submit(luatest::rigid(1));
  h.submit(luatest::rigid(1));
  h.submit(luatest::rigid(1));
  h.start_all();
  h.ok_pass();
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  ASSERT_EQ(seen.length(""), 4);
  // Pass 1: start order, then sorted in place by the policy.
  EXPECT_EQ(seen.integer("1.1"), 1);
  EXPECT_EQ(seen.integer("1.3"), 3);
  EXPECT_EQ(seen.integer("2.1"), 3);
  EXPECT_EQ(seen.integer("2.3"), 1);
  // Pass 2: a fresh list in start order, without what pass 1 added.
  ASSERT_EQ(seen.length("3"), 3);
  EXPECT_EQ(seen.integer("3.1"), 1);
  EXPECT_EQ(seen.integer("3.2"), 2);
  EXPECT_EQ(seen.integer("3.3"), 3);
}

}  // namespace
}  // namespace sched
