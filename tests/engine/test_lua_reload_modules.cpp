// Reload follows every file a policy loads (issue 22 item 1): an edit to a
// lib module the policy required reloads it like an edit to the policy
// file; a broken edit there keeps the old policy. And PolicyHost::check,
// `sched policy check`'s dry pass: what a candidate would do, changing nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "lua_test_support.hpp"
#include "sched/lua_policy.hpp"
#include "sched/policy_host.hpp"

namespace sched {
namespace {

using luatest::Harness;
using luatest::TempDir;
using ::testing::HasSubstr;

// A policy whose name and whether it starts jobs come from lib/<module>.lua.
const char* kPolicy =
    "local m = require('lib.shared')\n"
    "local P = { name = m.name, api = 1 }\n"
    "function P.schedule(ctx)\n"
    "  if not m.starts then return end\n"
    "  for _, job in ipairs(ctx.pending) do\n"
    "    if job.nodes <= ctx.nodes_idle then ctx:start(job) end\n"
    "  end\n"
    "end\n"
    "function P.save() return { seen = (P.seen or 0) + 1 } end\n"
    "function P.restore(s) P.seen = s.seen end\n"
    "return P\n";

// lib/shared.lua requires lib/deep/names.lua: the watch is transitive.
std::string shared(bool starts) {
  return std::string("local names = require('lib.deep.names')\n") +
         "return { name = names.name, starts = " + (starts ? "true" : "false") + " }\n";
}
std::string names(const std::string& name) { return "return { name = '" + name + "' }\n"; }

class ReloadModules : public ::testing::Test {
 protected:
  ReloadModules() : h(4), host(h.engine, luatest::quick_options()) {
    dir.write("lib/shared.lua", shared(true));
    dir.write("lib/deep/names.lua", names("one"));
    path = dir.write("policy.lua", kPolicy);
    const Status loaded = host.load(path);
    EXPECT_TRUE(loaded.ok()) << loaded.message();
  }

  TempDir dir;
  Harness h;
  PolicyHost host;
  std::string path;
};

TEST_F(ReloadModules, ThePolicyKnowsEveryFileItLoaded) {
  const auto& sources = host.current()->sources();
  ASSERT_EQ(sources.size(), 3u);
  EXPECT_EQ(sources[0].name, "policy.lua");
  EXPECT_EQ(sources[0].path, path);
  EXPECT_EQ(sources[0].text, kPolicy);
  EXPECT_EQ(sources[1].name, "lib/shared.lua");
  EXPECT_EQ(sources[2].name, "lib/deep/names.lua");
  EXPECT_EQ(sources[2].text, names("one"));
}

TEST_F(ReloadModules, AnEditToALibModuleReloads) {
  EXPECT_FALSE(host.reload_if_changed()) << "nothing changed yet";
  dir.write("lib/deep/names.lua", names("two"));  // same length: only the content tells
  EXPECT_TRUE(host.reload_if_changed());
  EXPECT_EQ(host.current()->name(), "two");
  EXPECT_EQ(h.engine.policy()->name(), "two");
  EXPECT_EQ(host.reloads(), 1u);
  ASSERT_EQ(h.log.messages(EventType::PolicyReloaded).size(), 1u);
  EXPECT_FALSE(host.reload_if_changed());
  // The new state was handed the old one's saved state, as on a policy file edit.
  h.submit(luatest::rigid(1));
  h.ok_pass();
  EXPECT_EQ(h.job(1).state, JobState::Starting);
}

TEST_F(ReloadModules, ABrokenModuleEditKeepsTheOldPolicy) {
  dir.write("lib/shared.lua", "return { name = \n");
  EXPECT_TRUE(host.reload_if_changed());
  EXPECT_EQ(host.current()->name(), "one");
  EXPECT_EQ(host.failed_reloads(), 1u);
  ASSERT_TRUE(host.last_failure());
  EXPECT_THAT(host.last_failure()->message, HasSubstr("lib/shared.lua:"));
  const auto errors = h.log.messages(EventType::PolicyError);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], HasSubstr("keeping one"));
  // Tried once, not again until the next edit.
  EXPECT_FALSE(host.reload_if_changed());
  EXPECT_EQ(host.failed_reloads(), 1u);
  // Fixing it reloads; the old policy ran all along.
  dir.write("lib/shared.lua", shared(false));
  EXPECT_TRUE(host.reload_if_changed());
  EXPECT_EQ(host.failed_reloads(), 1u);
  EXPECT_EQ(host.reloads(), 1u);
  h.submit(luatest::rigid(1));
  h.ok_pass();
  EXPECT_EQ(h.job(1).state, JobState::Pending) << "the fixed module starts nothing";
}

