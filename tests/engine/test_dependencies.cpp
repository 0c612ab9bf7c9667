// Which pending jobs a pass offers (issue 18): dependencies (sbatch's
// --dependency), holds, begin times; the reasons Slurm shows for the others.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "lua_test_support.hpp"
#include "sched/dependency.hpp"
#include "sched/lua_policy.hpp"

namespace sched::test {
namespace {

// ---------------------------------------------------------------- parsing

TEST(DependencyParse, ReadsSbatchSyntax) {
  auto one = parse_dependency("afterok:12:13");
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->terms.size(), 1u);
  EXPECT_EQ(one->terms[0].type, DependencyType::AfterOk);
  EXPECT_EQ(one->terms[0].jobs, (std::vector<JobId>{12, 13}));
  EXPECT_FALSE(one->any);

  auto all = parse_dependency("after:1,afterany:2,afternotok:3,singleton");
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->terms.size(), 4u);
  EXPECT_EQ(all->terms[0].type, DependencyType::After);
  EXPECT_EQ(all->terms[1].type, DependencyType::AfterAny);
  EXPECT_EQ(all->terms[2].type, DependencyType::AfterNotOk);
  EXPECT_EQ(all->terms[3].type, DependencyType::Singleton);
  EXPECT_TRUE(all->terms[3].jobs.empty());
  EXPECT_EQ(to_string(*all), "after:1,afterany:2,afternotok:3,singleton");
  EXPECT_EQ(all->jobs(), (std::vector<JobId>{1, 2, 3}));

  auto any = parse_dependency("afterok:4?afternotok:4");
  ASSERT_TRUE(any.ok());
  EXPECT_TRUE(any->any);
  EXPECT_EQ(to_string(*any), "afterok:4?afternotok:4");
  EXPECT_EQ(any->jobs(), (std::vector<JobId>{4}));
  EXPECT_TRUE(parse_dependency("").value().empty());
}

TEST(DependencyParse, MalformedSpecsNameTheBadPart) {
  const auto error = [](const char* text) {
    auto parsed = parse_dependency(text);
    EXPECT_FALSE(parsed.ok()) << text;
    return parsed.ok() ? std::string() : parsed.status().message();
  };
  EXPECT_NE(error("afterok:x").find("'x' is not a job id"), std::string::npos);
  EXPECT_NE(error("afterok:0").find("'0' is not a job id"), std::string::npos);
  EXPECT_NE(error("afterok:").find("'' is not a job id"), std::string::npos);
  EXPECT_NE(error("afterok").find("needs job ids"), std::string::npos);
  EXPECT_NE(error("before:3").find("unknown type 'before'"), std::string::npos);
  EXPECT_NE(error("singleton:3").find("singleton takes no job ids"), std::string::npos);
  EXPECT_NE(error("afterok:1,afterok:2?after:3").find("cannot be mixed"), std::string::npos);
  EXPECT_NE(error("afterok:1,,after:2").find("empty term"), std::string::npos);
}

TEST(DependencySatisfaction, FollowsSlurmsMeaning) {
  using S = Satisfaction;
  using D = DependencyType;
  EXPECT_EQ(satisfaction(D::After, JobState::Pending, false), S::Waiting);
  EXPECT_EQ(satisfaction(D::After, JobState::Running, true), S::Satisfied);
  EXPECT_EQ(satisfaction(D::After, JobState::Cancelled, false), S::Satisfied);
  EXPECT_EQ(satisfaction(D::AfterAny, JobState::Running, true), S::Waiting);
  EXPECT_EQ(satisfaction(D::AfterAny, JobState::Failed, true), S::Satisfied);
  EXPECT_EQ(satisfaction(D::AfterOk, JobState::Completed, true), S::Satisfied);
  EXPECT_EQ(satisfaction(D::AfterOk, JobState::Failed, true), S::Never);
  EXPECT_EQ(satisfaction(D::AfterOk, JobState::Timeout, true), S::Never);
  EXPECT_EQ(satisfaction(D::AfterNotOk, JobState::Failed, true), S::Satisfied);
  EXPECT_EQ(satisfaction(D::AfterNotOk, JobState::Cancelled, false), S::Satisfied);
  EXPECT_EQ(satisfaction(D::AfterNotOk, JobState::Completed, true), S::Never);
  EXPECT_EQ(combine({S::Satisfied, S::Waiting}, false), S::Waiting);
  EXPECT_EQ(combine({S::Satisfied, S::Never}, false), S::Never);
  EXPECT_EQ(combine({S::Satisfied, S::Never}, true), S::Satisfied);
  EXPECT_EQ(combine({S::Never, S::Waiting}, true), S::Waiting);
  EXPECT_EQ(combine({S::Never, S::Never}, true), S::Never);
}

