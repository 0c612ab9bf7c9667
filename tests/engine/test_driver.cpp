// The driver seam (sched/driver.hpp): deferred enactment results and
// settle(); and the one time-limit rule every driver applies
// (Engine::expire_time_limits, expire_time_limit, next_time_limit). The
// simulator's and the daemon's own tests of the rule are TimeLimitRule.* in
// tests/sim and tests/integration.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "sched/driver.hpp"

namespace sched::test {
namespace {

// ---------------------------------------------------------------- DeferredResults

class DeferredResultsTest : public EngineFixture {
 protected:
  void SetUp() override { init(4); }
  DeferredResults results;
  std::vector<std::string> fed;
};

TEST_F(DeferredResultsTest, FeedsOldestFirstAndLeavesWhatFeedingQueuesForTheNextRound) {
  EXPECT_FALSE(results.feed(*engine)) << "nothing queued: nothing fed";
  results.push([&](Engine&) { fed.push_back("a"); });
  results.push([&](Engine&) {
    fed.push_back("b");
    results.push([&](Engine&) { fed.push_back("c"); });  // a result causes another
  });
  EXPECT_EQ(results.size(), 2u);
  EXPECT_TRUE(results.feed(*engine));
  EXPECT_EQ(fed, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(results.empty()) << "what feeding queued waits for the next round";
  EXPECT_TRUE(results.feed(*engine));
  EXPECT_EQ(fed, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(results.empty());
  EXPECT_FALSE(results.feed(*engine));
}

TEST_F(DeferredResultsTest, AFeedFromInsideAResultFeedsNothing) {
  bool inner = true;
  results.push([&](Engine& e) {
    results.push([&](Engine&) { fed.push_back("later"); });
    inner = results.feed(e);
  });
  EXPECT_TRUE(results.feed(*engine));
  EXPECT_FALSE(inner);
  EXPECT_TRUE(fed.empty());
  EXPECT_TRUE(results.feed(*engine));
  EXPECT_EQ(fed, std::vector<std::string>{"later"});
}

TEST_F(DeferredResultsTest, ResultsReachTheEngine) {
  const JobId id = submit(rigid_spec(2));
  in_pass([id](PassContext& ctx) { EXPECT_EQ(ctx.start(id), std::nullopt); });
  ASSERT_EQ(state(id), JobState::Starting);
  results.push([id](Engine& e) { e.job_started(id); });
  EXPECT_EQ(state(id), JobState::Starting) << "queued, not fed";
  EXPECT_TRUE(results.feed(*engine));
  EXPECT_EQ(state(id), JobState::Running);
}

// ---------------------------------------------------------------- settle

// An enactor that, like the simulator, knows at once that a launch worked
// and queues the answer.
class QueueingEnactor : public Enactor {
 public:
  explicit QueueingEnactor(DeferredResults& results) : results_(results) {}
  void start(const Job& job) override {
    const JobId id = job.id;
    ++starts;
    results_.push([id](Engine& e) { e.job_started(id); });
  }
  void resize(const Job&, const Resize&) override {}
  void stop(const Job& job, StopReason) override {
    const JobId id = job.id;
    results_.push([id](Engine& e) { e.job_ended(id, -9); });
  }
  void request_perf(const Job&) override {}
  void suspend(const Job&) override {}
  void resume(const Job&) override {}
  int starts = 0;

 private:
  DeferredResults& results_;
};

class Settle : public ::testing::Test {
 protected:
  Settle() : enactor(results), engine(clock, enactor) {
    for (int i = 0; i < 4; ++i) engine.add_node("n" + std::to_string(i));
    policy =
        std::make_shared<ScriptedPolicy>([this](PassContext& ctx) -> std::optional<std::string> {
          // What each pass sees of every job, then FCFS.
          std::string seen;
          for (JobId id = 1; const Job* job = engine.find_job(id); ++id) {
            seen += std::to_string(id) + ":" + std::string(to_string(job->state)) + " ";
          }
          views.push_back(seen);
          for (const Job* job : ctx.pending()) {
            if (job->spec.nodes > ctx.nodes_idle() || ctx.start(job->id)) break;
          }
          return std::nullopt;
        });
    engine.set_policy(policy);
  }

  ManualClock clock;
  DeferredResults results;
  QueueingEnactor enactor;
  Engine engine;
  std::shared_ptr<ScriptedPolicy> policy;
  std::vector<std::string> views;
};

TEST_F(Settle, RunsThePassThatIsDueThenFeedsItsResults) {
  const JobId id = engine.submit(rigid_spec(2)).value();
  EXPECT_TRUE(settle(engine, results, 10, "test"));
  EXPECT_EQ(enactor.starts, 1);
  EXPECT_EQ(engine.find_job(id)->state, JobState::Running) << "the start's result was fed";
  EXPECT_TRUE(results.empty());
  EXPECT_EQ(policy->passes, 1) << "a confirmed start makes no pass due";
  EXPECT_FALSE(engine.pass_due());
}

TEST_F(Settle, ResultsAreFedBeforeThePassLooks) {
  const JobId a = engine.submit(rigid_spec(2)).value();
  ASSERT_TRUE(settle(engine, results, 10, "test"));
  views.clear();
  // A job ends (its result known at once) in the same instant as a
  // submission: the pass the submission makes due sees the ended job.
  const JobId b = engine.submit(rigid_spec(4)).value();
  results.push([a](Engine& e) { e.job_ended(a, 0); });
  ASSERT_TRUE(engine.pass_due());
  EXPECT_TRUE(settle(engine, results, 10, "test"));
  ASSERT_FALSE(views.empty());
  EXPECT_EQ(views.front(), std::to_string(a) + ":COMPLETED " + std::to_string(b) + ":PENDING ")
      << "the first pass already saw job a's end";
  EXPECT_EQ(engine.find_job(b)->state, JobState::Running) << "so b started on all four nodes";
}

TEST_F(Settle, GivesUpAfterItsBoundAndLeavesTheRestForNextTime) {
  // A result that keeps asking for another pass at the same instant.
  std::function<void(Engine&)> again = [&](Engine& e) {
    e.request_pass(PassReason::Manual);
    results.push(again);
  };
  results.push(again);
  EXPECT_FALSE(settle(engine, results, 5, "test"));
  EXPECT_EQ(policy->passes, 5) << "one pass a round, five rounds";
  EXPECT_FALSE(results.empty()) << "what is left waits for the driver's next settle";
}

// ---------------------------------------------------------------- time limits

class TimeLimits : public EngineFixture {
 protected:
  void SetUp() override { init(6); }
};

TEST_F(TimeLimits, StartingAndRunningJobsPastTheirLimitStopAsTimeout) {
  clock.set(0);
  const JobId a = run_job(rigid_spec(1, 60));  // limit 60
  clock.set(10);
  const JobId b = run_job(rigid_spec(1, 30));  // limit 40
  const JobId none = run_job(rigid_spec(1));   // no limit
  clock.set(20);
  const JobId starting = submit(rigid_spec(1, 25));  // limit 45, never confirmed
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.start(starting), std::nullopt); });
  ASSERT_EQ(state(starting), JobState::Starting);
  const JobId pending = submit(rigid_spec(6, 1));
  enactor.clear();

