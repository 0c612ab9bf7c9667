// Job state transitions of docs/design.md §3, driven through the Engine's inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine_fixture.hpp"

namespace sched::test {
namespace {

class EngineStates : public EngineFixture {
 protected:
  void SetUp() override { init(6); }

  // The last event of `id`.
  Event last_event(JobId id) const {
    const auto all = events.of_job(id);
    EXPECT_FALSE(all.empty());
    return all.empty() ? Event{} : all.back();
  }
};

TEST_F(EngineStates, SubmitMakesJobPendingAndRequestsASubmitPass) {
  clock.set(12.5);
  const JobId id = submit(rigid_spec(2));
  EXPECT_EQ(id, 1);
  EXPECT_EQ(state(id), JobState::Pending);
  EXPECT_DOUBLE_EQ(job(id).submit_time, 12.5);
  EXPECT_EQ(job(id).start_time, -1);
  EXPECT_EQ(job(id).end_time, -1);
  EXPECT_TRUE(job(id).allocation.empty());
  EXPECT_EQ(engine->active_jobs(), 1u);
  ASSERT_EQ(engine->pending_jobs().size(), 1u);
  EXPECT_EQ(engine->pending_jobs()[0]->id, id);

  ASSERT_EQ(events.of_job(id).size(), 1u);
  const Event ev = last_event(id);
  EXPECT_EQ(ev.type, EventType::JobSubmitted);
  EXPECT_EQ(topic(ev.type), "job.submitted");
  EXPECT_EQ(ev.to, JobState::Pending);
  EXPECT_EQ(ev.nodes, 2);
  EXPECT_DOUBLE_EQ(ev.time, 12.5);

  EXPECT_TRUE(engine->pass_due());
  EXPECT_TRUE(engine->run_pass_if_due());
  ASSERT_EQ(policy->reasons.size(), 1u);
  EXPECT_EQ(policy->reasons[0], PassReason::Submit);
  EXPECT_EQ(enactor.calls.size(), 0u) << "a policy that does nothing starts nothing";
}

TEST_F(EngineStates, StartThroughPassIsStartingThenJobStartedIsRunning) {
  clock.set(5);
  const JobId id = submit(rigid_spec(2));
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(id), std::nullopt); });

  EXPECT_EQ(state(id), JobState::Starting);
  EXPECT_EQ(job(id).allocation, (std::vector<NodeIndex>{0, 1}));
  EXPECT_DOUBLE_EQ(job(id).start_time, 5);
  EXPECT_TRUE(engine->pending_jobs().empty());
  ASSERT_EQ(enactor.count(Kind::Start), 1);
  EXPECT_EQ(enactor.calls[0].job, id);
  EXPECT_EQ(enactor.calls[0].state, JobState::Starting);
  EXPECT_EQ(enactor.calls[0].allocation, (std::vector<NodeIndex>{0, 1}));
  EXPECT_EQ(idle(), 4);
  Event ev = last_event(id);
  EXPECT_EQ(ev.type, EventType::JobStarting);
  EXPECT_EQ(topic(ev.type), "job.starting");
  EXPECT_EQ(ev.from, JobState::Pending);
  EXPECT_EQ(ev.to, JobState::Starting);
  EXPECT_EQ(ev.nodes, 2);

  engine->job_started(id);
  EXPECT_EQ(state(id), JobState::Running);
  ev = last_event(id);
  EXPECT_EQ(ev.type, EventType::JobStarted);
  EXPECT_EQ(topic(ev.type), "job.started");
  EXPECT_EQ(ev.from, JobState::Starting);
  EXPECT_EQ(ev.to, JobState::Running);
  ASSERT_EQ(engine->running_jobs().size(), 1u);
  EXPECT_EQ(engine->running_jobs()[0]->id, id);

  // A second report changes nothing.
  const auto count = events.events.size();
  engine->job_started(id);
  EXPECT_EQ(events.events.size(), count);
  EXPECT_EQ(state(id), JobState::Running);
}

