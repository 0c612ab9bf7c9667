// The Lua policy sandbox (docs/design.md §4): what a policy may reach, locked
// globals, deterministic randomness, the instruction and memory bounds, and
// the errors of a policy file that cannot be loaded.
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
using ::testing::HasSubstr;

// A policy whose pass runs `body` (with ctx in scope) and then starts every
// pending job that fits, so a pass that works is visible from C++.
std::string policy_with(const std::string& prelude, const std::string& body) {
  return "local P = { name = 'probe', api = 1 }\n" + prelude + "\nfunction P.schedule(ctx)\n" +
         body +
         "\n  for _, job in ipairs(ctx.pending) do\n"
         "    if job.nodes <= ctx.nodes_idle then ctx:start(job) end\n"
         "  end\n"
         "end\n"
         "return P\n";
}

// ---------------------------------------------------------------- reach

TEST(LuaSandbox, DangerousLibrariesAndFunctionsAreAbsent) {
  TempDir dir;
  Harness h(2);
  // Checked both while the file loads and during a pass.
  const std::string check =
      "for _, name in ipairs({'io', 'os', 'package', 'dofile', 'loadfile', 'debug'}) do\n"
      "  if rawget(_G, name) ~= nil then error(name .. ' is reachable') end\n"
      "end\n";
  h.use(dir.write("p.lua", policy_with(check, check)));
  h.submit(luatest::rigid(1));
  h.ok_pass();
  EXPECT_EQ(h.job(1).state, JobState::Starting);
}

TEST(LuaSandbox, LoadRefusesBinaryChunksButTakesText) {
  TempDir dir;
  Harness h(1);
  h.use(dir.write("p.lua", policy_with("local seen = {}\nfunction P.save() return seen end",
                                       "local f, err = load('\\27Lua\\84\\0 not really bytecode')\n"
                                       "seen.binary_fn = f\n"
                                       "seen.binary_err = err\n"
                                       "local g, err2 = load('\\27LuaT', 'chunk', 'b')\n"
                                       "seen.forced_fn = g\n"
                                       "seen.forced_err = err2\n"
                                       "seen.text = load('return 20 + 22')()\n")));
  h.ok_pass();
  LuaData seen = LuaData::saved_by(*h.policy);
  EXPECT_TRUE(seen.is_nil("binary_fn"));
  EXPECT_THAT(seen.str("binary_err"), HasSubstr("binary chunk"));
  // Asking for binary mode explicitly does not help.
  EXPECT_TRUE(seen.is_nil("forced_fn"));
  EXPECT_THAT(seen.str("forced_err"), HasSubstr("binary chunk"));
  EXPECT_EQ(seen.integer("text"), 42);
}

TEST(LuaSandbox, RequireGivesSchedModulesAndLibFilesOnly) {
  TempDir dir;
  dir.write("lib/x.lua", "local M = {}\nfunction M.twice(v) return 2 * v end\nreturn M\n");
  dir.write("lib/sub/y.lua", "return { name = 'y' }\n");
  Harness h(1);
  const std::string prelude =
      "local constraints = require('sched.constraints')\n"
      "local log = require('sched.log')\n"
      "local x = require('lib.x')\n"
      "local seen = {}\n"
      "seen.pof2 = constraints.allowed('pof2', 1, 8)\n"
      "seen.log_info = type(log.info)\n"
      "seen.twice = x.twice(21)\n"
      "seen.y = require('lib.sub.y').name\n"
      "seen.same = rawequal(require('lib.x'), x)\n"
      "function P.save() return seen end\n";
  h.use(dir.write("p.lua", policy_with(prelude, "")));
  LuaData seen = LuaData::saved_by(*h.policy);
  ASSERT_EQ(seen.length("pof2"), 4);
  EXPECT_EQ(seen.integer("pof2.1"), 1);
  EXPECT_EQ(seen.integer("pof2.4"), 8);
  EXPECT_EQ(seen.str("log_info"), "function");
  EXPECT_EQ(seen.integer("twice"), 42);
  EXPECT_EQ(seen.str("y"), "y");
  EXPECT_TRUE(seen.boolean("same")) << "a module is loaded once and cached";
}

