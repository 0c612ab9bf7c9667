// The bundled policies (scripts/policies/fcfs.lua, easy_backfill.lua) in
// whole simulated runs on small crafted workloads, with the start times
// worked out by hand; and the metrics of a tiny run computed by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "sched/lua_policy.hpp"
#include "sched/sim/esp_workload.hpp"
#include "sched/sim/native_reader.hpp"
#include "sched/sim/simulator.hpp"
#include "test_paths.hpp"

namespace sched {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

struct SimRun {
  sim::SimResult result;
  std::map<JobId, double> start;      // job id → start time
  std::map<JobId, double> reserved;   // job id → last ctx:reserve time
  std::map<JobId, int> reservations;  // job id → number of JobReserved events
  std::map<JobId, int> start_size;    // job id → nodes at JobStarted
};

class ReserveLog : public EventSink {
 public:
  explicit ReserveLog(SimRun& run) : run_(run) {}
  void on_event(const Event& event) override {
    if (event.type == EventType::JobStarted) run_.start_size[event.job] = event.nodes;
    if (event.type != EventType::JobReserved) return;
    run_.reserved[event.job] = event.expected_start;
    ++run_.reservations[event.job];
  }

 private:
  SimRun& run_;
};

// Simulates a native workload under a bundled policy.
SimRun simulate(const std::string& policy, const std::string& workload_toml,
                const PolicyParams& params = {}) {
  const sim::Workload workload = sim::parse_native(workload_toml, "test.toml");
  sim::SimConfig config;
  config.tick_s = 60;
  sim::Simulator simulator(workload, config);
  LuaPolicyOptions options;
  options.params = params;
  simulator.set_policy(std::shared_ptr<Policy>(
      LuaPolicy::load(std::string(SCHED_SOURCE_POLICY_DIR) + "/" + policy + ".lua", options)));
  SimRun run;
  ReserveLog reserves(run);
  simulator.engine().add_sink(&reserves);
  run.result = simulator.run();
  for (const sim::JobRecord& job : run.result.jobs) run.start[job.id] = job.start;
  EXPECT_EQ(run.result.policy_errors, 0) << run.result.first_policy_error;
  return run;
}

// One [[job]] table of the native format.
std::string job(int id, double submit, double runtime, int nodes, double walltime) {
  return "[[job]]\nid = " + std::to_string(id) + "\nsubmit = " + std::to_string(submit) +
         "\nruntime = " + std::to_string(runtime) + "\nnodes = " + std::to_string(nodes) +
         "\nwalltime = " + std::to_string(walltime) + "\n\n";
}

// A moldable job of the native format: nodes = max_nodes, as `-N MIN-MAX`.
std::string moldable_job(int id, double submit, double runtime, int min_nodes, int max_nodes,
                         double walltime, const std::string& constraint = "none") {
  return "[[job]]\nid = " + std::to_string(id) + "\nsubmit = " + std::to_string(submit) +
         "\nruntime = " + std::to_string(runtime) +
         "\nkind = \"moldable\"\nnodes = " + std::to_string(max_nodes) +
         "\nmin_nodes = " + std::to_string(min_nodes) +
         "\nmax_nodes = " + std::to_string(max_nodes) + "\nwalltime = " + std::to_string(walltime) +
         "\nconstraint = \"" + constraint + "\"\n\n";
}

std::string cluster(int nodes) { return "[cluster]\nnodes = " + std::to_string(nodes) + "\n\n"; }

// ---------------------------------------------------------------- fcfs

// 4 nodes. Job 1 (2 nodes, 0–100) runs; job 2 wants all 4 and waits for it;
// job 3 (1 node) would fit at once, but FCFS keeps it behind job 2.
TEST(PolicyFcfs, BlocksBehindAHeadThatDoesNotFit) {
  const SimRun run = simulate(
      "fcfs", cluster(4) + job(1, 0, 100, 2, 100) + job(2, 1, 50, 4, 50) + job(3, 2, 10, 1, 10));
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 150)));
  EXPECT_EQ(run.result.metrics.jobs, 3);
}

