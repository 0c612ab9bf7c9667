// The refusals of docs/design.md §4, through PassContext inside a scripted pass: the
// engine never trusts a policy.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "engine_fixture.hpp"

namespace sched::test {
namespace {

// 8 nodes: rigid R on n0-n1, malleable M (1..6, none) on n2-n3, four idle.
class EngineRefusals : public EngineFixture {
 protected:
  void SetUp() override {
    init(8);
    r = run_job(rigid_spec(2));
    m = run_job(malleable_spec(2, 1, 6));
    enactor.clear();
    events.clear();
  }

  // Expects `verdict` to be a refusal with `code` for `job`; checks that the
  // message names the code.
  static void expect_refused(const Verdict& verdict, RefusalCode code, JobId job) {
    ASSERT_TRUE(verdict.has_value()) << "expected " << to_string(code) << ", was accepted";
    EXPECT_EQ(verdict->code, code) << verdict->message();
    EXPECT_EQ(verdict->job, job);
    EXPECT_NE(verdict->message().find(std::string(to_string(code))), std::string::npos)
        << verdict->message();
  }

  // The pass took no action and left the tentative idle count alone.
  static void expect_untouched(const PassContext& ctx, int idle_before) {
    EXPECT_TRUE(ctx.actions().empty());
    EXPECT_EQ(ctx.nodes_idle(), idle_before);
  }

  // After a pass of refusals only: no enactment, no event but the pass's own.
  void expect_nothing_enacted() const {
    EXPECT_TRUE(pass_calls().empty());
    const auto evs = pass_events();
    ASSERT_EQ(evs.size(), 1u);
    EXPECT_EQ(evs[0].type, EventType::SchedPass) << topic(evs[0].type);
    EXPECT_EQ(evs[0].nodes, 0) << "no action enacted";
  }

  JobId r = 0;
  JobId m = 0;
};

TEST_F(EngineRefusals, StartOverAllocationReportsWantAndHave) {
  const JobId big = submit(rigid_spec(5));
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.nodes_idle(), 4);
    const Verdict v = ctx.start(big);
    expect_refused(v, RefusalCode::OverAllocation, big);
    EXPECT_EQ(v->want, 5);
    EXPECT_EQ(v->have, 4);
    EXPECT_EQ(v->message(),
              "over_allocation: job " + std::to_string(big) + " wants 5 nodes, 4 idle");
    expect_untouched(ctx, 4);
    EXPECT_EQ(ctx.refusal_counts()[static_cast<std::size_t>(RefusalCode::OverAllocation)], 1);
  });
  expect_nothing_enacted();
  EXPECT_EQ(state(big), JobState::Pending);
  EXPECT_EQ(engine->stats().refusals, 1u);
  EXPECT_EQ(engine->stats().refusals_by_code[static_cast<std::size_t>(RefusalCode::OverAllocation)],
            1u);
}

TEST_F(EngineRefusals, OverAllocationCountsWhatThePassAlreadyTook) {
  const JobId a = submit(rigid_spec(3));
  const JobId b = submit(rigid_spec(2));
  const JobId c = submit(rigid_spec(1));
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.start(a), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 1);
    const Verdict v = ctx.start(b);
    expect_refused(v, RefusalCode::OverAllocation, b);
    EXPECT_EQ(v->want, 2);
    EXPECT_EQ(v->have, 1);
    EXPECT_EQ(ctx.nodes_idle(), 1);
    EXPECT_EQ(ctx.start(c), std::nullopt) << "a refusal does not end the pass";
    EXPECT_EQ(ctx.nodes_idle(), 0);
    EXPECT_EQ(ctx.actions().size(), 2u);
  });
  EXPECT_EQ(state(a), JobState::Starting);
  EXPECT_EQ(state(b), JobState::Pending);
  EXPECT_EQ(state(c), JobState::Starting);
  EXPECT_EQ(idle(), 0);
}