// The refusals of require, read one by one (names contain dots).
TEST(LuaSandbox, RequireOfAnUnknownModuleIsAnError) {
  TempDir dir;
  for (const std::string name :
       {"os", "io", "debug", "socket", "sched.nope", "lib.missing", "lib..x", "lib./etc/passwd"}) {
    SCOPED_TRACE(name);
    const std::string path = dir.write(
        "p.lua",
        "local P = { api = 1 }\nfunction P.schedule(ctx) end\nlocal ok, err = pcall(require, '" +
            name +
            "')\nP.seen = { ok = ok, err = tostring(err) }\n"
            "function P.save() return P.seen end\nreturn P\n");
    auto policy = LuaPolicy::load(path, luatest::quick_options());
    LuaData seen = LuaData::saved_by(*policy);
    EXPECT_FALSE(seen.boolean("ok"));
    EXPECT_THAT(seen.str("err"), HasSubstr("module '" + name + "'"));
  }
  // Without pcall, a failing require at the top level fails the load.
  auto error = luatest::load_error(dir.write(
      "q.lua", "local os = require('os')\nreturn { api = 1, schedule = function() end }\n"));
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("q.lua"));
  EXPECT_THAT(*error, HasSubstr("module 'os'"));
}

// ---------------------------------------------------------------- globals

TEST(LuaSandbox, WritingAnUndeclaredGlobalInAPassIsAnError) {
  TempDir dir;
  Harness h(2);
  h.use(dir.write("p.lua", policy_with("", "counter = 1")));
  h.submit(luatest::rigid(1));
  auto error = h.pass();
  ASSERT_TRUE(error) << "the pass should have failed";
  EXPECT_THAT(*error, HasSubstr("counter"));
  EXPECT_THAT(*error, HasSubstr("undeclared global"));
  EXPECT_EQ(h.job(1).state, JobState::Pending) << "the failed pass's start is dropped";
}

TEST(LuaSandbox, ReadingAnUndeclaredGlobalInAPassIsAnError) {
  TempDir dir;
  Harness h(2);
  h.use(dir.write("p.lua", policy_with("", "local v = no_such_thing")));
  h.submit(luatest::rigid(1));
  auto error = h.pass();
  ASSERT_TRUE(error) << "the pass should have failed";
  EXPECT_THAT(*error, HasSubstr("no_such_thing"));
  EXPECT_EQ(h.job(1).state, JobState::Pending);
}

TEST(LuaSandbox, GlobalsDeclaredWhileLoadingStayUsable) {
  TempDir dir;
  Harness h(2);
  h.use(dir.write("p.lua", policy_with("passes = 0\nfunction P.save() return { n = passes } end",
                                       "passes = passes + 1")));
  h.ok_pass();
  h.ok_pass();
  EXPECT_EQ(LuaData::saved_by(*h.policy).integer("n"), 2);
}

// ---------------------------------------------------------------- randomness

// What a policy loaded with `seed` draws from math.random, as text.
std::string random_sequence(const TempDir& dir, std::uint64_t seed, std::string* reseed) {
  const std::string path = dir.write("rand.lua",
                                     "local P = { api = 1 }\nfunction P.schedule(ctx) end\n"
                                     "local seen = { seq = {} }\n"
                                     "for i = 1, 8 do seen.seq[i] = math.random(1, 1000000) end\n"
                                     "seen.seq[9] = math.random()\n"
                                     "seen.reseed = type(math.randomseed)\n"
                                     "function P.save() return seen end\nreturn P\n");
  auto options = luatest::quick_options();
  options.seed = seed;
  auto policy = LuaPolicy::load(path, options);
  LuaData seen = LuaData::saved_by(*policy);
  if (reseed) *reseed = seen.str("reseed");
  std::string text;
  for (int i = 1; i <= 9; ++i) text += std::to_string(seen.num("seq." + std::to_string(i))) + " ";
  return text;
}

TEST(LuaSandbox, MathRandomIsSeededFromTheRunAndCannotBeReseeded) {
  TempDir dir;
  std::string reseed;
  const std::string a = random_sequence(dir, 7, &reseed);
  const std::string b = random_sequence(dir, 7, nullptr);
  const std::string c = random_sequence(dir, 8, nullptr);
  EXPECT_EQ(a, b) << "the same seed gives the same sequence";
  EXPECT_NE(a, c) << "another seed gives another sequence";
  EXPECT_EQ(reseed, "nil") << "math.randomseed must be absent";
}

