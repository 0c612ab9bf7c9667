// Events as schedd publishes them (convert/wire_convert.hpp, docs/protocol.md
// §9): each topic's named keys, through msgpack and back; and the policy's
// last failure as policy.info reports it (schedd/policy_info.hpp).
#include <gtest/gtest.h>

#include <msgpack.hpp>

#include "lua_test_support.hpp"
#include "policy_info.hpp"
#include "sched/convert/wire_convert.hpp"
#include "sched/proto/fields.hpp"
#include "sched/proto/messages.hpp"

namespace sched::daemon {
namespace {

// What a subscriber reads: the body packed and read back.
proto::EventMsg on_the_wire(const Event& event) {
  msgpack::sbuffer buffer;
  proto::Packer packer(buffer);
  proto::pack_body(packer, convert::event_msg(event));
  const auto handle = msgpack::unpack(buffer.data(), buffer.size());
  return proto::read_body<proto::EventMsg>(handle.get());
}

TEST(WireEvents, APowerCorridorCarriesItsBoundsEvenWhenZero) {
  Event event;
  event.seq = 3;
  event.time = 100;
  event.type = EventType::PowerCorridor;
  event.lower_w = 1000;
  event.upper_w = 1700;
  const proto::EventMsg msg = on_the_wire(event);
  EXPECT_EQ(msg.topic, "power.corridor");
  EXPECT_EQ(msg.lower_w, 1000.0);
  EXPECT_EQ(msg.upper_w, 1700.0);
  EXPECT_FALSE(msg.job);
  EXPECT_FALSE(msg.pass_s);
  event.lower_w = event.upper_w = 0;  // no corridor: still said
  EXPECT_EQ(on_the_wire(event).lower_w, 0.0);
  EXPECT_EQ(on_the_wire(event).upper_w, 0.0);
}

TEST(WireEvents, APassCarriesItsDurationActionsAndReason) {
  Event event;
  event.type = EventType::SchedPass;
  event.pass_s = 0.25;
  event.actions = 2;
  event.reason = "submit";
  const proto::EventMsg msg = on_the_wire(event);
  EXPECT_EQ(msg.pass_s, 0.25);
  EXPECT_EQ(msg.actions, 2);
  EXPECT_EQ(msg.reason, "submit");
  EXPECT_FALSE(msg.nodes) << "a pass has no size";
  EXPECT_FALSE(msg.message);
}

TEST(WireEvents, AReservationCarriesTheExpectedStart) {
  Event event;
  event.type = EventType::JobReserved;
  event.job = 7;
  event.expected_start = 500;
  const proto::EventMsg msg = on_the_wire(event);
  EXPECT_EQ(msg.job, 7);
  EXPECT_EQ(msg.from, "PENDING");
  EXPECT_EQ(msg.state, "PENDING");
  EXPECT_EQ(msg.expected_start, 500.0);
  EXPECT_FALSE(msg.lower_w);
}

TEST(WireEvents, SizesBeforeAreSentForAdaptationsAndRequests) {
  Event event;
  event.job = 7;
  event.nodes = 4;
  event.prev_nodes = 2;
  for (EventType type : {EventType::JobAdapting, EventType::JobResized, EventType::JobRequest}) {
    event.type = type;
    EXPECT_EQ(on_the_wire(event).prev_nodes, 2) << topic(type);
  }
  event.type = EventType::JobStarted;
  EXPECT_FALSE(on_the_wire(event).prev_nodes);
}

// A Lua error in a pass reaches the wire typed, with the file and line.
TEST(WireEvents, APolicyErrorNamesItsKindFileAndLine) {
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
  const Event* error = nullptr;
  for (const Event& event : h.log.events) {
    if (event.type == EventType::PolicyError) error = &event;
  }
  ASSERT_NE(error, nullptr);
  const proto::EventMsg msg = on_the_wire(*error);
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

TEST(WireEvents, PolicyInfoShowsARefusedReloadAndNothingBeforeAFailure) {
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
