// Actions from Lua (docs/design.md §4): ctx:start/expand/shrink/request_perf/
// preempt/reserve answer true, or false and a refusal table; they take a job
// table or an id; bad arguments are Lua errors; accepted actions are enacted
// in call order after the pass, and all dropped when the pass fails.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "lua_test_support.hpp"
#include "sched/lua_policy.hpp"

namespace sched {
namespace {

using luatest::Harness;
using luatest::LuaData;
using luatest::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A policy whose pass runs `body` once (the first pass) with a helper
// `rec(name, ok, refusal)` that records an answer; P.save() returns them.
std::string recording_policy(const std::string& body) {
  return R"lua(
local P = { name = 'acts', api = 1 }
local seen = {}
local function rec(name, ok, refusal)
  local r = { ok = ok, type = type(ok) }
  if refusal ~= nil then
    r.code, r.job, r.want, r.have = refusal.code, refusal.job, refusal.want, refusal.have
    r.message, r.text = refusal.message, tostring(refusal)
  end
  seen[name] = r
end
local passes = 0
function P.schedule(ctx)
  passes = passes + 1
  if passes > 1 then return end
)lua" + body +
         R"lua(
end
function P.save() return seen end
return P
)lua";
}

TEST(LuaActions, EveryActionAnswersTrueWhenAccepted) {
  TempDir dir;
  Harness h(16);
  h.use(dir.write("p.lua", recording_policy(R"lua(
  rec('perf', ctx:request_perf(1))
  rec('shrink', ctx:shrink(2, 2))
  rec('start', ctx:start(4))
  rec('expand', ctx:expand(1, 4))
  rec('preempt', ctx:preempt(3, 'requeue'))
  rec('reserve', ctx:reserve(5, 1000))
)lua")));
  h.submit(luatest::malleable(2, 1, 8));  // 1
  h.submit(luatest::malleable(4, 1, 4));  // 2
  h.submit(luatest::rigid(2));            // 3
  h.start_all();
  h.submit(luatest::rigid(2));   // 4
  h.submit(luatest::rigid(16));  // 5: waits
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  for (const char* name : {"perf", "shrink", "start", "expand", "preempt", "reserve"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(seen.str(std::string(name) + ".type"), "boolean");
    EXPECT_TRUE(seen.boolean(std::string(name) + ".ok"));
    EXPECT_TRUE(seen.is_nil(std::string(name) + ".code"));
  }
  // Enacted after the pass, in the order the policy called them.
  EXPECT_THAT(h.enactor.calls,
              ElementsAre("perf 1", "shrink 2 4->2", "start 4 on 2", "expand 1 2->4", "stop 3"));
  ASSERT_TRUE(h.job(5).run->expected_start);
  EXPECT_DOUBLE_EQ(*h.job(5).run->expected_start, 1000);
  EXPECT_EQ(h.job(1).state, JobState::Adapting);
  EXPECT_EQ(h.job(2).state, JobState::Adapting);
  EXPECT_EQ(h.job(3).state, JobState::Completing);
  EXPECT_EQ(h.job(4).state, JobState::Starting);
  // The events of the enactment come in the same order.
  std::vector<std::string> order;
  for (const Event& e : h.log.events) {
    if (e.type == EventType::JobAdapting || e.type == EventType::JobStarting ||
        e.type == EventType::JobCompleting || e.type == EventType::JobReserved) {
      order.push_back(std::string(topic(e.type)) + " " + std::to_string(e.job));
    }
  }
  ASSERT_GE(order.size(), 5u);
  std::vector<std::string> last(order.end() - 5, order.end());
  EXPECT_THAT(last, ElementsAre(std::string(topic(EventType::JobAdapting)) + " 2",
                                std::string(topic(EventType::JobStarting)) + " 4",
                                std::string(topic(EventType::JobAdapting)) + " 1",
                                std::string(topic(EventType::JobCompleting)) + " 3",
                                std::string(topic(EventType::JobReserved)) + " 5"));
}

// Two resizes of one job in one pass in the same direction are one
// adaptation to the last target, at the first call's place in the order;
// the opposite direction is refused.
TEST(LuaActions, RepeatedResizesOfAJobMerge) {
  TempDir dir;
  Harness h(8);
  h.use(dir.write("p.lua", recording_policy(R"lua(
  rec('grow', ctx:expand(1, 3))
  rec('start', ctx:start(2))
  rec('grow_more', ctx:expand(1, 4))
  rec('back', ctx:shrink(1, 2))
)lua")));
  h.submit(luatest::malleable(2, 1, 8));  // 1
  h.start_all();
  h.submit(luatest::rigid(1));  // 2
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  EXPECT_TRUE(seen.boolean("grow.ok"));
  EXPECT_TRUE(seen.boolean("grow_more.ok"));
  EXPECT_FALSE(seen.boolean("back.ok"));
  EXPECT_EQ(seen.str("back.code"), "mixed_resize");
  EXPECT_THAT(h.enactor.calls, ElementsAre("expand 1 2->4", "start 2 on 1"));
}

// ctx:shrink(job, n, {nodes = {...}}) names the nodes that leave (issue 17
// item 4); a wrong choice is refused with its reason, a malformed one raises.
TEST(LuaActions, AShrinkNamesTheNodesThatLeave) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", recording_policy(R"lua(
  rec('not_its', ctx:shrink(1, 2, {nodes = {'c04'}}))
  rec('leader', ctx:shrink(1, 2, {nodes = {'c01', 'c02'}}))
  rec('count', ctx:shrink(1, 1, {nodes = {'c02'}}))
  rec('named', ctx:shrink(1, 1, {nodes = {'c02', 'c03'}}))
)lua")));
  h.submit(luatest::malleable(3, 1, 4));  // 1: c01-c03
  h.start_all();
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  EXPECT_EQ(seen.str("not_its.code"), "bad_argument");
  EXPECT_THAT(seen.str("not_its.message"), HasSubstr("node c04 is not the job's"));
  EXPECT_EQ(seen.str("leader.code"), "leader_node");
  EXPECT_EQ(seen.str("count.code"), "bad_argument");
  EXPECT_THAT(seen.str("count.message"), HasSubstr("names 1 nodes; the shrink gives back 2"));
  EXPECT_TRUE(seen.boolean("named.ok"));
  EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 1 3->1"));
  h.engine.adaptation_done(1, true);
  ASSERT_EQ(h.job(1).allocation.size(), 1u);
  EXPECT_EQ(h.engine.cluster().node(h.job(1).allocation[0]).name, "c01");

  for (const char* call : {"ctx:shrink(1, 1, {nodes = 'c02'})", "ctx:shrink(1, 1, {nodes = {2}})",
                           "ctx:shrink(1, 1, {node = {'c02'}})"}) {
    SCOPED_TRACE(call);
    Harness bad(4);
    bad.use(dir.write("bad.lua", std::string("local P = { name = 'bad', api = 1 }\n"
                                             "function P.schedule(ctx)\n  ") +
                                     call + "\nend\nreturn P\n"));
    bad.submit(luatest::malleable(3, 1, 4));
    bad.start_all();
    auto error = bad.pass();
    ASSERT_TRUE(error) << "the pass should have failed";
    EXPECT_THAT(*error, HasSubstr("bad argument #3"));
  }
}

TEST(LuaActions, RefusedActionsAnswerFalseAndARefusalTable) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", recording_policy(R"lua(
  rec('over', ctx:start(3))
  rec('unknown', ctx:start(99))
  rec('constraint', ctx:expand(2, 3))
  rec('above_max', ctx:expand(2, 8))
  rec('not_smaller', ctx:shrink(2, 1))
  rec('rigid', ctx:shrink(1, 1))
  rec('perf', ctx:request_perf(3))
  rec('preempt', ctx:preempt(3, 'cancel'))
  rec('reserve', ctx:reserve(1, 100))
  rec('nan', ctx:reserve(3, 0/0))
  rec('first', ctx:start(4))
  rec('again', ctx:start(4))
)lua")));
  h.submit(luatest::rigid(2));                                  // 1: runs
  h.submit(luatest::malleable(1, 1, 4, NodeConstraint::Pof2));  // 2: runs
  h.start_all();                                                // 1 node idle
  h.submit(luatest::rigid(3));                                  // 3: waits
  h.submit(luatest::rigid(1));                                  // 4: waits
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);

  EXPECT_EQ(seen.str("over.type"), "boolean");
  EXPECT_FALSE(seen.boolean("over.ok"));
  EXPECT_EQ(seen.str("over.code"), "over_allocation");
  EXPECT_EQ(seen.integer("over.job"), 3);
  EXPECT_EQ(seen.integer("over.want"), 3);
  EXPECT_EQ(seen.integer("over.have"), 1);
  EXPECT_EQ(seen.str("over.message"), "over_allocation: job 3 wants 3 nodes, 1 idle");
  EXPECT_EQ(seen.str("over.text"), seen.str("over.message")) << "tostring(refusal) is its message";

  const std::pair<const char*, const char*> codes[] = {
      {"unknown", "unknown_job"},     {"constraint", "constraint"}, {"above_max", "above_max"},
      {"not_smaller", "not_smaller"}, {"rigid", "rigid_job"},       {"perf", "not_running"},
      {"preempt", "not_running"},     {"reserve", "not_pending"},   {"nan", "bad_argument"},
      {"again", "already_acted"}};
  for (const auto& [name, code] : codes) {
    SCOPED_TRACE(name);
    const std::string n(name);
    EXPECT_EQ(seen.str(n + ".type"), "boolean");
    EXPECT_FALSE(seen.boolean(n + ".ok"));
    EXPECT_EQ(seen.str(n + ".code"), code);
    EXPECT_THAT(seen.str(n + ".message"), HasSubstr(code));
    EXPECT_EQ(seen.str(n + ".text"), seen.str(n + ".message"));
  }
  EXPECT_EQ(seen.integer("above_max.want"), 8);
  EXPECT_EQ(seen.integer("above_max.have"), 4);
  EXPECT_EQ(seen.integer("unknown.job"), 99);
  EXPECT_TRUE(seen.boolean("first.ok"));
  // Only the accepted start is enacted; refusals are counted.
  EXPECT_THAT(h.enactor.calls, ElementsAre("start 4 on 1"));
  EXPECT_EQ(h.engine.stats().refusals, 11u);
}

TEST(LuaActions, ActionsTakeAJobTableOrAnId) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", recording_policy(R"lua(
  rec('by_table', ctx:start(ctx.pending[1]))
  rec('by_id', ctx:start(2))
  rec('sized', ctx:start(ctx.pending[3], 2))
)lua")));
  h.submit(luatest::rigid(1));
  h.submit(luatest::rigid(1));
  JobSpec moldable;
  moldable.kind = JobKind::Moldable;
  moldable.nodes = 1;
  moldable.max_nodes = 4;
  h.submit(moldable);
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  EXPECT_TRUE(seen.boolean("by_table.ok"));
  EXPECT_TRUE(seen.boolean("by_id.ok"));
  EXPECT_TRUE(seen.boolean("sized.ok"));
  EXPECT_THAT(h.enactor.calls, ElementsAre("start 1 on 1", "start 2 on 1", "start 3 on 2"));
}

// Calls that are malformed, not merely refused, raise a Lua error: the pass
// fails and its earlier accepted actions are dropped.
TEST(LuaActions, MalformedCallsRaiseAndDropThePass) {
  TempDir dir;
  const std::pair<const char*, const char*> cases[] = {
      {"ctx:start(ctx.pending[2], 2.5)", "node count must be an integer"},
      {"ctx:start(ctx.pending[2], '1')", "integer expected"},
      {"ctx:start('two')", "expected a job table or a job id"},
      {"ctx:start({})", "expected a job table or a job id"},
      {"ctx:expand(9, 1.5)", "node count must be an integer"},
      {"ctx:shrink(9, nil)", "integer expected"},
      {"ctx:preempt(9, 'kill')", "invalid option 'kill'"},
      {"ctx:reserve(ctx.pending[2], 'soon')", "number expected"},
  };
  for (const auto& [call, message] : cases) {
    SCOPED_TRACE(call);
    Harness h(4);
    h.use(dir.write("p.lua", std::string("local P = { name = 'bad', api = 1 }\n"
                                         "function P.schedule(ctx)\n"
                                         "  assert(ctx:start(1))\n  ") +
                                 call + "\nend\nreturn P\n"));
    h.submit(luatest::rigid(1));
    h.submit(luatest::rigid(1));
    auto error = h.pass();
    ASSERT_TRUE(error) << "the pass should have failed";
    EXPECT_THAT(*error, HasSubstr(message));
    EXPECT_THAT(h.enactor.calls, IsEmpty());
    EXPECT_EQ(h.job(1).state, JobState::Pending);
  }
}

TEST(LuaActions, AnErrorAfterAcceptedActionsDropsThemAll) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", R"lua(
local P = { name = 'flaky', api = 1 }
function P.schedule(ctx)
  assert(ctx:start(1))
  assert(ctx:start(2))
  assert(ctx:reserve(3, 500))
  error('second thoughts')
end
return P
)lua"));
  h.submit(luatest::rigid(1));
  h.submit(luatest::rigid(1));
  h.submit(luatest::rigid(4));
  auto error = h.pass();
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("flaky"));
  EXPECT_THAT(*error, HasSubstr("p.lua:7:"));
  EXPECT_THAT(*error, HasSubstr("second thoughts"));
  EXPECT_THAT(*error, HasSubstr("dropped"));
  EXPECT_THAT(h.enactor.calls, IsEmpty());
  for (JobId id : {1, 2, 3}) EXPECT_EQ(h.job(id).state, JobState::Pending);
  EXPECT_FALSE(h.job(3).run->expected_start);
  EXPECT_EQ(h.log.count(EventType::JobReserved), 0u);
  EXPECT_EQ(h.engine.stats().failed, 1u);
  EXPECT_EQ(h.engine.stats().actions, 0u);
  EXPECT_EQ(h.log.count(EventType::PolicyError), 1u);
}