// ---------------------------------------------------------------- bounds

TEST(LuaSandbox, EndlessLoopHitsTheInstructionBound) {
  TempDir dir;
  Harness h(2);
  auto options = luatest::quick_options();
  options.instruction_limit = 100'000;
  h.use(dir.write("p.lua",
                  policy_with("local n = 0", "n = n + 1\nif n == 1 then while true do end end")),
        options);
  h.submit(luatest::rigid(1));
  auto error = h.pass();
  ASSERT_TRUE(error) << "the endless pass should have failed";
  EXPECT_THAT(*error, HasSubstr("instruction limit (100000)"));
  EXPECT_EQ(h.job(1).state, JobState::Pending);
  EXPECT_EQ(h.engine.stats().failed, 1u);
  // The bound is per pass: the next one works.
  h.ok_pass();
  EXPECT_EQ(h.job(1).state, JobState::Starting);
}

TEST(LuaSandbox, InstructionBoundCannotBeSwallowedByPcall) {
  TempDir dir;
  Harness h(2);
  auto options = luatest::quick_options();
  options.instruction_limit = 100'000;
  // The policy catches the bound's error and goes on to start jobs.
  h.use(dir.write("p.lua",
                  policy_with("local n = 0",
                              "n = n + 1\n"
                              "if n == 1 then\n"
                              "  local ok = pcall(function() while true do end end)\n"
                              "  while not ok do ok = pcall(function() while true do end end) end\n"
                              "end")),
        options);
  h.submit(luatest::rigid(1));
  auto error = h.pass();
  ASSERT_TRUE(error) << "the pass should have failed";
  EXPECT_THAT(*error, HasSubstr("instruction limit (100000)"));
  EXPECT_EQ(h.job(1).state, JobState::Pending);
  h.ok_pass();
  EXPECT_EQ(h.job(1).state, JobState::Starting);
}

TEST(LuaSandbox, InstructionBoundHoldsWhenPcallReturnsNormally) {
  TempDir dir;
  Harness h(2);
  auto options = luatest::quick_options();
  options.instruction_limit = 100'000;
  // pcall returns false once; the pass goes straight on to ctx:start.
  h.use(dir.write("p.lua", policy_with("", "pcall(function() while true do end end)")), options);
  h.submit(luatest::rigid(1));
  auto error = h.pass();
  ASSERT_TRUE(error) << "the pass should have failed";
  EXPECT_THAT(*error, HasSubstr("instruction limit"));
  EXPECT_EQ(h.job(1).state, JobState::Pending);
  EXPECT_TRUE(h.enactor.calls.empty());
}

TEST(LuaSandbox, EndlessAllocationHitsTheMemoryBound) {
  TempDir dir;
  Harness h(2);
  auto options = luatest::quick_options();
  options.memory_limit = 4u << 20;
  h.use(dir.write(
            "p.lua",
            policy_with("local n = 0",
                        "n = n + 1\n"
                        "if n == 1 then\n"
                        "  local hoard = {}\n"
                        "  while true do hoard[#hoard + 1] = string.rep('x', 1000) .. #hoard end\n"
                        "end")),
        options);
  h.submit(luatest::rigid(1));
  auto error = h.pass();
  ASSERT_TRUE(error) << "the pass should have failed";
  EXPECT_THAT(*error, HasSubstr("memory limit"));
  EXPECT_EQ(h.job(1).state, JobState::Pending);
  EXPECT_LT(h.policy->memory_used(), options.memory_limit);
  // The hoard was garbage; the policy still works.
  h.ok_pass();
  EXPECT_EQ(h.job(1).state, JobState::Starting);
}

TEST(LuaSandbox, MemoryBoundHoldsWhenPcallCatchesIt) {
  TempDir dir;
  Harness h(2);
  auto options = luatest::quick_options();
  options.memory_limit = 4u << 20;
  h.use(dir.write(
            "p.lua",
            policy_with("",
                        "pcall(function()\n"
                        "  local hoard = {}\n"
                        "  while true do hoard[#hoard + 1] = string.rep('y', 1000) .. #hoard end\n"
                        "end)")),
        options);
  h.submit(luatest::rigid(1));
  auto error = h.pass();
  ASSERT_TRUE(error) << "the pass should have failed";
  EXPECT_THAT(*error, HasSubstr("memory limit"));
  EXPECT_EQ(h.job(1).state, JobState::Pending);
}