// ---------------------------------------------------------------- the engine

class Eligibility : public EngineFixture {
 protected:
  void SetUp() override { init(4); }

  JobSpec dependent(const std::string& dependency, int nodes = 1) {
    JobSpec spec = rigid_spec(nodes);
    spec.extra.edit().dependency = dependency;
    return spec;
  }
  // The jobs a pass offers to the policy, in order.
  std::vector<JobId> offered() {
    std::vector<JobId> ids;
    in_pass([&](PassContext& ctx) {
      for (const Job* job : ctx.pending()) ids.push_back(job->id);
      EXPECT_EQ(ctx.pending_count(), ids.size());
    });
    return ids;
  }
  std::string reason(JobId id) { return std::string(waiting_reason(job(id))); }
  void end(JobId id, int exit_status) {
    engine->job_ended(id, exit_status);
    EXPECT_TRUE(is_terminal(state(id)));
  }
  // The pending jobs a listing (sched queue) walks.
  std::vector<JobId> listed() const {
    std::vector<JobId> ids;
    PendingQueue::Cursor walk = engine->pending_queue().listing();
    while (const Job* job = walk.next()) ids.push_back(job->id);
    return ids;
  }
};

TEST_F(Eligibility, AfterOkWaitsForSuccessAndIsNeverSatisfiedByAFailure) {
  const JobId a = run_job(rigid_spec(1));
  const JobId b = submit(dependent("afterok:" + std::to_string(a)));
  const JobId c = submit(dependent("afterok:" + std::to_string(a)));
  EXPECT_EQ(reason(b), "Dependency");
  EXPECT_EQ(offered(), std::vector<JobId>{}) << "a dependent job is not offered";
  EXPECT_EQ(listed(), (std::vector<JobId>{b, c})) << "but listed";
  EXPECT_EQ(engine->pending_queue().size(), 0u);
  EXPECT_EQ(engine->pending_queue().listing_size(), 2u);

  end(a, 0);
  EXPECT_EQ(job(b).dependency, DependencyState::Satisfied);
  EXPECT_EQ(reason(b), "");
  EXPECT_TRUE(engine->pass_due());
  EXPECT_EQ(offered(), (std::vector<JobId>{b, c}));

  // A failure: never.
  const JobId d = run_job(rigid_spec(1));
  const JobId e = submit(dependent("afterok:" + std::to_string(d)));
  end(d, 3);
  EXPECT_EQ(reason(e), "DependencyNeverSatisfied");
  EXPECT_EQ(state(e), JobState::Pending) << "kept (kill_invalid_depend is off)";
  const std::vector<JobId> now_offered = offered();
  EXPECT_EQ(std::count(now_offered.begin(), now_offered.end(), e), 0);
}

TEST_F(Eligibility, APipelineBreaksWholeWhenItsFirstJobFails) {
  const JobId a = run_job(rigid_spec(1));
  const JobId b = submit(dependent("afterok:" + std::to_string(a)));
  const JobId c = submit(dependent("afterok:" + std::to_string(b)));
  const JobId d = submit(dependent("afterany:" + std::to_string(b)));
  end(a, 1);
  EXPECT_EQ(reason(b), "DependencyNeverSatisfied");
  EXPECT_EQ(reason(c), "DependencyNeverSatisfied") << "b never runs, so never succeeds";
  EXPECT_EQ(reason(d), "Dependency") << "b may still end (cancelled): afterany waits";
  ASSERT_TRUE(engine->cancel(b).ok());
  EXPECT_EQ(reason(d), "");
  EXPECT_EQ(reason(c), "DependencyNeverSatisfied");
}