TEST_F(EngineStates, ExpandIsAdaptingAndSuccessGivesTheNewAllocation) {
  const JobId id = run_job(malleable_spec(2, 1, 6));
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.expand(id, 4), std::nullopt); });

  EXPECT_EQ(state(id), JobState::Adapting);
  EXPECT_EQ(job(id).allocation, (std::vector<NodeIndex>{0, 1})) << "unchanged until done";
  const auto resizes = enactor.of(Kind::Resize);
  ASSERT_EQ(resizes.size(), 1u);
  EXPECT_EQ(resizes[0].resize.op, Resize::Op::Expand);
  EXPECT_EQ(resizes[0].resize.from, 2);
  EXPECT_EQ(resizes[0].resize.to, 4);
  EXPECT_EQ(resizes[0].resize.added, (std::vector<NodeIndex>{2, 3}));
  EXPECT_TRUE(resizes[0].resize.removed.empty());
  EXPECT_EQ(idle(), 2) << "the new nodes are reserved at once";
  Event ev = last_event(id);
  EXPECT_EQ(ev.type, EventType::JobAdapting);
  EXPECT_EQ(topic(ev.type), "job.adapting");
  EXPECT_EQ(ev.from, JobState::Running);
  EXPECT_EQ(ev.to, JobState::Adapting);

  engine->perf_report(id, 0.5);
  engine->adaptation_done(id, true);
  EXPECT_EQ(state(id), JobState::Running);
  EXPECT_EQ(job(id).allocation, (std::vector<NodeIndex>{0, 1, 2, 3}));
  EXPECT_EQ(job(id).run->expansions, 1);
  EXPECT_EQ(job(id).run->shrinks, 0);
  EXPECT_EQ(job(id).run->gain, 2);
  EXPECT_FALSE(job(id).run->mtct.has_value()) << "MTCT is measured anew after an adaptation";
  EXPECT_EQ(idle(), 2);
  ev = last_event(id);
  EXPECT_EQ(ev.type, EventType::JobResized);
  EXPECT_EQ(topic(ev.type), "job.resized");
  EXPECT_EQ(ev.from, JobState::Adapting);
  EXPECT_EQ(ev.to, JobState::Running);
  EXPECT_EQ(ev.prev_nodes, 2);
  EXPECT_EQ(ev.nodes, 4);
  expect_nodes_conserved();
}

TEST_F(EngineStates, FailedExpandKeepsTheOldAllocationAndFreesTheNewNodes) {
  const JobId id = run_job(malleable_spec(2, 1, 6));
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.expand(id, 5), std::nullopt); });
  EXPECT_EQ(idle(), 1);
  engine->adaptation_done(id, false);
  EXPECT_EQ(state(id), JobState::Running);
  EXPECT_EQ(job(id).allocation, (std::vector<NodeIndex>{0, 1}));
  EXPECT_EQ(job(id).run->expansions, 0);
  EXPECT_EQ(job(id).run->gain, 0);
  EXPECT_EQ(idle(), 4);
  const Event ev = last_event(id);
  EXPECT_EQ(ev.type, EventType::JobResized);
  EXPECT_EQ(ev.prev_nodes, 2);
  EXPECT_EQ(ev.nodes, 2);
  EXPECT_NE(ev.message.find("rolled back"), std::string::npos);
  expect_nodes_conserved();
}

