// scripts/policies/elastic.lua (Lina et al.'s elastic scheduling) on small
// crafted clusters: evolving requests first, EASY starts, starts by
// shrinking malleable victims behind a gate in one of six victim orders,
// expansion into idle nodes longest-running first. Each scenario is set up
// so that a wrong order, gate or phase would enact something else.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lua_test_support.hpp"
#include "sched/lua_policy.hpp"
#include "sched/sim/native_reader.hpp"
#include "sched/sim/simulator.hpp"
#include "test_paths.hpp"

namespace sched {
namespace {

using luatest::Harness;
using luatest::malleable;
using luatest::rigid;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Op = ResizeRequest::Op;

std::string elastic_file() { return std::string(SCHED_SOURCE_POLICY_DIR) + "/elastic.lua"; }

LuaPolicyOptions params(PolicyParams values = {}) {
  LuaPolicyOptions options = luatest::quick_options();
  options.params = std::move(values);
  return options;
}

ParamValue text(const char* value) { return std::string(value); }

JobSpec evolving(int nodes, int min_nodes, int max_nodes) {
  JobSpec spec = malleable(nodes, min_nodes, max_nodes);
  spec.kind = JobKind::Evolving;
  return spec;
}

JobSpec malleable_until(int nodes, int min_nodes, int max_nodes, double walltime) {
  JobSpec spec = malleable(nodes, min_nodes, max_nodes);
  spec.walltime = walltime;
  return spec;
}

// A C++ policy that runs `body` on its pass: sets up adaptations and
// starts without the policy under test.
class ScriptPolicy : public Policy {
 public:
  explicit ScriptPolicy(std::function<void(PassContext&)> body) : body_(std::move(body)) {}
  std::string name() const override { return "script"; }
  std::optional<PolicyFailure> schedule(PassContext& ctx) override {
    body_(ctx);
    return std::nullopt;
  }

