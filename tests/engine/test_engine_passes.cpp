// Scheduling passes: enactment order, policy errors, pass coalescing and
// tick skipping, promised nodes, accounting, submit and cancel errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine_fixture.hpp"

namespace sched::test {
namespace {

class EnginePasses : public EngineFixture {
 protected:
  void SetUp() override { init(6); }

  static bool shares_a_node(const std::vector<NodeIndex>& a, const std::vector<NodeIndex>& b) {
    for (NodeIndex n : a) {
      if (std::find(b.begin(), b.end(), n) != b.end()) return true;
    }
    return false;
  }
};

// ---------------------------------------------------------------- enactment

TEST_F(EnginePasses, AcceptedActionsAreEnactedInCallOrderAfterThePolicyReturns) {
  const JobId m = run_job(malleable_spec(3, 1, 6));  // n0-n2
  const JobId a = submit(rigid_spec(1));
  const JobId b = submit(rigid_spec(1));
  enactor.clear();
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.start(b), std::nullopt);
    EXPECT_EQ(ctx.request_perf(m), std::nullopt);
    EXPECT_EQ(ctx.start(a), std::nullopt);
    EXPECT_EQ(ctx.shrink(m, 2), std::nullopt);
    // Nothing has happened yet.
    EXPECT_TRUE(enactor.calls.empty());
    EXPECT_EQ(ctx.job(a)->state, JobState::Pending);
    EXPECT_EQ(ctx.job(b)->state, JobState::Pending);
    EXPECT_EQ(ctx.job(m)->state, JobState::Running);
    EXPECT_EQ(ctx.cluster().idle_count(), 3);
    ASSERT_EQ(ctx.actions().size(), 4u);
    EXPECT_EQ(ctx.actions()[0].type, Action::Type::Start);
    EXPECT_EQ(ctx.actions()[1].type, Action::Type::RequestPerf);
    EXPECT_EQ(ctx.actions()[2].type, Action::Type::Start);
    EXPECT_EQ(ctx.actions()[3].type, Action::Type::Shrink);
  });
  ASSERT_EQ(enactor.calls.size(), 4u);
  EXPECT_EQ(enactor.calls[0].kind, Kind::Start);
  EXPECT_EQ(enactor.calls[0].job, b);
  EXPECT_EQ(enactor.calls[0].allocation, (std::vector<NodeIndex>{3}));
  EXPECT_EQ(enactor.calls[1].kind, Kind::Perf);
  EXPECT_EQ(enactor.calls[1].job, m);
  EXPECT_EQ(enactor.calls[2].kind, Kind::Start);
  EXPECT_EQ(enactor.calls[2].job, a);
  EXPECT_EQ(enactor.calls[2].allocation, (std::vector<NodeIndex>{4}));
  EXPECT_EQ(enactor.calls[3].kind, Kind::Resize);
  EXPECT_EQ(enactor.calls[3].job, m);

  // The job events follow the same order.
  std::vector<JobId> order;
  for (const Event& ev : pass_events()) {
    if (ev.type == EventType::JobStarting || ev.type == EventType::JobAdapting)
      order.push_back(ev.job);
  }
  EXPECT_EQ(order, (std::vector<JobId>{b, a, m}));
  const Event& pass = events.events.back();
  EXPECT_EQ(pass.type, EventType::SchedPass);
  EXPECT_EQ(pass.actions, 4) << "actions enacted";
  EXPECT_EQ(pass.reason, "manual");
}

TEST_F(EnginePasses, PolicyErrorDropsThePassAndTheEngineGoesOn) {
  const JobId a = submit(rigid_spec(2));
  engine->run_pass_if_due();
  const PassStats before = engine->stats();
  policy->set_script([&](PassContext& ctx) -> std::optional<std::string> {
    EXPECT_EQ(ctx.start(a), std::nullopt);
    return "attempt to index a nil value";
  });
  pass_mark = events.events.size();
  engine->run_pass(PassReason::Manual);

  EXPECT_TRUE(enactor.calls.empty());
  EXPECT_EQ(state(a), JobState::Pending);
  EXPECT_EQ(idle(), 6);
  const auto evs = pass_events();
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[0].type, EventType::PolicyError);
  EXPECT_EQ(topic(evs[0].type), "policy.error");
  EXPECT_NE(evs[0].message.find("attempt to index a nil value"), std::string::npos);
  EXPECT_NE(evs[0].message.find("scripted"), std::string::npos) << "names the policy";
  EXPECT_EQ(evs[0].code, "runtime");
  EXPECT_EQ(evs[1].type, EventType::SchedPass);
  EXPECT_EQ(evs[1].actions, 0);
  ASSERT_TRUE(engine->stats().last_failure);
  EXPECT_EQ(engine->stats().last_failure->message, "attempt to index a nil value");
  EXPECT_EQ(engine->stats().last_failure->time, clock.now());
  EXPECT_EQ(engine->stats().passes, before.passes + 1);
  EXPECT_EQ(engine->stats().failed, before.failed + 1);
  EXPECT_EQ(engine->stats().actions, before.actions);

  // The next pass enacts normally.
  policy->set_script([&](PassContext& ctx) -> std::optional<std::string> {
    EXPECT_EQ(ctx.nodes_idle(), 6) << "the failed pass left no trace";
    EXPECT_EQ(ctx.start(a), std::nullopt);
    return std::nullopt;
  });
  engine->run_pass(PassReason::Manual);
  EXPECT_EQ(state(a), JobState::Starting);
  EXPECT_EQ(enactor.count(Kind::Start, a), 1);
  EXPECT_EQ(engine->stats().failed, before.failed + 1);
  EXPECT_EQ(engine->stats().actions, before.actions + 1);
}

