// Suspend and resume (issue 17 item 3): checked like every decision, a
// SUSPENDED job's nodes free for others while it keeps its node list, its
// time limit paused, and the ways out of SUSPENDED.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine_fixture.hpp"

namespace sched::test {
namespace {

// 4 nodes: rigid R (2 nodes, walltime 100 s) on n0-n1, two idle.
class SuspendResume : public EngineFixture {
 protected:
  void SetUp() override {
    init(4);
    r = run_job(rigid_spec(2, 100));
    enactor.clear();
    events.clear();
  }

  void suspend(JobId id) {
    in_pass([id](PassContext& ctx) { EXPECT_EQ(ctx.suspend(id), std::nullopt); });
  }

  JobId r = 0;
};

TEST_F(SuspendResume, SuspendFreesTheNodesAndKeepsTheNodeList) {
  const std::vector<NodeIndex> nodes = job(r).allocation;
  clock.set(10);
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.nodes_idle(), 2);
    EXPECT_EQ(ctx.suspend(r), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 4) << "its nodes count as idle for the rest of the pass";
  });
  EXPECT_EQ(state(r), JobState::Suspended);
  EXPECT_EQ(job(r).allocation, nodes) << "it resumes on these";
  EXPECT_EQ(job(r).run->suspensions, 1);
  EXPECT_EQ(idle(), 4);
  EXPECT_EQ(allocated(), 0);
  ASSERT_EQ(enactor.count(Kind::Suspend, r), 1);
  EXPECT_EQ(enactor.of(Kind::Suspend)[0].state, JobState::Suspended);
  EXPECT_EQ(enactor.of(Kind::Suspend)[0].allocation, nodes);
  const auto suspended = events.of_type(EventType::JobSuspended);
  ASSERT_EQ(suspended.size(), 1u);
  EXPECT_EQ(suspended[0].from, JobState::Running);
  EXPECT_EQ(suspended[0].to, JobState::Suspended);
  EXPECT_EQ(topic(EventType::JobSuspended), "job.suspended");
  EXPECT_EQ(engine->running_jobs_count(), 0u);
  ASSERT_EQ(engine->suspended_jobs().size(), 1u);
  EXPECT_EQ(engine->suspended_jobs()[0]->id, r);

  // Another job takes the nodes at once.
  const JobId big = submit(rigid_spec(4));
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(big), std::nullopt); });
  EXPECT_EQ(state(big), JobState::Starting);
  EXPECT_EQ(enactor.count(Kind::Start, big), 1);
}

TEST_F(SuspendResume, OnlyARunningJobCanBeSuspended) {
  const JobId waiting = submit(rigid_spec(4));
  in_pass([&](PassContext& ctx) {
    const Verdict v = ctx.suspend(waiting);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->code, RefusalCode::NotRunning);
    EXPECT_EQ(ctx.suspend(999)->code, RefusalCode::UnknownJob);
    EXPECT_EQ(ctx.suspend(r), std::nullopt);
    EXPECT_EQ(ctx.suspend(r)->code, RefusalCode::AlreadyActed);
    EXPECT_EQ(ctx.nodes_idle(), 4) << "a refused suspend frees nothing";
  });
  EXPECT_EQ(state(waiting), JobState::Pending);
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.suspend(r)->code, RefusalCode::NotRunning) << "already suspended";
  });
}

TEST_F(SuspendResume, AnAdaptingJobOrOneShrunkInThePassIsNotSuspended) {
  const JobId m = run_job(malleable_spec(2, 1, 2));
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.shrink(m, 1), std::nullopt);
    EXPECT_EQ(ctx.suspend(m)->code, RefusalCode::AlreadyActed);
  });
  EXPECT_EQ(state(m), JobState::Adapting);
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.suspend(m)->code, RefusalCode::Adapting); });
}