TEST_F(EngineRefusals, StartAtAnotherSizeChecksMinMaxAndConstraint) {
  const JobId e = submit(malleable_spec(2, 2, 4, NodeConstraint::Even));
  const JobId rigid = submit(rigid_spec(2));
  in_pass([&](PassContext& ctx) {
    Verdict v = ctx.start(e, 1);
    expect_refused(v, RefusalCode::BelowMin, e);
    EXPECT_EQ(v->want, 1);
    EXPECT_EQ(v->have, 2);
    v = ctx.start(e, 6);
    expect_refused(v, RefusalCode::AboveMax, e);
    EXPECT_EQ(v->want, 6);
    EXPECT_EQ(v->have, 4);
    v = ctx.start(e, 3);
    expect_refused(v, RefusalCode::Constraint, e);
    EXPECT_EQ(v->want, 3);
    v = ctx.start(rigid, 3);
    expect_refused(v, RefusalCode::RigidJob, rigid);
    v = ctx.start(rigid, 0);
    expect_refused(v, RefusalCode::BadArgument, rigid);
    v = ctx.start(e, -2);
    expect_refused(v, RefusalCode::BadArgument, e);
    expect_untouched(ctx, 4);
  });
  expect_nothing_enacted();
  EXPECT_EQ(engine->stats().refusals, 6u);

  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.start(e, 4), std::nullopt) << "an allowed other size";
    EXPECT_EQ(ctx.nodes_idle(), 0);
  });
  EXPECT_EQ(job(e).size(), 4);
}

TEST_F(EngineRefusals, MoldableStartsAtAnySizeWithinItsRange) {
  const JobId mold = submit(moldable_spec(4, 1, 8));
  in_pass([&](PassContext& ctx) {
    expect_refused(ctx.start(mold, 9), RefusalCode::AboveMax, mold);
    EXPECT_EQ(ctx.start(mold, 3), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 1);
  });
  EXPECT_EQ(job(mold).size(), 3);
}

TEST_F(EngineRefusals, StartOfANonPendingJob) {
  in_pass([&](PassContext& ctx) {
    const Verdict v = ctx.start(r);
    expect_refused(v, RefusalCode::NotPending, r);
    EXPECT_NE(v->message().find("RUNNING"), std::string::npos) << v->message();
    expect_untouched(ctx, 4);
  });
  expect_nothing_enacted();

  const JobId done = submit(rigid_spec(1));
  ASSERT_EQ(engine->cancel(done), Status());
  in_pass(
      [&](PassContext& ctx) { expect_refused(ctx.start(done), RefusalCode::NotPending, done); });
  EXPECT_EQ(state(done), JobState::Cancelled);
}

TEST_F(EngineRefusals, DoubleStartIsAlreadyActed) {
  const JobId p = submit(rigid_spec(1));
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.start(p), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 3);
    expect_refused(ctx.start(p), RefusalCode::AlreadyActed, p);
    EXPECT_EQ(ctx.nodes_idle(), 3) << "counted once";
    EXPECT_EQ(ctx.actions().size(), 1u);
  });
  EXPECT_EQ(enactor.count(Kind::Start, p), 1);
  EXPECT_EQ(job(p).size(), 1);
  EXPECT_EQ(idle(), 3);
}

TEST_F(EngineRefusals, UnknownJobForEveryAction) {
  const JobId nope = 4242;
  in_pass([&](PassContext& ctx) {
    expect_refused(ctx.start(nope), RefusalCode::UnknownJob, nope);
    expect_refused(ctx.expand(nope, 3), RefusalCode::UnknownJob, nope);
    expect_refused(ctx.shrink(nope, 1), RefusalCode::UnknownJob, nope);
    expect_refused(ctx.request_perf(nope), RefusalCode::UnknownJob, nope);
    expect_refused(ctx.preempt(nope, PreemptMode::Requeue), RefusalCode::UnknownJob, nope);
    expect_refused(ctx.reserve(nope, 100), RefusalCode::UnknownJob, nope);
    EXPECT_EQ(ctx.job(nope), nullptr);
    expect_untouched(ctx, 4);
  });
  expect_nothing_enacted();
  EXPECT_EQ(engine->stats().refusals_by_code[static_cast<std::size_t>(RefusalCode::UnknownJob)],
            6u);
  EXPECT_EQ(engine->find_job(nope), nullptr);
}

