// The malleable policies perf_aware.lua and fpsma.lua (Chadha, John &
// Gerndt, Algorithm 1; shared pass in scripts/policies/lib/malleable.lua),
// one pass at a time on small crafted clusters. Running jobs are set up with
// a C++ policy that starts exactly the jobs a test names, so start times and
// MTCT values are the test's choice. The fake enactor records what the
// engine asks for; a job started on nodes a shrink frees is only launched
// (a "start" call) once that shrink completes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lua_test_support.hpp"
#include "sched/lua_policy.hpp"
#include "test_paths.hpp"

namespace sched {
namespace {

using luatest::Harness;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

std::string policy_file(const std::string& name) {
  return std::string(SCHED_SOURCE_POLICY_DIR) + "/" + name + ".lua";
}

// The enactor's records, spelled as FakeEnactor spells them.
std::string start(JobId id, int nodes) {
  return "start " + std::to_string(id) + " on " + std::to_string(nodes);
}
std::string shrink(JobId id, int from, int to) {
  return "shrink " + std::to_string(id) + " " + std::to_string(from) + "->" + std::to_string(to);
}
std::string expand(JobId id, int from, int to) {
  return "expand " + std::to_string(id) + " " + std::to_string(from) + "->" + std::to_string(to);
}
std::string perf(JobId id) { return "perf " + std::to_string(id); }

// Starts exactly the jobs it is given, at their requested size.
class StartThese : public Policy {
 public:
  explicit StartThese(std::vector<JobId> ids) : ids_(std::move(ids)) {}
  std::string name() const override { return "start_these"; }
  std::optional<PolicyFailure> schedule(PassContext& ctx) override {
    for (JobId id : ids_) {
      if (auto refusal = ctx.start(id)) {
        return PolicyFailure{PolicyFailureCode::Runtime, "cannot start job " + std::to_string(id),
                             "", 0};
      }
    }
    return std::nullopt;
  }

 private:
  std::vector<JobId> ids_;
};

// Bundled policy under test on a harness; every helper keeps it installed.
class PolicyTest {
 public:
  PolicyTest(const std::string& policy, int nodes, PolicyParams params = {}) : h(nodes) {
    LuaPolicyOptions options = luatest::quick_options();
    options.params = std::move(params);
    h.use(policy_file(policy), options);
  }

  // Starts the given pending jobs now, confirms their launch, then lets
  // 10 s pass (later starts are later) and forgets the enactor's records.
  void start_now(std::vector<JobId> ids) {
    h.engine.set_policy(std::make_shared<StartThese>(std::move(ids)));
    h.ok_pass();
    h.confirm_starts();
    h.engine.set_policy(h.policy);
    h.clock.advance(10);
    h.enactor.calls.clear();
  }

  // A malleable job, running from now, with an MTCT report when given.
  JobId running(int nodes, int lo, int hi, std::optional<double> mtct = std::nullopt,
                NodeConstraint constraint = NodeConstraint::None) {
    const JobId id = h.submit(luatest::malleable(nodes, lo, hi, constraint));
    start_now({id});
    if (mtct) h.engine.perf_report(id, *mtct);
    return id;
  }

  // One pass of the policy under test; returns what the engine asked for.
  std::vector<std::string> pass() {
    h.enactor.calls.clear();
    h.ok_pass();
    return h.enactor.calls;
  }

  std::uint64_t refusals() const { return h.engine.stats().refusals; }