TEST_F(EngineStates, ShrinkIsAdaptingAndSuccessReleasesTheNewestNodes) {
  const JobId id = run_job(malleable_spec(4, 1, 6));
  engine->perf_report(id, 0.25);
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.shrink(id, 2), std::nullopt); });

  EXPECT_EQ(state(id), JobState::Adapting);
  const auto resizes = enactor.of(Kind::Resize);
  ASSERT_EQ(resizes.size(), 1u);
  EXPECT_EQ(resizes[0].resize.op, Resize::Op::Shrink);
  EXPECT_EQ(resizes[0].resize.from, 4);
  EXPECT_EQ(resizes[0].resize.to, 2);
  EXPECT_EQ(resizes[0].resize.removed, (std::vector<NodeIndex>{2, 3}));
  EXPECT_TRUE(resizes[0].resize.added.empty());
  EXPECT_EQ(idle(), 2) << "leaving nodes are not idle until the shrink is done";
  EXPECT_EQ(releasing(), 2);
  EXPECT_EQ(engine->cluster().releasing_unpromised_count(), 2);

  engine->adaptation_done(id, true);
  EXPECT_EQ(state(id), JobState::Running);
  EXPECT_EQ(job(id).allocation, (std::vector<NodeIndex>{0, 1}));
  EXPECT_EQ(job(id).run->shrinks, 1);
  EXPECT_EQ(job(id).run->gain, -2);
  EXPECT_FALSE(job(id).run->mtct.has_value());
  EXPECT_EQ(idle(), 4);
  EXPECT_EQ(releasing(), 0);
  EXPECT_EQ(engine->cluster().releasing_unpromised_count(), 0);
  const Event ev = last_event(id);
  EXPECT_EQ(ev.type, EventType::JobResized);
  EXPECT_EQ(ev.prev_nodes, 4);
  EXPECT_EQ(ev.nodes, 2);
  expect_nodes_conserved();
}

TEST_F(EngineStates, FailedShrinkKeepsTheOldAllocation) {
  const JobId id = run_job(malleable_spec(4, 1, 6));
  engine->perf_report(id, 0.25);
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.shrink(id, 1), std::nullopt); });
  engine->adaptation_done(id, false);
  EXPECT_EQ(state(id), JobState::Running);
  EXPECT_EQ(job(id).allocation, (std::vector<NodeIndex>{0, 1, 2, 3}));
  EXPECT_EQ(job(id).run->shrinks, 0);
  EXPECT_EQ(job(id).run->gain, 0);
  EXPECT_EQ(job(id).run->mtct, 0.25) << "nothing changed, the measurement still holds";
  EXPECT_EQ(idle(), 2);
  EXPECT_EQ(releasing(), 0);
  EXPECT_EQ(engine->cluster().releasing_unpromised_count(), 0);
  expect_nodes_conserved();
}

TEST_F(EngineStates, AdaptationDoneForAJobNotAdaptingIsIgnored) {
  const JobId id = run_job(malleable_spec(2, 1, 6));
  const auto count = events.events.size();
  engine->adaptation_done(id, true);
  engine->adaptation_done(999, true);
  EXPECT_EQ(events.events.size(), count);
  EXPECT_EQ(state(id), JobState::Running);
  EXPECT_EQ(job(id).size(), 2);
}

TEST_F(EngineStates, APerfReportIsKeptOnlyWhenItIsAMeasurement) {
  const JobId id = run_job(malleable_spec(2, 1, 4));
  engine->perf_report(id, 0.4);
  ASSERT_TRUE(job(id).run->mtct.has_value());
  EXPECT_DOUBLE_EQ(*job(id).run->mtct, 0.4);
  EXPECT_TRUE(engine->pass_due()) << "fresh data asks for a pass";
  for (double bad : {-0.1, std::nan(""), std::numeric_limits<double>::infinity()}) {
    engine->perf_report(id, bad);
    EXPECT_DOUBLE_EQ(*job(id).run->mtct, 0.4) << bad << " is not a ratio of times";
  }
}