TEST(LuaActions, ActionsFromOnEventAreErrors) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", R"lua(
local P = { name = 'eager', api = 1 }
local seen = { events = 0 }
function P.schedule(ctx) end
function P.on_event(ctx, ev)
  seen.events = seen.events + 1
  if ev.topic == 'job.submitted' then
    seen.topic, seen.job = ev.topic, ev.job
    local ok, err = pcall(ctx.start, ctx, ev.job)
    seen.start_ok, seen.start_err = ok, tostring(err)
    ok, err = pcall(ctx.reserve, ctx, ev.job, 10)
    seen.reserve_ok, seen.reserve_err = ok, tostring(err)
    ctx:start(ev.job)  -- not caught: an on_event error
  end
end
function P.save() return seen end
return P
)lua"));
  h.submit(luatest::rigid(1));
  EXPECT_EQ(h.policy->event_errors(), 1u);
  LuaData seen = LuaData::saved_by(*h.policy);
  EXPECT_GE(seen.integer("events"), 1);
  EXPECT_EQ(seen.str("topic"), "job.submitted");
  EXPECT_EQ(seen.integer("job"), 1);
  EXPECT_FALSE(seen.boolean("start_ok"));
  EXPECT_THAT(seen.str("start_err"), HasSubstr("only available during a scheduling pass"));
  EXPECT_FALSE(seen.boolean("reserve_ok"));
  EXPECT_THAT(h.enactor.calls, IsEmpty());
  EXPECT_EQ(h.job(1).state, JobState::Pending);
  EXPECT_FALSE(h.job(1).run->expected_start);
}

