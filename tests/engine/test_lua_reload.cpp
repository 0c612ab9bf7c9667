// Hot reload through PolicyHost (docs/design.md §4): a good edit swaps in; a broken
// one keeps the old policy and says why; P.save → P.restore carries plain
// data from the old state to the new one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "lua_test_support.hpp"
#include "sched/lua_policy.hpp"
#include "sched/policy_host.hpp"
#include "test_paths.hpp"

namespace sched {
namespace {

using luatest::Harness;
using luatest::LuaData;
using luatest::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A policy named `name` that starts every job that fits.
std::string starter(const std::string& name, const std::string& extra = "") {
  return "local P = { name = '" + name + "', api = 1 }\n" + extra +
         "\nfunction P.schedule(ctx)\n"
         "  for _, job in ipairs(ctx.pending) do\n"
         "    if job.nodes <= ctx.nodes_idle then ctx:start(job) end\n"
         "  end\n"
         "end\n"
         "return P\n";
}

class LuaReload : public ::testing::Test {
 protected:
  LuaReload() : h(4), host(h.engine, luatest::quick_options()) {}

  // Writes the policy file and loads it as the first policy.
  void load(const std::string& text) {
    path = dir.write("policy.lua", text);
    const Status error = host.load(path);
    ASSERT_TRUE(error.ok()) << error.message();
    ASSERT_EQ(h.engine.policy(), host.current().get());
  }
  void edit(const std::string& text) { dir.write("policy.lua", text); }

  TempDir dir;
  Harness h;
  PolicyHost host;
  std::string path;
};

TEST_F(LuaReload, AGoodEditSwapsIn) {
  load(starter("one"));
  EXPECT_EQ(host.current()->name(), "one");
  edit(starter("two"));
  const Status error = host.reload();
  ASSERT_TRUE(error.ok()) << error.message();
  EXPECT_EQ(host.current()->name(), "two");
  EXPECT_EQ(h.engine.policy(), host.current().get());
  EXPECT_EQ(h.engine.policy()->name(), "two");
  EXPECT_EQ(host.reloads(), 1u);
  EXPECT_EQ(host.failed_reloads(), 0u);
  auto reloaded = h.log.messages(EventType::PolicyReloaded);
  ASSERT_EQ(reloaded.size(), 1u);
  EXPECT_THAT(reloaded[0], HasSubstr("two"));
  EXPECT_EQ(h.log.count(EventType::PolicyError), 0u);
  // The new policy schedules.
  h.submit(luatest::rigid(1));
  h.ok_pass();
  EXPECT_EQ(h.job(1).state, JobState::Starting);
}

TEST_F(LuaReload, ASyntaxErrorKeepsTheOldPolicy) {
  load(starter("one"));
  edit("local P = { name = 'two', api = 1 }\nfunction P.schedule(ctx)\n  if then\nend\nreturn P\n");
  const Status error = host.reload();
  ASSERT_FALSE(error.ok());
  EXPECT_THAT(error.message(), HasSubstr("policy.lua:3:"));
  EXPECT_EQ(host.current()->name(), "one");
  EXPECT_EQ(h.engine.policy(), host.current().get());
  EXPECT_EQ(host.reloads(), 0u);
  EXPECT_EQ(host.failed_reloads(), 1u);
  auto errors = h.log.messages(EventType::PolicyError);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("one"));
  EXPECT_THAT(errors[0], HasSubstr("policy.lua:3:"));
  EXPECT_EQ(h.log.count(EventType::PolicyReloaded), 0u);
  // Typed, in the event and in the host's last failure.
  const Event& event = h.log.events.back();
  ASSERT_EQ(event.type, EventType::PolicyError);
  EXPECT_EQ(event.code, "syntax");
  EXPECT_EQ(event.file, "policy.lua");
  EXPECT_EQ(event.line, 3);
  const auto failure = host.last_failure();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->code, PolicyFailureCode::Syntax);
  EXPECT_EQ(failure->line, 3);
  EXPECT_EQ(failure->message, error.message());
  // The old policy goes on scheduling.
  h.submit(luatest::rigid(1));
  h.ok_pass();
  EXPECT_EQ(h.job(1).state, JobState::Starting);
}