TEST_F(EnginePasses, PolicyExceptionIsAPolicyError) {
  const JobId a = submit(rigid_spec(1));
  policy->set_script([&](PassContext& ctx) -> std::optional<std::string> {
    ctx.start(a);
    throw std::runtime_error("out of memory");
  });
  engine->run_pass(PassReason::Manual);
  EXPECT_EQ(state(a), JobState::Pending);
  EXPECT_TRUE(enactor.calls.empty());
  const auto errors = events.of_type(EventType::PolicyError);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("out of memory"), std::string::npos);
  EXPECT_EQ(engine->stats().failed, 1u);

  policy->set_script({});
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(a), std::nullopt); });
  EXPECT_EQ(state(a), JobState::Starting);
}

TEST_F(EnginePasses, PassStatisticsCountPassesActionsAndRefusals) {
  const JobId a = submit(rigid_spec(4));
  const JobId b = submit(rigid_spec(4));
  in_pass([&](PassContext& ctx) {
    ctx.start(a);
    ctx.start(b);  // over_allocation
    ctx.start(a);  // already_acted
  });
  const PassStats& stats = engine->stats();
  EXPECT_EQ(stats.passes, 1u);
  EXPECT_EQ(stats.failed, 0u);
  EXPECT_EQ(stats.actions, 1u);
  EXPECT_EQ(stats.refusals, 2u);
  EXPECT_EQ(stats.refusals_by_code[static_cast<std::size_t>(RefusalCode::OverAllocation)], 1u);
  EXPECT_EQ(stats.refusals_by_code[static_cast<std::size_t>(RefusalCode::AlreadyActed)], 1u);
  EXPECT_GE(stats.last_s, 0);
  EXPECT_GE(stats.max_s, stats.last_s);
  EXPECT_GE(stats.total_s, stats.last_s);
}

TEST_F(EnginePasses, DryPassChecksButNeverEnacts) {
  const JobId a = submit(rigid_spec(2));
  events.clear();
  const PassStats before = engine->stats();
  bool was_dry = false;
  ScriptedPolicy candidate([&](PassContext& ctx) -> std::optional<std::string> {
    was_dry = ctx.dry();
    EXPECT_EQ(ctx.start(a), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 4);
    return std::nullopt;
  });
  EXPECT_FALSE(engine->dry_pass(candidate));
  EXPECT_TRUE(was_dry);
  EXPECT_EQ(candidate.passes, 1);
  EXPECT_EQ(policy->passes, 0) << "the installed policy is not asked";
  EXPECT_EQ(state(a), JobState::Pending);
  EXPECT_TRUE(enactor.calls.empty());
  EXPECT_TRUE(events.events.empty());
  EXPECT_EQ(engine->stats().passes, before.passes);

  ScriptedPolicy broken([](PassContext&) -> std::optional<std::string> { return "syntax error"; });
  const auto failure = engine->dry_pass(broken);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->message, "syntax error");
  EXPECT_TRUE(events.events.empty()) << "the caller decides what to publish";
}

// ---------------------------------------------------------------- pass triggers

TEST_F(EnginePasses, SeveralInputsAtOneInstantGiveOnePass) {
  EXPECT_FALSE(engine->pass_due());
  EXPECT_FALSE(engine->run_pass_if_due()) << "nothing is due";
  EXPECT_EQ(policy->passes, 0);

  submit(rigid_spec(1));
  submit(rigid_spec(1));
  engine->tick();
  submit(rigid_spec(1));
  EXPECT_TRUE(engine->pass_due());
  EXPECT_TRUE(engine->run_pass_if_due());
  EXPECT_EQ(policy->passes, 1);
  EXPECT_EQ(policy->reasons.back(), PassReason::Submit);
  EXPECT_FALSE(engine->pass_due());
  EXPECT_FALSE(engine->run_pass_if_due());
  EXPECT_EQ(policy->passes, 1);
  EXPECT_EQ(events.of_type(EventType::SchedPass).size(), 1u);
}

TEST_F(EnginePasses, ATickDoesNotNameAPassThatSomethingElseAlsoWants) {
  engine->tick();
  engine->set_corridor(1000, 2000);
  engine->tick();
  EXPECT_TRUE(engine->run_pass_if_due());
  EXPECT_EQ(policy->reasons.back(), PassReason::Corridor);

  engine->tick();
  EXPECT_TRUE(engine->run_pass_if_due());
  EXPECT_EQ(policy->reasons.back(), PassReason::Tick);
}