  EXPECT_EQ(engine->next_time_limit(), std::optional<double>(40));
  clock.set(39.5);
  EXPECT_TRUE(engine->expire_time_limits().empty()) << "no limit has passed yet";
  EXPECT_EQ(enactor.calls.size(), 0u);

  clock.set(40);
  EXPECT_EQ(engine->expire_time_limits(), std::vector<JobId>{b}) << "a limit is due at its time";
  EXPECT_EQ(state(b), JobState::Completing);
  ASSERT_EQ(enactor.count(Kind::Stop, b), 1);
  EXPECT_EQ(enactor.calls[0].reason, StopReason::Timeout);
  EXPECT_EQ(engine->next_time_limit(), std::optional<double>(45)) << "b no longer counts";

  clock.set(100);
  EXPECT_EQ(engine->expire_time_limits(), (std::vector<JobId>{a, starting})) << "in start order";
  EXPECT_EQ(state(a), JobState::Completing);
  EXPECT_EQ(state(starting), JobState::Completing);
  EXPECT_EQ(state(none), JobState::Running);
  EXPECT_EQ(state(pending), JobState::Pending);
  EXPECT_EQ(engine->next_time_limit(), std::nullopt);
  EXPECT_TRUE(engine->expire_time_limits().empty()) << "a stopping job is not stopped again";
  EXPECT_EQ(enactor.count(Kind::Stop), 3);

  engine->job_ended(b, -9);
  EXPECT_EQ(state(b), JobState::Timeout);
}

TEST_F(TimeLimits, OneJobIsStoppedOnlyOnceItsLimitHasPassed) {
  clock.set(0);
  const JobId id = run_job(rigid_spec(2, 60));
  clock.set(59);
  EXPECT_FALSE(engine->expire_time_limit(id));
  EXPECT_EQ(state(id), JobState::Running);
  clock.set(60);
  EXPECT_TRUE(engine->expire_time_limit(id));
  EXPECT_EQ(state(id), JobState::Completing);
  EXPECT_FALSE(engine->expire_time_limit(id)) << "already stopping";
  EXPECT_FALSE(engine->expire_time_limit(999)) << "no such job";
  EXPECT_EQ(enactor.count(Kind::Stop, id), 1);
}

// The rule both drivers apply to an adapting job.
class TimeLimitRule : public EngineFixture {
 protected:
  void SetUp() override { init(6); }
  static JobSpec limited(int nodes, int min_nodes, int max_nodes, double walltime) {
    JobSpec spec = malleable_spec(nodes, min_nodes, max_nodes);
    spec.walltime = walltime;
    return spec;
  }
};

TEST_F(TimeLimitRule, AnAdaptingJobIsNotTimedOutAndItsLimitGrowsByTheTimeItAdapted) {
  clock.set(0);
  const JobId id = run_job(limited(2, 1, 6, 100));  // limit 100
  clock.set(90);
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.expand(id, 4), std::nullopt); });
  ASSERT_EQ(state(id), JobState::Adapting);
  enactor.clear();
  EXPECT_EQ(engine->next_time_limit(), std::nullopt) << "no limit runs while it adapts";

  clock.set(150);  // 50 s past its original limit, still adapting
  EXPECT_TRUE(engine->expire_time_limits().empty());
  EXPECT_FALSE(engine->expire_time_limit(id));
  EXPECT_EQ(state(id), JobState::Adapting);
  EXPECT_EQ(enactor.count(Kind::Stop), 0);

  engine->adaptation_done(id, true);  // 60 s adapting: limit 160
  ASSERT_EQ(state(id), JobState::Running);
  EXPECT_DOUBLE_EQ(job(id).est_end(), 160);
  EXPECT_EQ(engine->next_time_limit(), std::optional<double>(160));
  EXPECT_TRUE(engine->expire_time_limits().empty()) << "its extended limit has not passed";
  clock.set(159.9);
  EXPECT_TRUE(engine->expire_time_limits().empty());
  clock.set(160);
  EXPECT_EQ(engine->expire_time_limits(), std::vector<JobId>{id}) << "checked again after it";
  EXPECT_EQ(enactor.count(Kind::Stop, id), 1);
  engine->job_ended(id, -9);
  EXPECT_EQ(state(id), JobState::Timeout);
}