TEST_F(LuaReload, AFailingDryPassKeepsTheOldPolicy) {
  load(starter("one"));
  edit(
      "local P = { name = 'two', api = 1 }\n"
      "function P.schedule(ctx)\n"
      "  local n = #ctx.pending + undefined_count\n"
      "end\nreturn P\n");
  const Status error = host.reload();
  ASSERT_FALSE(error.ok());
  EXPECT_THAT(error.message(), HasSubstr("dry pass"));
  EXPECT_THAT(error.message(), HasSubstr("undefined_count"));
  EXPECT_EQ(host.current()->name(), "one");
  EXPECT_EQ(h.engine.policy(), host.current().get());
  auto errors = h.log.messages(EventType::PolicyError);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("dry pass"));
  EXPECT_THAT(errors[0], HasSubstr("undefined_count"));
  const Event& event = h.log.events.back();
  EXPECT_EQ(event.code, "runtime");
  EXPECT_EQ(event.file, "policy.lua");
  EXPECT_EQ(event.line, 3);
}

TEST_F(LuaReload, FailuresAreTypedByKind) {
  load(starter("one"));
  EXPECT_FALSE(host.last_failure()) << "nothing failed yet";
  edit("local P = { name = 'two', api = 1 }\nreturn P\n");
  ASSERT_FALSE(host.reload().ok());
  auto failure = host.last_failure();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->code, PolicyFailureCode::Api);
  EXPECT_EQ(failure->file, "policy.lua");
  EXPECT_THAT(failure->message, HasSubstr("no schedule(ctx) function"));

  edit(
      "local P = { name = 'two', api = 1 }\n"
      "function P.schedule(ctx)\n"
      "  while true do end\n"
      "end\nreturn P\n");
  h.clock.advance(5);
  ASSERT_FALSE(host.reload().ok());
  failure = host.last_failure();
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->code, PolicyFailureCode::Timeout);
  EXPECT_EQ(failure->line, 3);
  EXPECT_EQ(failure->time, h.clock.now());
  EXPECT_EQ(host.failed_reloads(), 2u);
  EXPECT_EQ(host.current()->name(), "one");
}

TEST_F(LuaReload, TheDryPassChecksButNeverEnacts) {
  load(starter("one"));
  h.submit(luatest::rigid(1));  // waits: no pass has run
  // A policy that records ctx.dry and what its start answered.
  edit(R"lua(
local P = { name = 'two', api = 1 }
local seen = {}
function P.schedule(ctx)
  seen[#seen + 1] = { dry = ctx.dry, started = ctx:start(1) }
end
function P.save() return seen end
return P
)lua");
  const Status error = host.reload();
  ASSERT_TRUE(error.ok()) << error.message();
  EXPECT_THAT(h.enactor.calls, IsEmpty()) << "the dry pass enacted an action";
  EXPECT_EQ(h.job(1).state, JobState::Pending);
  LuaData seen = LuaData::saved_by(*host.current());
  ASSERT_EQ(seen.length(""), 1);
  EXPECT_TRUE(seen.boolean("1.dry"));
  EXPECT_TRUE(seen.boolean("1.started")) << "actions are still checked";
  // A real pass afterwards is not dry and enacts.
  h.ok_pass();
  EXPECT_THAT(h.enactor.calls, ElementsAre("start 1 on 1"));
  LuaData after = LuaData::saved_by(*host.current());
  EXPECT_FALSE(after.boolean("2.dry"));
}

TEST_F(LuaReload, AFailingRestoreKeepsTheOldPolicy) {
  load(starter("one", "function P.save() return { version = 1 } end"));
  edit(starter("two",
               "function P.restore(t)\n"
               "  if t.version ~= 2 then error('cannot restore version ' .. t.version) end\n"
               "end"));
  const Status error = host.reload();
  ASSERT_FALSE(error.ok());
  EXPECT_THAT(error.message(), HasSubstr("restore"));
  EXPECT_THAT(error.message(), HasSubstr("cannot restore version 1"));
  EXPECT_EQ(host.current()->name(), "one");
  EXPECT_EQ(h.engine.policy(), host.current().get());
  auto errors = h.log.messages(EventType::PolicyError);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("cannot restore version 1"));
}