TEST_F(EngineStates, ExitZeroCompletesThroughCompleting) {
  clock.set(0);
  const JobId id = run_job(rigid_spec(3));
  clock.set(100);
  engine->job_ended(id, 0);
  EXPECT_EQ(state(id), JobState::Completed);
  EXPECT_EQ(job(id).exit_status, 0);
  EXPECT_DOUBLE_EQ(job(id).end_time, 100);
  EXPECT_DOUBLE_EQ(job(id).runtime(), 100);
  EXPECT_TRUE(job(id).allocation.empty());
  EXPECT_EQ(idle(), 6);
  EXPECT_EQ(engine->active_jobs(), 0u);
  EXPECT_TRUE(engine->running_jobs().empty());

  const auto evs = events.of_job(id);
  ASSERT_GE(evs.size(), 2u);
  const Event& completing = evs[evs.size() - 2];
  const Event& completed = evs.back();
  EXPECT_EQ(completing.type, EventType::JobCompleting);
  EXPECT_EQ(topic(completing.type), "job.completing");
  EXPECT_EQ(completing.from, JobState::Running);
  EXPECT_EQ(completing.to, JobState::Completing);
  EXPECT_EQ(completed.type, EventType::JobCompleted);
  EXPECT_EQ(topic(completed.type), "job.completed");
  EXPECT_EQ(completed.from, JobState::Completing);
  EXPECT_EQ(completed.to, JobState::Completed);
  EXPECT_TRUE(engine->pass_due());
  EXPECT_TRUE(engine->run_pass_if_due());
  EXPECT_EQ(policy->reasons.back(), PassReason::Completion);
}

TEST_F(EngineStates, NonzeroExitFails) {
  const JobId id = run_job(rigid_spec(2));
  engine->job_ended(id, 3);
  EXPECT_EQ(state(id), JobState::Failed);
  EXPECT_EQ(job(id).exit_status, 3);
  const Event ev = last_event(id);
  EXPECT_EQ(ev.type, EventType::JobFailed);
  EXPECT_EQ(topic(ev.type), "job.failed");
  EXPECT_EQ(ev.from, JobState::Completing);
  EXPECT_EQ(ev.to, JobState::Failed);
  EXPECT_EQ(idle(), 6);

  // Killed by a signal (negative status) fails too.
  const JobId other = run_job(rigid_spec(2));
  engine->job_ended(other, -9);
  EXPECT_EQ(state(other), JobState::Failed);
}

TEST_F(EngineStates, LaunchFailureWhileStartingFails) {
  const JobId id = submit(rigid_spec(2));
  in_pass([&](PassContext& ctx) { ctx.start(id); });
  ASSERT_EQ(state(id), JobState::Starting);
  engine->job_ended(id, 127);
  EXPECT_EQ(state(id), JobState::Failed);
  const auto types = events.types_of_job(id);
  ASSERT_GE(types.size(), 2u);
  EXPECT_EQ(types[types.size() - 2], EventType::JobCompleting);
  EXPECT_EQ(types.back(), EventType::JobFailed);
  EXPECT_EQ(idle(), 6);
}

TEST_F(EngineStates, JobEndedForAPendingOrEndedJobIsIgnored) {
  const JobId pending = submit(rigid_spec(2));
  const JobId done = run_job(rigid_spec(1));
  engine->job_ended(done, 0);
  const auto count = events.events.size();
  engine->job_ended(pending, 0);
  engine->job_ended(done, 1);
  engine->job_ended(12345, 0);
  EXPECT_EQ(events.events.size(), count);
  EXPECT_EQ(state(pending), JobState::Pending);
  EXPECT_EQ(state(done), JobState::Completed);
  EXPECT_EQ(job(done).exit_status, 0);
}

TEST_F(EngineStates, CancelOfPendingJobIsCancelledAtOnce) {
  clock.set(7);
  const JobId id = submit(rigid_spec(2));
  EXPECT_EQ(engine->cancel(id), Status());
  EXPECT_EQ(state(id), JobState::Cancelled);
  EXPECT_DOUBLE_EQ(job(id).end_time, 7);
  EXPECT_TRUE(engine->pending_jobs().empty());
  EXPECT_EQ(engine->pending_queue().size(), 0u);
  EXPECT_EQ(engine->active_jobs(), 0u);
  EXPECT_TRUE(enactor.calls.empty()) << "nothing to kill";
  const Event ev = last_event(id);
  EXPECT_EQ(ev.type, EventType::JobCancelled);
  EXPECT_EQ(topic(ev.type), "job.cancelled");
  EXPECT_EQ(ev.from, JobState::Pending);
  EXPECT_EQ(ev.to, JobState::Cancelled);
  EXPECT_EQ(events.of_job(id).size(), 2u) << "submitted, cancelled";
}

