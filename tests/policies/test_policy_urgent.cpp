// lib/urgent.lua (issue 17 item 3) in the bundled policies: an urgent job
// that does not fit starts by shrinking malleable jobs first, then by
// suspending (or requeueing) the lowest-priority running jobs; suspended
// jobs resume on their own nodes once those are idle, before other starts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lua_test_support.hpp"
#include "sched/core_map.hpp"
#include "sched/lua_policy.hpp"
#include "test_paths.hpp"

namespace sched {
namespace {

using luatest::Harness;
using ::testing::ElementsAre;

std::string policy_file(const std::string& name) {
  return std::string(SCHED_SOURCE_POLICY_DIR) + "/" + name + ".lua";
}

std::string start(JobId id, int nodes) {
  return "start " + std::to_string(id) + " on " + std::to_string(nodes);
}
std::string shrink(JobId id, int from, int to) {
  return "shrink " + std::to_string(id) + " " + std::to_string(from) + "->" + std::to_string(to);
}
std::string suspend(JobId id) { return "suspend " + std::to_string(id); }
std::string resume(JobId id) { return "resume " + std::to_string(id); }
std::string stop(JobId id) { return "stop " + std::to_string(id); }

// Starts exactly the jobs it is given, at their requested size.
class StartThese : public Policy {
 public:
  explicit StartThese(std::vector<JobId> ids) : ids_(std::move(ids)) {}
  std::string name() const override { return "start_these"; }
  std::optional<PolicyFailure> schedule(PassContext& ctx) override {
    for (JobId id : ids_) {
      if (ctx.start(id)) {
        return PolicyFailure{PolicyFailureCode::Runtime, "cannot start job " + std::to_string(id),
                             "", 0};
      }
    }
    return std::nullopt;
  }

 private:
  std::vector<JobId> ids_;
};

class UrgentTest {
 public:
  UrgentTest(const std::string& policy, int nodes, PolicyParams params = {}) : h(nodes) {
    LuaPolicyOptions options = luatest::quick_options();
    options.params = std::move(params);
    h.use(policy_file(policy), options);
  }

  // Submits and starts a job now (confirmed), then lets 10 s pass.
  JobId running(JobSpec spec) {
    const JobId id = h.submit(std::move(spec));
    h.engine.set_policy(std::make_shared<StartThese>(std::vector<JobId>{id}));
    h.ok_pass();
    h.confirm_starts();
    h.engine.set_policy(h.policy);
    h.clock.advance(10);
    h.enactor.calls.clear();
    return id;
  }

  JobId urgent(int nodes) {
    JobSpec spec = luatest::rigid(nodes);
    spec.urgent = true;
    return h.submit(spec);
  }

  std::vector<std::string> pass() {
    h.enactor.calls.clear();
    h.ok_pass();
    return h.enactor.calls;
  }