TEST_F(EnginePasses, UnchangedTickIsSkippedForATimeIndependentPolicy) {
  policy->set_time_dependent(false);
  const JobId a = run_job(rigid_spec(1));
  engine->run_pass(PassReason::Manual);  // the policy has seen everything so far
  const int passes = policy->passes;

  clock.advance(10);
  engine->tick();
  EXPECT_TRUE(engine->pass_due());
  EXPECT_FALSE(engine->run_pass_if_due()) << "nothing changed since the last pass";
  EXPECT_FALSE(engine->pass_due());
  EXPECT_EQ(policy->passes, passes);

  // A change that does not ask for a pass itself is seen by the next tick.
  engine->power_report(a, 120);
  clock.advance(10);
  engine->tick();
  EXPECT_TRUE(engine->run_pass_if_due());
  EXPECT_EQ(policy->passes, passes + 1);
  EXPECT_EQ(policy->reasons.back(), PassReason::Tick);

  // And again nothing.
  engine->tick();
  EXPECT_FALSE(engine->run_pass_if_due());

  // Non-tick reasons always run.
  engine->request_pass(PassReason::Manual);
  EXPECT_TRUE(engine->run_pass_if_due());
  EXPECT_EQ(policy->passes, passes + 2);
}

TEST_F(EnginePasses, TickRunsForATimeDependentPolicy) {
  run_job(rigid_spec(1));
  engine->run_pass_if_due();
  const int passes = policy->passes;
  for (int i = 0; i < 3; ++i) {
    clock.advance(5);
    engine->tick();
    EXPECT_TRUE(engine->run_pass_if_due());
  }
  EXPECT_EQ(policy->passes, passes + 3);
}

TEST_F(EnginePasses, NoPolicyNoPass) {
  engine->set_policy(nullptr);
  const JobId a = submit(rigid_spec(1));
  engine->run_pass_if_due();
  EXPECT_EQ(state(a), JobState::Pending);
  EXPECT_EQ(engine->stats().passes, 0u);
}

// ---------------------------------------------------------------- promised nodes

// 6 nodes: malleable M on n0-n3, n4-n5 idle. One pass shrinks M to 2 and
// starts a 4-node rigid job on the two idle nodes plus the two M gives back.
class EnginePromised : public EnginePasses {
 protected:
  void SetUp() override {
    EnginePasses::SetUp();
    m = run_job(malleable_spec(4, 1, 6));
    r = submit(rigid_spec(4));
    enactor.clear();
    in_pass([&](PassContext& ctx) {
      EXPECT_EQ(ctx.nodes_idle(), 2);
      EXPECT_TRUE(ctx.start(r).has_value()) << "not yet: 4 > 2";
      EXPECT_EQ(ctx.shrink(m, 2), std::nullopt);
      EXPECT_EQ(ctx.nodes_idle(), 4) << "tentatively idle";
      EXPECT_EQ(ctx.start(r), std::nullopt);
      EXPECT_EQ(ctx.nodes_idle(), 0);
    });
  }

  JobId m = 0;
  JobId r = 0;
};

TEST_F(EnginePromised, StartWaitsForTheShrinkToReleaseTheNodes) {
  EXPECT_EQ(state(m), JobState::Adapting);
  EXPECT_EQ(state(r), JobState::Starting);
  EXPECT_EQ(enactor.count(Kind::Resize, m), 1);
  EXPECT_EQ(enactor.count(Kind::Start), 0) << "the promised nodes are still M's";
  EXPECT_EQ(job(r).size(), 4);
  EXPECT_EQ(promised(), 2);
  EXPECT_EQ(engine->cluster().node(2).promised, r);
  EXPECT_EQ(engine->cluster().node(3).promised, r);
  EXPECT_EQ(engine->cluster().node(2).job, m);
  EXPECT_EQ(idle(), 0);
  EXPECT_EQ(engine->cluster().releasing_unpromised_count(), 0);

  // Not launched, so it cannot report being up, and ticks change nothing.
  engine->job_started(r);
  EXPECT_EQ(state(r), JobState::Starting);
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.nodes_idle(), 0);
    expect_nodes_conserved();
  });
  EXPECT_EQ(enactor.count(Kind::Start), 0);

  clock.set(3);
  engine->adaptation_done(m, true);
  EXPECT_EQ(state(m), JobState::Running);
  EXPECT_EQ(job(m).allocation, (std::vector<NodeIndex>{0, 1}));
  const auto starts = enactor.of(Kind::Start);
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].job, r);
  EXPECT_EQ(starts[0].allocation.size(), 4u);
  EXPECT_FALSE(shares_a_node(starts[0].allocation, job(m).allocation));
  std::vector<NodeIndex> sorted = starts[0].allocation;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<NodeIndex>{2, 3, 4, 5}));
  for (NodeIndex n : sorted) {
    EXPECT_EQ(engine->cluster().node(n).job, r);
    EXPECT_EQ(engine->cluster().node(n).promised, 0);
    EXPECT_FALSE(engine->cluster().node(n).releasing);
  }
  EXPECT_DOUBLE_EQ(job(r).start_time, 3) << "started when launched";
  engine->job_started(r);
  EXPECT_EQ(state(r), JobState::Running);
  EXPECT_EQ(idle(), 0);
  expect_nodes_conserved();
}