TEST_F(EngineStates, CancelOfRunningJobIsCompletingUntilItEnds) {
  const JobId id = run_job(rigid_spec(3));
  enactor.clear();
  EXPECT_EQ(engine->cancel(id), Status());
  EXPECT_EQ(state(id), JobState::Completing);
  ASSERT_EQ(enactor.count(Kind::Stop, id), 1);
  EXPECT_EQ(enactor.calls[0].reason, StopReason::Cancel);
  EXPECT_EQ(releasing(), 3);
  EXPECT_EQ(idle(), 3) << "nodes are idle only once the processes are gone";
  Event ev = last_event(id);
  EXPECT_EQ(ev.type, EventType::JobCompleting);
  EXPECT_EQ(ev.from, JobState::Running);
  EXPECT_EQ(ev.to, JobState::Completing);

  engine->job_ended(id, 137);  // killed: the exit status does not make it FAILED
  EXPECT_EQ(state(id), JobState::Cancelled);
  EXPECT_EQ(job(id).exit_status, 137);
  ev = last_event(id);
  EXPECT_EQ(ev.type, EventType::JobCancelled);
  EXPECT_EQ(ev.from, JobState::Completing);
  EXPECT_EQ(ev.to, JobState::Cancelled);
  EXPECT_EQ(idle(), 6);
  EXPECT_EQ(releasing(), 0);
  EXPECT_EQ(engine->active_jobs(), 0u);
}

TEST_F(EngineStates, CancelOfAdaptingJobStopsIt) {
  const JobId id = run_job(malleable_spec(2, 1, 6));
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.expand(id, 4), std::nullopt); });
  ASSERT_EQ(state(id), JobState::Adapting);
  EXPECT_EQ(engine->cancel(id), Status());
  EXPECT_EQ(state(id), JobState::Completing);
  engine->adaptation_done(id, true);  // too late: ignored
  EXPECT_EQ(state(id), JobState::Completing);
  engine->job_ended(id, 0);
  EXPECT_EQ(state(id), JobState::Cancelled);
  EXPECT_EQ(idle(), 6) << "the nodes added by the expand are freed too";
  expect_nodes_conserved();
}

TEST_F(EngineStates, WalltimeReachedIsTimeout) {
  const JobId id = run_job(rigid_spec(2, 60));
  enactor.clear();
  clock.set(60);
  EXPECT_TRUE(engine->expire_time_limit(id));
  EXPECT_EQ(state(id), JobState::Completing);
  ASSERT_EQ(enactor.count(Kind::Stop, id), 1);
  EXPECT_EQ(enactor.calls[0].reason, StopReason::Timeout);
  engine->job_ended(id, -9);
  EXPECT_EQ(state(id), JobState::Timeout);
  EXPECT_EQ(job(id).run->end_reason, "time limit reached") << "issue 18: the reason shown";
  const Event ev = last_event(id);
  EXPECT_EQ(ev.type, EventType::JobTimeout);
  EXPECT_EQ(topic(ev.type), "job.timeout");
  EXPECT_EQ(ev.from, JobState::Completing);
  EXPECT_EQ(ev.to, JobState::Timeout);
  EXPECT_EQ(idle(), 6);

  // For a job that is not running it does nothing.
  const JobId pending = submit(rigid_spec(1));
  const auto count = events.events.size();
  EXPECT_FALSE(engine->expire_time_limit(pending));
  EXPECT_FALSE(engine->expire_time_limit(id));
  EXPECT_EQ(events.events.size(), count);
  EXPECT_EQ(state(pending), JobState::Pending);
}