// The old policy's state, with every kind of plain data, arrives intact.
TEST_F(LuaReload, SaveAndRestoreCarryPlainData) {
  load(starter("one", R"lua(
function P.save()
  return {
    nested = { a = { b = { c = 'deep' } }, list = { 1, 2.5, 'three', true } },
    quoted = 'he said "hi"\n\tand \\left\r\0done\255',
    int = 42, float = 42.0, negative = -7, frac = 0.1, big = math.maxinteger,
    small = math.mininteger, tiny = 1e-300, inf = math.huge, ninf = -math.huge,
    yes = true, no = false,
    [7] = 'seven', [2.5] = 'two and a half', [true] = 'bool key',
    empty = {},
  }
end
)lua"));
  edit(starter("two", R"lua(
local got
function P.restore(t) got = t end
local function check(cond, what) if not cond then error('restored ' .. what .. ' wrong', 2) end end
function P.save()
  local t = got
  check(t.nested.a.b.c == 'deep', 'nested.a.b.c')
  check(#t.nested.list == 4, '#list')
  check(math.type(t.nested.list[1]) == 'integer' and t.nested.list[1] == 1, 'list[1]')
  check(t.nested.list[2] == 2.5 and t.nested.list[3] == 'three', 'list[2..3]')
  check(t.nested.list[4] == true, 'list[4]')
  check(t.quoted == 'he said "hi"\n\tand \\left\r\0done\255', 'quoted')
  check(math.type(t.int) == 'integer' and t.int == 42, 'int')
  check(math.type(t.float) == 'float' and t.float == 42.0, 'float')
  check(t.negative == -7 and math.type(t.negative) == 'integer', 'negative')
  check(t.frac == 0.1, 'frac')
  check(t.big == math.maxinteger and math.type(t.big) == 'integer', 'big')
  check(t.small == math.mininteger and math.type(t.small) == 'integer', 'small')
  check(t.tiny == 1e-300, 'tiny')
  check(t.inf == math.huge and t.ninf == -math.huge, 'inf')
  check(t.yes == true and t.no == false, 'booleans')
  local seven
  for k in pairs(t) do if k == 7 then seven = math.type(k) end end
  check(t[7] == 'seven' and seven == 'integer', '[7]')
  check(t[2.5] == 'two and a half', '[2.5]')
  check(t[true] == 'bool key', '[true]')
  check(type(t.empty) == 'table' and next(t.empty) == nil, 'empty')
  return { ok = true }
end
)lua"));
  const Status error = host.reload();
  ASSERT_TRUE(error.ok()) << error.message();
  EXPECT_EQ(host.current()->name(), "two");
  // The checks run in the new policy's save; an error there names the field.
  std::optional<PolicyFailure> save_error;
  auto saved = host.current()->save(&save_error);
  EXPECT_EQ(save_error ? save_error->message : "", "");
  ASSERT_TRUE(saved);
  EXPECT_TRUE(LuaData(saved->lua_source).boolean("ok"));
}

TEST_F(LuaReload, SavingAFunctionRefusesTheReload) {
  load(starter("one", "function P.save() return { n = 1, callback = function() end } end"));
  edit(starter("two", "function P.restore(t) end"));
  const Status error = host.reload();
  ASSERT_FALSE(error.ok());
  EXPECT_THAT(error.message(), HasSubstr("function"));
  EXPECT_EQ(host.current()->name(), "one");
  auto errors = h.log.messages(EventType::PolicyError);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("function"));
}

TEST_F(LuaReload, SavingACycleRefusesTheReload) {
  load(starter(
      "one",
      "function P.save()\n  local t = { n = 1 }\n  t.again = { back = t }\n  return t\nend"));
  edit(starter("two", "function P.restore(t) end"));
  const Status error = host.reload();
  ASSERT_FALSE(error.ok());
  EXPECT_THAT(error.message(), HasSubstr("cycle"));
  EXPECT_EQ(host.current()->name(), "one");
}

TEST_F(LuaReload, ASharedTableIsNotACycle) {
  load(starter("one",
               "function P.save()\n  local shared = { v = 5 }\n"
               "  return { a = shared, b = shared }\nend"));
  edit(starter("two",
               "local got\nfunction P.restore(t) got = t end\n"
               "function P.save() return { sum = got.a.v + got.b.v } end"));
  const Status error = host.reload();
  ASSERT_TRUE(error.ok()) << error.message();
  EXPECT_EQ(LuaData::saved_by(*host.current()).integer("sum"), 10);
}

TEST_F(LuaReload, ReloadIfChangedNoticesEdits) {
  load(starter("one"));
  EXPECT_FALSE(host.reload_if_changed()) << "nothing changed yet";
  // Same length, same second: only the content tells.
  edit(starter("two"));
  EXPECT_TRUE(host.reload_if_changed());
  EXPECT_EQ(host.current()->name(), "two");
  EXPECT_FALSE(host.reload_if_changed());
  // A broken edit is tried once, refused, and not retried until the next edit.
  edit("this is not lua\n");
  EXPECT_TRUE(host.reload_if_changed());
  EXPECT_EQ(host.current()->name(), "two");
  EXPECT_EQ(host.failed_reloads(), 1u);
  EXPECT_FALSE(host.reload_if_changed());
  EXPECT_EQ(host.failed_reloads(), 1u);
  edit(starter("six"));
  EXPECT_TRUE(host.reload_if_changed());
  EXPECT_EQ(host.current()->name(), "six");
  EXPECT_EQ(host.reloads(), 2u);
}

TEST(LuaReloadHost, LoadOfABrokenFileInstallsNothing) {
  TempDir dir;
  Harness h(2);
  PolicyHost host(h.engine, luatest::quick_options());
  const Status error = host.load(dir.write("bad.lua", "return {\n"));
  ASSERT_FALSE(error.ok());
  EXPECT_THAT(error.message(), HasSubstr("bad.lua"));
  EXPECT_EQ(host.current(), nullptr);
  EXPECT_EQ(h.engine.policy(), nullptr);
}

TEST(LuaReloadHost, ResolvePolicyPathTakesNamesAndPaths) {
  TempDir dir;
  const std::string file = dir.write("mine.lua", starter("mine"));
  const std::string folder = dir.path().string();
  EXPECT_EQ(resolve_policy_path("mine", folder), (dir.path() / "mine.lua").string());
  EXPECT_EQ(resolve_policy_path(file, "/nonexistent"), file);
  EXPECT_FALSE(resolve_policy_path("absent", folder));
  EXPECT_FALSE(resolve_policy_path(folder + "/absent.lua", folder));
  EXPECT_TRUE(resolve_policy_path("fcfs", SCHED_SOURCE_POLICY_DIR));
  EXPECT_EQ(resolve_policy_path("negotiation/socket_pack", SCHED_SOURCE_POLICY_DIR),
            std::string(SCHED_SOURCE_POLICY_DIR) + "/negotiation/socket_pack.lua");
  EXPECT_TRUE(resolve_policy_path("easy_backfill", SCHED_SOURCE_POLICY_DIR));
}

}  // namespace
}  // namespace sched