TEST_F(EnginePromised, FailedShrinkSendsTheWaitingJobBackToPending) {
  engine->adaptation_done(m, false);
  EXPECT_EQ(state(m), JobState::Running);
  EXPECT_EQ(job(m).allocation, (std::vector<NodeIndex>{0, 1, 2, 3}));
  EXPECT_EQ(state(r), JobState::Pending);
  EXPECT_TRUE(job(r).allocation.empty());
  EXPECT_EQ(enactor.count(Kind::Start), 0);
  const auto pending = engine->pending_jobs();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0]->id, r);
  const Event requeued = events.of_job(r).back();
  EXPECT_EQ(requeued.type, EventType::JobRequeued);
  EXPECT_EQ(requeued.from, JobState::Starting);
  EXPECT_EQ(requeued.to, JobState::Pending);

  EXPECT_EQ(idle(), 2) << "n4, n5 are idle again";
  EXPECT_EQ(promised(), 0);
  EXPECT_EQ(releasing(), 0);
  EXPECT_EQ(engine->cluster().releasing_unpromised_count(), 0);
  expect_nodes_conserved();
  EXPECT_EQ(engine->active_jobs(), 2u);

  // Everything works on: M ends, R starts.
  engine->job_ended(m, 0);
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(r), std::nullopt); });
  EXPECT_EQ(enactor.count(Kind::Start, r), 1);
  EXPECT_EQ(job(r).allocation, (std::vector<NodeIndex>{0, 1, 2, 3}));
}

TEST_F(EnginePromised, CancelOfTheWaitingJobWithdrawsThePromise) {
  EXPECT_EQ(engine->cancel(r), Status());
  EXPECT_EQ(state(r), JobState::Cancelled);
  EXPECT_EQ(enactor.count(Kind::Stop), 0) << "never launched: nothing to kill";
  EXPECT_EQ(promised(), 0);
  EXPECT_EQ(idle(), 2);
  EXPECT_EQ(engine->active_jobs(), 1u);
  engine->adaptation_done(m, true);
  EXPECT_EQ(idle(), 4) << "the shrunk nodes become idle, not R's";
  EXPECT_EQ(enactor.count(Kind::Start), 0);
  expect_nodes_conserved();
}

TEST_F(EnginePromised, NodeFailureOfAPromisedNodeRequeuesTheWaitingJob) {
  EXPECT_EQ(engine->set_node_up("n3", false, "dead"), Status());
  EXPECT_EQ(state(r), JobState::Pending);
  EXPECT_EQ(promised(), 0);
  EXPECT_EQ(state(m), JobState::Completing) << "M ran on n3";
  engine->job_ended(m, -9);
  EXPECT_EQ(state(m), JobState::Failed);
  EXPECT_EQ(idle(), 5);
  EXPECT_EQ(allocated(), 0);
}

TEST_F(EnginePromised, PreemptedNodesArePromisedToo) {
  engine->adaptation_done(m, true);  // r starts on 2-5
  engine->job_started(r);
  const JobId big = submit(rigid_spec(6));
  enactor.clear();
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.preempt(m, PreemptMode::Requeue), std::nullopt);
    EXPECT_EQ(ctx.preempt(r, PreemptMode::Requeue), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 6);
    EXPECT_EQ(ctx.start(big), std::nullopt);
  });
  EXPECT_EQ(state(big), JobState::Starting);
  EXPECT_EQ(enactor.count(Kind::Stop), 2);
  EXPECT_EQ(enactor.count(Kind::Start), 0);
  engine->job_ended(m, -15);
  EXPECT_EQ(enactor.count(Kind::Start), 0) << "r still holds four";
  EXPECT_EQ(state(m), JobState::Pending);
  engine->job_ended(r, -15);
  ASSERT_EQ(enactor.count(Kind::Start, big), 1);
  EXPECT_EQ(enactor.of(Kind::Start)[0].allocation.size(), 6u);
  EXPECT_EQ(state(r), JobState::Pending);
  // Requeued in arrival order: m, r.
  const auto pending = engine->pending_jobs();
  ASSERT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending[0]->id, m);
  EXPECT_EQ(pending[1]->id, r);
  expect_nodes_conserved();
}