TEST(PolicyFcfs, StartsInOrderWhileJobsFit) {
  const SimRun run = simulate("fcfs", cluster(4) + job(1, 0, 100, 1, 0) + job(2, 0, 100, 2, 0) +
                                          job(3, 0, 100, 1, 0) + job(4, 0, 100, 1, 0));
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 0), Pair(3, 0), Pair(4, 100)));
}

// ---------------------------------------------------------------- EASY

// 4 nodes. Job 1 holds 2 nodes until 100; head job 2 needs 4, so its
// shadow time is 100 with no extra nodes. Job 3 (2 nodes, walltime 40,
// submitted at 2) ends by 42 ≤ 100: backfilled at once.
TEST(PolicyEasyBackfill, BackfillsAShortJobThatEndsBeforeTheReservation) {
  const SimRun run = simulate("easy_backfill", cluster(4) + job(1, 0, 100, 2, 100) +
                                                   job(2, 1, 50, 4, 50) + job(3, 2, 30, 2, 40));
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 2)));
}

// Same, but job 3 runs 200 s: it would hold 2 of the head's 4 nodes past
// 100, and there are no extra nodes. It waits until the head is done.
TEST(PolicyEasyBackfill, DoesNotBackfillALongJobThatWouldDelayTheHead) {
  const SimRun run = simulate("easy_backfill", cluster(4) + job(1, 0, 100, 2, 100) +
                                                   job(2, 1, 50, 4, 50) + job(3, 2, 200, 2, 200));
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 150)));
}

// 6 nodes. Job 1 holds 4 until 100; head job 2 needs 3: at 100 there are 6
// free, 3 extra. Job 3 (2 nodes, 500 s) runs past the shadow time but fits
// in the extra nodes: backfilled at once, and the head still starts at 100.
// 4 nodes. Job 1 holds 2 until 100; head job 2 needs 4; job 3 (3 nodes)
// fits nowhere before the head; job 4 (2 nodes, 40 s) is third in the queue
// and would be backfilled at once. With max_job_test = 2 the backfill looks
// at jobs 2 and 3 only: job 4 waits until job 3 (150-160) is done; with 3 it
// is looked at again.
TEST(PolicyEasyBackfill, MaxJobTestLimitsHowDeepTheBackfillLooks) {
  const std::string workload = cluster(4) + job(1, 0, 100, 2, 100) + job(2, 1, 50, 4, 50) +
                               job(3, 2, 10, 3, 10) + job(4, 3, 30, 2, 40);
  EXPECT_THAT(simulate("easy_backfill", workload).start,
              ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 150), Pair(4, 3)));
  EXPECT_THAT(simulate("easy_backfill", workload, {{"max_job_test", 2LL}}).start,
              ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 150), Pair(4, 160)));
  EXPECT_THAT(simulate("easy_backfill", workload, {{"max_job_test", 3LL}}).start,
              ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 150), Pair(4, 3)));
}

TEST(PolicyEasyBackfill, AMaxJobTestThatIsNoPositiveIntegerFailsThePass) {
  const sim::Workload workload =
      sim::parse_native(cluster(4) + job(1, 0, 100, 2, 100) + job(2, 1, 50, 4, 50), "test.toml");
  sim::Simulator simulator(workload, sim::SimConfig{});
  LuaPolicyOptions options;
  options.params["max_job_test"] = 0LL;
  simulator.set_policy(std::shared_ptr<Policy>(
      LuaPolicy::load(std::string(SCHED_SOURCE_POLICY_DIR) + "/easy_backfill.lua", options)));
  const sim::SimResult result = simulator.run();
  EXPECT_GT(result.policy_errors, 0);
  EXPECT_THAT(result.first_policy_error,
              ::testing::HasSubstr("max_job_test must be a positive integer"));
}

TEST(PolicyEasyBackfill, BackfillsALongJobIntoTheExtraNodes) {
  const SimRun run = simulate("easy_backfill", cluster(6) + job(1, 0, 100, 4, 100) +
                                                   job(2, 1, 50, 3, 50) + job(3, 2, 500, 2, 500));
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 2)));
}

