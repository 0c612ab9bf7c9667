// Multifactor priority (issue 18 item 5): each factor moves the queue order
// as its weight says, weights 0 keep today's order, nice lowers, fair share
// decays with its half-life, and a calc period re-sorts the queue.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "lua_test_support.hpp"
#include "sched/fair_share.hpp"
#include "sched/lua_policy.hpp"
#include "sched/priority.hpp"

namespace sched {
namespace {

using test::EngineFixture;
using test::rigid_spec;

class Priority : public EngineFixture {
 protected:
  void start(PriorityWeights weights, int nodes = 4) {
    EngineConfig config;
    config.priority.weights = weights;
    config.priority.max_age_s = 1000;
    config.priority.decay_half_life_s = 100;
    config.priority.calc_period_s = 60;
    config.priority.qos = {{"normal", 0}, {"high", 100}, {"low", 10}};
    init(nodes, config);
  }
  JobId submit_as(const std::string& user, int nodes = 1, const std::string& qos = {},
                  std::int64_t nice = 0) {
    JobSpec spec = rigid_spec(nodes);
    spec.user = user;
    spec.qos = qos;
    spec.nice = nice;
    return submit(spec);
  }
  // The pending jobs in queue order (what a pass offers).
  std::vector<JobId> order() const {
    std::vector<JobId> ids;
    for (const Job* job : engine->pending_queue().merged()) ids.push_back(job->id);
    return ids;
  }
  // Alice runs a 2-node job for `seconds`: fair-share usage.
  void alice_uses(double seconds) {
    const JobId id = run_job([] {
      JobSpec spec = rigid_spec(2);
      spec.user = "alice";
      spec.extra.edit().account = "physics";
      return spec;
    }());
    clock.advance(seconds);
    engine->job_ended(id, 0);
  }
};

TEST_F(Priority, WeightsZeroKeepSubmitOrderAndUrgentFirst) {
  start({});
  const JobId a = submit_as("alice", 3, "high");
  clock.advance(1);
  const JobId b = submit_as("bob", 1, "low");
  clock.advance(1);
  JobSpec urgent = rigid_spec(1);
  urgent.urgent = true;
  const JobId c = submit(urgent);
  EXPECT_EQ(order(), (std::vector<JobId>{c, a, b}));
  for (JobId id : {a, b, c}) EXPECT_EQ(job(id).priority, 0);
  clock.advance(500);
  engine->tick();
  EXPECT_EQ(order(), (std::vector<JobId>{c, a, b})) << "ticks change nothing";
}

TEST_F(Priority, NiceLowersEvenWithoutWeights) {
  start({});
  const JobId a = submit_as("alice", 1, {}, 50);
  const JobId b = submit_as("bob");
  EXPECT_EQ(job(a).priority, -50);
  EXPECT_EQ(order(), (std::vector<JobId>{b, a}));
  const JobId c = submit_as("carol", 1, {}, -10);  // an admin's (schedd checks who)
  EXPECT_EQ(order(), (std::vector<JobId>{c, b, a}));
}

TEST_F(Priority, JobSizeWeightPutsLargerJobsFirst) {
  start({.jobsize = 1000});
  const JobId small = submit_as("alice", 1);
  const JobId large = submit_as("alice", 4);
  EXPECT_EQ(job(small).priority, 250);  // 1 of 4 nodes
  EXPECT_EQ(job(large).priority, 1000);
  EXPECT_EQ(order(), (std::vector<JobId>{large, small}));
}

TEST_F(Priority, QosWeightFollowsTheQosPriority) {
  start({.qos = 1000});
  const JobId normal = submit_as("alice");
  const JobId low = submit_as("alice", 1, "low");
  const JobId high = submit_as("alice", 1, "high");
  EXPECT_EQ(job(normal).spec.qos, "normal") << "no --qos: normal";
  EXPECT_EQ(job(high).priority, 1000);
  EXPECT_EQ(job(low).priority, 100);
  EXPECT_EQ(order(), (std::vector<JobId>{high, low, normal}));
}

TEST_F(Priority, UnknownQosIsRefusedAndChangesNothing) {
  start({});
  JobSpec spec = rigid_spec(1);
  spec.qos = "gold";
  auto out = engine->submit(spec);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::Invalid);
  EXPECT_NE(out.status().message().find("Invalid qos specification"), std::string::npos);
  EXPECT_EQ(engine->pending_queue().listing_size(), 0u);
  EXPECT_TRUE(engine->jobs().empty());
}

TEST_F(Priority, AgeWeightReordersAtTheCalcPeriodOnly) {
  start({.age = 1000, .jobsize = 1000});
  const JobId old_small = submit_as("alice", 1);  // 250 for size
  clock.advance(10);
  const JobId new_large = submit_as("alice", 2);  // 500 for size
  EXPECT_EQ(order(), (std::vector<JobId>{new_large, old_small}));
  // At 40 s the calc period (60 s) has not passed: nothing is recomputed.
  clock.advance(30);
  engine->tick();
  EXPECT_EQ(job(old_small).priority, 250);
  EXPECT_EQ(order(), (std::vector<JobId>{new_large, old_small}));
  // At 400 s: old_small 250 + 400 = 650, new_large 500 + 390 = 890.
  clock.advance(360);
  engine->tick();
  EXPECT_EQ(job(old_small).priority, 650);
  EXPECT_EQ(job(new_large).priority, 890);
  // A larger job submitted now (500) waits behind the older small one.
  const JobId fresh_large = submit_as("alice", 2);
  EXPECT_EQ(job(fresh_large).priority, 500);
  EXPECT_EQ(order(), (std::vector<JobId>{new_large, old_small, fresh_large}))
      << "age moved old_small above a fresh larger job";
}

TEST_F(Priority, RecomputeReSortsTheQueueAndIsOfferedInThatOrder) {
  start({.fairshare = 1000});
  const JobId a1 = submit_as("alice");
  const JobId b1 = submit_as("bob");
  EXPECT_EQ(order(), (std::vector<JobId>{a1, b1})) << "no usage yet: equal, submit order";
  // Alice uses the cluster; her waiting job drops below bob's at the next period.
  alice_uses(50);
  EXPECT_EQ(order(), (std::vector<JobId>{a1, b1})) << "not before the calc period";
  clock.advance(60);
  engine->tick();
  EXPECT_LT(job(a1).priority, job(b1).priority);
  EXPECT_EQ(order(), (std::vector<JobId>{b1, a1}));
  EXPECT_TRUE(engine->pass_due());
  std::vector<JobId> offered;
  in_pass([&](PassContext& ctx) {
    for (const Job* j : ctx.pending()) offered.push_back(j->id);
  });
  EXPECT_EQ(offered, (std::vector<JobId>{b1, a1}));
  // A new job of alice's gets her factor at submit.
  const JobId a2 = submit_as("alice");
  EXPECT_EQ(job(a2).priority, job(a1).priority);
  EXPECT_EQ(order(), (std::vector<JobId>{b1, a1, a2}));
}

TEST_F(Priority, FairShareChargesNodeSecondsOfEndedJobs) {
  start({.fairshare = 1000});
  submit_as("bob");  // bob is known: two users share equally
  alice_uses(50);
  const double now = clock.now();
  EXPECT_DOUBLE_EQ(engine->fair_share().usage("alice", now), 100.0) << "2 nodes x 50 s";
  EXPECT_DOUBLE_EQ(engine->fair_share().account_usage("physics", now), 100.0);
  EXPECT_DOUBLE_EQ(engine->fair_share().usage("bob", now), 0.0);
  // alice: U = 1, S = 1/2: 2^-2; bob: U = 0: 1.
  EXPECT_DOUBLE_EQ(engine->fair_share().factor("alice", now), 0.25);
  EXPECT_DOUBLE_EQ(engine->fair_share().factor("bob", now), 1.0);
}

// The calc period's work at 100,000 pending jobs: one walk and one sort.
// Records the seconds it took (recompute_100k_s) for bench figures; asserts
// the order it leaves.
TEST_F(Priority, RecomputeOfAHundredThousandPendingJobs) {
  start({.age = 100000, .fairshare = 100000});
  constexpr int kJobs = 100000;
  const char* users[] = {"alice", "bob", "carol", "dave"};
  for (int i = 0; i < kJobs; ++i) {
    submit_as(users[i % 4]);
    if (i % 1000 == 0) clock.advance(1);
  }
  alice_uses(100);
  clock.advance(60);
  const double begun = clock.monotonic();
  engine->recompute_priorities(true);
  const double took = clock.monotonic() - begun;
  RecordProperty("recompute_100k_s", std::to_string(took));
  std::vector<const Job*> queue = engine->pending_queue().merged();
  ASSERT_EQ(queue.size(), static_cast<std::size_t>(kJobs));
  for (std::size_t i = 1; i < queue.size(); ++i) {
    ASSERT_GE(queue[i - 1]->priority, queue[i]->priority) << "at " << i;
  }
  EXPECT_NE(queue.front()->spec.user, "alice") << "alice has used the cluster";
  EXPECT_EQ(queue.back()->spec.user, "alice");
}

TEST(FairShareMath, HalfLifeHalvesUsage) {
  FairShare share(100, {});
  share.charge("alice", "", 800, 0);
  EXPECT_DOUBLE_EQ(share.usage("alice", 0), 800);
  EXPECT_DOUBLE_EQ(share.usage("alice", 100), 400);
  EXPECT_DOUBLE_EQ(share.usage("alice", 300), 100);
  // Charged in the past (a journal's ended job): already decayed when added.
  share.charge("alice", "", 800, 100);  // usage as of 300 gains 800/4 = 200
  EXPECT_DOUBLE_EQ(share.usage("alice", 300), 300);
  FairShare forever(0, {});
  forever.charge("bob", "", 10, 0);
  EXPECT_DOUBLE_EQ(forever.usage("bob", 1e9), 10) << "half-life 0: no decay";
}

TEST(FairShareMath, FactorIsTwoToMinusUsageOverShares) {
  EXPECT_DOUBLE_EQ(fair_share_factor(0, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(fair_share_factor(0.5, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(fair_share_factor(1, 0.25), 1.0 / 16);
  // Configured shares: alice 3, bob 1; equal usage.
  FairShare share(0, {{"alice", 3}, {"bob", 1}});
  share.charge("alice", "", 100, 0);
  share.charge("bob", "", 100, 0);
  EXPECT_DOUBLE_EQ(share.factor("alice", 0), std::exp2(-0.5 / 0.75));
  EXPECT_DOUBLE_EQ(share.factor("bob", 0), std::exp2(-0.5 / 0.25));
  EXPECT_GT(share.factor("alice", 0), share.factor("bob", 0));
  // Decay leaves the ratios: the factors do not change with time alone.
  FairShare decaying(50, {});
  decaying.charge("alice", "", 100, 0);
  decaying.charge("bob", "", 300, 0);
  EXPECT_NEAR(decaying.factor("alice", 0), decaying.factor("alice", 500), 1e-12);
}

TEST(PriorityFactors, AgeSizeQosAndWeighing) {
  EXPECT_DOUBLE_EQ(age_factor(50, 100), 0.5);
  EXPECT_DOUBLE_EQ(age_factor(500, 100), 1.0) << "capped at the max age";
  EXPECT_DOUBLE_EQ(jobsize_factor(2, 8), 0.25);
  PriorityConfig config;
  config.qos = {{"normal", 0}, {"high", 200}, {"mid", 50}};
  EXPECT_DOUBLE_EQ(qos_factor(config, "mid"), 0.25);
  EXPECT_DOUBLE_EQ(qos_factor(config, "normal"), 0.0);
  const PriorityFactors f{.age = 0.5, .fairshare = 0.25, .jobsize = 1, .qos = 0.25};
  const PriorityWeights w{.age = 100, .fairshare = 1000, .jobsize = 10, .qos = 40};
  EXPECT_EQ(job_priority(f, w, 5), 50 + 250 + 10 + 10 - 5);
  EXPECT_EQ(weigh(f, w).fairshare, 250);
}

TEST(PriorityLua, APolicySeesJobPriorityAccountQosAndNice) {
  luatest::TempDir dir;
  EngineConfig config;
  config.priority.weights.jobsize = 100;
  config.priority.qos = {{"normal", 0}, {"high", 10}};
  luatest::Harness h(4, config);
  h.use(dir.write("p.lua", R"lua(
local P = { api = 1 }
local seen = {}
function P.schedule(ctx)
  for i, job in ipairs(ctx.pending) do
    seen[i] = { id = job.id, priority = job.priority, account = job.account,
                qos = job.qos, nice = job.nice }
  end
end
function P.save() return seen end
return P
)lua"));
  JobSpec small = luatest::rigid(1);
  small.extra.edit().account = "physics";
  small.qos = "high";
  small.nice = 5;
  const JobId a = h.submit(small);
  const JobId b = h.submit(luatest::rigid(4));
  h.ok_pass();
  luatest::LuaData seen = luatest::LuaData::saved_by(*h.policy);
  EXPECT_EQ(seen.integer("1.id"), b) << "the larger job first";
  EXPECT_EQ(seen.integer("1.priority"), 100);
  EXPECT_EQ(seen.integer("2.id"), a);
  EXPECT_EQ(seen.integer("2.priority"), 25 - 5);
  EXPECT_EQ(seen.str("2.account"), "physics");
  EXPECT_EQ(seen.str("2.qos"), "high");
  EXPECT_EQ(seen.integer("2.nice"), 5);
  EXPECT_EQ(seen.str("1.qos"), "normal");
}

}  // namespace
}  // namespace sched