// A shrink that gives back a draining node frees one node fewer than it
// removes: the pass must not promise it to a start. (An evolving job: a
// drain shrinks a malleable one off the node by itself, issue 17; an
// evolving one keeps it until a pass shrinks it.)
TEST_F(EnginePasses, ShrinkOfADrainingNodeIsNotCountedAsFreed) {
  JobSpec spec = malleable_spec(4, 1, 6);
  spec.kind = JobKind::Evolving;
  const JobId m = run_job(spec);  // n0-n3
  const JobId r = submit(rigid_spec(4));
  ASSERT_EQ(engine->set_node_draining("n3", true), Status());
  ASSERT_EQ(engine->resize_request(m, ResizeRequest{ResizeRequest::Op::Shrink, 2}), Status());
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.nodes_idle(), 2);
    EXPECT_EQ(ctx.shrink(m, 2), std::nullopt);  // n2 (usable) and n3 (draining) leave
    EXPECT_EQ(ctx.nodes_idle(), 3);
    const Verdict v = ctx.start(r);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->code, RefusalCode::OverAllocation);
  });
  EXPECT_EQ(state(r), JobState::Pending);
  engine->adaptation_done(m, true);
  EXPECT_EQ(idle(), 3) << "n2, n4, n5";

  // The same for a preemption.
  const JobId big = submit(rigid_spec(5));
  ASSERT_EQ(engine->set_node_draining("n1", true), Status());
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.preempt(m, PreemptMode::Requeue), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 4) << "n0 only of m's two";
    EXPECT_TRUE(ctx.start(big).has_value());
    EXPECT_EQ(ctx.start(r), std::nullopt);
  });
  EXPECT_EQ(state(r), JobState::Starting);
  engine->job_ended(m, -15);
  EXPECT_EQ(enactor.count(Kind::Start, r), 1);
}

// A malleable job expanding into nodes another job is giving back, when that
// shrink fails: the expand is rolled back and the job keeps its own nodes.
TEST_F(EnginePasses, FailedShrinkRollsBackAnExpandWaitingForItsNodes) {
  init(8);
  const JobId a = run_job(malleable_spec(4, 1, 8));  // n0-n3
  const JobId b = run_job(malleable_spec(2, 1, 8));  // n4-n5
  enactor.clear();
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.shrink(a, 2), std::nullopt);
    EXPECT_EQ(ctx.expand(b, 6), std::nullopt);
  });
  EXPECT_EQ(state(b), JobState::Adapting);
  EXPECT_EQ(enactor.count(Kind::Resize, b), 0) << "waits for n2, n3";
  EXPECT_EQ(promised(), 2);

  engine->adaptation_done(a, false);
  EXPECT_EQ(state(a), JobState::Running);
  EXPECT_EQ(job(a).allocation, (std::vector<NodeIndex>{0, 1, 2, 3}));
  EXPECT_EQ(state(b), JobState::Running);
  EXPECT_EQ(job(b).allocation, (std::vector<NodeIndex>{4, 5})) << "b keeps its own nodes";
  EXPECT_EQ(engine->cluster().node(4).job, b);
  EXPECT_EQ(engine->cluster().node(5).job, b);
  EXPECT_EQ(idle(), 2) << "n6, n7 back";
  EXPECT_EQ(promised(), 0);
  EXPECT_EQ(releasing(), 0);
  EXPECT_EQ(enactor.count(Kind::Resize, b), 0);
  expect_nodes_conserved();
  const Event last = events.of_job(b).back();
  EXPECT_EQ(last.type, EventType::JobResized);
  EXPECT_EQ(last.from, JobState::Adapting);
  EXPECT_EQ(last.to, JobState::Running);
  EXPECT_EQ(last.nodes, 2);

  // b can adapt again, and it ends cleanly.
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.expand(b, 4), std::nullopt); });
  EXPECT_EQ(enactor.count(Kind::Resize, b), 1);
  engine->adaptation_done(b, true);
  EXPECT_EQ(job(b).size(), 4);
  engine->job_ended(b, 0);
  engine->job_ended(a, 0);
  EXPECT_EQ(idle(), 8);
  expect_nodes_conserved();
}

TEST_F(EnginePasses, SuccessfulShrinkCompletesAnExpandWaitingForItsNodes) {
  init(8);
  const JobId a = run_job(malleable_spec(4, 1, 8));  // n0-n3
  const JobId b = run_job(malleable_spec(2, 1, 8));  // n4-n5
  enactor.clear();
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.shrink(a, 2), std::nullopt);
    EXPECT_EQ(ctx.expand(b, 6), std::nullopt);
  });
  engine->adaptation_done(a, true);
  const auto resizes = enactor.of(Kind::Resize);
  ASSERT_EQ(resizes.size(), 2u);
  EXPECT_EQ(resizes[1].job, b);
  std::vector<NodeIndex> added = resizes[1].resize.added;
  std::sort(added.begin(), added.end());
  EXPECT_EQ(added, (std::vector<NodeIndex>{2, 3, 6, 7}));
  engine->adaptation_done(b, true);
  EXPECT_EQ(job(b).size(), 6);
  EXPECT_EQ(job(b).allocation.front(), 4) << "the leader stays first";
  EXPECT_EQ(idle(), 0);
  expect_nodes_conserved();
}