// 10 nodes. Jobs 1 and 2 (4 nodes each, walltime 100) run from 0; 2 nodes
// idle. The head job 3 needs 5: at its shadow time 100 both jobs end, all
// 10 nodes are free, so 5 are extra. Job 4 (2 nodes, 1000 s) runs far past
// 100 but fits in the extra nodes: backfilled at once. (Counting only the
// first of the two jobs that end at 100 would give 1 extra node, and job 4
// would wait.)
TEST(PolicyEasyBackfill, ExtraNodesCountEveryJobEndingAtTheShadowTime) {
  const SimRun run =
      simulate("easy_backfill", cluster(10) + job(1, 0, 100, 4, 100) + job(2, 0, 100, 4, 100) +
                                    job(3, 1, 50, 5, 50) + job(4, 2, 1000, 2, 1000));
  EXPECT_EQ(run.start.at(4), 2);
  EXPECT_EQ(run.start.at(3), 100);
  ASSERT_TRUE(run.reserved.count(3));
  EXPECT_DOUBLE_EQ(run.reserved.at(3), 100);
}

// 8 nodes. Jobs 1 (3 nodes, until 100) and 2 (3 nodes, until 200) run; the
// head job 3 needs 5: 2 idle + 3 at 100, so its shadow time is 100 with no
// extra. Job 4 (2 nodes, walltime 98 from t=2) ends exactly at the shadow
// time and is backfilled. The head is reserved for 100 and starts at 100.
TEST(PolicyEasyBackfill, TheReservedHeadStartsAtItsShadowTime) {
  const SimRun run = simulate("easy_backfill", cluster(8) + job(1, 0, 100, 3, 100) +
                                                   job(2, 0, 200, 3, 200) + job(3, 1, 50, 5, 50) +
                                                   job(4, 2, 90, 2, 98) + job(5, 3, 5, 1, 8));
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 0), Pair(3, 100), Pair(4, 2),
                                     // job 5: no idle node until job 4 ends at 92, and
                                     // 92 + 8 ≤ 100: backfilled then.
                                     Pair(5, 92)));
  ASSERT_TRUE(run.reserved.count(3));
  EXPECT_DOUBLE_EQ(run.reserved.at(3), 100);
  EXPECT_DOUBLE_EQ(run.reserved.at(3), run.start.at(3));
  // The reservation did not move while the head waited (no new events).
  EXPECT_EQ(run.reservations.at(3), 1);
}

// Walltime estimates decide, not runtimes: a job whose walltime is larger
// than the time to the shadow is not backfilled even if it would in fact
// end in time.
TEST(PolicyEasyBackfill, JudgesBackfillByWalltimeNotRuntime) {
  const SimRun run = simulate("easy_backfill", cluster(4) + job(1, 0, 100, 2, 100) +
                                                   job(2, 1, 50, 4, 50) + job(3, 2, 30, 2, 150));
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 150)));
}

// 6 nodes. Job 1 holds 4 until 100; head job 2 needs 5: at 100 there are 6
// free, 1 extra. Jobs without a walltime might run for ever: job 3 (2 nodes,
// in fact 5 s) does not fit in the 1 extra node and waits; job 4 (1 node)
// does and is backfilled.
TEST(PolicyEasyBackfill, AJobWithoutWalltimeOnlyGoesIntoExtraNodes) {
  const SimRun run =
      simulate("easy_backfill", cluster(6) + job(1, 0, 100, 4, 100) + job(2, 1, 50, 5, 50) +
                                    job(3, 2, 5, 2, 0) + job(4, 3, 500, 1, 0));
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 150), Pair(4, 3)));
}

// A running job without walltime never frees its nodes as far as EASY
// knows: while it holds what the head needs, the head gets no reservation
// and jobs that fit are backfilled. Once it ends, the head is reserved for
// the end of the backfilled job.
TEST(PolicyEasyBackfill, WithoutEstimatesTheHeadGetsNoReservation) {
  const SimRun run = simulate("easy_backfill", cluster(4) + job(1, 0, 100, 2, 0) +
                                                   job(2, 1, 50, 4, 50) + job(3, 2, 500, 2, 500));
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 502), Pair(3, 2)));
  ASSERT_TRUE(run.reserved.count(2));
  EXPECT_EQ(run.reservations.at(2), 1) << "reserved only once job 1 had ended";
  EXPECT_DOUBLE_EQ(run.reserved.at(2), 502);
}