TEST_F(EngineRefusals, ExpandBeyondIdleNodes) {
  // max is 6: 2 → 6 needs 4, which are idle; take two first so only 2 are left.
  const JobId two = submit(rigid_spec(2));
  in_pass([&](PassContext& ctx) {
    const Verdict v = ctx.expand(m, 7);
    expect_refused(v, RefusalCode::AboveMax, m);
    EXPECT_EQ(v->have, 6);
    EXPECT_EQ(ctx.start(two), std::nullopt);
    const Verdict over = ctx.expand(m, 6);
    expect_refused(over, RefusalCode::OverAllocation, m);
    EXPECT_EQ(over->want, 4) << "the nodes to add";
    EXPECT_EQ(over->have, 2);
    EXPECT_EQ(ctx.nodes_idle(), 2);
    EXPECT_EQ(ctx.actions().size(), 1u);
  });
  EXPECT_EQ(state(m), JobState::Running);
  EXPECT_EQ(enactor.count(Kind::Resize), 0);
}

TEST_F(EngineRefusals, ResizeOutsideMinMaxAndConstraint) {
  const JobId e = run_job(malleable_spec(2, 2, 4, NodeConstraint::Even));  // n4-n5
  enactor.clear();
  events.clear();
  in_pass([&](PassContext& ctx) {
    Verdict v = ctx.shrink(e, 1);
    expect_refused(v, RefusalCode::BelowMin, e);
    EXPECT_EQ(v->want, 1);
    EXPECT_EQ(v->have, 2);
    v = ctx.expand(e, 6);
    expect_refused(v, RefusalCode::AboveMax, e);
    EXPECT_EQ(v->want, 6);
    EXPECT_EQ(v->have, 4);
    v = ctx.expand(e, 3);
    expect_refused(v, RefusalCode::Constraint, e);
    EXPECT_EQ(v->want, 3);
    EXPECT_NE(v->message().find("even"), std::string::npos) << v->message();
    expect_untouched(ctx, 2);
  });
  expect_nothing_enacted();
  EXPECT_EQ(job(e).size(), 2);
}

TEST_F(EngineRefusals, AdaptingJobIsUntouchable) {
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.expand(m, 3), std::nullopt); });
  ASSERT_EQ(state(m), JobState::Adapting);
  enactor.clear();
  events.clear();
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.nodes_idle(), 3);
    expect_refused(ctx.expand(m, 4), RefusalCode::Adapting, m);
    expect_refused(ctx.shrink(m, 1), RefusalCode::Adapting, m);
    expect_refused(ctx.preempt(m, PreemptMode::Cancel), RefusalCode::Adapting, m);
    expect_refused(ctx.request_perf(m), RefusalCode::Adapting, m);
    expect_untouched(ctx, 3);
    // It is listed as running, with its pre-adaptation size.
    bool listed = false;
    for (const Job* job : ctx.running()) listed = listed || job->id == m;
    EXPECT_TRUE(listed);
    EXPECT_EQ(ctx.tentative_size(*ctx.job(m)), 2);
  });
  expect_nothing_enacted();
}