TEST_F(EnginePasses, NodeFailureOfAPromisedNodeRollsBackAWaitingExpand) {
  init(8);
  const JobId a = run_job(malleable_spec(4, 1, 8));  // n0-n3
  const JobId b = run_job(malleable_spec(2, 1, 8));  // n4-n5
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.shrink(a, 2), std::nullopt);
    EXPECT_EQ(ctx.expand(b, 6), std::nullopt);
  });
  ASSERT_EQ(engine->cluster().node(3).promised, b);
  EXPECT_EQ(engine->set_node_up("n3", false, "dead"), Status());
  EXPECT_EQ(state(b), JobState::Running) << "its expand is rolled back";
  EXPECT_EQ(job(b).allocation, (std::vector<NodeIndex>{4, 5}));
  EXPECT_EQ(engine->cluster().node(4).job, b);
  EXPECT_EQ(state(a), JobState::Completing) << "a ran on n3";
  engine->job_ended(a, -9);
  EXPECT_EQ(state(a), JobState::Failed);
  EXPECT_EQ(idle(), 5) << "n0-n2, n6, n7";
  EXPECT_EQ(promised(), 0);
  engine->job_ended(b, 0);
  EXPECT_EQ(idle(), 7);
  EXPECT_EQ(allocated(), 0);
}

TEST_F(EnginePromised, CancelOfTheShrinkingJobHandsItsNodesToTheWaitingJob) {
  EXPECT_EQ(engine->cancel(m), Status());
  EXPECT_EQ(state(m), JobState::Completing);
  EXPECT_EQ(enactor.count(Kind::Start), 0);
  engine->adaptation_done(m, true);  // too late: ignored
  EXPECT_EQ(state(m), JobState::Completing);
  engine->job_ended(m, -15);
  EXPECT_EQ(state(m), JobState::Cancelled);
  ASSERT_EQ(enactor.count(Kind::Start, r), 1);
  EXPECT_EQ(enactor.of(Kind::Start)[0].allocation.size(), 4u);
  EXPECT_EQ(idle(), 2) << "n0, n1";
  EXPECT_EQ(promised(), 0);
  EXPECT_EQ(releasing(), 0);
  expect_nodes_conserved();
}

TEST_F(EnginePromised, WaitingJobIsNotRunningYet) {
  EXPECT_EQ(job(r).start_time, -1) << "started only when launched";
  const auto running = engine->running_jobs();
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0]->id, m);
  // Its two idle nodes draw idle power; m has no power data: idle power too.
  EXPECT_DOUBLE_EQ(engine->cluster_power_w(), 6 * engine->config().idle_w_per_node);
  EXPECT_EQ(engine->active_jobs(), 2u);
}

// ---------------------------------------------------------------- accounting

TEST_F(EnginePasses, NodeSecondsFollowTheAllocationOverResizes) {
  const JobId m = submit(malleable_spec(2, 1, 6));
  clock.set(10);
  in_pass([&](PassContext& ctx) { ctx.start(m); });  // launched at 10 on 2
  engine->job_started(m);
  clock.set(20);
  in_pass([&](PassContext& ctx) { ctx.expand(m, 4); });
  clock.set(22);
  engine->adaptation_done(m, true);  // 2 nodes over [10, 22): 24
  EXPECT_DOUBLE_EQ(job(m).node_seconds, 24);
  clock.set(30);
  in_pass([&](PassContext& ctx) { ctx.shrink(m, 1); });
  clock.set(31);
  engine->adaptation_done(m, true);  // 4 nodes over [22, 31): 36
  EXPECT_DOUBLE_EQ(job(m).node_seconds, 60);
  clock.set(40);
  in_pass([&](PassContext& ctx) { ctx.expand(m, 3); });
  clock.set(41);
  engine->adaptation_done(m, false);  // rolled back: 1 node over [31, 41): 10
  EXPECT_DOUBLE_EQ(job(m).node_seconds, 70);
  clock.set(50);
  engine->job_ended(m, 0);  // 1 node over [41, 50): 9
  EXPECT_DOUBLE_EQ(job(m).node_seconds, 79);
  EXPECT_DOUBLE_EQ(job(m).runtime(), 40);
}

TEST_F(EnginePasses, NodeSecondsOfARigidJob) {
  const JobId a = submit(rigid_spec(3));
  clock.set(5);
  in_pass([&](PassContext& ctx) { ctx.start(a); });
  engine->job_started(a);
  clock.set(105);
  engine->job_ended(a, 0);
  EXPECT_DOUBLE_EQ(job(a).node_seconds, 300);
}