  Harness h;
};

JobSpec with_nice(JobSpec spec, std::int64_t nice) {
  spec.nice = nice;
  return spec;
}

// ---------------------------------------------------------------- shrink first

TEST(PolicyUrgent, ShrinksAMalleableJobBeforeStoppingAnything) {
  UrgentTest t("easy_backfill", 6);
  const JobId rigid = t.running(luatest::rigid(2));
  const JobId m = t.running(luatest::malleable(4, 1, 4));
  const JobId u = t.urgent(2);
  EXPECT_THAT(t.pass(), ElementsAre(shrink(m, 4, 2)));
  EXPECT_EQ(t.h.job(u).state, JobState::Starting) << "it waits for the shrink's nodes";
  EXPECT_EQ(t.h.job(rigid).state, JobState::Running);
  // The shrink completes: the urgent job launches on its nodes.
  t.h.enactor.calls.clear();
  t.h.engine.adaptation_done(m, true);
  EXPECT_THAT(t.h.enactor.calls, ElementsAre(start(u, 2)));
}

TEST(PolicyUrgent, ShrinksRespectMinNodesAndConstraints) {
  UrgentTest t("perf_aware", 8);
  // pof2 from 4 can only go to 2 or 1; min 2 stops it at 2.
  const JobId m = t.running(luatest::malleable(4, 2, 4, NodeConstraint::Pof2));
  const JobId rigid = t.running(luatest::rigid(4));
  const JobId u = t.urgent(2);
  EXPECT_THAT(t.pass(), ElementsAre(shrink(m, 4, 2)));
  EXPECT_EQ(t.h.job(u).state, JobState::Starting);
  EXPECT_EQ(t.h.job(rigid).state, JobState::Running);
  EXPECT_EQ(t.h.engine.stats().refusals, 0u);
}

// ---------------------------------------------------------------- then suspend

TEST(PolicyUrgent, SuspendsTheLowestPriorityRigidJobAndStartsAtOnce) {
  UrgentTest t("easy_backfill", 4);
  // a started first but has the lower priority (a nice): it is the victim.
  const JobId a = t.running(with_nice(luatest::rigid(2), 100));
  const JobId b = t.running(luatest::rigid(2));
  ASSERT_LT(t.h.job(a).priority, t.h.job(b).priority);
  const JobId u = t.urgent(2);
  EXPECT_THAT(t.pass(), ElementsAre(suspend(a), start(u, 2)));
  EXPECT_EQ(t.h.job(a).state, JobState::Suspended);
  EXPECT_EQ(t.h.job(b).state, JobState::Running);
  EXPECT_EQ(t.h.job(u).state, JobState::Starting);
  t.h.confirm_starts();

  // Nothing resumes while its nodes are taken.
  EXPECT_THAT(t.pass(), ElementsAre());
  // The urgent job ends: the suspended job resumes before a waiting job starts.
  const JobId waiting = t.h.submit(luatest::rigid(2));
  t.h.enactor.calls.clear();
  t.h.engine.job_ended(u, 0);
  EXPECT_THAT(t.pass(), ElementsAre(resume(a)));
  EXPECT_EQ(t.h.job(a).state, JobState::Running);
  EXPECT_EQ(t.h.job(waiting).state, JobState::Pending);
}

TEST(PolicyUrgent, AmongEqualPrioritiesTheLatestStartedIsSuspended) {
  UrgentTest t("slurm_backfill", 4);
  const JobId a = t.running(luatest::rigid(2));
  const JobId b = t.running(luatest::rigid(2));
  const JobId u = t.urgent(1);
  EXPECT_THAT(t.pass(), ElementsAre(suspend(b), start(u, 1)));
  EXPECT_EQ(t.h.job(a).state, JobState::Running);
}

TEST(PolicyUrgent, ShrinksAndSuspendsTogetherWhenShrinkingIsNotEnough) {
  UrgentTest t("fpsma", 4);
  const JobId m = t.running(luatest::malleable(2, 1, 2));
  const JobId r = t.running(luatest::rigid(2));
  const JobId u = t.urgent(3);
  // m gives 1 node, r the 2 more.
  EXPECT_THAT(t.pass(), ElementsAre(shrink(m, 2, 1), suspend(r)));
  EXPECT_EQ(t.h.job(u).state, JobState::Starting);
  EXPECT_EQ(t.h.job(r).state, JobState::Suspended);
  t.h.enactor.calls.clear();
  t.h.engine.adaptation_done(m, true);
  EXPECT_THAT(t.h.enactor.calls, ElementsAre(start(u, 3)));
}

TEST(PolicyUrgent, RequeuesInsteadWhenTheParamsSaySo) {
  UrgentTest t("easy_backfill", 2, {{"urgent_preempt", std::string("requeue")}});
  const JobId r = t.running(luatest::rigid(2));
  const JobId u = t.urgent(2);
  EXPECT_THAT(t.pass(), ElementsAre(stop(r)));
  EXPECT_EQ(t.h.job(u).state, JobState::Starting);
  t.h.enactor.calls.clear();
  t.h.engine.job_ended(r, -9);
  EXPECT_EQ(t.h.job(r).state, JobState::Pending) << "requeued, its priority kept";
  EXPECT_EQ(t.h.job(r).run->requeues, 1);
  EXPECT_THAT(t.h.enactor.calls, ElementsAre(start(u, 2)));
}

TEST(PolicyUrgent, DoesNothingWhenEvenStoppingEveryOtherJobIsNotEnough) {
  UrgentTest t("elastic", 4);
  JobSpec first = luatest::rigid(2);
  first.urgent = true;
  const JobId running_urgent = t.running(first);  // never a victim
  const JobId r = t.running(luatest::rigid(2));
  const JobId u = t.urgent(4);
  EXPECT_THAT(t.pass(), ElementsAre());
  EXPECT_EQ(t.h.job(u).state, JobState::Pending);
  EXPECT_EQ(t.h.job(r).state, JobState::Running);
  EXPECT_EQ(t.h.job(running_urgent).state, JobState::Running);
}

TEST(PolicyUrgent, AnUrgentJobThatFitsJustStarts) {
  UrgentTest t("perf_aware", 4);
  const JobId r = t.running(luatest::rigid(2));
  const JobId u = t.urgent(2);
  const JobId plain = t.h.submit(luatest::rigid(1));
  EXPECT_THAT(t.pass(), ElementsAre(start(u, 2)));
  EXPECT_EQ(t.h.job(r).state, JobState::Running);
  EXPECT_EQ(t.h.job(plain).state, JobState::Pending);
  EXPECT_EQ(t.h.engine.stats().refusals, 0u) << "the policy does not start it a second time";
}

TEST(PolicyUrgent, EveryBundledPolicyButFcfsServesUrgentJobs) {
  for (const char* name : {"easy_backfill", "slurm_backfill", "perf_aware", "fpsma", "elastic"}) {
    SCOPED_TRACE(name);
    UrgentTest t(name, 4);
    const JobId r = t.running(luatest::rigid(4));
    const JobId behind = t.h.submit(luatest::rigid(1));
    const JobId u = t.urgent(2);
    EXPECT_THAT(t.pass(), ElementsAre(suspend(r), start(u, 2), start(behind, 1)))
        << "the rest of the queue goes on";
    EXPECT_EQ(t.h.engine.stats().refusals, 0u);
  }
  UrgentTest fcfs("fcfs", 4);
  const JobId r = fcfs.running(luatest::rigid(4));
  fcfs.urgent(2);
  EXPECT_THAT(fcfs.pass(), ElementsAre()) << "fcfs.lua stays self-contained: no preemption";
  EXPECT_EQ(fcfs.h.job(r).state, JobState::Running);
}

TEST(PolicyUrgent, ABadUrgentPreemptParamIsAnError) {
  UrgentTest t("easy_backfill", 2, {{"urgent_preempt", std::string("kill")}});
  t.h.submit(luatest::rigid(1));
  const auto error = t.h.pass();
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("urgent_preempt must be \"suspend\" or \"requeue\""), std::string::npos)
      << *error;
}

// ---------------------------------------------------------------- by cores

// An invasive partition (issue 20 item 2): one node of 4 cores, jobs by cores.
class UrgentCoresTest {
 public:
  UrgentCoresTest() : h(0) {
    h.engine.add_node("c01", 4);
    PartitionSpec inv;
    inv.name = "inv";
    inv.nodes = {"c01"};
    inv.kind = PartitionKind::Cores;
    inv.is_default = true;
    EXPECT_TRUE(h.engine.set_partitions({inv}).ok());
    h.use(policy_file("easy_backfill"));
  }
  JobId running(JobSpec spec) {
    const JobId id = h.submit(std::move(spec));
    h.engine.set_policy(std::make_shared<StartThese>(std::vector<JobId>{id}));
    h.ok_pass();
    h.confirm_starts();
    h.engine.set_policy(h.policy);
    h.clock.advance(10);
    h.enactor.calls.clear();
    return id;
  }
  std::vector<std::string> pass() {
    h.enactor.calls.clear();
    h.ok_pass();
    return h.enactor.calls;
  }
  Harness h;
};

JobSpec cores_spec(int cores, int min_cores = 0, int max_cores = 0, bool urgent = false) {
  JobSpec spec = luatest::rigid(1);
  spec.layout.edit().cores = cores;
  spec.urgent = urgent;
  if (min_cores > 0) {
    spec.kind = JobKind::Malleable;
    spec.layout.edit().min_cores = min_cores;
    spec.layout.edit().max_cores = max_cores;
  }
  return spec;
}

TEST(PolicyUrgent, InAnInvasivePartitionShrinksAMalleableJobByCoresThenStarts) {
  UrgentCoresTest t;
  const JobId m = t.running(cores_spec(4, 1, 4));
  const JobId u = t.h.submit(cores_spec(2, 0, 0, true));
  // 2 cores missing: the malleable job shrinks 4 -> 2 cores (on its one node).
  EXPECT_THAT(t.pass(), ElementsAre(shrink(m, 1, 1)));
  EXPECT_EQ(t.h.job(m).state, JobState::Adapting);
  EXPECT_EQ(t.h.job(u).state, JobState::Pending) << "its cores are free once the shrink is done";
  // While it adapts nothing more is shrunk or stopped.
  EXPECT_THAT(t.pass(), ElementsAre());
  t.h.engine.adaptation_done(m, true);
  EXPECT_EQ(core_count(t.h.job(m).run->cores), 2);
  EXPECT_THAT(t.pass(), ElementsAre(start(u, 1)));
  EXPECT_EQ(core_count(t.h.job(u).run->cores), 2);
}

TEST(PolicyUrgent, InAnInvasivePartitionSuspendsARigidJobAndItResumesOnItsCores) {
  UrgentCoresTest t;
  const JobId r = t.running(cores_spec(3));
  const CoreSet cores = t.h.job(r).run->cores;
  const JobId u = t.h.submit(cores_spec(2, 0, 0, true));
  EXPECT_THAT(t.pass(), ElementsAre(suspend(r), start(u, 1)));
  EXPECT_EQ(t.h.job(r).state, JobState::Suspended);
  t.h.confirm_starts();
  EXPECT_THAT(t.pass(), ElementsAre()) << "its cores are taken";
  t.h.engine.job_ended(u, 0);
  EXPECT_THAT(t.pass(), ElementsAre(resume(r)));
  EXPECT_EQ(t.h.job(r).run->cores, cores);
}

}  // namespace
}  // namespace sched