TEST_F(SuspendResume, ResumeNeedsASuspendedJobAndAllItsNodesIdle) {
  in_pass([&](PassContext& ctx) {
    const Verdict v = ctx.resume(r);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->code, RefusalCode::NotSuspended);
    EXPECT_EQ(to_string(v->code), "not_suspended");
  });
  suspend(r);
  // A job on three nodes, two of them the suspended job's.
  const JobId other = run_job(rigid_spec(3));
  in_pass([&](PassContext& ctx) {
    const Verdict v = ctx.resume(r);
    ASSERT_TRUE(v);
    EXPECT_EQ(v->code, RefusalCode::Placement) << v->message();
    EXPECT_EQ(ctx.nodes_idle(), 1);
  });
  EXPECT_EQ(state(r), JobState::Suspended);
  EXPECT_EQ(enactor.count(Kind::Resume), 0);
  // Nodes given back in the same pass are not its own yet: still refused.
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.preempt(other, PreemptMode::Requeue), std::nullopt);
    EXPECT_EQ(ctx.resume(r)->code, RefusalCode::Placement);
  });
  engine->job_ended(other, -9);
  EXPECT_EQ(idle(), 4);
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.resume(r), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 2);
    EXPECT_EQ(ctx.resume(r)->code, RefusalCode::AlreadyActed);
  });
  EXPECT_EQ(state(r), JobState::Running);
  EXPECT_EQ(enactor.count(Kind::Resume, r), 1);
  EXPECT_EQ(events.of_type(EventType::JobResumed).size(), 1u);
  for (NodeIndex n : job(r).allocation) EXPECT_EQ(engine->cluster().node(n).job, r);
  expect_nodes_conserved();
}

TEST_F(SuspendResume, AResumeTakesItsNodesBeforeAStartByCount) {
  const std::vector<NodeIndex> nodes = job(r).allocation;
  suspend(r);
  const JobId two = submit(rigid_spec(2));
  // The start is called first; it must still get the other two nodes.
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.start(two), std::nullopt);
    EXPECT_EQ(ctx.resume(r), std::nullopt);
    EXPECT_EQ(ctx.nodes_idle(), 0);
  });
  EXPECT_EQ(job(r).allocation, nodes);
  for (NodeIndex n : job(two).allocation) {
    EXPECT_EQ(std::count(nodes.begin(), nodes.end(), n), 0);
    EXPECT_EQ(engine->cluster().node(n).job, two);
  }
  expect_nodes_conserved();
}

TEST_F(SuspendResume, TheTimeLimitDoesNotRunWhileSuspended) {
  EXPECT_DOUBLE_EQ(job(r).est_end(), 100);
  clock.set(30);
  suspend(r);
  clock.set(500);  // far past its limit, but suspended
  EXPECT_TRUE(engine->expire_time_limits().empty());
  EXPECT_FALSE(engine->next_time_limit().has_value());
  EXPECT_EQ(state(r), JobState::Suspended);
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.resume(r), std::nullopt); });
  // 70 s of its limit were left at the suspension: they run from now.
  EXPECT_DOUBLE_EQ(job(r).est_end(), 570);
  EXPECT_EQ(engine->next_time_limit(), 570);
  clock.set(569);
  EXPECT_TRUE(engine->expire_time_limits().empty());
  clock.set(570);
  EXPECT_EQ(engine->expire_time_limits(), std::vector<JobId>{r});
  EXPECT_EQ(state(r), JobState::Completing);
}

TEST_F(SuspendResume, NoNodeSecondsAreChargedWhileSuspended) {
  clock.set(10);
  suspend(r);  // 2 nodes × 10 s
  clock.set(110);
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.resume(r), std::nullopt); });
  clock.set(120);
  engine->job_ended(r, 0);  // 2 nodes × 10 s more
  EXPECT_EQ(state(r), JobState::Completed);
  EXPECT_DOUBLE_EQ(job(r).node_seconds, 40);
}