TEST_F(ReloadModules, AModuleAddedByAnEditIsWatchedToo) {
  dir.write("lib/extra.lua", "return { name = 'three' }\n");
  dir.write("lib/shared.lua",
            "local extra = require('lib.extra')\nreturn { name = extra.name, starts = true }\n");
  EXPECT_TRUE(host.reload_if_changed());
  EXPECT_EQ(host.current()->name(), "three");
  dir.write("lib/extra.lua", "return { name = 'four!' }\n");
  EXPECT_TRUE(host.reload_if_changed());
  EXPECT_EQ(host.current()->name(), "four!");
}

TEST_F(ReloadModules, CheckShowsActionsAndChangesNothing) {
  h.submit(luatest::rigid(3));
  h.submit(luatest::rigid(3));
  const auto candidate = host.check(path, {});
  ASSERT_FALSE(candidate.failure) << candidate.failure->message;
  ASSERT_EQ(candidate.dry.actions.size(), 1u);
  EXPECT_EQ(candidate.dry.actions[0].type, Action::Type::Start);
  EXPECT_EQ(candidate.dry.actions[0].job, 1u);
  EXPECT_EQ(candidate.dry.actions[0].nodes, 3);
  EXPECT_TRUE(candidate.dry.refusals.empty());
  EXPECT_EQ(candidate.sources.size(), 3u);
  // Nothing was enacted, nothing swapped.
  EXPECT_EQ(h.job(1).state, JobState::Pending);
  EXPECT_EQ(h.engine.policy(), host.current().get());
  EXPECT_EQ(host.reloads(), 0u);
  EXPECT_EQ(h.log.count(EventType::PolicyReloaded), 0u);
}

TEST_F(ReloadModules, CheckReportsRefusals) {
  h.submit(luatest::rigid(2));
  const std::string greedy =
      dir.write("greedy.lua",
                "local P = { api = 1 }\n"
                "function P.schedule(ctx)\n"
                "  for _, job in ipairs(ctx.pending) do ctx:start(job, 8) end\n"
                "end\nreturn P\n");
  const auto candidate = host.check(greedy, {});
  ASSERT_FALSE(candidate.failure);
  EXPECT_TRUE(candidate.dry.actions.empty());
  ASSERT_EQ(candidate.dry.refusals.size(), 1u);
  EXPECT_EQ(candidate.dry.refusals[0].job, 1u);
}

TEST_F(ReloadModules, CheckOfABrokenFileSaysWhereAndChangesNothing) {
  const std::string broken = dir.write("broken.lua", "local P = { api = 1 }\nif then\n");
  const auto candidate = host.check(broken, {});
  ASSERT_TRUE(candidate.failure);
  EXPECT_THAT(candidate.failure->message, HasSubstr("broken.lua:2:"));
  EXPECT_EQ(candidate.policy, nullptr);
  EXPECT_EQ(host.failed_reloads(), 0u);
  EXPECT_EQ(h.log.count(EventType::PolicyError), 0u);
}

TEST_F(ReloadModules, DeploySwitchesFilesAndWatchesTheNewOnes) {
  const std::string other = dir.write("other.lua",
                                      "local P = { name = 'other', api = 1 }\n"
                                      "function P.schedule(ctx) end\nreturn P\n");
  ASSERT_TRUE(host.deploy(other, {{"k", ParamValue{3LL}}}).ok());
  EXPECT_EQ(host.current()->name(), "other");
  EXPECT_EQ(host.path(), other);
  EXPECT_EQ(host.params().at("k"), ParamValue{3LL});
  // The old policy's module is not watched any more; the new file is.
  dir.write("lib/deep/names.lua", names("xxx"));
  EXPECT_FALSE(host.reload_if_changed());
  dir.write("other.lua",
            "local P = { name = 'other2', api = 1 }\nfunction P.schedule(ctx) end\nreturn P\n");
  EXPECT_TRUE(host.reload_if_changed());
  EXPECT_EQ(host.current()->name(), "other2");
  // A broken one is refused and changes nothing.
  const std::string bad = dir.write("bad.lua", "return 1\n");
  EXPECT_FALSE(host.deploy(bad, {}).ok());
  EXPECT_EQ(host.current()->name(), "other2");
  EXPECT_EQ(host.path(), other);
}

}  // namespace
}  // namespace sched