// Issue 15: the simulator drops ended jobs (Engine::forget_job); what
// depends on them still sees how they ended, and their ids stay taken.
TEST_F(Eligibility, AForgottenJobStillSatisfiesOrBreaksDependencies) {
  const JobId ok = run_job(rigid_spec(1));
  const JobId bad = run_job(rigid_spec(1));
  EXPECT_EQ(engine->forget_job(ok).code(), StatusCode::Conflict) << "still running";
  EXPECT_EQ(engine->forget_job(9999).code(), StatusCode::NotFound);
  end(ok, 0);
  end(bad, 1);
  ASSERT_TRUE(engine->forget_job(ok).ok());
  ASSERT_TRUE(engine->forget_job(bad).ok());
  EXPECT_EQ(engine->find_job(ok), nullptr);
  EXPECT_EQ(engine->find_job(bad), nullptr);
  EXPECT_EQ(engine->forgotten_jobs(), 2u);
  EXPECT_EQ(engine->forget_job(ok).code(), StatusCode::NotFound) << "already gone";

  const JobId after_ok = submit(dependent("afterok:" + std::to_string(ok)));
  const JobId after_bad = submit(dependent("afterok:" + std::to_string(bad)));
  const JobId not_ok = submit(dependent("afternotok:" + std::to_string(bad)));
  EXPECT_EQ(job(after_ok).dependency, DependencyState::Satisfied);
  EXPECT_EQ(reason(after_bad), "DependencyNeverSatisfied");
  EXPECT_EQ(job(not_ok).dependency, DependencyState::Satisfied);

  const auto again = engine->submit(rigid_spec(1), ok);
  ASSERT_FALSE(again.ok()) << "a forgotten job's id is still taken";
  EXPECT_EQ(again.status().code(), StatusCode::Conflict);
}

TEST_F(Eligibility, AfterNotOkAfterAnyAndAfter) {
  const JobId a = run_job(rigid_spec(1));
  const JobId not_ok = submit(dependent("afternotok:" + std::to_string(a)));
  const JobId any = submit(dependent("afterany:" + std::to_string(a)));
  const JobId q = submit(rigid_spec(1));
  const JobId after = submit(dependent("after:" + std::to_string(q)));
  EXPECT_EQ(offered(), std::vector<JobId>{q});
  EXPECT_EQ(reason(after), "Dependency");

  // q starts: `after` is satisfied by a start.
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(q), std::nullopt); });
  EXPECT_EQ(reason(after), "");
  EXPECT_EQ(reason(any), "Dependency");

  end(a, 1);
  EXPECT_EQ(reason(not_ok), "");
  EXPECT_EQ(reason(any), "");
  EXPECT_EQ(offered(), (std::vector<JobId>{not_ok, any, after}));

  // afternotok on a success is never satisfied.
  const JobId b = run_job(rigid_spec(1));
  const JobId never = submit(dependent("afternotok:" + std::to_string(b)));
  end(b, 0);
  EXPECT_EQ(reason(never), "DependencyNeverSatisfied");
}

TEST_F(Eligibility, CommaNeedsAllAndQuestionMarkAny) {
  const JobId a = run_job(rigid_spec(1));
  const JobId b = run_job(rigid_spec(1));
  const std::string ids = std::to_string(a) + ":" + std::to_string(b);
  const JobId all =
      submit(dependent("afterok:" + std::to_string(a) + ",afterok:" + std::to_string(b)));
  const JobId both = submit(dependent("afterok:" + ids));
  const JobId either =
      submit(dependent("afterok:" + std::to_string(a) + "?afterok:" + std::to_string(b)));
  const JobId fallback =
      submit(dependent("afterok:" + std::to_string(a) + "?afternotok:" + std::to_string(a)));
  end(a, 0);
  EXPECT_EQ(reason(all), "Dependency");
  EXPECT_EQ(reason(both), "Dependency");
  EXPECT_EQ(reason(either), "");
  EXPECT_EQ(reason(fallback), "");
  end(b, 2);
  EXPECT_EQ(reason(all), "DependencyNeverSatisfied");
  EXPECT_EQ(reason(both), "DependencyNeverSatisfied");
}