TEST(PolicyEasyBackfill, BehavesLikeFcfsWhileEverythingFits) {
  const std::string workload = cluster(4) + job(1, 0, 100, 1, 100) + job(2, 5, 100, 2, 100) +
                               job(3, 10, 100, 1, 100) + job(4, 20, 10, 1, 10);
  const SimRun easy = simulate("easy_backfill", workload);
  const SimRun fcfs = simulate("fcfs", workload);
  EXPECT_THAT(easy.start, ElementsAre(Pair(1, 0), Pair(2, 5), Pair(3, 10), Pair(4, 100)));
  EXPECT_EQ(easy.start, fcfs.start);
}

// ---------------------------------------------------------------- slurm_backfill

// 4 nodes. Job 1 holds 2 until 100; head job 2 needs 4 (reserved at 100);
// job 3 (2 nodes, 30 s, submitted at 3) fits in the 2 idle nodes before 100.
// EASY starts it at once. slurm_backfill's main scheduler stops at job 2,
// and its backfill runs at most every 30 s: the next pass after 0 is the
// tick at 60, and by then 30 s planned as 60 (the resolution) no longer end
// by 100: job 3 waits for job 2 (100-150). With a 1 s resolution the tick
// starts it; with a 1 s interval too, the submission's pass does.
TEST(PolicySlurmBackfill, BackfillRunsOnItsIntervalAndPlansEndsAtItsResolution) {
  const std::string workload =
      cluster(4) + job(1, 0, 100, 2, 100) + job(2, 1, 50, 4, 50) + job(3, 3, 30, 2, 30);
  EXPECT_THAT(simulate("easy_backfill", workload).start,
              ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 3)));
  EXPECT_THAT(simulate("slurm_backfill", workload).start,
              ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 150)));
  EXPECT_THAT(simulate("slurm_backfill", workload, {{"bf_resolution", 1LL}}).start,
              ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 60)));
  EXPECT_THAT(
      simulate("slurm_backfill", workload, {{"bf_resolution", 1LL}, {"bf_interval", 1LL}}).start,
      ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 3)));
}

// 6 nodes. Job 1 holds 4 until 100; jobs 2 and 3 need 3 each for 100 s;
// job 4 (2 nodes, 1000 s) could start now. EASY protects the head only: job
// 4 takes 2 of the head's 3 spare nodes, and job 3 waits until 200.
// slurm_backfill plans every job it tests: jobs 2 and 3 both get 100, and
// job 4 waits for them.
TEST(PolicySlurmBackfill, EveryTestedJobIsProtectedNotOnlyTheHead) {
  const std::string workload = cluster(6) + job(1, 0, 100, 4, 100) + job(2, 1, 100, 3, 100) +
                               job(3, 2, 100, 3, 100) + job(4, 3, 1000, 2, 1000);
  EXPECT_THAT(simulate("easy_backfill", workload).start,
              ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 200), Pair(4, 3)));
  const SimRun run = simulate("slurm_backfill", workload);
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 100), Pair(4, 200)));
  EXPECT_DOUBLE_EQ(run.reserved.at(2), 100);
  EXPECT_DOUBLE_EQ(run.reserved.at(3), 100);
  EXPECT_EQ(run.reservations.at(4), 2);
  EXPECT_DOUBLE_EQ(run.reserved.at(4), 200)
      << "planned at 220 at the tick (100 s as 120), again at 100 from jobs 2 and 3's ends";
}

// The same queue with a 10 s window: at the tick (60) jobs 2 and 3 would
// start 40 s ahead, past the window, so they reserve nothing and job 4
// starts; job 3 then waits for job 2.
TEST(PolicySlurmBackfill, NoReservationBeyondTheWindow) {
  const std::string workload = cluster(6) + job(1, 0, 100, 4, 100) + job(2, 1, 100, 3, 100) +
                               job(3, 2, 100, 3, 100) + job(4, 3, 1000, 2, 1000);
  const SimRun run = simulate("slurm_backfill", workload, {{"bf_window", 10LL}});
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 200), Pair(4, 60)));
  EXPECT_EQ(run.reserved.count(2), 0u);
}

