// The journal of deployed policy versions (issue 22 item 4): what is
// journaled when, the content hash, and a version loaded back from its
// journaled text when its files changed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "lua_test_support.hpp"
#include "policy_check.hpp"
#include "policy_versions.hpp"
#include "sched/policy_host.hpp"
#include "state_store.hpp"

namespace sched::daemon {
namespace {

using luatest::Harness;
using luatest::TempDir;
using ::testing::HasSubstr;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const char* kPolicy =
    "local lib = require('lib.helper')\n"
    "local P = { name = lib.name, api = 1 }\n"
    "function P.schedule(ctx)\n"
    "  for _, job in ipairs(ctx.pending) do\n"
    "    if job.nodes <= ctx.nodes_idle then ctx:start(job) end\n"
    "  end\n"
    "end\nreturn P\n";

class PolicyVersionsTest : public ::testing::Test {
 protected:
  PolicyVersionsTest()
      : store(StateStore::open(":memory:")),
        h(4),
        host(h.engine, luatest::quick_options()),
        versions(*store, (dir.path() / "versions").string()) {
    dir.write("lib/helper.lua", "return { name = 'one' }\n");
    path = dir.write("p.lua", kPolicy);
  }

  TempDir dir;
  std::unique_ptr<StateStore> store;
  Harness h;
  PolicyHost host;
  PolicyVersions versions;
  std::string path;
};

TEST_F(PolicyVersionsTest, JournalsEachNewVersionOnce) {
  ASSERT_TRUE(host.load(path).ok());
  EXPECT_EQ(versions.note(host, "schedd", "load", 10), 1u);
  EXPECT_EQ(versions.note(host, "schedd", "load", 11), 1u) << "a restart of the same version";
  dir.write("lib/helper.lua", "return { name = 'two' }\n");
  ASSERT_TRUE(host.reload_if_changed());
  EXPECT_EQ(versions.note(host, "schedd", "reload", 12), 2u);
  ASSERT_TRUE(host.deploy(path, {{"k", ParamValue{1LL}}}).ok());
  EXPECT_EQ(versions.note(host, "alice", "set", 13), 3u) << "new parameters, new version";
  EXPECT_EQ(versions.current(), 3u);

  const auto history = versions.history();
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0].name, "one");
  EXPECT_EQ(history[0].user, "schedd");
  EXPECT_EQ(history[0].how, "load");
  EXPECT_EQ(history[0].time, 10);
  ASSERT_EQ(history[0].files.size(), 2u);
  EXPECT_EQ(history[0].files[0].name, "p.lua");
  EXPECT_EQ(history[0].files[1].name, "lib/helper.lua");
  EXPECT_EQ(history[0].files[1].text, "return { name = 'one' }\n");
  EXPECT_EQ(history[1].name, "two");
  EXPECT_NE(history[0].hash, history[1].hash);
  EXPECT_EQ(history[1].hash, history[2].hash);
  EXPECT_EQ(history[2].params.at("k"), "1");
  EXPECT_EQ(history[2].user, "alice");
  EXPECT_EQ(version_params(history[2]).at("k"), ParamValue{1LL});
}

TEST_F(PolicyVersionsTest, AVersionWhoseFilesChangedLoadsFromItsJournaledText) {
  ASSERT_TRUE(host.load(path).ok());
  versions.note(host, "schedd", "load", 10);
  const auto first = versions.history().at(0);
  EXPECT_EQ(versions.materialize(first), path) << "unchanged: its own file";

  dir.write("lib/helper.lua", "broken(\n");
  const std::string copy = versions.materialize(first);
  EXPECT_NE(copy, path);
  EXPECT_THAT(copy, HasSubstr("versions/1/p.lua"));
  EXPECT_EQ(read(copy), kPolicy);
  ASSERT_TRUE(host.deploy(copy, {}).ok());
  EXPECT_EQ(host.current()->name(), "one");
  EXPECT_EQ(versions.note(host, "bob", "rollback to 1", 20), 2u);
  EXPECT_EQ(versions.history().at(1).hash, first.hash) << "the same text, the same hash";
}