TEST_F(Eligibility, SingletonRunsOneJobOfANameAndUserAtATime) {
  JobSpec spec = rigid_spec(1);
  spec.name = "nightly";
  spec.extra.edit().dependency = "singleton";
  const JobId first = submit(spec);
  const JobId second = submit(spec);
  JobSpec other_user = spec;
  other_user.user = "bob";
  const JobId bobs = submit(other_user);
  EXPECT_EQ(reason(first), "");
  EXPECT_EQ(reason(second), "Dependency") << "an earlier one of its name waits";
  EXPECT_EQ(offered(), (std::vector<JobId>{first, bobs}));

  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(first), std::nullopt); });
  engine->job_started(first);
  EXPECT_EQ(reason(second), "Dependency") << "one of its name runs";
  end(first, 1);
  EXPECT_EQ(reason(second), "") << "any end will do";
}

// The engine indexes jobs by name only once a singleton is queued (issue 15):
// jobs of that name submitted before, without the dependency, still count.
TEST_F(Eligibility, SingletonCountsJobsOfItsNameQueuedBeforeAnySingleton) {
  JobSpec plain = rigid_spec(1);
  plain.name = "nightly";
  const JobId ended = run_job(plain);
  end(ended, 0);
  const JobId running = run_job(plain);
  JobSpec singleton = plain;
  singleton.extra.edit().dependency = "singleton";
  const JobId waits = submit(singleton);
  EXPECT_EQ(reason(waits), "Dependency") << "a job of its name runs, queued before any singleton";
  end(running, 0);
  EXPECT_EQ(reason(waits), "") << "the ended one does not count";
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(waits), std::nullopt); });
  engine->job_started(waits);
  end(waits, 0);
  const JobId plain_pending = submit(plain);
  const JobId second = submit(singleton);
  EXPECT_EQ(reason(second), "Dependency") << "a plain job of its name queued after the index";
  ASSERT_TRUE(engine->cancel(plain_pending).ok());
  EXPECT_EQ(reason(second), "");
}