// Each topic's named fields reach on_event (docs/policy-api.md §5), and
// `value` still holds what it held in the first version of the API.
TEST(LuaActions, OnEventSeesEachTopicsNamedFields) {
  TempDir dir;
  Harness h(4);
  h.use(dir.write("p.lua", R"lua(
local P = { name = 'watcher', api = 1 }
local seen = {}
function P.schedule(ctx)
  for _, job in ipairs(ctx.pending) do ctx:reserve(job, 500) end
end
function P.on_event(ctx, ev)
  local key = ev.topic:gsub('%.', '_')
  seen[key] = { expected_start = ev.expected_start, lower_w = ev.lower_w,
                     upper_w = ev.upper_w, value = ev.value, code = ev.code }
end
function P.save() return seen end
return P
)lua"));
  h.engine.set_corridor(1000, 1700);
  h.submit(luatest::rigid(1));  // never started: the policy only reserves
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  EXPECT_EQ(seen.num("power_corridor.lower_w"), 1000);
  EXPECT_EQ(seen.num("power_corridor.upper_w"), 1700);
  EXPECT_EQ(seen.num("power_corridor.value"), 1000);
  EXPECT_EQ(seen.num("job_reserved.expected_start"), 500);
  EXPECT_EQ(seen.num("job_reserved.value"), 500);
  EXPECT_EQ(seen.num("job_submitted.value"), 0);
  EXPECT_TRUE(seen.is_nil("job_submitted.expected_start"));
}

}  // namespace
}  // namespace sched