TEST_F(TimeLimitRule, AShrinkStretchesWhatIsLeftOfTheLimit) {
  clock.set(0);
  const JobId id = run_job(limited(4, 1, 4, 100));
  clock.set(60);
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.shrink(id, 2), std::nullopt); });
  ASSERT_EQ(state(id), JobState::Adapting);
  clock.set(70);
  engine->adaptation_done(id, true);
  // 10 s adapting: limit 110; the 40 s left of it at half the size take
  // 80: 70 + 80.
  EXPECT_DOUBLE_EQ(job(id).est_end(), 150);
  clock.set(149);
  EXPECT_TRUE(engine->expire_time_limits().empty());
  clock.set(150);
  EXPECT_EQ(engine->expire_time_limits(), std::vector<JobId>{id});
}

TEST_F(TimeLimitRule, AJobWhoseExtendedLimitPassedWhileItAdaptedStopsOnceTheAdaptationEnds) {
  // An expansion that waits for a node another job gives back: the job is
  // ADAPTING from then, but its processes only stop for the adaptation once
  // the node came, so only that time extends its limit.
  clock.set(0);
  const JobId big = run_job(rigid_spec(5));
  const JobId id = run_job(limited(1, 1, 2, 100));  // limit 100
  clock.set(95);
  in_pass([&](PassContext& ctx) {
    EXPECT_EQ(ctx.preempt(big, PreemptMode::Cancel), std::nullopt);
    EXPECT_EQ(ctx.expand(id, 2), std::nullopt);
  });
  ASSERT_EQ(state(id), JobState::Adapting);
  EXPECT_EQ(enactor.count(Kind::Resize, id), 0) << "waits for the promised node";

  clock.set(110);
  EXPECT_TRUE(engine->expire_time_limits().empty()) << "past 100, but adapting";
  EXPECT_FALSE(engine->expire_time_limit(id));
  EXPECT_EQ(state(id), JobState::Adapting);

  clock.set(120);
  engine->job_ended(big, -9);  // the node comes; the adaptation begins now
  ASSERT_EQ(enactor.count(Kind::Resize, id), 1);
  clock.set(125);
  engine->adaptation_done(id, true);  // 5 s adapting: limit 105
  ASSERT_EQ(state(id), JobState::Running);
  EXPECT_EQ(job(id).size(), 2);
  EXPECT_DOUBLE_EQ(job(id).est_end(), 105);
  EXPECT_EQ(engine->next_time_limit(), std::optional<double>(105));
  EXPECT_TRUE(engine->expire_time_limit(id)) << "its extended limit has passed: it stops now";
  EXPECT_EQ(state(id), JobState::Completing);
  const auto stops = enactor.of(Kind::Stop);
  ASSERT_FALSE(stops.empty());
  EXPECT_EQ(stops.back().job, id);
  EXPECT_EQ(stops.back().reason, StopReason::Timeout);
}

TEST_F(TimeLimitRule, ARolledBackAdaptationAlsoExtendsTheLimitByItsTime) {
  clock.set(0);
  const JobId id = run_job(limited(2, 1, 6, 100));
  clock.set(90);
  in_pass([&](PassContext& ctx) { EXPECT_EQ(ctx.expand(id, 4), std::nullopt); });
  clock.set(105);
  EXPECT_TRUE(engine->expire_time_limits().empty());
  engine->adaptation_done(id, false);
  EXPECT_EQ(job(id).size(), 2);
  EXPECT_DOUBLE_EQ(job(id).est_end(), 115);
  EXPECT_TRUE(engine->expire_time_limits().empty());
  clock.set(115);
  EXPECT_EQ(engine->expire_time_limits(), std::vector<JobId>{id});
}

}  // namespace
}  // namespace sched::test