  Harness h;
};

// ---------------------------------------------------------------- perf_aware: shrinking

// 12 nodes, all busy. The head needs 5: job 2 (MTCT 0.9) gives 3 (4 → 1),
// job 3 (0.5) the missing 2 (4 → 2); job 1 (0.2), the most efficient, keeps
// its nodes. The head waits in STARTING for the nodes being freed.
TEST(PolicyPerfAware, ShrinksInDecreasingMtctOrderUntilTheHeadFits) {
  PolicyTest t("perf_aware", 12);
  const JobId a = t.running(4, 1, 4, 0.2);
  const JobId b = t.running(4, 1, 4, 0.9);
  const JobId c = t.running(4, 1, 4, 0.5);
  const JobId head = t.h.submit(luatest::rigid(5));
  EXPECT_THAT(t.pass(), ElementsAre(shrink(b, 4, 1), shrink(c, 4, 2)));
  EXPECT_EQ(t.h.job(head).state, JobState::Starting);
  EXPECT_EQ(t.h.job(a).state, JobState::Running);
  EXPECT_EQ(t.refusals(), 0u);
}

// The paper's example: 8 nodes under "even", 6 missing → shrink to 2.
TEST(PolicyPerfAware, ShrinksAnEvenJobOfEightToTwoWhenSixAreMissing) {
  PolicyTest t("perf_aware", 8);
  const JobId a = t.running(8, 2, 8, 0.5, NodeConstraint::Even);
  t.h.submit(luatest::rigid(6));
  EXPECT_THAT(t.pass(), ElementsAre(shrink(a, 8, 2)));
}

// 3 missing from an even job of 8: the next lower allowed size that frees
// enough is 4 (5 is odd; 2 would free more than needed).
TEST(PolicyPerfAware, ShrinksToTheNextLowerAllowedSizeThatCoversTheNeed) {
  PolicyTest t("perf_aware", 8);
  const JobId a = t.running(8, 2, 8, 0.5, NodeConstraint::Even);
  t.h.submit(luatest::rigid(3));
  EXPECT_THAT(t.pass(), ElementsAre(shrink(a, 8, 4)));
}

// 10 nodes, all busy; the head needs 7. Job 1 (even, 6 nodes, min 2) cannot
// free 7, so it frees what it can (6 → 2, 4 nodes); job 2 covers the other 3.
TEST(PolicyPerfAware, AVictimThatCannotCoverTheRestGivesAllItMay) {
  PolicyTest t("perf_aware", 10);
  const JobId a = t.running(6, 2, 6, 0.9, NodeConstraint::Even);
  const JobId b = t.running(4, 1, 4, 0.5);
  t.h.submit(luatest::rigid(7));
  EXPECT_THAT(t.pass(), ElementsAre(shrink(a, 6, 2), shrink(b, 4, 1)));
}

// 10 nodes, 2 idle; the head needs 9. Shrinking both jobs to their minimum
// frees 1 + 2 nodes, 4 short of the 7 missing: nothing is shrunk, the job
// behind the head stays behind it, and the idle nodes go to the job with
// the lowest MTCT (job 2: 4 → 6).
TEST(PolicyPerfAware, NeverShrinksWhenTheHeadStillWouldNotFitAndExpandsInstead) {
  PolicyTest t("perf_aware", 10);
  const JobId a = t.running(4, 3, 6, 0.9);
  const JobId b = t.running(4, 2, 8, 0.1);
  const JobId head = t.h.submit(luatest::rigid(9));
  const JobId small = t.h.submit(luatest::rigid(1));
  EXPECT_THAT(t.pass(), ElementsAre(expand(b, 4, 6)));
  EXPECT_EQ(t.h.job(a).state, JobState::Running);
  EXPECT_EQ(t.h.job(head).state, JobState::Pending);
  EXPECT_EQ(t.h.job(small).state, JobState::Pending);
}

// The head is started in the same pass as the shrink, on the nodes the
// shrink frees: it stays STARTING (a launch confirmation cannot make it
// RUNNING) and is launched only once the shrink completes.
TEST(PolicyPerfAware, TheHeadLaunchesOnceItsShrinkCompletes) {
  PolicyTest t("perf_aware", 8);
  const JobId a = t.running(8, 2, 8, 0.5, NodeConstraint::Even);
  const JobId head = t.h.submit(luatest::rigid(6));
  EXPECT_THAT(t.pass(), ElementsAre(shrink(a, 8, 2)));
  t.h.engine.job_started(head);
  EXPECT_EQ(t.h.job(head).state, JobState::Starting);

  t.h.engine.adaptation_done(a, true);
  EXPECT_THAT(t.h.enactor.calls, ElementsAre(shrink(a, 8, 2), start(head, 6)));
  t.h.engine.job_started(head);
  EXPECT_EQ(t.h.job(head).state, JobState::Running);
  EXPECT_EQ(t.h.job(head).size(), 6);
  EXPECT_EQ(t.h.job(a).size(), 2);
}

// 37 nodes, all busy; the head needs 8. Job 1 (even, min 2) can give only
// 6 (8 → 2); job 2 (ncube) covers the other 2 by going to the next lower
// cube, 8, which frees 19: 17 nodes are left once the head has its 8.
// Job 3, not shrunk, grows to its maximum 6. The shrunk jobs are not grown
// back in the same pass (job 1 could reach 10 on paper), so 13 stay idle.
// The head and job 3's expansion both wait for the shrinks' nodes.
TEST(PolicyPerfAware, NodesLeftAfterServingTheHeadGoToJobsThatWereNotShrunk) {
  PolicyTest t("perf_aware", 37);
  const JobId a = t.running(8, 2, 10, 0.9, NodeConstraint::Even);
  const JobId v = t.running(27, 1, 27, 0.5, NodeConstraint::Ncube);
  const JobId b = t.running(2, 1, 6, 0.1);
  const JobId head = t.h.submit(luatest::rigid(8));
  EXPECT_THAT(t.pass(), ElementsAre(shrink(a, 8, 2), shrink(v, 27, 8)));
  EXPECT_EQ(t.h.job(b).state, JobState::Adapting);
  EXPECT_EQ(t.refusals(), 0u);

  t.h.enactor.calls.clear();
  t.h.engine.adaptation_done(a, true);
  t.h.engine.adaptation_done(v, true);
  EXPECT_THAT(t.h.enactor.calls, UnorderedElementsAre(start(head, 8), expand(b, 2, 6)));
  EXPECT_EQ(t.h.engine.cluster().idle_count(), 13);
}

// ---------------------------------------------------------------- perf_aware: expanding

// 16 nodes, 10 idle, nothing waiting: job 2 (MTCT 0.1) grows first, to its
// maximum 8; job 3 (0.3) takes the 4 left; job 1 (0.5) gets nothing.
TEST(PolicyPerfAware, ExpandsInIncreasingMtctOrderToTheHighestSizeTheIdleNodesAllow) {
  PolicyTest t("perf_aware", 16);
  const JobId a = t.running(2, 1, 8, 0.5);
  const JobId b = t.running(2, 1, 8, 0.1);
  const JobId c = t.running(2, 1, 8, 0.3);
  EXPECT_THAT(t.pass(), ElementsAre(expand(b, 2, 8), expand(c, 2, 6)));
  EXPECT_EQ(t.h.job(a).state, JobState::Running);
}

// pof2 from 2 nodes with 3 idle: 4, not 5.
TEST(PolicyPerfAware, ExpandsAPowerOfTwoJobFromTwoToFourWithThreeIdle) {
  PolicyTest t("perf_aware", 5);
  const JobId a = t.running(2, 1, 8, 0.3, NodeConstraint::Pof2);
  EXPECT_THAT(t.pass(), ElementsAre(expand(a, 2, 4)));
}

// ---------------------------------------------------------------- perf_aware: gates

// 13 nodes. Job 2 grows 4 → 8 and is still adapting when a 1-node job and
// a head of 3 arrive: the 1-node job starts (priority order goes on), but
// job 1 is not shrunk for the head. Once the adaptation is done, it is.
TEST(PolicyPerfAware, DecidesNoResizeWhileAMalleableJobAdapts) {
  PolicyTest t("perf_aware", 13);
  const JobId a = t.running(4, 1, 4, 0.9);
  const JobId b = t.running(4, 1, 8, 0.1);
  ASSERT_THAT(t.pass(), ElementsAre(expand(b, 4, 8)));
  const JobId small = t.h.submit(luatest::rigid(1));
  const JobId head = t.h.submit(luatest::rigid(3));
  EXPECT_THAT(t.pass(), ElementsAre(start(small, 1)));
  EXPECT_EQ(t.h.job(head).state, JobState::Pending);

  t.h.engine.adaptation_done(b, true);
  // Job 2's MTCT was reset by its adaptation: it is asked for again.
  EXPECT_THAT(t.pass(), ElementsAre(shrink(a, 4, 1), perf(b)));
  EXPECT_EQ(t.h.job(head).state, JobState::Starting);
}

// As in Algorithm 1, data is asked for while another job adapts: it is
// there once resizing may go on.
TEST(PolicyPerfAware, AsksForMissingMtctWhileAnotherJobAdapts) {
  PolicyTest t("perf_aware", 9);
  const JobId a = t.running(4, 1, 8, 0.1);
  const JobId c = t.running(4, 1, 4);
  ASSERT_THAT(t.pass(), ElementsAre(expand(a, 4, 5), perf(c)));
  t.h.submit(luatest::rigid(2));
  EXPECT_THAT(t.pass(), ElementsAre(perf(c)));
}

// Job 1 has no MTCT yet: job 2, which has data, is shrunk first although
// its MTCT is low, and job 1's MTCT is asked for (after the decisions).
TEST(PolicyPerfAware, AsksForMissingMtctAndShrinksJobsWithDataFirst) {
  PolicyTest t("perf_aware", 8);
  const JobId a = t.running(4, 1, 4);
  const JobId b = t.running(4, 1, 4, 0.1);
  t.h.submit(luatest::rigid(3));
  EXPECT_THAT(t.pass(), ElementsAre(shrink(b, 4, 1), perf(a)));
}

// An adaptation resets the MTCT, so a value measured around it would be
// thrown away: a job resized in the pass is not asked, the others are.
TEST(PolicyPerfAware, AsksNoMtctOfAJobItResizesInThePass) {
  PolicyTest shrinking("perf_aware", 8);
  const JobId a = shrinking.running(4, 1, 4);
  const JobId b = shrinking.running(4, 1, 4);
  shrinking.h.submit(luatest::rigid(3));
  // Neither has data: the earlier started goes first.
  EXPECT_THAT(shrinking.pass(), ElementsAre(shrink(a, 4, 1), perf(b)));

  PolicyTest growing("perf_aware", 8);
  const JobId c = growing.running(2, 1, 8);
  EXPECT_THAT(growing.pass(), ElementsAre(expand(c, 2, 8)));
  EXPECT_EQ(growing.refusals(), 0u);
}

// While the queue moves and no node is idle there is nothing to decide, so
// nothing to measure for.
TEST(PolicyPerfAware, AsksForNoMtctWhenEveryWaitingJobStarts) {
  PolicyTest t("perf_aware", 4);
  t.running(2, 1, 2);
  const JobId next = t.h.submit(luatest::rigid(2));
  EXPECT_THAT(t.pass(), ElementsAre(start(next, 2)));
}

// Engine side of "MTCT values are reset after each adaptation": the value
// survives until the adaptation is done, then is gone, and the policy asks
// for it again when a head waits (here one that shrinking cannot serve).
TEST(PolicyPerfAware, AnAdaptationForgetsTheMtctAndThePolicyAsksAgain) {
  PolicyTest t("perf_aware", 8);
  const JobId a = t.running(4, 1, 8, 0.4);
  ASSERT_THAT(t.pass(), ElementsAre(expand(a, 4, 8)));
  ASSERT_TRUE(t.h.job(a).run->mtct);
  t.h.engine.adaptation_done(a, true);
  EXPECT_FALSE(t.h.job(a).run->mtct);

  t.h.submit(luatest::rigid(8));
  EXPECT_THAT(t.pass(), ElementsAre(perf(a)));
}

// The policy declares itself independent of the clock; that is sound only
// because fresh MTCT data asks for a pass by itself.
TEST(PolicyPerfAware, IsTimeIndependentAndAnMtctReportAsksForAPass) {
  PolicyTest t("perf_aware", 4);
  EXPECT_FALSE(t.h.policy->time_dependent());
  const JobId a = t.running(2, 1, 2);
  t.h.ok_pass();
  ASSERT_FALSE(t.h.engine.pass_due());
  t.h.engine.perf_report(a, 0.3);
  EXPECT_TRUE(t.h.engine.pass_due());
}

// 12 nodes, all busy: a rigid job, an evolving job that asks to shrink to 2,
// and a malleable job. Shrinking the malleable job frees 3 of the head's 5;
// the evolving job's own request would free the rest, but its size is the
// application's choice: nothing is shrunk, and nothing is tried.
TEST(PolicyPerfAware, NeverShrinksRigidOrEvolvingJobs) {
  PolicyTest t("perf_aware", 12);
  const JobId r = t.h.submit(luatest::rigid(4));
  JobSpec evolving = luatest::malleable(4, 2, 8);
  evolving.kind = JobKind::Evolving;
  const JobId e = t.h.submit(evolving);
  t.start_now({r, e});
  ASSERT_EQ(t.h.engine.resize_request(e, {ResizeRequest::Op::Shrink, 2}), Status());
  t.running(4, 1, 4, 0.1);
  t.h.submit(luatest::rigid(5));
  EXPECT_THAT(t.pass(), IsEmpty());
  EXPECT_EQ(t.refusals(), 0u);
}

// 20 nodes, 8 idle, nothing waiting: only the malleable job grows; the
// evolving job's request to grow and the rigid job are left alone, although
// 4 nodes stay idle.
TEST(PolicyPerfAware, NeverExpandsRigidOrEvolvingJobs) {
  PolicyTest t("perf_aware", 20);
  const JobId r = t.h.submit(luatest::rigid(4));
  JobSpec evolving = luatest::malleable(4, 1, 8);
  evolving.kind = JobKind::Evolving;
  const JobId e = t.h.submit(evolving);
  t.start_now({r, e});
  ASSERT_EQ(t.h.engine.resize_request(e, {ResizeRequest::Op::Expand, 8}), Status());
  const JobId m = t.running(4, 1, 8, 0.1);
  EXPECT_THAT(t.pass(), ElementsAre(expand(m, 4, 8)));
  EXPECT_EQ(t.h.job(e).state, JobState::Running);
  EXPECT_EQ(t.refusals(), 0u);
}

// expand_when_idle = false follows Algorithm 1 literally: idle nodes are
// handed out only when a head waits (and shrinking cannot serve it).
TEST(PolicyPerfAware, LiteralModeExpandsOnlyWhenAHeadWaits) {
  PolicyTest t("perf_aware", 8, {{"expand_when_idle", false}});
  const JobId a = t.running(2, 1, 8, 0.1);
  EXPECT_THAT(t.pass(), IsEmpty());
  t.h.submit(luatest::rigid(8));  // 6 idle; shrinking job 1 frees 1 of 2
  EXPECT_THAT(t.pass(), ElementsAre(expand(a, 2, 8)));
}

TEST(PolicyPerfAware, ByDefaultExpandsIntoIdleNodesWhenNothingWaits) {
  PolicyTest t("perf_aware", 8);
  const JobId a = t.running(2, 1, 8, 0.1);
  EXPECT_THAT(t.pass(), ElementsAre(expand(a, 2, 8)));
}

// A launch not yet confirmed: the job holds its nodes and shows in
// ctx.running as STARTING; it is neither grown nor asked for data (the
// engine would refuse both) until it runs.
TEST(PolicyPerfAware, LeavesAJobThatIsStillStartingAlone) {
  PolicyTest t("perf_aware", 8);
  const JobId a = t.h.submit(luatest::malleable(2, 1, 8));
  t.h.engine.set_policy(std::make_shared<StartThese>(std::vector<JobId>{a}));
  t.h.ok_pass();
  t.h.engine.set_policy(t.h.policy);
  ASSERT_EQ(t.h.job(a).state, JobState::Starting);
  EXPECT_THAT(t.pass(), IsEmpty());
  EXPECT_EQ(t.refusals(), 0u);
  t.h.confirm_starts();
  EXPECT_THAT(t.pass(), ElementsAre(expand(a, 2, 8)));
}

// ---------------------------------------------------------------- fpsma

// Jobs started in the order 3, 1, 2 (ids say nothing about it). The head
// needs 5: the most recently started, job 2, gives 3; then job 1 gives 2.
// Job 3 has the highest MTCT, which FPSMA ignores; it asks for no data.
TEST(PolicyFpsma, ShrinksTheMostRecentlyStartedJobsFirst) {
  PolicyTest t("fpsma", 12);
  const JobId a = t.h.submit(luatest::malleable(4, 1, 4));
  const JobId b = t.h.submit(luatest::malleable(4, 1, 4));
  const JobId c = t.h.submit(luatest::malleable(4, 1, 4));
  t.start_now({c});
  t.start_now({a});
  t.start_now({b});
  t.h.engine.perf_report(c, 0.9);
  t.h.submit(luatest::rigid(5));
  EXPECT_THAT(t.pass(), ElementsAre(shrink(b, 4, 1), shrink(a, 4, 2)));
}

// Same start order, 6 idle: the earliest started, job 3, grows first (to
// its maximum 6), then job 1 takes the 2 left.
TEST(PolicyFpsma, ExpandsTheEarliestStartedJobsFirst) {
  PolicyTest t("fpsma", 12);
  const JobId a = t.h.submit(luatest::malleable(2, 1, 6));
  const JobId b = t.h.submit(luatest::malleable(2, 1, 6));
  const JobId c = t.h.submit(luatest::malleable(2, 1, 6));
  t.start_now({c});
  t.start_now({a});
  t.start_now({b});
  EXPECT_THAT(t.pass(), ElementsAre(expand(c, 2, 6), expand(a, 2, 4)));
}

// Nothing to shrink enough and nothing idle: perf_aware would ask both jobs
// for MTCT; FPSMA does not need it.
TEST(PolicyFpsma, NeverAsksForPerformanceData) {
  PolicyTest t("fpsma", 8);
  t.running(4, 1, 4);
  t.running(4, 1, 4);
  t.h.submit(luatest::rigid(8));
  EXPECT_THAT(t.pass(), IsEmpty());
}

TEST(PolicyFpsma, DecidesNoResizeWhileAMalleableJobAdapts) {
  PolicyTest t("fpsma", 9);
  const JobId a = t.running(4, 1, 4);
  const JobId b = t.running(4, 1, 8);
  ASSERT_THAT(t.pass(), ElementsAre(expand(b, 4, 5)));
  const JobId head = t.h.submit(luatest::rigid(3));
  EXPECT_THAT(t.pass(), IsEmpty());
  t.h.engine.adaptation_done(b, true);
  EXPECT_THAT(t.pass(), ElementsAre(shrink(b, 5, 2)));
  EXPECT_EQ(t.h.job(head).state, JobState::Starting);
  EXPECT_EQ(t.h.job(a).size(), 4);
}

}  // namespace
}  // namespace sched
