// Events as schedd publishes them (convert::event_msg, docs/protocol.md §9):
// each topic's named keys, through msgpack and back.
#include <gtest/gtest.h>

#include "sched/event.hpp"
#include "wire_event.hpp"

namespace sched::convert {
namespace {

using test::on_the_wire;

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

// Issue 17 item 1: a resize request's events carry who asked, the sizes and
// the refusal's code (§9.7a).
TEST(WireEvents, AResizeRefusalCarriesTheSizesTheAskerAndTheCode) {
  Event event;
  event.type = EventType::ResizeRefused;
  event.job = 12;
  event.from = event.to = JobState::Running;
  event.prev_nodes = 2;
  event.nodes = 9;
  event.reason = "application";
  event.node = "n1";
  event.code = "invalid";
  event.message = "request 3: job 12 takes 1 to 4 nodes: 9 is outside";
  const proto::EventMsg msg = on_the_wire(event);
  EXPECT_EQ(msg.topic, "resize.refused");
  EXPECT_EQ(msg.job, 12);
  EXPECT_EQ(msg.prev_nodes, 2);
  EXPECT_EQ(msg.nodes, 9);
  EXPECT_EQ(msg.reason, "application");
  EXPECT_EQ(msg.node, "n1");
  EXPECT_EQ(msg.code, "invalid");
  EXPECT_EQ(msg.state, "RUNNING");
}

// A refused client request says who, what request and what code (§9.7); a
// refused agent link says which node, with no user.
TEST(WireEvents, ARefusalCarriesTheCallerTheRequestAndTheCode) {
  Event event;
  event.type = EventType::AuthDenied;
  event.job = 12;
  event.user = "bob";
  event.reason = "cancel";
  event.code = "permission_denied";
  event.message = "permission denied: job 12 belongs to alice";
  const proto::EventMsg msg = on_the_wire(event);
  EXPECT_EQ(msg.topic, "auth.denied");
  EXPECT_EQ(msg.user, "bob");
  EXPECT_EQ(msg.reason, "cancel");
  EXPECT_EQ(msg.code, "permission_denied");
  EXPECT_EQ(msg.job, 12);
  EXPECT_EQ(msg.message, "permission denied: job 12 belongs to alice");
  Event link;
  link.type = EventType::AuthDenied;
  link.node = "n2";
  link.message = "task.exited refused";
  const proto::EventMsg refused = on_the_wire(link);
  EXPECT_EQ(refused.node, "n2");
  EXPECT_FALSE(refused.user);
  EXPECT_FALSE(refused.code);
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

}  // namespace
}  // namespace sched::convert