TEST_F(SuspendResume, CancellingASuspendedJobLeavesItsNodesToTheirNewHolder) {
  suspend(r);
  const JobId other = run_job(rigid_spec(4));
  ASSERT_EQ(engine->cancel(r), Status{});
  EXPECT_EQ(state(r), JobState::Completing);
  EXPECT_EQ(enactor.count(Kind::Stop, r), 1) << "its frozen processes are killed";
  EXPECT_EQ(releasing(), 0) << "the nodes are other's: nothing of them is released";
  engine->job_ended(r, -9);
  EXPECT_EQ(state(r), JobState::Cancelled);
  for (const Node& node : engine->cluster().nodes()) EXPECT_EQ(node.job, other);
  EXPECT_EQ(promised(), 0);
  expect_nodes_conserved();
}

TEST_F(SuspendResume, ASuspendedJobCanBeRequeued) {
  suspend(r);
  ASSERT_EQ(engine->requeue(r), Status{});
  engine->job_ended(r, -9);
  EXPECT_EQ(state(r), JobState::Pending);
  EXPECT_EQ(job(r).run->requeues, 1);
  EXPECT_TRUE(engine->suspended_jobs().empty());
  EXPECT_EQ(idle(), 4);
  expect_nodes_conserved();
}

TEST_F(SuspendResume, LosingANodeOfASuspendedJobEndsIt) {
  suspend(r);
  const std::string name = engine->cluster().node(job(r).allocation.back()).name;
  ASSERT_EQ(engine->set_node_up(name, false, "test"), Status{});
  EXPECT_EQ(state(r), JobState::Completing);
  EXPECT_EQ(enactor.count(Kind::Stop, r), 1);
  engine->job_ended(r, -9);
  EXPECT_EQ(state(r), JobState::Failed);
  EXPECT_TRUE(engine->suspended_jobs().empty());
}

TEST_F(SuspendResume, SuspendedJobsAreListedHighestPriorityFirst) {
  const JobId other = run_job(rigid_spec(2));
  clock.set(5);
  suspend(r);
  clock.set(6);
  suspend(other);
  auto listed = [&] {
    std::vector<JobId> ids;
    in_pass([&](PassContext& ctx) {
      for (const Job* job : ctx.suspended()) ids.push_back(job->id);
    });
    return ids;
  };
  EXPECT_EQ(listed(), (std::vector<JobId>{r, other})) << "equal priority: earliest suspended";
}

TEST_F(SuspendResume, TheStateTableAllowsSuspendedOnlyFromAndToRunning) {
  EXPECT_TRUE(is_valid_transition(JobState::Running, JobState::Suspended));
  EXPECT_TRUE(is_valid_transition(JobState::Suspended, JobState::Running));
  EXPECT_TRUE(is_valid_transition(JobState::Suspended, JobState::Completing));
  EXPECT_FALSE(is_valid_transition(JobState::Pending, JobState::Suspended));
  EXPECT_FALSE(is_valid_transition(JobState::Adapting, JobState::Suspended));
  EXPECT_FALSE(is_valid_transition(JobState::Suspended, JobState::Pending));
  EXPECT_FALSE(is_valid_transition(JobState::Suspended, JobState::Adapting));
  EXPECT_EQ(to_string(JobState::Suspended), "SUSPENDED");
  EXPECT_EQ(parse_job_state("SUSPENDED"), JobState::Suspended);
  EXPECT_FALSE(is_terminal(JobState::Suspended));
}

TEST_F(SuspendResume, ARestoredSuspendedJobStaysSuspendedOffItsNodes) {
  Job saved = job(r);
  saved.id = 50;
  saved.state = JobState::Suspended;
  saved.run.edit().suspended_since = 0;
  std::vector<std::string> names;
  for (NodeIndex n : saved.allocation) names.push_back(engine->cluster().node(n).name);
  // Its nodes are held by r now: a suspended job holds none, so no conflict.
  ASSERT_EQ(engine->restore_job(saved, names), Status{});
  EXPECT_EQ(state(50), JobState::Suspended);
  EXPECT_EQ(job(50).allocation, job(r).allocation);
  for (NodeIndex n : job(50).allocation) EXPECT_EQ(engine->cluster().node(n).job, r);
  ASSERT_EQ(engine->suspended_jobs().size(), 1u);
  EXPECT_EQ(engine->suspended_jobs()[0]->id, 50);
}

}  // namespace
}  // namespace sched::test