TEST(PolicyVersionsRevert, TheEnginesRevertIsJournaledAsTheVersionItRunsAgain) {
  TempDir dir;
  auto store = StateStore::open(":memory:");
  EngineConfig config;
  config.revert_after_failures = 2;
  Harness h(2, config);
  PolicyHost host(h.engine, luatest::quick_options());
  PolicyVersions versions(*store, (dir.path() / "versions").string());
  dir.write("lib/helper.lua", "return { name = 'one' }\n");
  const std::string good = dir.write("p.lua", kPolicy);
  ASSERT_TRUE(host.load(good).ok());
  versions.note(host, "schedd", "load", 1);
  h.ok_pass();  // the good one completed a live pass: something to go back to
  const std::string bad =
      dir.write("bad.lua",
                "local P = { name = 'bad', api = 1 }\n"
                "function P.schedule(ctx) if not ctx.dry then error('live passes fail') end end\n"
                "return P\n");
  ASSERT_TRUE(host.deploy(bad, {{"k", ParamValue{2LL}}}).ok());
  EXPECT_EQ(versions.note(host, "alice", "set", 2), 2u);
  EXPECT_EQ(versions.note_revert(host, 3), 2u) << "no revert yet: nothing to journal";
  h.engine.run_pass(PassReason::Manual);
  h.engine.run_pass(PassReason::Manual);
  ASSERT_EQ(h.engine.stats().reverts, 1u);
  EXPECT_EQ(versions.note_revert(host, 4), 3u);
  const auto history = versions.history();
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[2].how, "revert to 1");
  EXPECT_EQ(history[2].name, "one");
  EXPECT_EQ(history[2].path, good);
  EXPECT_EQ(history[2].hash, history[0].hash);
  EXPECT_TRUE(history[2].params.empty()) << "the version's own parameters, not the failing one's";
  EXPECT_EQ(history[2].time, 4);
  EXPECT_EQ(versions.note_revert(host, 5), 3u) << "journaled once";
}

TEST(PolicyHash, CoversNamesAndTexts) {
  const std::vector<PolicySource> a{{"/x/p.lua", "p.lua", "ab"}};
  const std::vector<PolicySource> b{{"/y/p.lua", "p.lua", "ab"}};
  const std::vector<PolicySource> c{{"/x/p.lua", "p.lua", "abc"}};
  const std::vector<PolicySource> d{{"/x/p.lua", "p.luaa", "b"}};
  EXPECT_EQ(policy_hash(a), policy_hash(b)) << "where it was read does not count";
  EXPECT_NE(policy_hash(a), policy_hash(c));
  EXPECT_NE(policy_hash(a), policy_hash(d));
  EXPECT_EQ(policy_hash(a).size(), 64u);
}

TEST_F(PolicyVersionsTest, TheCheckReplyListsActionsAndRefusals) {
  ASSERT_TRUE(host.load(path).ok());
  h.submit(luatest::rigid(3));
  h.submit(luatest::rigid(3));
  const auto reply = policy_check_reply(host.check(path, {}), path, h.engine);
  EXPECT_TRUE(reply.ok);
  EXPECT_EQ(reply.name, "one");
  ASSERT_EQ(reply.files.size(), 2u);
  ASSERT_EQ(reply.actions.size(), 1u);
  EXPECT_EQ(reply.actions[0].action, "start");
  EXPECT_EQ(reply.actions[0].job, 1u);
  EXPECT_EQ(reply.actions[0].nodes, 3);
  EXPECT_TRUE(reply.refusals.empty());
  const std::string broken = dir.write("b.lua", "return {\n");
  const auto refused = policy_check_reply(host.check(broken, {}), broken, h.engine);
  EXPECT_FALSE(refused.ok);
  ASSERT_TRUE(refused.failure);
  EXPECT_EQ(refused.failure->code, "syntax");
  EXPECT_EQ(refused.failure->file.value_or(""), "b.lua");
}

}  // namespace
}  // namespace sched::daemon