TEST_F(EnginePasses, ClusterPowerCountsIdleAndBusyNodes) {
  EngineConfig config;
  config.idle_w_per_node = 50;
  init(4, config);
  EXPECT_DOUBLE_EQ(engine->cluster_power_w(), 200);
  JobSpec spec = rigid_spec(2);
  spec.power_min_w = 100;
  spec.power_max_w = 200;
  const JobId a = run_job(spec);
  EXPECT_DOUBLE_EQ(engine->cluster_power_w(), 2 * 50 + 2 * 150) << "estimate: the mid-point";
  engine->power_report(a, 180);
  EXPECT_DOUBLE_EQ(engine->cluster_power_w(), 2 * 50 + 2 * 180);
  engine->set_corridor(300, 600);
  const PowerView view = engine->power();
  EXPECT_DOUBLE_EQ(view.lower_w, 300);
  EXPECT_DOUBLE_EQ(view.upper_w, 600);
  EXPECT_DOUBLE_EQ(view.current_w, 460);
  EXPECT_DOUBLE_EQ(view.idle_w_per_node, 50);
  EXPECT_EQ(events.of_type(EventType::PowerCorridor).size(), 1u);
}

// power.violation (issue 17 item 6): 4 idle nodes draw 200 W. A corridor
// above that is left below; a job's draw brings the cluster back inside; a
// report above the upper bound leaves it above; clearing ends it.
TEST_F(EnginePasses, PowerViolationMarksEachIntervalOutsideTheCorridor) {
  EngineConfig config;
  config.idle_w_per_node = 50;
  init(4, config);
  engine->check_power();
  EXPECT_TRUE(events.of_type(EventType::PowerViolation).empty()) << "no corridor, no violation";
  engine->set_corridor(300, 600);
  engine->check_power();
  auto seen = events.of_type(EventType::PowerViolation);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].reason, "below");
  EXPECT_DOUBLE_EQ(seen[0].power_w, 200);
  EXPECT_DOUBLE_EQ(seen[0].lower_w, 300);
  EXPECT_DOUBLE_EQ(seen[0].upper_w, 600);
  engine->check_power();
  EXPECT_EQ(events.of_type(EventType::PowerViolation).size(), 1u) << "still below: no new event";

  JobSpec spec = rigid_spec(2);
  spec.power_min_w = 100;
  spec.power_max_w = 200;
  const JobId a = run_job(spec);  // 2 × 50 + 2 × 150 = 400 W
  engine->check_power();
  seen = events.of_type(EventType::PowerViolation);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].reason, "inside");
  EXPECT_DOUBLE_EQ(seen[1].power_w, 400);

  engine->power_report(a, 400);  // 2 × 50 + 2 × 400 = 900 W
  engine->check_power();
  seen = events.of_type(EventType::PowerViolation);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[2].reason, "above");
  EXPECT_THAT(seen[2].message, ::testing::HasSubstr("900 W is above the corridor [300, 600] W"));

  engine->set_corridor(0, 0);
  engine->check_power();
  seen = events.of_type(EventType::PowerViolation);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[3].reason, "cleared");
  engine->check_power();
  EXPECT_EQ(events.of_type(EventType::PowerViolation).size(), 4u);
}

// ---------------------------------------------------------------- submit and cancel

TEST_F(EnginePasses, SubmitRejectsInvalidSpecsWithTheirMessage) {
  struct Case {
    JobSpec spec;
    std::string message;
  };
  std::vector<Case> cases;
  JobSpec s = rigid_spec(0);
  cases.push_back({s, "nodes must be at least 1"});
  s = rigid_spec(1);
  s.tasks_per_node = 0;
  cases.push_back({s, "tasks_per_node must be at least 1"});
  s = rigid_spec(1, -1);
  cases.push_back({s, "walltime must not be negative"});
  s = rigid_spec(1);
  s.power_min_w = -5;
  cases.push_back({s, "power estimates must not be negative"});
  s = rigid_spec(1);
  s.power_min_w = 300;
  s.power_max_w = 200;
  cases.push_back({s, "power_min_w must not exceed power_max_w"});
  s = rigid_spec(2);
  s.max_nodes = 4;
  cases.push_back({s, "a rigid job has min_nodes = max_nodes = nodes"});
  cases.push_back({malleable_spec(2, 4, 3), "min_nodes must not exceed max_nodes"});
  cases.push_back({malleable_spec(5, 1, 4), "nodes must lie within [min_nodes, max_nodes]"});
  cases.push_back({malleable_spec(3, 3, 3, NodeConstraint::Even),
                   "no size within [min_nodes, max_nodes] satisfies node constraint even"});
  cases.push_back(
      {malleable_spec(3, 2, 4, NodeConstraint::Pof2), "nodes (3) breaks node constraint pof2"});
  for (const Case& c : cases) {
    JobSpec copy = c.spec;
    const auto expected = normalize_spec(copy);
    EXPECT_EQ(expected, c.message);
    const auto out = engine->submit(c.spec);
    EXPECT_FALSE(out.ok());
    EXPECT_EQ(out.error(), c.message);
    EXPECT_EQ(out.status(), Status::invalid(c.message));
  }
  EXPECT_TRUE(engine->jobs().empty());
  EXPECT_TRUE(events.events.empty()) << "no event for a rejected job";
  EXPECT_FALSE(engine->pass_due());
  EXPECT_EQ(engine->active_jobs(), 0u);
}