TEST_F(EngineStates, PreemptRequeueGoesBackToPendingKeepingItsQueuePlace) {
  clock.set(0);
  const JobId a = run_job(rigid_spec(6));
  clock.set(10);
  const JobId b = submit(rigid_spec(2));
  clock.set(20);
  const JobId c = submit(malleable_spec(2, 1, 4));
  enactor.clear();

  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.preempt(a, PreemptMode::Requeue), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 6);
  });
  EXPECT_EQ(state(a), JobState::Completing);
  ASSERT_EQ(enactor.count(Kind::Stop, a), 1);
  EXPECT_EQ(enactor.calls[0].reason, StopReason::Preempt);

  clock.set(30);
  engine->job_ended(a, -15);
  EXPECT_EQ(state(a), JobState::Pending);
  EXPECT_EQ(job(a).run->requeues, 1);
  EXPECT_EQ(job(a).start_time, -1);
  EXPECT_EQ(job(a).end_time, -1);
  EXPECT_DOUBLE_EQ(job(a).submit_time, 0) << "its place in the queue is its arrival";
  EXPECT_TRUE(job(a).allocation.empty());
  EXPECT_EQ(idle(), 6);
  EXPECT_EQ(engine->active_jobs(), 3u);
  const Event ev = last_event(a);
  EXPECT_EQ(ev.type, EventType::JobRequeued);
  EXPECT_EQ(topic(ev.type), "job.requeued");
  EXPECT_EQ(ev.from, JobState::Completing);
  EXPECT_EQ(ev.to, JobState::Pending);

  const auto pending = engine->pending_jobs();
  ASSERT_EQ(pending.size(), 3u);
  EXPECT_EQ(pending[0]->id, a);
  EXPECT_EQ(pending[1]->id, b);
  EXPECT_EQ(pending[2]->id, c);

  // And it can run again.
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(a), std::nullopt); });
  EXPECT_EQ(state(a), JobState::Starting);
}

TEST_F(EngineStates, PreemptCancelEndsCancelled) {
  const JobId a = run_job(rigid_spec(2));
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.preempt(a, PreemptMode::Cancel), std::nullopt); });
  EXPECT_EQ(state(a), JobState::Completing);
  engine->job_ended(a, -15);
  EXPECT_EQ(state(a), JobState::Cancelled);
  EXPECT_EQ(job(a).run->requeues, 0);
  EXPECT_TRUE(engine->pending_jobs().empty());
}

TEST_F(EngineStates, NodeFailureFailsTheJobOnIt) {
  const JobId a = run_job(rigid_spec(2));  // n0, n1
  const JobId b = run_job(rigid_spec(2));  // n2, n3
  enactor.clear();
  EXPECT_EQ(engine->set_node_up("n1", false, "power supply"), Status());
  EXPECT_EQ(state(a), JobState::Completing);
  EXPECT_EQ(state(b), JobState::Running);
  ASSERT_EQ(enactor.calls.size(), 1u);
  EXPECT_EQ(enactor.calls[0].kind, Kind::Stop);
  EXPECT_EQ(enactor.calls[0].job, a);
  EXPECT_EQ(enactor.calls[0].reason, StopReason::NodeFailure);
  const auto down = events.of_type(EventType::NodeDown);
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0].node, "n1");
  EXPECT_EQ(down[0].message, "power supply");
  EXPECT_EQ(topic(down[0].type), "node.down");

  engine->job_ended(a, -9);
  EXPECT_EQ(state(a), JobState::Failed);
  EXPECT_EQ(job(a).run->end_reason, "a node of the job was lost") << "issue 18: the reason shown";
  EXPECT_EQ(job(b).run->end_reason, "");
  EXPECT_EQ(events.of_job(a).back().type, EventType::JobFailed);
  EXPECT_EQ(idle(), 3) << "n0, n4, n5: the failed node is never idle";
  EXPECT_FALSE(engine->cluster().node(1).up);
  EXPECT_EQ(engine->cluster().node(1).job, 0);

  EXPECT_EQ(engine->set_node_up("n1", true, "fixed"), Status());
  EXPECT_EQ(idle(), 4);
  EXPECT_EQ(engine->set_node_up("nope", false, ""), Status::not_found("no node nope"));
}