TEST(LuaSandbox, EndlessLoopAtTheTopLevelFailsTheLoad) {
  TempDir dir;
  auto options = luatest::quick_options();
  options.instruction_limit = 100'000;
  auto error = luatest::load_error(dir.write("spin.lua", "while true do end\nreturn { api = 1 }\n"),
                                   options);
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("spin.lua"));
  EXPECT_THAT(*error, HasSubstr("instruction limit (100000)"));
}

// ---------------------------------------------------------------- load errors

TEST(LuaLoad, SyntaxErrorNamesFileAndLine) {
  TempDir dir;
  auto error = luatest::load_error(dir.write(
      "broken.lua",
      "local P = { api = 1 }\nfunction P.schedule(ctx)\n  local x = = 1\nend\nreturn P\n"));
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("broken.lua:3:"));
}

TEST(LuaLoad, RuntimeErrorAtTheTopLevelNamesFileAndLine) {
  TempDir dir;
  auto error =
      luatest::load_error(dir.write("boom.lua", "local P = { api = 1 }\n\nerror('boom')\n"));
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("boom.lua:3:"));
  EXPECT_THAT(*error, HasSubstr("boom"));
}

TEST(LuaLoad, FileMustReturnATable) {
  TempDir dir;
  for (const std::string body : {"return 42\n", "local P = { api = 1 }\n", "return 'P'\n"}) {
    SCOPED_TRACE(body);
    auto error = luatest::load_error(dir.write("notable.lua", body));
    ASSERT_TRUE(error);
    EXPECT_THAT(*error, HasSubstr("notable.lua"));
    EXPECT_THAT(*error, HasSubstr("return a table"));
  }
}

TEST(LuaLoad, PolicyMustDeclareApiOne) {
  TempDir dir;
  for (const std::string api : {"", "api = 2,", "api = '1',", "api = 1.5,"}) {
    SCOPED_TRACE(api);
    auto error = luatest::load_error(
        dir.write("noapi.lua", "return { " + api + " schedule = function(ctx) end }\n"));
    ASSERT_TRUE(error);
    EXPECT_THAT(*error, HasSubstr("api = 1"));
  }
  EXPECT_FALSE(luatest::load_error(
      dir.write("api.lua", "return { api = 1, schedule = function(ctx) end }\n")));
}

TEST(LuaLoad, PolicyMustHaveASchedule) {
  TempDir dir;
  for (const std::string schedule : {"", "schedule = 1,", "schedule = {},"}) {
    SCOPED_TRACE(schedule);
    auto error =
        luatest::load_error(dir.write("nosched.lua", "return { api = 1, " + schedule + " }\n"));
    ASSERT_TRUE(error);
    EXPECT_THAT(*error, HasSubstr("schedule"));
  }
}

TEST(LuaLoad, OptionalHooksMustBeFunctions) {
  TempDir dir;
  for (const std::string hook : {"on_event", "save", "restore"}) {
    SCOPED_TRACE(hook);
    auto error = luatest::load_error(dir.write(
        "hook.lua", "return { api = 1, schedule = function(ctx) end, " + hook + " = 'yes' }\n"));
    ASSERT_TRUE(error);
    EXPECT_THAT(*error, HasSubstr(hook + " must be a function"));
  }
}

TEST(LuaLoad, MissingFileIsALoadError) {
  TempDir dir;
  const std::string path = (dir.path() / "does_not_exist.lua").string();
  auto error = luatest::load_error(path);
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("does_not_exist.lua"));
}

TEST(LuaLoad, NameDefaultsToTheFileStem) {
  TempDir dir;
  auto named = LuaPolicy::load(
      dir.write("a.lua", "return { name = 'custom', api = 1, schedule = function() end }\n"),
      luatest::quick_options());
  EXPECT_EQ(named->name(), "custom");
  auto unnamed =
      LuaPolicy::load(dir.write("my_policy.lua", "return { api = 1, schedule = function() end }\n"),
                      luatest::quick_options());
  EXPECT_EQ(unnamed->name(), "my_policy");
}

}  // namespace
}  // namespace sched
