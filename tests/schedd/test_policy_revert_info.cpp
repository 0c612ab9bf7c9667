// The failing-policy surface of schedd (issue 13, item 3): the [policy]
// config keys, policy.reverted and policy.error on the wire, and what
// policy.info (schedd/policy_info.hpp) shows after a revert, a failing pass
// and a refused reload.
#include <gtest/gtest.h>

#include "daemon_config.hpp"
#include "lua_test_support.hpp"
#include "policy_info.hpp"
#include "policy_source.hpp"
#include "wire_event.hpp"

namespace sched::daemon {
namespace {

using luatest::policy;
using test::on_the_wire;

TEST(PolicyConfig, ThePolicyKeysAreReadAndChecked) {
  luatest::TempDir dir;
  const DaemonConfig defaults;
  EXPECT_EQ(defaults.policy_time_limit_s, 0.5);
  EXPECT_EQ(defaults.policy_revert_after_failures, 3);
  const DaemonConfig c = load_config(
      dir.write("ok.toml", "[policy]\ntime_limit_s = 0.25\nrevert_after_failures = 5\n"));
  EXPECT_EQ(c.policy_time_limit_s, 0.25);
  EXPECT_EQ(c.policy_revert_after_failures, 5);
  for (const char* bad : {"[policy]\ntime_limit_s = -1\n", "[policy]\nrevert_after_failures = -1\n",
                          "[policy]\nrevert_after_failures = 1.5\n", "[policy]\ntypo = 1\n"}) {
    EXPECT_THROW(load_config(dir.write("bad.toml", bad)), std::runtime_error) << bad;
  }
}

TEST(PolicyRevertInfo, PolicyInfoAndTheWireShowARevert) {
  luatest::TempDir dir;
  EngineConfig config;
  config.revert_after_failures = 2;
  luatest::Harness h(2, config);
  PolicyHost host(h.engine, luatest::quick_options());
  const std::string path = dir.write("p.lua", policy("good"));
  ASSERT_EQ(host.load(path), Status());
  h.engine.run_pass(PassReason::Manual);
  dir.write("p.lua", policy("bad", "if not ctx.dry then error('no') end"));
  ASSERT_EQ(host.reload(), Status());
  h.clock.set(50);
  h.engine.run_pass(PassReason::Manual);
  proto::PolicyInfoReply info = policy_info_reply(host);
  EXPECT_EQ(info.consecutive_failures, 1);
  EXPECT_TRUE(info.fallback);
  EXPECT_EQ(info.revert_after_failures, 2);
  h.clock.set(60);
  h.engine.run_pass(PassReason::Manual);

  info = policy_info_reply(host);
  EXPECT_EQ(info.name, "good");
  EXPECT_EQ(info.failed_passes, 2u);
  EXPECT_EQ(info.consecutive_failures, 0);
  EXPECT_FALSE(info.fallback) << "the good policy runs: nothing else to go back to";
  EXPECT_EQ(info.reverts, 1u);
  ASSERT_TRUE(info.last_revert);
  EXPECT_EQ(info.last_revert->time, 60.0);
  EXPECT_EQ(info.last_revert->from, "bad");
  EXPECT_EQ(info.last_revert->to, "good");
  EXPECT_EQ(info.last_revert->failures, 2);
  ASSERT_TRUE(info.last_failure);
  EXPECT_EQ(info.last_failure->time, 60.0);
  EXPECT_EQ(info.last_failure->file, "p.lua");
  EXPECT_EQ(info.last_failure->line, 3);

  const auto reverted = h.log.of_type(EventType::PolicyReverted);
  ASSERT_FALSE(reverted.empty());
  const proto::EventMsg msg = on_the_wire(reverted.back());
  EXPECT_EQ(msg.topic, "policy.reverted");
  EXPECT_EQ(msg.code, "runtime");
  EXPECT_EQ(msg.file, "p.lua");
  EXPECT_EQ(msg.line, 3);
  ASSERT_TRUE(msg.message);
  EXPECT_EQ(*msg.message, info.last_revert->message);
}

// A Lua error in a pass reaches the wire typed, with the file and line.
TEST(PolicyInfo, APolicyErrorNamesItsKindFileAndLine) {
  luatest::TempDir dir;
  luatest::Harness h(2);
  const std::string path = dir.write("broken.lua",
                                     "local P = { name = 'broken', api = 1 }\n"
                                     "function P.schedule(ctx)\n"
                                     "  local x = nil\n"
                                     "  return x.size\n"
                                     "end\n"
                                     "return P\n");
  PolicyHost host(h.engine, luatest::quick_options());
  ASSERT_EQ(host.load(path), Status());
  h.clock.set(42);
  h.engine.run_pass(PassReason::Manual);
  const auto errors = h.log.of_type(EventType::PolicyError);
  ASSERT_FALSE(errors.empty());
  const proto::EventMsg msg = on_the_wire(errors.back());
  EXPECT_EQ(msg.topic, "policy.error");
  EXPECT_EQ(msg.code, "runtime");
  EXPECT_EQ(msg.file, "broken.lua");
  EXPECT_EQ(msg.line, 4);
  ASSERT_TRUE(msg.message);
  EXPECT_NE(msg.message->find("broken.lua:4:"), std::string::npos) << *msg.message;
  EXPECT_NE(msg.message->find("(pass dropped)"), std::string::npos) << *msg.message;

  // policy.info shows the same failure, with its time.
  const proto::PolicyInfoReply info = policy_info_reply(host);
  EXPECT_EQ(info.name, "broken");
  ASSERT_TRUE(info.last_failure);
  EXPECT_EQ(info.last_failure->time, 42.0);
  EXPECT_EQ(info.last_failure->code, "runtime");
  EXPECT_EQ(info.last_failure->file, "broken.lua");
  EXPECT_EQ(info.last_failure->line, 4);
  EXPECT_EQ(info.last_error, info.last_failure->message);
}

TEST(PolicyInfo, ARefusedReloadIsShownAndNothingBeforeAFailure) {
  luatest::TempDir dir;
  luatest::Harness h(2);
  const std::string path = dir.write("p.lua",
                                     "local P = { name = 'p', api = 1 }\n"
                                     "function P.schedule(ctx) end\n"
                                     "return P\n");
  PolicyHost host(h.engine, luatest::quick_options());
  ASSERT_EQ(host.load(path), Status());
  proto::PolicyInfoReply info = policy_info_reply(host);
  EXPECT_FALSE(info.last_failure);
  EXPECT_FALSE(info.last_error);

  dir.write("p.lua",
            "local P = { name = 'p', api = 1 }\nfunction P.schedule(ctx)\n  if then\nend\n");
  h.clock.set(7);
  const Status refused = host.reload();
  EXPECT_EQ(refused.code(), StatusCode::Invalid);
  info = policy_info_reply(host);
  EXPECT_EQ(info.failed_reloads, 1u);
  ASSERT_TRUE(info.last_failure);
  EXPECT_EQ(info.last_failure->code, "syntax");
  EXPECT_EQ(info.last_failure->file, "p.lua");
  EXPECT_EQ(info.last_failure->line, 3);
  EXPECT_EQ(info.last_failure->time, 7.0);
  EXPECT_EQ(info.last_error, refused.message());
}

}  // namespace
}  // namespace sched::daemon