 private:
  std::function<void(PassContext&)> body_;
};

// Completes the shrinks the enactor was asked for: a job started (or grown)
// on nodes that a shrink gives back waits for them, and only then shows up
// in the enactor's calls.
void finish_shrinks(Harness& h) {
  const std::vector<std::string> calls = h.enactor.calls;
  for (const std::string& call : calls) {
    if (call.rfind("shrink ", 0) != 0) continue;
    h.engine.adaptation_done(std::stoll(call.substr(7)), true);
  }
}

// One pass of the elastic policy that must succeed, with its shrinks done.
void run(Harness& h, PassReason reason = PassReason::Manual) {
  h.ok_pass(reason);
  finish_shrinks(h);
}

// Runs `body` as one pass, confirms the starts and adaptations it caused,
// and puts the elastic policy back.
void act(Harness& h, std::function<void(PassContext&)> body) {
  h.engine.set_policy(std::make_shared<ScriptPolicy>(std::move(body)));
  h.engine.run_pass(PassReason::Manual);
  h.confirm_starts();
  for (const auto& [id, job] : h.engine.jobs()) {
    if (job->state == JobState::Adapting) h.engine.adaptation_done(id, true);
  }
  h.engine.set_policy(h.policy);
  h.enactor.calls.clear();
}

// ---------------------------------------------------------------- victim orders

// 8 nodes, all busy: malleable job 1 (4 nodes), malleable job 2, grown
// 1 → 2 (gain +1), rigid job 3. A rigid 1-node job waits: the default order
// takes the node from job 2, though job 1 started first and has more nodes
// to give.
TEST(PolicyElastic, DefaultVictimOrderShrinksTheHighestGainFirst) {
  Harness h(8);
  h.use(elastic_file());
  h.submit(malleable(4, 1, 8));  // 1
  h.submit(malleable(1, 1, 4));  // 2
  h.submit(rigid(2));            // 3
  h.start_all();
  act(h, [](PassContext& ctx) { EXPECT_FALSE(ctx.expand(2, 2)); });
  ASSERT_EQ(h.job(2).run->gain, 1);
  h.submit(rigid(1));  // 4
  run(h, PassReason::Submit);
  EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 2 2->1", "start 4 on 1"));
}

// 11 nodes, all busy. Shrinkable nodes (size − min): job 1 has 1, jobs 2
// and 3 have 2 each; of those, job 3 is larger (4 nodes against 3).
TEST(PolicyElastic, ResourcesOrderShrinksTheMostShrinkableThenTheLargerJob) {
  Harness h(11);
  h.use(elastic_file(), params({{"victims", text("resources")}}));
  h.submit(malleable(4, 3, 8));  // 1
  h.submit(malleable(3, 1, 8));  // 2
  h.submit(malleable(4, 2, 8));  // 3
  h.start_all();
  h.submit(rigid(1));  // 4
  run(h);
  EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 3 4->3", "start 4 on 1"));
}

// 10 nodes, all busy. Job 2 grew twice (2→3→4), job 3 once but by more
// (1→5, gain +4, and more nodes to give): the expansions order picks job 2,
// where gain or resources would pick job 3.
TEST(PolicyElastic, ExpansionsOrderShrinksTheMostExpandedJob) {
  Harness h(10);
  h.use(elastic_file(), params({{"victims", text("expansions")}}));
  h.submit(malleable(1, 1, 8));  // 1
  h.submit(malleable(2, 1, 8));  // 2
  h.submit(malleable(1, 1, 8));  // 3
  h.start_all();
  act(h, [](PassContext& ctx) {
    EXPECT_FALSE(ctx.expand(2, 3));
    EXPECT_FALSE(ctx.expand(3, 5));
  });
  act(h, [](PassContext& ctx) { EXPECT_FALSE(ctx.expand(2, 4)); });
  ASSERT_EQ(h.job(2).run->expansions, 2);
  ASSERT_EQ(h.job(3).run->gain, 4);
  h.submit(rigid(1));  // 4
  run(h);
  EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 2 4->3", "start 4 on 1"));
}

// 18 nodes, all busy; a rigid 2-node job waits. The shrink each victim
// would need, with cost (0.5 + 0.25)·|Δn| + 2/(n_old + n_new):
//   job 1, pof2, 8 → 4: 3 + 2/12 ≈ 3.17
//   job 2, even, 4 → 2: 1.5 + 2/6 ≈ 1.83
//   job 3, none, 6 → 4: 1.5 + 2/10 = 1.7   ← cheapest
// With beta = 0 jobs 2 and 3 cost the same and the earlier start (job 2)
// wins: beta is part of the estimate.
TEST(PolicyElastic, AdaptationOrderShrinksTheCheapestShrinkFirst) {
  for (const bool with_beta : {true, false}) {
    SCOPED_TRACE(with_beta ? "default beta" : "beta = 0");
    PolicyParams values{{"victims", text("adaptation")}};
    if (!with_beta) values["beta"] = 0.0;
    Harness h(18);
    h.use(elastic_file(), params(values));
    h.submit(malleable(8, 1, 8, NodeConstraint::Pof2));  // 1
    h.submit(malleable(4, 2, 8, NodeConstraint::Even));  // 2
    h.submit(malleable(6, 1, 8));                        // 3
    h.start_all();
    h.submit(rigid(2));  // 4
    run(h);
    if (with_beta) {
      EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 3 6->4", "start 4 on 2"));
    } else {
      EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 2 4->2", "start 4 on 2"));
    }
  }
}

// 9 nodes, all busy, at t = 100. Job 1 has no walltime (its end is
// unknown: last), job 2 ends at 1000, job 3 at 300: job 3 has least left.
TEST(PolicyElastic, TimeOrderShrinksTheJobWithTheLeastTimeLeft) {
  Harness h(9);
  h.use(elastic_file(), params({{"victims", text("time")}}));
  h.submit(malleable(3, 1, 8));              // 1
  h.submit(malleable_until(3, 1, 8, 1000));  // 2
  h.submit(malleable_until(3, 1, 8, 300));   // 3
  h.start_all();
  h.clock.set(100);
  h.submit(rigid(1));  // 4
  run(h);
  EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 3 3->2", "start 4 on 1"));
}

// Four identical malleable victims. The random order follows the run's
// seed: one seed always picks the same victim, and different seeds do not
// all pick the same one (a fixed order would always pick job 1).
TEST(PolicyElastic, RandomOrderFollowsTheSeed) {
  auto victim_for_seed = [](std::uint64_t seed) {
    Harness h(8);
    LuaPolicyOptions options = params({{"victims", text("random")}});
    options.seed = seed;
    h.use(elastic_file(), options);
    for (int i = 0; i < 4; ++i) h.submit(malleable(2, 1, 8));
    h.start_all();
    h.submit(rigid(1));  // 5
    run(h);
    EXPECT_EQ(h.enactor.calls.size(), 2u);
    EXPECT_EQ(h.enactor.calls.back(), "start 5 on 1");
    return h.enactor.calls.empty() ? std::string() : h.enactor.calls.front();
  };
  std::set<std::string> victims;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const std::string victim = victim_for_seed(seed);
    EXPECT_THAT(victim, ::testing::MatchesRegex("shrink [1-4] 2->1"));
    EXPECT_EQ(victim_for_seed(seed), victim) << "seed " << seed << " replays";
    victims.insert(victim);
  }
  EXPECT_GE(victims.size(), 2u);
}

// 10 nodes: job 1 grows 4→6 and is still adapting when a 1-node job
// arrives. It has the most shrinkable nodes, but an adapting job is never
// touched: job 2 gives the node.
TEST(PolicyElastic, AnAdaptingJobIsNeverAVictim) {
  Harness h(10);
  h.use(elastic_file(), params({{"victims", text("resources")}}));
  h.submit(malleable(4, 1, 8));  // 1
  h.submit(malleable(2, 1, 8));  // 2
  h.submit(rigid(2));            // 3
  h.start_all();
  h.engine.set_policy(
      std::make_shared<ScriptPolicy>([](PassContext& ctx) { EXPECT_FALSE(ctx.expand(1, 6)); }));
  h.engine.run_pass(PassReason::Manual);
  h.engine.set_policy(h.policy);
  h.enactor.calls.clear();
  ASSERT_EQ(h.job(1).state, JobState::Adapting);
  h.submit(rigid(1));  // 4
  run(h);
  EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 2 2->1", "start 4 on 1"));
}

// 4 nodes: malleable job 1 has been launched but has not reported its
// start yet (STARTING). It may be listed among the running jobs, but only a
// RUNNING job can be resized: it is neither shrunk for the waiting job nor
// grown, and the engine has nothing to refuse.
TEST(PolicyElastic, AJobStillStartingIsNeitherShrunkNorGrown) {
  Harness h(4);
  h.use(elastic_file());
  h.submit(malleable(3, 1, 4));  // 1
  h.ok_pass();
  ASSERT_THAT(h.enactor.calls, ElementsAre("start 1 on 3"));
  ASSERT_EQ(h.job(1).state, JobState::Starting);
  h.enactor.calls.clear();
  h.submit(rigid(2));  // 2
  run(h);
  EXPECT_THAT(h.enactor.calls, IsEmpty());
  EXPECT_EQ(h.engine.stats().refusals, 0u);
}

// ---------------------------------------------------------------- gates

// 5 nodes, all busy: rigid job 1 ends at 100, malleable job 2 holds 3. A
// 1-node job arrives at `now`.
void about_to_end_cluster(Harness& h, double now) {
  h.submit(rigid(2, 100));       // 1
  h.submit(malleable(3, 1, 8));  // 2
  h.start_all();
  h.clock.set(now);
  h.submit(rigid(1));  // 3
}

TEST(PolicyElastic, DefaultGateShrinksEvenWhenAJobIsAboutToEnd) {
  Harness h(5);
  h.use(elastic_file());
  about_to_end_cluster(h, 97);
  run(h);
  EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 2 3->2", "start 3 on 1"));
}

TEST(PolicyElastic, ApplicationGateDoesNotShrinkWhileAJobEndsWithinT) {
  {
    SCOPED_TRACE("3 s before job 1 ends");
    Harness h(5);
    h.use(elastic_file(), params({{"gate", text("application")}}));
    about_to_end_cluster(h, 97);
    run(h);
    EXPECT_THAT(h.enactor.calls, IsEmpty());
    EXPECT_EQ(h.job(3).state, JobState::Pending);
  }
  {
    SCOPED_TRACE("6 s before: outside t = 5");
    Harness h(5);
    h.use(elastic_file(), params({{"gate", text("application")}}));
    about_to_end_cluster(h, 94);
    run(h);
    EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 2 3->2", "start 3 on 1"));
  }
  {
    SCOPED_TRACE("6 s before, t = 10");
    Harness h(5);
    h.use(elastic_file(), params({{"gate", text("application")}, {"t", 10LL}}));
    about_to_end_cluster(h, 94);
    run(h);
    EXPECT_THAT(h.enactor.calls, IsEmpty());
  }
}

// 6 nodes, all busy, at t = 60: job 1 (walltime 100) is 60% done, job 2
// (walltime 1000) 6%. Both are equal victims otherwise, and job 1 started
// first. With x = 50 the application gate spares job 1.
TEST(PolicyElastic, ApplicationGateSparesAVictimMoreThanXPercentDone) {
  for (const bool with_x : {false, true}) {
    SCOPED_TRACE(with_x ? "x = 50" : "x unset");
    PolicyParams values{{"gate", text("application")}};
    if (with_x) values["x"] = 50LL;
    Harness h(6);
    h.use(elastic_file(), params(values));
    h.submit(malleable_until(3, 1, 8, 100));   // 1
    h.submit(malleable_until(3, 1, 8, 1000));  // 2
    h.start_all();
    h.clock.set(60);
    h.submit(rigid(1));  // 3
    run(h);
    EXPECT_THAT(h.enactor.calls,
                ElementsAre(with_x ? "shrink 2 3->2" : "shrink 1 3->2", "start 3 on 1"));
  }
}

// 10 nodes: rigid job 1 (2 nodes, ends at 100), malleable job 2 (5 nodes,
// its maximum, so it cannot take the idle nodes instead); 3 idle, so 70%
// busy. A rigid 4-node job arrives: one node is missing.
struct SystemCase {
  long long u;
  double now;
  bool shrinks;
};

TEST(PolicyElastic, SystemGateRefusesOnlyAboveUPercentWithAJobAboutToEnd) {
  for (const SystemCase c : {SystemCase{80, 97, true},     // 70% ≤ 80%
                             SystemCase{60, 97, false},    // 70% > 60%, job 1 ends in 3 s
                             SystemCase{60, 50, true}}) {  // 70% > 60%, nothing ends soon
    SCOPED_TRACE("u = " + std::to_string(c.u) + ", now = " + std::to_string(c.now));
    Harness h(10);
    h.use(elastic_file(), params({{"gate", text("system")}, {"u", c.u}}));
    h.submit(rigid(2, 100));       // 1
    h.submit(malleable(5, 1, 5));  // 2
    h.start_all();
    h.clock.set(c.now);
    h.submit(rigid(4));  // 3
    run(h);
    if (c.shrinks) {
      EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 2 5->4", "start 3 on 4"));
    } else {
      EXPECT_THAT(h.enactor.calls, IsEmpty());
    }
  }
}

// ---------------------------------------------------------------- evolving requests

// 6 nodes, all busy: evolving job 1 asks to go from 4 to 2 nodes. Granted at
// once, and the pending 2-node job starts on the nodes it gives back.
TEST(PolicyElastic, AnEvolvingShrinkRequestIsGrantedAtOnce) {
  Harness h(6);
  h.use(elastic_file());
  h.submit(evolving(4, 1, 8));  // 1
  h.submit(rigid(2));           // 2
  h.start_all();
  h.submit(rigid(2));  // 3
  ASSERT_EQ(h.engine.resize_request(1, {Op::Shrink, 2}), Status());
  run(h, PassReason::Request);
  EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 1 4->2", "start 3 on 2"));
}

// 8 nodes, all busy: evolving job 1 (2 nodes) asks for 4. Malleable job 2
// gives 2 nodes, then job 1 grows; once both adaptations end the request
// is done.
TEST(PolicyElastic, AnEvolvingExpandRequestShrinksAMalleableVictim) {
  Harness h(8);
  h.use(elastic_file());
  h.submit(evolving(2, 1, 8));   // 1
  h.submit(malleable(4, 1, 8));  // 2
  h.submit(rigid(2));            // 3
  h.start_all();
  ASSERT_EQ(h.engine.resize_request(1, {Op::Expand, 4}), Status());
  run(h, PassReason::Request);
  EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 2 4->2", "expand 1 2->4"));
  h.engine.adaptation_done(1, true);
  EXPECT_EQ(h.job(1).size(), 4);
  EXPECT_FALSE(h.job(1).run->request);
}

// 8 nodes, 2 idle: the request takes the idle nodes; no one shrinks, and
// the malleable job does not get them either.
TEST(PolicyElastic, AnEvolvingExpandRequestTakesIdleNodesFirst) {
  Harness h(8);
  h.use(elastic_file());
  h.submit(evolving(2, 1, 8));   // 1
  h.submit(malleable(4, 1, 8));  // 2
  h.start_all();
  ASSERT_EQ(h.engine.resize_request(1, {Op::Expand, 4}), Status());
  run(h, PassReason::Request);
  EXPECT_THAT(h.enactor.calls, ElementsAre("expand 1 2->4"));
}

// 8 nodes, all busy: job 1 asks for 6 (4 more), but malleable job 2 can
// give only 1 (4 nodes, minimum 3): nothing happens, no partial grant.
TEST(PolicyElastic, AnEvolvingExpandRequestWaitsWhenNotEnoughCanBeFreed) {
  Harness h(8);
  h.use(elastic_file());
  h.submit(evolving(2, 1, 8));   // 1
  h.submit(malleable(4, 3, 8));  // 2
  h.submit(rigid(2));            // 3
  h.start_all();
  ASSERT_EQ(h.engine.resize_request(1, {Op::Expand, 6}), Status());
  run(h, PassReason::Request);
  EXPECT_THAT(h.enactor.calls, IsEmpty());
  EXPECT_TRUE(h.job(1).run->request);
}

// The gate holds back the victims of a request too: rigid job 3 ends
// within t, so under the application gate job 1's request waits.
TEST(PolicyElastic, TheGateAlsoHoldsBackShrinksForAnEvolvingRequest) {
  Harness h(8);
  h.use(elastic_file(), params({{"gate", text("application")}}));
  h.submit(evolving(2, 1, 8));   // 1
  h.submit(malleable(4, 1, 8));  // 2
  h.submit(rigid(2, 100));       // 3
  h.start_all();
  h.clock.set(98);
  ASSERT_EQ(h.engine.resize_request(1, {Op::Expand, 4}), Status());
  run(h, PassReason::Request);
  EXPECT_THAT(h.enactor.calls, IsEmpty());
}

// 6 nodes: running rigid job 1 (2 nodes), evolving job 2 (2 nodes), 2 idle.
// Job 2's request comes before the pending 2-node job 3, which then has
// nothing to start on (and no malleable job to shrink).
TEST(PolicyElastic, AnEvolvingRequestComesBeforePendingJobs) {
  Harness h(6);
  h.use(elastic_file());
  h.submit(rigid(2));           // 1
  h.submit(evolving(2, 1, 8));  // 2
  h.start_all();
  h.submit(rigid(2));  // 3
  ASSERT_EQ(h.engine.resize_request(2, {Op::Expand, 4}), Status());
  run(h, PassReason::Request);
  EXPECT_THAT(h.enactor.calls, ElementsAre("expand 2 2->4"));
  EXPECT_EQ(h.job(3).state, JobState::Pending);
}

// ---------------------------------------------------------------- starts

// 4 nodes: job 1 (2 nodes) runs until 100. Head job 2 needs 4 and is
// reserved for 100; job 3 (walltime 40) ends before that: backfilled.
TEST(PolicyElastic, EasyStartStillBackfills) {
  Harness h(4);
  h.use(elastic_file());
  h.submit(rigid(2, 100));  // 1
  h.start_all();
  h.clock.set(2);
  h.submit(rigid(4, 50));  // 2
  h.submit(rigid(2, 40));  // 3
  run(h);
  EXPECT_THAT(h.enactor.calls, ElementsAre("start 3 on 2"));
  ASSERT_TRUE(h.job(2).run->expected_start);
  EXPECT_DOUBLE_EQ(*h.job(2).run->expected_start, 100);
}

// 6 nodes: job 1 (4 nodes) runs until 100; head job 2 needs 5, reserved for
// 100 with 1 extra node. Job 3 (2 nodes, 500 s) fits the 2 idle nodes but
// would delay the head: EASY keeps it back, and so does the shrinking
// phase (it shrinks nothing for it: nothing is malleable).
TEST(PolicyElastic, DoesNotStartAJobEasyKeptBackForTheHead) {
  Harness h(6);
  h.use(elastic_file());
  h.submit(rigid(4, 100));  // 1
  h.start_all();
  h.submit(rigid(5, 50));   // 2
  h.submit(rigid(2, 500));  // 3
  run(h);
  EXPECT_THAT(h.enactor.calls, IsEmpty());
}

// 8 nodes held by malleable job 1 (minimum 2). A malleable job asking for
// 4 (minimum 2) needs only 2: job 1 shrinks to 6, the new job starts on 2.
TEST(PolicyElastic, APendingMalleableJobStartsAtItsMinimumByShrinking) {
  Harness h(8);
  h.use(elastic_file());
  h.submit(malleable(8, 2, 8));  // 1
  h.start_all();
  h.submit(malleable(4, 2, 4));  // 2
  run(h);
  EXPECT_THAT(h.enactor.calls, ElementsAre("shrink 1 8->6", "start 2 on 2"));
}

// ---------------------------------------------------------------- expansion

// 13 nodes, 6 idle at t = 100. Malleable job 2 (max 4) started at 0, job 1
// (pof2, max 8) at 50: job 2 grows first, to its maximum 4; job 1 gets
// what is left (4) as far as pof2 allows: 2 → 4 (6 would break pof2). The
// evolving job 3 and the rigid job 4 are never grown. (Growing job 1 first
// would give it 2 → 8 and leave job 2 nothing.)
TEST(PolicyElastic, ExpandsTheLongestRunningMalleableJobFirst) {
  Harness h(13);
  h.use(elastic_file());
  h.submit(malleable(2, 1, 8, NodeConstraint::Pof2));  // 1
  h.submit(malleable(2, 1, 4));                        // 2
  h.submit(evolving(2, 1, 8));                         // 3
  h.submit(rigid(1));                                  // 4
  act(h, [](PassContext& ctx) { EXPECT_FALSE(ctx.start(2)); });
  h.clock.set(50);
  h.start_all();
  h.clock.set(100);
  ASSERT_EQ(h.engine.cluster().idle_count(), 6);
  run(h, PassReason::Tick);
  EXPECT_THAT(h.enactor.calls, ElementsAre("expand 2 2->4", "expand 1 2->4"));
}

// ---------------------------------------------------------------- whole runs

// One [[job]] of the native workload format; min/max 0: a rigid job.
std::string workload_job(int id, double submit, double runtime, int nodes, double walltime,
                         int min_nodes = 0, int max_nodes = 0, const std::string& extra = "") {
  std::string text =
      "[[job]]\nid = " + std::to_string(id) + "\nsubmit = " + std::to_string(submit) +
      "\nruntime = " + std::to_string(runtime) + "\nnodes = " + std::to_string(nodes) +
      "\nwalltime = " + std::to_string(walltime) + "\n";
  if (min_nodes > 0) {
    text += "min_nodes = " + std::to_string(min_nodes) +
            "\nmax_nodes = " + std::to_string(max_nodes) + "\n";
  }
  return text + extra + "\n";
}

sim::SimResult simulate(const std::string& policy, const std::string& workload_toml,
                        PolicyParams values = {}) {
  const sim::Workload workload = sim::parse_native(workload_toml, "test.toml");
  sim::SimConfig config;
  config.tick_s = 60;
  sim::Simulator simulator(workload, config);
  LuaPolicyOptions options;
  options.params = std::move(values);
  simulator.set_policy(std::shared_ptr<Policy>(
      LuaPolicy::load(std::string(SCHED_SOURCE_POLICY_DIR) + "/" + policy + ".lua", options)));
  return simulator.run();
}

std::map<JobId, double> starts(const sim::SimResult& result) {
  std::map<JobId, double> out;
  for (const sim::JobRecord& job : result.jobs) out[job.id] = job.start;
  return out;
}

// Without malleable or evolving jobs there is nothing to shrink or grow:
// the elastic policy starts jobs exactly as EASY backfilling does.
TEST(PolicyElastic, OnRigidJobsItStartsJobsLikeEasyBackfilling) {
  const std::string workload = "[cluster]\nnodes = 8\n\n" + workload_job(1, 0, 100, 3, 100) +
                               workload_job(2, 0, 200, 3, 200) + workload_job(3, 1, 50, 5, 50) +
                               workload_job(4, 2, 90, 2, 98) + workload_job(5, 3, 5, 1, 8) +
                               workload_job(6, 4, 500, 6, 0);
  const sim::SimResult elastic = simulate("elastic", workload);
  const sim::SimResult easy = simulate("easy_backfill", workload);
  EXPECT_EQ(elastic.policy_errors, 0) << elastic.first_policy_error;
  EXPECT_EQ(starts(elastic), starts(easy));
  EXPECT_EQ(starts(elastic).at(4), 2) << "backfilled";
}

// Rigid, malleable and evolving jobs under every gate and victim order:
// every job ends, no pass fails, and the engine refuses none of the
// policy's actions (it never asks for what it may not do).
TEST(PolicyElastic, RunsAMixedWorkloadUnderEveryGateAndOrderWithoutRefusals) {
  const std::string requests =
      "kind = \"evolving\"\n"
      "[[job.request]]\nat = 0.3\nop = \"expand\"\nby = 3\n"
      "[[job.request]]\nat = 0.7\nop = \"shrink\"\nby = 2\n";
  std::string workload = "[cluster]\nnodes = 16\n\n";
  for (int id = 1; id <= 24; ++id) {
    const double submit = 7.0 * id;
    const double runtime = 40 + 13 * (id % 7);
    if (id % 3 == 0) {
      workload += workload_job(id, submit, runtime, 4, 2 * runtime, 1, 12);
    } else if (id % 4 == 0) {
      workload += workload_job(id, submit, runtime, 2, 3 * runtime, 1, 8, requests);
    } else {
      workload += workload_job(id, submit, runtime, 1 + id % 5, 2 * runtime);
    }
  }
  for (const char* gate : {"default", "application", "system"}) {
    for (const char* order : {"random", "gain", "resources", "expansions", "adaptation", "time"}) {
      SCOPED_TRACE(std::string(gate) + " / " + order);
      const sim::SimResult result = simulate(
          "elastic", workload, {{"gate", text(gate)}, {"victims", text(order)}, {"x", 80LL}});
      EXPECT_EQ(result.policy_errors, 0) << result.first_policy_error;
      EXPECT_EQ(result.passes.refusals, 0u);
      EXPECT_EQ(result.metrics.jobs, 24);
      int malleable_resizes = 0, evolving_resizes = 0;
      for (const sim::ResizeRecord& resize : result.resizes) {
        ++(resize.job % 3 == 0 ? malleable_resizes : evolving_resizes);
      }
      EXPECT_GT(malleable_resizes, 0);
      EXPECT_GT(evolving_resizes, 0) << "no evolving request was granted";
    }
  }
}

// ---------------------------------------------------------------- parameters

TEST(PolicyElastic, AnUnknownGateFailsThePassWithAClearMessage) {
  Harness h(4);
  h.use(elastic_file(), params({{"gate", text("sometimes")}}));
  h.submit(malleable(2, 1, 4));  // 1: would grow into the idle nodes
  h.start_all();
  const auto error = h.pass();
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("unknown gate"));
  EXPECT_THAT(*error, HasSubstr("sometimes"));
  EXPECT_THAT(h.enactor.calls, IsEmpty());
}

TEST(PolicyElastic, AnUnknownVictimOrderFailsThePassWithAClearMessage) {
  Harness h(4);
  h.use(elastic_file(), params({{"victims", text("biggest")}}));
  h.submit(malleable(2, 1, 4));
  h.start_all();
  const auto error = h.pass();
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("unknown victims"));
  EXPECT_THAT(*error, HasSubstr("biggest"));
  EXPECT_THAT(h.enactor.calls, IsEmpty());
}

TEST(PolicyElastic, ANonNumericTFailsThePass) {
  Harness h(4);
  h.use(elastic_file(), params({{"t", text("soon")}}));
  const auto error = h.pass();
  ASSERT_TRUE(error);
  EXPECT_THAT(*error, HasSubstr("t must be a number"));
}

TEST(PolicyElastic, IsTimeDependentBecauseOfItsGates) {
  Harness h(1);
  EXPECT_TRUE(h.use(elastic_file()).time_dependent());
  EXPECT_EQ(h.policy->name(), "elastic");
}

}  // namespace
}  // namespace sched