// The first test's queue, backfilling at every pass to the second: with
// bf_max_job_test = 1 the backfill tests the head only, and job 3 waits.
TEST(PolicySlurmBackfill, MaxJobTestBoundsTheJobsTested) {
  const std::string workload =
      cluster(4) + job(1, 0, 100, 2, 100) + job(2, 1, 50, 4, 50) + job(3, 3, 30, 2, 30);
  const PolicyParams eager = {{"bf_resolution", 1LL}, {"bf_interval", 1LL}};
  PolicyParams shallow = eager;
  shallow["bf_max_job_test"] = 1LL;
  EXPECT_THAT(simulate("slurm_backfill", workload, shallow).start,
              ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 150)));
  shallow["bf_max_job_test"] = 2LL;
  EXPECT_THAT(simulate("slurm_backfill", workload, shallow).start,
              ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 3)));
}

TEST(PolicySlurmBackfill, ABadParameterFailsThePassWithItsName) {
  const sim::Workload workload =
      sim::parse_native(cluster(4) + job(1, 0, 100, 2, 100), "test.toml");
  sim::Simulator simulator(workload, sim::SimConfig{});
  LuaPolicyOptions options;
  options.params["bf_interval"] = std::string("often");
  simulator.set_policy(std::shared_ptr<Policy>(
      LuaPolicy::load(std::string(SCHED_SOURCE_POLICY_DIR) + "/slurm_backfill.lua", options)));
  const sim::SimResult result = simulator.run();
  EXPECT_GT(result.policy_errors, 0);
  EXPECT_THAT(result.first_policy_error,
              ::testing::HasSubstr("bf_interval must be a positive number"));
}

// ---------------------------------------------------------------- moldable jobs

// 4 nodes; job 1 holds 2 until 100. Job 2 may run on 2 to 4 nodes: every
// bundled policy that starts jobs in order starts it at once on the 2 idle
// nodes (lib/moldable.lua) instead of waiting for 4.
TEST(PolicyMoldable, StartsAtTheLargestSizeThatFitsNow) {
  const std::string workload =
      cluster(4) + job(1, 0, 100, 2, 100) + moldable_job(2, 1, 50, 2, 4, 50);
  for (const char* policy :
       {"fcfs", "easy_backfill", "slurm_backfill", "perf_aware", "fpsma", "elastic"}) {
    const SimRun run = simulate(policy, workload);
    EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 1))) << policy;
    EXPECT_EQ(run.start_size.at(2), 2) << policy;
  }
  const SimRun easy = simulate("easy_backfill", workload);
  ASSERT_EQ(easy.result.jobs.size(), 2u);
  EXPECT_EQ(easy.result.jobs[1].nodes, 4) << "jobs.csv's nodes: the requested size";
  EXPECT_EQ(easy.result.jobs[1].start_nodes, 2);
  EXPECT_EQ(easy.result.jobs[1].end_nodes, 2);
  // With 3 idle and an even constraint it takes 2, the largest allowed.
  const SimRun even = simulate("easy_backfill", cluster(4) + job(1, 0, 100, 1, 100) +
                                                    moldable_job(2, 1, 50, 2, 4, 50, "even"));
  EXPECT_EQ(even.start_size.at(2), 2);
}

// 4 nodes; job 1 holds 3 until 100, so the moldable head (2-4 nodes) waits
// and reserves for its smallest size: 2 nodes at 100, 2 spare then. Job 3
// (1 node, 500 s) fits in those spare nodes and is backfilled at once.
TEST(PolicyMoldable, AWaitingMoldableHeadReservesForItsSmallestSize) {
  const SimRun run =
      simulate("easy_backfill", cluster(4) + job(1, 0, 100, 3, 100) +
                                    moldable_job(2, 1, 50, 2, 4, 50) + job(3, 2, 500, 1, 500));
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 2)));
  EXPECT_DOUBLE_EQ(run.reserved.at(2), 100);
  EXPECT_EQ(run.start_size.at(2), 3) << "at 100: 4 free minus job 3's 1";
}