TEST_F(EnginePasses, NormalizeFillsInDefaults) {
  JobSpec rigid = rigid_spec(3);
  EXPECT_EQ(normalize_spec(rigid), std::nullopt);
  EXPECT_EQ(rigid.min_nodes, 3);
  EXPECT_EQ(rigid.max_nodes, 3);
  JobSpec mall = malleable_spec(4, 0, 0);
  EXPECT_EQ(normalize_spec(mall), std::nullopt);
  EXPECT_EQ(mall.min_nodes, 4);
  EXPECT_EQ(mall.max_nodes, 4);
  JobSpec mold = moldable_spec(4, 0, 0);
  EXPECT_EQ(normalize_spec(mold), std::nullopt);
  EXPECT_EQ(mold.min_nodes, 1);
  EXPECT_EQ(mold.max_nodes, 4);
  JobSpec odd_mold = moldable_spec(4, 1, 5);
  odd_mold.constraint = NodeConstraint::Odd;
  EXPECT_EQ(normalize_spec(odd_mold), std::nullopt) << "a moldable job is sized at start";
}

TEST_F(EnginePasses, SubmitRejectsJobsLargerThanTheCluster) {
  auto out = engine->submit(rigid_spec(7));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error(), "job needs 7 nodes; the cluster has 6");
  EXPECT_EQ(out.code(), StatusCode::Invalid);
  out = engine->submit(malleable_spec(8, 7, 8));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error(), "job needs 7 nodes; the cluster has 6");
  // A malleable job whose minimum fits is accepted.
  out = engine->submit(malleable_spec(8, 2, 8));
  EXPECT_TRUE(out.ok()) << out.error();
  EXPECT_TRUE(engine->submit(rigid_spec(6)).ok());
}

TEST_F(EnginePasses, RequestedIdsAreUsedOnceAndNewIdsContinueAboveThem) {
  auto out = engine->submit(rigid_spec(1), 100);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out.value(), 100);
  out = engine->submit(rigid_spec(1), 100);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error(), "job id 100 is already taken");
  EXPECT_EQ(out.code(), StatusCode::Conflict);
  out = engine->submit(rigid_spec(1), -4);
  EXPECT_FALSE(out.ok());
  EXPECT_EQ(out.code(), StatusCode::Invalid);
  out = engine->submit(rigid_spec(1));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out.value(), 101);
  out = engine->submit(rigid_spec(1), 50);  // below the highest: fine if free
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out.value(), 50);
  out = engine->submit(rigid_spec(1));
  EXPECT_EQ(out.value(), 102);
  EXPECT_EQ(engine->jobs().size(), 4u);
  EXPECT_EQ(events.of_type(EventType::JobSubmitted).size(), 4u);

  // Ended jobs keep their ids.
  ASSERT_EQ(engine->cancel(50), Status());
  out = engine->submit(rigid_spec(1), 50);
  EXPECT_FALSE(out.ok());
}

TEST_F(EnginePasses, CancelErrors) {
  EXPECT_EQ(engine->cancel(99), Status::not_found("no job 99"));
  const JobId a = run_job(rigid_spec(1));
  ASSERT_EQ(engine->cancel(a), Status());
  EXPECT_EQ(engine->cancel(a), Status::conflict("job " + std::to_string(a) + " is already ending"));
  engine->job_ended(a, 0);
  const Status error = engine->cancel(a);
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.code(), StatusCode::Conflict);
  EXPECT_NE(error.message().find("has already ended"), std::string::npos) << error;
  EXPECT_NE(error.message().find("CANCELLED"), std::string::npos) << error;
  EXPECT_EQ(state(a), JobState::Cancelled);

  const JobId b = run_job(rigid_spec(1));
  engine->job_ended(b, 0);
  EXPECT_NE(engine->cancel(b).message().find("COMPLETED"), std::string::npos);
  EXPECT_EQ(state(b), JobState::Completed);
}

TEST_F(EnginePasses, DrainAndNodeErrors) {
  EXPECT_EQ(engine->set_node_draining("n9", true), Status::not_found("no node n9"));
  const JobId a = run_job(rigid_spec(2));  // n0, n1
  EXPECT_EQ(engine->set_node_draining("n1", true), Status());
  EXPECT_EQ(state(a), JobState::Running) << "draining lets the job finish";
  EXPECT_EQ(events.of_type(EventType::NodeDrain).size(), 1u);
  engine->job_ended(a, 0);
  EXPECT_EQ(idle(), 5) << "the drained node is not idle";
  const JobId b = submit(rigid_spec(6));
  in_pass([&](PassContext& ctx) { EXPECT_TRUE(ctx.start(b).has_value()); });
  EXPECT_EQ(engine->set_node_draining("n1", false), Status());
  EXPECT_EQ(idle(), 6);
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(b), std::nullopt); });
}

}  // namespace
}  // namespace sched::test