TEST_F(EngineStates, NodeFailureRequeuesWhenConfigured) {
  EngineConfig config;
  config.requeue_on_node_failure = true;
  init(6, config);
  const JobId a = run_job(rigid_spec(2));
  EXPECT_EQ(engine->set_node_up("n0", false, "gone"), Status());
  EXPECT_EQ(state(a), JobState::Completing);
  engine->job_ended(a, -9);
  EXPECT_EQ(state(a), JobState::Pending);
  EXPECT_EQ(job(a).run->requeues, 1);
  EXPECT_EQ(events.of_job(a).back().type, EventType::JobRequeued);
  ASSERT_EQ(engine->pending_jobs().size(), 1u);
  EXPECT_EQ(engine->pending_jobs()[0]->id, a);
  EXPECT_EQ(idle(), 5);
}

TEST_F(EngineStates, IsValidTransitionAcceptsExactlyTheModel) {
  using S = JobState;
  const std::vector<S> all = {S::Pending,   S::Starting, S::Running,   S::Adapting, S::Completing,
                              S::Completed, S::Failed,   S::Cancelled, S::Timeout};
  const std::set<std::pair<S, S>> allowed = {
      {S::Pending, S::Starting},     {S::Pending, S::Cancelled},
      {S::Starting, S::Running},     {S::Starting, S::Completing},
      {S::Starting, S::Pending},  // promised nodes did not come
      {S::Running, S::Adapting},     {S::Running, S::Completing},
      {S::Adapting, S::Running},     {S::Adapting, S::Completing},
      {S::Completing, S::Completed}, {S::Completing, S::Failed},
      {S::Completing, S::Cancelled}, {S::Completing, S::Timeout},
      {S::Completing, S::Pending},  // requeue
  };
  for (S from : all) {
    for (S to : all) {
      EXPECT_EQ(is_valid_transition(from, to), allowed.count({from, to}) == 1)
          << to_string(from) << " -> " << to_string(to);
    }
  }
  for (S s : all) {
    EXPECT_EQ(is_terminal(s),
              s == S::Completed || s == S::Failed || s == S::Cancelled || s == S::Timeout);
  }
}

TEST_F(EngineStates, StateAndKindNamesRoundTrip) {
  for (int i = 0; i <= static_cast<int>(JobState::Timeout); ++i) {
    const auto s = static_cast<JobState>(i);
    EXPECT_EQ(parse_job_state(to_string(s)), s);
  }
  EXPECT_EQ(to_string(JobState::Completing), "COMPLETING");
  EXPECT_EQ(parse_job_kind("malleable"), JobKind::Malleable);
  EXPECT_EQ(parse_node_constraint("ncube"), NodeConstraint::Ncube);
  EXPECT_EQ(parse_node_constraint(""), NodeConstraint::None);
  EXPECT_EQ(parse_node_constraint("prime"), std::nullopt);
  EXPECT_EQ(parse_job_state("running"), std::nullopt) << "names are upper case";
}