TEST_F(Eligibility, UnknownIdsAndBadSpecsAreRefusedAtSubmit) {
  auto unknown = engine->submit(dependent("afterok:99"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::Invalid);
  EXPECT_NE(unknown.status().message().find("Job dependency problem"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("99"), std::string::npos);
  auto bad = engine->submit(dependent("afterok:abc"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'abc' is not a job id"), std::string::npos);
  EXPECT_TRUE(engine->jobs().empty()) << "a refused submission changes nothing";

  // Known to the journal only (a job that ended before a restart).
  engine->set_ended_job_lookup([](JobId id) -> std::optional<JobState> {
    if (id == 7) return JobState::Failed;
    return std::nullopt;
  });
  const JobId waits = submit(dependent("afternotok:7"));
  EXPECT_EQ(reason(waits), "");
  const JobId never = submit(dependent("afterok:7"));
  EXPECT_EQ(reason(never), "DependencyNeverSatisfied");
}

TEST_F(Eligibility, KillInvalidDependCancelsAWholeChain) {
  EngineConfig config;
  config.kill_invalid_depend = true;
  init(4, config);
  const JobId a = run_job(rigid_spec(1));
  const JobId b = submit(dependent("afterok:" + std::to_string(a)));
  const JobId c = submit(dependent("afterok:" + std::to_string(b)));
  end(a, 1);
  EXPECT_EQ(state(b), JobState::Cancelled);
  EXPECT_EQ(job(b).run->end_reason, "DependencyNeverSatisfied");
  EXPECT_EQ(state(c), JobState::Cancelled) << "b's cancellation breaks c's dependency too";
  EXPECT_EQ(job(c).run->end_reason, "DependencyNeverSatisfied");
  EXPECT_EQ(engine->active_jobs(), 0u);
  EXPECT_EQ(engine->pending_queue().listing_size(), 0u);
  const auto cancelled = events.of_type(EventType::JobCancelled);
  ASSERT_EQ(cancelled.size(), 2u);
  EXPECT_NE(cancelled[0].message.find("DependencyNeverSatisfied"), std::string::npos);

  // Broken already at submit: cancelled at once.
  const JobId late = submit(dependent("afterok:" + std::to_string(a)));
  EXPECT_EQ(state(late), JobState::Cancelled);
}

TEST_F(Eligibility, BeginTimeUsesTheEnginesClock) {
  clock.set(100);
  JobSpec spec = rigid_spec(1);
  spec.extra.edit().begin_time = 160;
  const JobId later = submit(spec);
  spec.extra.edit().begin_time = 50;  // already past
  const JobId now = submit(spec);
  EXPECT_EQ(reason(later), "BeginTime");
  EXPECT_EQ(reason(now), "");
  EXPECT_EQ(engine->next_begin_time(), 160);
  EXPECT_EQ(offered(), std::vector<JobId>{now});

  clock.set(159);
  engine->tick();
  EXPECT_EQ(reason(later), "BeginTime");
  clock.set(160);
  engine->tick();
  EXPECT_EQ(reason(later), "");
  EXPECT_EQ(engine->next_begin_time(), std::nullopt);
  EXPECT_EQ(offered(), (std::vector<JobId>{later, now})) << "in its place by submit time";
}

TEST_F(Eligibility, HoldAndReleaseAndWhoHolds) {
  const JobId a = submit(rigid_spec(1));
  JobSpec held_spec = rigid_spec(1);
  held_spec.hold = true;
  const JobId b = submit(held_spec);
  EXPECT_EQ(reason(b), "JobHeldUser");
  EXPECT_EQ(offered(), std::vector<JobId>{a});

  ASSERT_TRUE(engine->hold(a, /*admin=*/true).ok());
  EXPECT_EQ(reason(a), "JobHeldAdmin");
  EXPECT_TRUE(engine->hold(a, /*admin=*/false).ok());
  EXPECT_EQ(reason(a), "JobHeldAdmin") << "a user's hold does not lower an admin's";
  EXPECT_EQ(offered(), std::vector<JobId>{});
  const auto held = events.of_type(EventType::JobHeld);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].job, a);
  EXPECT_EQ(topic(held[0].type), "job.held");

  ASSERT_TRUE(engine->release(b).ok());
  EXPECT_EQ(reason(b), "");
  EXPECT_TRUE(engine->pass_due());
  EXPECT_EQ(offered(), std::vector<JobId>{b});
  EXPECT_EQ(events.of_type(EventType::JobReleased).size(), 1u);
  EXPECT_EQ(engine->release(b).code(), StatusCode::Conflict) << "not held";
  EXPECT_EQ(engine->release(99).code(), StatusCode::NotFound);

  // Only pending jobs are held.
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(b), std::nullopt); });
  EXPECT_EQ(engine->hold(b, false).code(), StatusCode::Conflict);
}

TEST_F(Eligibility, AHeldJobCannotBeStartedByAPolicyThatNamesIt) {
  JobSpec spec = rigid_spec(1);
  spec.hold = true;
  const JobId id = submit(spec);
  in_pass([&](PassContext& ctx) {
    const Verdict verdict = ctx.start(id);
    ASSERT_TRUE(verdict.has_value());
    EXPECT_EQ(verdict->code, RefusalCode::NotPending);
    EXPECT_NE(verdict->detail.find("JobHeldUser"), std::string::npos);
  });
  EXPECT_EQ(state(id), JobState::Pending);
  EXPECT_EQ(enactor.count(Kind::Start), 0);
}

TEST_F(Eligibility, RequeueStopsARunningJobAndQueuesItAgain) {
  const JobId id = run_job(rigid_spec(2));
  ASSERT_TRUE(engine->requeue(id).ok());
  EXPECT_EQ(state(id), JobState::Completing);
  ASSERT_EQ(enactor.count(Kind::Stop, id), 1);
  EXPECT_EQ(enactor.of(Kind::Stop).back().reason, StopReason::Requeue);
  engine->job_ended(id, -15);
  EXPECT_EQ(state(id), JobState::Pending);
  EXPECT_EQ(job(id).run->requeues, 1);
  EXPECT_EQ(reason(id), "") << "requeued, not held";
  EXPECT_EQ(offered(), std::vector<JobId>{id});
  EXPECT_EQ(engine->requeue(id).code(), StatusCode::Conflict) << "a pending job";
  EXPECT_EQ(engine->requeue(42).code(), StatusCode::NotFound);
}