TEST_F(EngineRefusals, ExpandAndShrinkOfOneJobInOnePassIsMixed) {
  const JobId other = run_job(malleable_spec(2, 1, 6));  // n4-n5
  enactor.clear();
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.expand(m, 3), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 1);
    const Verdict v = ctx.shrink(m, 1);
    expect_refused(v, RefusalCode::MixedResize, m);
    EXPECT_EQ(ctx.nodes_idle(), 1);

    EXPECT_EQ(ctx.shrink(other, 1), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 2);
    expect_refused(ctx.expand(other, 2), RefusalCode::MixedResize, other);
    EXPECT_EQ(ctx.nodes_idle(), 2);
    EXPECT_EQ(ctx.actions().size(), 2u);
  });
  const auto resizes = enactor.of(Kind::Resize);
  ASSERT_EQ(resizes.size(), 2u);
  EXPECT_EQ(resizes[0].job, m);
  EXPECT_EQ(resizes[0].resize.op, Resize::Op::Expand);
  EXPECT_EQ(resizes[0].resize.to, 3);
  EXPECT_EQ(resizes[1].job, other);
  EXPECT_EQ(resizes[1].resize.op, Resize::Op::Shrink);
  EXPECT_EQ(resizes[1].resize.to, 1);
}

TEST_F(EngineRefusals, SecondResizeInTheSameDirectionMovesTheTarget) {
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.expand(m, 3), std::nullopt);
    EXPECT_EQ(ctx.expand(m, 5), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 1);
    EXPECT_EQ(ctx.tentative_size(*ctx.job(m)), 5);
    expect_refused(ctx.expand(m, 4), RefusalCode::NotLarger, m);
    ASSERT_EQ(ctx.actions().size(), 1u);
    EXPECT_EQ(ctx.actions()[0].nodes, 5);
  });
  const auto resizes = enactor.of(Kind::Resize);
  ASSERT_EQ(resizes.size(), 1u) << "the job adapts once";
  EXPECT_EQ(resizes[0].resize.from, 2);
  EXPECT_EQ(resizes[0].resize.to, 5);
  EXPECT_EQ(resizes[0].resize.added.size(), 3u);
}

TEST_F(EngineRefusals, ShrinkToZeroWouldRemoveTheLeader) {
  in_pass([&](PassContext& ctx) {
    Verdict v = ctx.shrink(m, 0);
    expect_refused(v, RefusalCode::LeaderNode, m);
    EXPECT_NE(v->message().find("leader_node"), std::string::npos);
    v = ctx.shrink(m, -3);
    expect_refused(v, RefusalCode::LeaderNode, m);
    expect_untouched(ctx, 4);
  });
  expect_nothing_enacted();
  EXPECT_EQ(job(m).allocation.front(), 2) << "the leader stays";
}

TEST_F(EngineRefusals, RigidAndMoldableJobsCannotBeResized) {
  const JobId mold = run_job(moldable_spec(2, 1, 4));
  enactor.clear();
  events.clear();
  in_pass([&](PassContext& ctx) {
    Verdict v = ctx.expand(r, 3);
    expect_refused(v, RefusalCode::RigidJob, r);
    EXPECT_NE(v->message().find("rigid"), std::string::npos) << v->message();
    expect_refused(ctx.shrink(r, 1), RefusalCode::RigidJob, r);
    v = ctx.expand(mold, 3);
    expect_refused(v, RefusalCode::RigidJob, mold);
    EXPECT_NE(v->message().find("moldable"), std::string::npos) << v->message();
    expect_refused(ctx.shrink(mold, 1), RefusalCode::RigidJob, mold);
    expect_untouched(ctx, 2);
  });
  expect_nothing_enacted();
}

TEST_F(EngineRefusals, AnEvolvingJobIsResizedOnlyAsItAsked) {
  JobSpec spec = malleable_spec(1, 1, 3);
  spec.kind = JobKind::Evolving;
  const JobId ev = run_job(spec);
  in_pass([&](PassContext& ctx) {
    Verdict v = ctx.expand(ev, 2);
    expect_refused(v, RefusalCode::NotRequested, ev);
    EXPECT_NE(v->message().find("asked for no change"), std::string::npos) << v->message();
  });

  ASSERT_EQ(engine->resize_request(ev, ResizeRequest{ResizeRequest::Op::Expand, 2}), Status());
  in_pass([&](PassContext& ctx) {
    expect_refused(ctx.expand(ev, 3), RefusalCode::NotRequested, ev);  // more than it asked
  });
  EXPECT_EQ(state(ev), JobState::Running);
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.expand(ev, 2), std::nullopt); });
  EXPECT_EQ(state(ev), JobState::Adapting);
  engine->adaptation_done(ev, true);
  EXPECT_FALSE(engine->find_job(ev)->run->request) << "granted in full: the request is done";
}

