// The failing-policy surface of schedd (issue 13, item 3): the [policy]
// config keys, policy.reverted on the wire, and policy.info after a revert.
#include <gtest/gtest.h>

#include <msgpack.hpp>

#include "daemon_config.hpp"
#include "lua_test_support.hpp"
#include "policy_info.hpp"
#include "sched/convert/wire_convert.hpp"
#include "sched/proto/fields.hpp"
#include "sched/proto/messages.hpp"

namespace sched::daemon {
namespace {

proto::EventMsg on_the_wire(const Event& event) {
  msgpack::sbuffer buffer;
  proto::Packer packer(buffer);
  proto::pack_body(packer, convert::event_msg(event));
  const auto handle = msgpack::unpack(buffer.data(), buffer.size());
  return proto::read_body<proto::EventMsg>(handle.get());
}

std::string policy(const std::string& name, const std::string& body = "") {
  return "local P = { name = '" + name +
         "', api = 1 }\n"
         "function P.schedule(ctx)\n"
         "  " +
         body +
         "\n"
         "end\n"
         "return P\n";
}

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

  const Event* reverted = nullptr;
  for (const Event& event : h.log.events) {
    if (event.type == EventType::PolicyReverted) reverted = &event;
  }
  ASSERT_NE(reverted, nullptr);
  const proto::EventMsg msg = on_the_wire(*reverted);
  EXPECT_EQ(msg.topic, "policy.reverted");
  EXPECT_EQ(msg.code, "runtime");
  EXPECT_EQ(msg.file, "p.lua");
  EXPECT_EQ(msg.line, 3);
  ASSERT_TRUE(msg.message);
  EXPECT_EQ(*msg.message, info.last_revert->message);
}

}  // namespace
}  // namespace sched::daemon