TEST_F(Eligibility, APassOverManyWaitingJobsWalksOnlyThoseThatMayStart) {
  const JobId a = run_job(rigid_spec(1));
  constexpr int kWaiting = 10000;
  for (int i = 0; i < kWaiting; ++i) submit(dependent("afterok:" + std::to_string(a)));
  const JobId free = submit(rigid_spec(1));
  int walked = 0;
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.pending_count(), 1u);
    for (std::size_t i = 0; ctx.pending_at(i) != nullptr; ++i) ++walked;
  });
  EXPECT_EQ(walked, 1) << "the waiting jobs are not walked at all";
  EXPECT_EQ(offered(), std::vector<JobId>{free});
  EXPECT_EQ(engine->pending_queue().waiting_size(), static_cast<std::size_t>(kWaiting));
  end(a, 0);  // every one of them decided once, from a's end
  EXPECT_EQ(engine->pending_queue().waiting_size(), 0u);
  EXPECT_EQ(engine->pending_queue().size(), static_cast<std::size_t>(kWaiting) + 1);
}

TEST_F(Eligibility, CancelledDependentLeavesNoTrace) {
  const JobId a = run_job(rigid_spec(1));
  const JobId b = submit(dependent("afterok:" + std::to_string(a)));
  ASSERT_TRUE(engine->cancel(b).ok());
  EXPECT_EQ(engine->pending_queue().listing_size(), 0u);
  end(a, 0);
  EXPECT_EQ(state(b), JobState::Cancelled);
}

TEST_F(Eligibility, RestoredJobsWaitAgainForWhatTheJournalSays) {
  Job saved;
  saved.id = 5;
  saved.spec = dependent("afterok:3");
  (void)normalize_spec(saved.spec);
  saved.hold = HoldKind::Admin;
  engine->set_ended_job_lookup([](JobId id) -> std::optional<JobState> {
    if (id == 3) return JobState::Completed;
    return std::nullopt;
  });
  ASSERT_TRUE(engine->restore_job(saved, {}).ok());
  EXPECT_EQ(job(5).dependency, DependencyState::Satisfied);
  EXPECT_EQ(reason(5), "JobHeldAdmin") << "the hold outlives a restart";
  ASSERT_TRUE(engine->release(5).ok());
  EXPECT_EQ(offered(), std::vector<JobId>{5});
}

// ---------------------------------------------------------------- Lua

TEST(EligibilityLua, ALuaPolicySeesOnlyJobsThatMayStart) {
  luatest::TempDir dir;
  luatest::Harness h(4);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local seen = {}
function P.schedule(ctx)
  local ids = { n = #ctx.pending }
  for i, job in ipairs(ctx.pending) do ids[i] = job.id end
  seen[#seen + 1] = ids
end
function P.save() return seen end
return P
)lua"));
  JobSpec held = luatest::rigid(1);
  held.hold = true;
  const JobId a = h.submit(held);
  const JobId b = h.submit(luatest::rigid(1));
  JobSpec dep = luatest::rigid(1);
  dep.extra.edit().dependency = "afterany:" + std::to_string(b);
  h.submit(dep);
  h.ok_pass();
  luatest::LuaData seen = luatest::LuaData::saved_by(*h.policy);
  EXPECT_EQ(seen.integer("1.n"), 1);
  EXPECT_EQ(seen.integer("1.1"), b);
  ASSERT_TRUE(h.engine.release(a).ok());
  h.ok_pass();
  luatest::LuaData again = luatest::LuaData::saved_by(*h.policy);
  EXPECT_EQ(again.integer("2.n"), 2);
  EXPECT_EQ(again.integer("2.1"), a);
  EXPECT_EQ(again.integer("2.2"), b);
}

}  // namespace
}  // namespace sched::test