TEST_F(EngineRefusals, AnEvolvingJobsRequestIsChecked) {
  JobSpec spec = malleable_spec(2, 1, 4, NodeConstraint::Even);
  spec.kind = JobKind::Evolving;
  const JobId ev = run_job(spec);
  using Op = ResizeRequest::Op;
  EXPECT_EQ(engine->resize_request(ev, {Op::Expand, 2}).code(), StatusCode::Conflict)
      << "not a change";
  EXPECT_EQ(engine->resize_request(ev, {Op::Shrink, 3}).code(), StatusCode::Conflict)
      << "not smaller";
  EXPECT_EQ(engine->resize_request(ev, {Op::Expand, 6}).code(), StatusCode::Invalid) << "above max";
  EXPECT_EQ(engine->resize_request(ev, {Op::Shrink, 1}).code(), StatusCode::Invalid)
      << "odd under even";
  EXPECT_EQ(engine->resize_request(m, {Op::Expand, 3}).code(), StatusCode::Invalid)
      << "malleable, not evolving";
  EXPECT_EQ(engine->resize_request(999, {Op::Expand, 3}), Status::not_found("no job 999"));
  EXPECT_FALSE(engine->find_job(ev)->run->request);
  EXPECT_EQ(engine->resize_request(ev, {Op::Expand, 4}), Status());
  ASSERT_TRUE(engine->find_job(ev)->run->request);
  EXPECT_EQ(engine->find_job(ev)->run->request->nodes, 4);
}

// Issue 17 item 1: schedd withdraws a request that was not granted in time.
TEST_F(EngineRefusals, AWithdrawnRequestIsGoneAndCannotBeGranted) {
  JobSpec spec = malleable_spec(1, 1, 3);
  spec.kind = JobKind::Evolving;
  const JobId ev = run_job(spec);
  EXPECT_EQ(engine->withdraw_resize_request(ev).code(), StatusCode::Conflict) << "none to withdraw";
  EXPECT_EQ(engine->withdraw_resize_request(999).code(), StatusCode::NotFound);
  ASSERT_EQ(engine->resize_request(ev, {ResizeRequest::Op::Expand, 3}), Status());
  const std::string refused = engine->resize_request(ev, {ResizeRequest::Op::Expand, 5}).message();
  EXPECT_NE(refused.find("takes 1 to 3 nodes: 5 is outside"), std::string::npos) << refused;
  EXPECT_EQ(engine->withdraw_resize_request(ev), Status());
  EXPECT_FALSE(engine->find_job(ev)->run->request);
  in_pass([&](PassContext& ctx) {
    expect_refused(ctx.expand(ev, 3), RefusalCode::NotRequested, ev);  // asks for nothing now
  });
}

TEST_F(EngineRefusals, ExpandMustGrowAndShrinkMustShrink) {
  in_pass([&](PassContext& ctx) {
    Verdict v = ctx.expand(m, 2);
    expect_refused(v, RefusalCode::NotLarger, m);
    EXPECT_EQ(v->want, 2);
    EXPECT_EQ(v->have, 2);
    expect_refused(ctx.expand(m, 1), RefusalCode::NotLarger, m);
    v = ctx.shrink(m, 2);
    expect_refused(v, RefusalCode::NotSmaller, m);
    EXPECT_EQ(v->want, 2);
    EXPECT_EQ(v->have, 2);
    expect_refused(ctx.shrink(m, 4), RefusalCode::NotSmaller, m);
    expect_untouched(ctx, 4);
  });
  expect_nothing_enacted();
}

