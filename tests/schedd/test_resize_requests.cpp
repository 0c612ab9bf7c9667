// Evolving jobs' live requests in schedd (issue 17 item 1): who is answered
// what, in which order, with which events.
#include <gtest/gtest.h>

#include "resize_requests.hpp"

namespace sched::daemon {
namespace {

using Op = ResizeRequest::Op;

Job running_job(JobId id, int size) {
  Job job;
  job.id = id;
  job.spec.kind = JobKind::Evolving;
  job.state = JobState::Running;
  for (int i = 0; i < size; ++i) job.allocation.push_back(static_cast<NodeIndex>(i));
  return job;
}

// As the engine publishes it: the size before, the target in the message.
Event adapting(JobId job, int from, int to) {
  Event event;
  event.type = EventType::JobAdapting;
  event.job = job;
  event.from = JobState::Running;
  event.to = JobState::Adapting;
  event.prev_nodes = from;
  event.nodes = from;
  event.message = std::string(to > from ? "expand " : "shrink ") + std::to_string(from) + " -> " +
                  std::to_string(to);
  return event;
}

const ResizeRequests::Asker kApp{"n1", ""};

TEST(ResizeRequests, ARequestWhosePassBeganTheAdaptationIsGrantedWhenTaken) {
  ResizeRequests requests;
  Job job = running_job(6, 2);
  // The engine ran the pass inside resize_request: job.adapting came first.
  requests.on_event(adapting(6, 2, 4));
  job.state = JobState::Adapting;
  const proto::ResizeAnswer reply = requests.add(job, {Op::Expand, 4}, kApp, 0, 100);
  EXPECT_EQ(reply.state, "pending");
  const auto out = requests.take();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].event.type, EventType::ResizePending);
  EXPECT_EQ(out[2].event.type, EventType::ResizeGranted);
  EXPECT_EQ(out[2].answer.state, "granted");
  EXPECT_EQ(out[2].answer.nodes, 4);
  EXPECT_EQ(requests.pending(), 0u);
}

TEST(ResizeRequests, APendingRequestIsGrantedByAnAdaptationItsWay) {
  ResizeRequests requests;
  const Job job = running_job(5, 2);
  const proto::ResizeAnswer reply = requests.add(job, {Op::Expand, 4}, kApp, 0, 100);
  EXPECT_EQ(reply.job, 5);
  EXPECT_EQ(reply.request, 1u);
  EXPECT_EQ(reply.state, "pending");
  EXPECT_EQ(reply.nodes, 4);
  // The reply answers; requested and pending are journaled, nobody notified.
  auto out = requests.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].event.type, EventType::ResizeRequested);
  EXPECT_EQ(out[0].event.prev_nodes, 2);
  EXPECT_EQ(out[0].event.nodes, 4);
  EXPECT_EQ(out[0].event.reason, "application");
  EXPECT_EQ(out[0].event.node, "n1");
  EXPECT_EQ(out[1].event.type, EventType::ResizePending);
  EXPECT_TRUE(out[0].node.empty() && out[1].node.empty());
  // A shrink (the policy's own) is not this request's grant.
  requests.on_event(adapting(5, 2, 1));
  EXPECT_TRUE(requests.take().empty());
  requests.on_event(adapting(5, 2, 3));  // in part
  out = requests.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].node, "n1") << "the asking agent hears it";
  EXPECT_EQ(out[0].answer.state, "granted");
  EXPECT_EQ(out[0].answer.request, 1u);
  EXPECT_EQ(out[0].answer.nodes, 3);
  EXPECT_EQ(out[0].event.type, EventType::ResizeGranted);
  EXPECT_EQ(requests.pending(), 0u);
  requests.on_event(adapting(5, 3, 4));
  EXPECT_TRUE(requests.take().empty()) << "answered once";
}

TEST(ResizeRequests, ALaterRequestReplacesAndAStoppedJobRefuses) {
  ResizeRequests requests;
  const Job job = running_job(5, 2);
  requests.add(job, {Op::Expand, 4}, kApp, 0, 100);
  requests.take();
  const auto second = requests.add(job, {Op::Shrink, 1}, {"", "alice"}, 0, 101);
  EXPECT_EQ(second.request, 2u);
  auto out = requests.take();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].node, "n1");
  EXPECT_EQ(out[0].answer.request, 1u);
  EXPECT_EQ(out[0].answer.state, "refused");
  EXPECT_EQ(out[0].answer.code, "conflict");
  EXPECT_EQ(out[0].answer.message, "replaced by request 2");
  EXPECT_EQ(out[1].event.type, EventType::ResizeRequested);
  EXPECT_EQ(out[1].event.reason, "user");
  EXPECT_NE(out[1].event.message.find("asked by alice"), std::string::npos);
  Event ended;
  ended.type = EventType::JobCancelled;
  ended.job = 5;
  requests.on_event(ended);
  out = requests.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].node.empty()) << "a user's request has no agent to tell";
  EXPECT_EQ(out[0].event.type, EventType::ResizeRefused);
  EXPECT_EQ(out[0].answer.message, "the job stopped running");
}

TEST(ResizeRequests, ARequestExpiresAtItsTimeout) {
  ResizeRequests requests;
  requests.add(running_job(5, 2), {Op::Expand, 4}, kApp, 30, 100);
  requests.add(running_job(6, 2), {Op::Expand, 3}, kApp, 0, 100);  // the default
  requests.take();
  EXPECT_TRUE(requests.expire(129).empty());
  EXPECT_EQ(requests.expire(130), std::vector<JobId>{5});
  auto out = requests.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].answer.state, "expired");
  EXPECT_EQ(out[0].answer.code, "expired");
  EXPECT_EQ(out[0].event.type, EventType::ResizeExpired);
  EXPECT_EQ(requests.expire(100 + ResizeRequests::kDefaultTimeoutS), std::vector<JobId>{6});
  EXPECT_EQ(requests.pending(), 0u);
}

TEST(ResizeRequests, ARefusalAnswersAtOnceWithItsCode) {
  ResizeRequests requests;
  const auto reply =
      requests.refuse(5, 2, 9, kApp, "invalid", "job 5 takes 1 to 4 nodes: 9 is outside");
  EXPECT_EQ(reply.state, "refused");
  EXPECT_EQ(reply.request, 0u);
  EXPECT_EQ(reply.code, "invalid");
  const auto out = requests.take();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].event.type, EventType::ResizeRefused);
  EXPECT_EQ(out[1].event.code, "invalid");
  EXPECT_TRUE(out[1].node.empty()) << "the reply says it";
  EXPECT_EQ(requests.pending(), 0u);
}

}  // namespace
}  // namespace sched::daemon