// One event per transition, each from where the last left off, in order.
TEST_F(EngineStates, EveryTransitionIsOneEventInOrder) {
  const JobId id = submit(malleable_spec(2, 1, 6));
  clock.set(1);
  in_pass([&](PassContext& ctx) { ctx.start(id); });
  clock.set(2);
  engine->job_started(id);
  clock.set(3);
  in_pass([&](PassContext& ctx) { ctx.expand(id, 3); });
  clock.set(4);
  engine->adaptation_done(id, true);
  in_pass([&](PassContext& ctx) { ctx.shrink(id, 1); });
  engine->adaptation_done(id, false);
  clock.set(9);
  engine->job_ended(id, 0);

  const auto evs = events.of_job(id);
  const std::vector<std::pair<EventType, JobState>> expected = {
      {EventType::JobSubmitted, JobState::Pending},
      {EventType::JobStarting, JobState::Starting},
      {EventType::JobStarted, JobState::Running},
      {EventType::JobAdapting, JobState::Adapting},
      {EventType::JobResized, JobState::Running},
      {EventType::JobAdapting, JobState::Adapting},
      {EventType::JobResized, JobState::Running},
      {EventType::JobCompleting, JobState::Completing},
      {EventType::JobCompleted, JobState::Completed},
  };
  ASSERT_EQ(evs.size(), expected.size());
  for (std::size_t i = 0; i < evs.size(); ++i) {
    EXPECT_EQ(evs[i].type, expected[i].first) << "event " << i << ": " << topic(evs[i].type);
    EXPECT_EQ(evs[i].to, expected[i].second) << "event " << i;
    if (i > 0) {
      EXPECT_EQ(evs[i].from, evs[i - 1].to) << "event " << i << " starts where the last ended";
      EXPECT_TRUE(is_valid_transition(evs[i].from, evs[i].to)) << "event " << i;
    }
  }
  // Sequence numbers of all events (job or not) are 1, 2, 3, ... over the
  // engine's life; this recorder joined after the nodes were added.
  for (std::size_t i = 1; i < events.events.size(); ++i) {
    EXPECT_EQ(events.events[i].seq, events.events[i - 1].seq + 1);
    EXPECT_GE(events.events[i].time, events.events[i - 1].time);
  }
  EXPECT_DOUBLE_EQ(evs[1].time, 1);
  EXPECT_DOUBLE_EQ(evs[2].time, 2);
  EXPECT_DOUBLE_EQ(evs.back().time, 9);
}

TEST_F(EngineStates, TopicsAreTheProtocolNames) {
  const std::vector<std::pair<EventType, std::string>> topics = {
      {EventType::JobSubmitted, "job.submitted"},
      {EventType::JobStarting, "job.starting"},
      {EventType::JobStarted, "job.started"},
      {EventType::JobAdapting, "job.adapting"},
      {EventType::JobResized, "job.resized"},
      {EventType::JobCompleting, "job.completing"},
      {EventType::JobRequeued, "job.requeued"},
      {EventType::JobCompleted, "job.completed"},
      {EventType::JobFailed, "job.failed"},
      {EventType::JobCancelled, "job.cancelled"},
      {EventType::JobTimeout, "job.timeout"},
      {EventType::JobReserved, "job.reserved"},
      {EventType::NodeUp, "node.up"},
      {EventType::NodeDown, "node.down"},
      {EventType::NodeDrain, "node.drain"},
      {EventType::PowerCorridor, "power.corridor"},
      {EventType::PowerViolation, "power.violation"},
      {EventType::PolicyReloaded, "policy.reloaded"},
      {EventType::PolicyError, "policy.error"},
      {EventType::AuthDenied, "auth.denied"},
      {EventType::ResizeRequested, "resize.requested"},
      {EventType::ResizePending, "resize.pending"},
      {EventType::ResizeGranted, "resize.granted"},
      {EventType::ResizeRefused, "resize.refused"},
      {EventType::ResizeExpired, "resize.expired"},
      {EventType::SchedPass, "sched.pass"},
  };
  for (const auto& [type, name] : topics) EXPECT_EQ(topic(type), name);
}

TEST_F(EngineStates, PolicySeesEventsBetweenPassesButNotPassEvents) {
  const JobId id = submit(rigid_spec(1));
  ASSERT_FALSE(policy->seen.empty());
  EXPECT_EQ(policy->seen.back().type, EventType::JobSubmitted);
  EXPECT_EQ(policy->seen.back().job, id);
  engine->run_pass_if_due();
  for (const Event& ev : policy->seen) EXPECT_NE(ev.type, EventType::SchedPass);
}

}  // namespace
}  // namespace sched::test