TEST_F(EngineRefusals, ResizeOrPreemptOfAJobThatIsNotRunning) {
  const JobId p = submit(malleable_spec(2, 1, 4));
  in_pass([&](PassContext& ctx) {
    expect_refused(ctx.expand(p, 3), RefusalCode::NotRunning, p);
    expect_refused(ctx.shrink(p, 1), RefusalCode::NotRunning, p);
    expect_refused(ctx.preempt(p, PreemptMode::Requeue), RefusalCode::NotRunning, p);
    expect_refused(ctx.request_perf(p), RefusalCode::NotRunning, p);
    EXPECT_EQ(ctx.tentative_size(*ctx.job(p)), 0);
    expect_untouched(ctx, 4);
  });
  expect_nothing_enacted();
}

TEST_F(EngineRefusals, PreemptOncePerPassAndNotWithAResize) {
  const JobId other = run_job(malleable_spec(1, 1, 4));  // n4
  enactor.clear();
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.preempt(r, PreemptMode::Requeue), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 5);
    EXPECT_EQ(ctx.tentative_size(*ctx.job(r)), 0);
    expect_refused(ctx.preempt(r, PreemptMode::Cancel), RefusalCode::AlreadyActed, r);
    EXPECT_EQ(ctx.nodes_idle(), 5);

    EXPECT_EQ(ctx.preempt(m, PreemptMode::Requeue), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 7);
    expect_refused(ctx.expand(m, 3), RefusalCode::AlreadyActed, m);
    expect_refused(ctx.shrink(m, 1), RefusalCode::AlreadyActed, m);

    EXPECT_EQ(ctx.expand(other, 2), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 6);
    expect_refused(ctx.preempt(other, PreemptMode::Requeue), RefusalCode::AlreadyActed, other);
    EXPECT_EQ(ctx.nodes_idle(), 6);
    EXPECT_EQ(ctx.actions().size(), 3u);
  });
  EXPECT_EQ(state(r), JobState::Completing);
  EXPECT_EQ(state(m), JobState::Completing);
  EXPECT_EQ(state(other), JobState::Adapting);
  EXPECT_EQ(enactor.count(Kind::Stop), 2);
}

TEST_F(EngineRefusals, ReserveNeedsAPendingJobAndAFiniteTime) {
  const JobId p = submit(rigid_spec(6));
  in_pass([&](PassContext& ctx) {
    expect_refused(ctx.reserve(p, std::numeric_limits<double>::quiet_NaN()),
                   RefusalCode::BadArgument, p);
    expect_refused(ctx.reserve(p, std::numeric_limits<double>::infinity()),
                   RefusalCode::BadArgument, p);
    expect_refused(ctx.reserve(p, -std::numeric_limits<double>::infinity()),
                   RefusalCode::BadArgument, p);
    expect_refused(ctx.reserve(r, 50), RefusalCode::NotPending, r);
    expect_untouched(ctx, 4);
  });
  expect_nothing_enacted();
  EXPECT_FALSE(job(p).run->expected_start.has_value());

  const std::uint64_t version = engine->state_version();
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.reserve(p, 500), std::nullopt); });
  EXPECT_EQ(job(p).run->expected_start, 500);
  EXPECT_EQ(state(p), JobState::Pending);
  const auto reserved = events.of_type(EventType::JobReserved);
  ASSERT_EQ(reserved.size(), 1u);
  EXPECT_EQ(reserved[0].job, p);
  EXPECT_DOUBLE_EQ(reserved[0].expected_start, 500);
  EXPECT_EQ(engine->state_version(), version) << "a reservation is the policy's own output";

  // The same reservation again is no news.
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.reserve(p, 500), std::nullopt); });
  EXPECT_EQ(events.of_type(EventType::JobReserved).size(), 1u);
}