// A moldable job behind the head is backfilled at a size that ends in time
// or fits the spare nodes: 6 nodes, job 1 holds 4 until 100, head job 2
// needs 5 (1 spare at 100); job 3 (1-2 nodes, 500 s) ends after 100, so it
// may only take the spare node: it starts at once on 1, not 2.
TEST(PolicyMoldable, BackfillsAMoldableJobIntoTheSpareNodesOnly) {
  const SimRun run =
      simulate("easy_backfill", cluster(6) + job(1, 0, 100, 4, 100) + job(2, 1, 50, 5, 50) +
                                    moldable_job(3, 2, 500, 1, 2, 500));
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 2)));
  EXPECT_EQ(run.start_size.at(3), 1);
}

// jobs.csv's sizes at start and at end agree with resizes.csv: on ESP with
// every job malleable, under perf_aware, a resized job's first resize starts
// from its start size and its last ends at its end size; the others keep
// their start size.
TEST(PolicyMoldable, JobRecordsKeepTheSizeAtStartAndAtEnd) {
  sim::EspOptions esp;
  esp.malleable_fraction = 1;
  const sim::Workload workload = sim::make_esp(esp);
  sim::Simulator simulator(workload, sim::SimConfig{});
  simulator.set_policy(std::shared_ptr<Policy>(LuaPolicy::load(
      std::string(SCHED_SOURCE_POLICY_DIR) + "/perf_aware.lua", LuaPolicyOptions{})));
  const sim::SimResult result = simulator.run();
  std::map<JobId, std::pair<int, int>> first_last;  // job → (first from, last to)
  for (const sim::ResizeRecord& r : result.resizes) {
    auto [it, inserted] = first_last.try_emplace(r.job, r.from, r.to);
    if (!inserted) it->second.second = r.to;
  }
  ASSERT_GT(first_last.size(), 10u) << "perf_aware resizes ESP's malleable jobs";
  for (const sim::JobRecord& job : result.jobs) {
    SCOPED_TRACE("job " + std::to_string(job.id));
    ASSERT_GT(job.start_nodes, 0);
    const auto it = first_last.find(job.id);
    if (it == first_last.end()) {
      EXPECT_EQ(job.end_nodes, job.start_nodes);
    } else {
      EXPECT_EQ(job.start_nodes, it->second.first);
      EXPECT_EQ(job.end_nodes, it->second.second);
    }
  }
}

// ---------------------------------------------------------------- metrics

// 2 nodes, fcfs.
//   id submit runtime nodes | start end | wait response bsld
//   1     0     100     2   |    0  100 |   0    100    max(1, 100/100) = 1
//   2    10       5     1   |  100  105 |  90     95    95/max(5, 10) = 9.5
//   3    20      50     1   |  100  150 |  80    130    130/50 = 2.6
// avg wait 170/3, avg response 325/3, avg bsld 13.1/3; makespan 150 − 0;
// utilization (200 + 5 + 50) / (150 × 2) = 0.85.
TEST(PolicyMetrics, TinyRunByHand) {
  const SimRun run = simulate(
      "fcfs", cluster(2) + job(1, 0, 100, 2, 0) + job(2, 10, 5, 1, 0) + job(3, 20, 50, 1, 0));
  EXPECT_THAT(run.start, ElementsAre(Pair(1, 0), Pair(2, 100), Pair(3, 100)));
  const sim::Metrics& m = run.result.metrics;
  EXPECT_EQ(m.jobs, 3);
  EXPECT_EQ(m.skipped, 0);
  EXPECT_EQ(m.nodes, 2);
  EXPECT_DOUBLE_EQ(m.avg_wait, 170.0 / 3);
  EXPECT_DOUBLE_EQ(m.avg_response, 325.0 / 3);
  EXPECT_DOUBLE_EQ(m.avg_bsld, (1 + 9.5 + 2.6) / 3);
  EXPECT_DOUBLE_EQ(m.makespan, 150);
  EXPECT_DOUBLE_EQ(m.utilization, 0.85);
  ASSERT_EQ(run.result.jobs.size(), 3u);
  EXPECT_DOUBLE_EQ(run.result.jobs[1].end, 105);
  EXPECT_EQ(run.result.jobs[1].state, JobState::Completed);
}

}  // namespace
}  // namespace sched