TEST_F(EngineRefusals, IdleCountFollowsAcceptedActions) {
  const JobId p = submit(rigid_spec(3));
  const JobId other = run_job(malleable_spec(2, 1, 6));  // n4-n5, two idle left
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.nodes_total(), 8);
    EXPECT_EQ(ctx.nodes_idle(), 2);
    EXPECT_EQ(ctx.expand(m, 3), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 1);
    EXPECT_EQ(ctx.shrink(other, 1), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 2);
    EXPECT_EQ(ctx.preempt(r, PreemptMode::Requeue), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 4);
    EXPECT_EQ(ctx.start(p), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 1);
    // Its MTCT resets after the shrink: a perf request now would be lost.
    expect_refused(ctx.request_perf(other), RefusalCode::Adapting, other);
    EXPECT_EQ(ctx.nodes_idle(), 1);
    EXPECT_EQ(ctx.actions().size(), 4u);
  });
  EXPECT_EQ(engine->stats().refusals, 1u);
  EXPECT_EQ(engine->stats().actions, 4u + 3u) << "plus the three starts of run_job";
  EXPECT_EQ(state(m), JobState::Adapting);
  EXPECT_EQ(state(other), JobState::Adapting);
  EXPECT_EQ(state(r), JobState::Completing);
  EXPECT_EQ(state(p), JobState::Starting);
  expect_nodes_conserved();
}

TEST_F(EngineRefusals, RefusedActionsChangeNothingInTheEngine) {
  const JobId p = submit(rigid_spec(6));
  engine->run_pass_if_due();
  events.clear();
  const std::uint64_t version = engine->state_version();
  const std::uint64_t m_version = job(m).version;
  const std::uint64_t refusals = engine->stats().refusals;
  in_pass([&](PassContext& ctx) {
    ctx.start(p);                                              // over_allocation
    ctx.start(r);                                              // not_pending
    ctx.expand(r, 3);                                          // rigid_job
    ctx.expand(m, 7);                                          // above_max
    ctx.shrink(m, 0);                                          // leader_node
    ctx.shrink(m, 2);                                          // not_smaller
    ctx.reserve(p, std::numeric_limits<double>::quiet_NaN());  // bad_argument
    ctx.preempt(p, PreemptMode::Cancel);                       // not_running
    expect_untouched(ctx, 4);
  });
  expect_nothing_enacted();
  EXPECT_EQ(engine->stats().refusals - refusals, 8u);
  EXPECT_EQ(engine->state_version(), version);
  EXPECT_EQ(job(m).version, m_version);
  EXPECT_EQ(state(p), JobState::Pending);
  EXPECT_EQ(state(r), JobState::Running);
  EXPECT_EQ(state(m), JobState::Running);
  EXPECT_EQ(job(m).size(), 2);
  EXPECT_EQ(idle(), 4);
}

TEST_F(EngineRefusals, EveryMessageNamesItsCode) {
  for (int i = 0; i < kRefusalCodeCount; ++i) {
    const auto code = static_cast<RefusalCode>(i);
    Refusal refusal{code, 17, 8, 6, "why"};
    const std::string text = refusal.message();
    EXPECT_EQ(text.rfind(std::string(to_string(code)) + ": job 17", 0), 0u) << text;
    EXPECT_NE(text.find("(why)"), std::string::npos) << text;
  }
  // Names are distinct, lower case, snake case.
  std::vector<std::string> names;
  for (int i = 0; i < kRefusalCodeCount; ++i) {
    const std::string name(to_string(static_cast<RefusalCode>(i)));
    for (char c : name) EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '_') << name;
    for (const std::string& seen : names) EXPECT_NE(name, seen);
    names.push_back(name);
  }
  EXPECT_EQ(to_string(RefusalCode::AlreadyActed), "already_acted");
  EXPECT_EQ(to_string(RefusalCode::RigidJob), "rigid_job");
  EXPECT_EQ(to_string(RefusalCode::NotLarger), "not_larger");
  EXPECT_EQ(to_string(RefusalCode::NotSmaller), "not_smaller");
  EXPECT_EQ((Refusal{RefusalCode::BelowMin, 3, 1, 2, ""}).message(),
            "below_min: job 3 size 1 is below min_nodes 2");
}

}  // namespace
}  // namespace sched::test
