// A twin of the live system (sim/twin.hpp, issue 22 item 3): restored
// running jobs end at their limit minus the time they have run, waiting jobs
// start after them as the policy decides, arrivals replay the window.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sched/lua_policy.hpp"
#include "sched/sim/twin.hpp"
#include "test_paths.hpp"

namespace sched {
namespace {

std::shared_ptr<Policy> bundled(const std::string& name) {
  LuaPolicyOptions options;
  return LuaPolicy::load(std::string(SCHED_SOURCE_POLICY_DIR) + "/" + name + ".lua", options);
}

Job job(JobId id, int nodes, double walltime, double submit) {
  Job j;
  j.id = id;
  j.spec.name = "j" + std::to_string(id);
  j.spec.user = "alice";
  j.spec.nodes = nodes;
  j.spec.walltime = walltime;
  j.submit_time = submit;
  return j;
}

// At 1000: job 1 runs on n1, n2 since 800 (limit 600: 400 s left), job 2 on
// n3 since 900 (limit 300: 200 s left); n4 is idle. Job 3 (4 nodes, 100 s)
// and job 4 (1 node, 50 s) wait, in that order.
LiveSnapshot two_running_two_waiting() {
  LiveSnapshot s;
  s.now = 1000;
  for (const char* name : {"n1", "n2", "n3", "n4"}) s.nodes.push_back({name, 1, 0, true, false});
  Job one = job(1, 2, 600, 700);
  one.state = JobState::Running;
  one.start_time = 800;
  Job two = job(2, 1, 300, 850);
  two.state = JobState::Running;
  two.start_time = 900;
  s.running.push_back({one, {"n1", "n2"}});
  s.running.push_back({two, {"n3"}});
  s.pending.push_back(job(3, 4, 100, 950));
  s.pending.push_back(job(4, 1, 50, 960));
  return s;
}

TEST(Twin, RunningJobsEndAtTheirLimitAndWaitingOnesStartAfter) {
  const LiveSnapshot snapshot = two_running_two_waiting();
  sim::TwinOptions options;
  options.horizon_s = 1000;
  const sim::TwinResult result = sim::run_twin(snapshot, bundled("fcfs"), options);
  // Job 3 needs every node: it starts when job 1 ends, at 800 + 600.
  ASSERT_TRUE(result.predicted_start.count(3));
  EXPECT_DOUBLE_EQ(result.predicted_start.at(3), 1400);
  // FCFS: job 4 comes after job 3, although n4 is idle now.
  ASSERT_TRUE(result.predicted_start.count(4));
  EXPECT_DOUBLE_EQ(result.predicted_start.at(4), 1500);
  // The running jobs ended at limit − elapsed after now.
  std::map<JobId, double> end;
  for (const auto& record : result.sim.jobs) end[record.id] = record.end;
  EXPECT_DOUBLE_EQ(end.at(1), 1000 + 400);
  EXPECT_DOUBLE_EQ(end.at(2), 1000 + 200);
  EXPECT_DOUBLE_EQ(end.at(3), 1500);
  EXPECT_DOUBLE_EQ(end.at(4), 1550);

  const sim::TwinMetrics& m = result.metrics;
  EXPECT_EQ(m.finished, 4);
  EXPECT_EQ(m.waited, 2);
  EXPECT_EQ(m.still_waiting, 0);
  EXPECT_DOUBLE_EQ(m.mean_wait_s, (450.0 + 540.0) / 2);
  EXPECT_DOUBLE_EQ(m.max_wait_s, 540);
  // 2×400 + 1×200 + 4×100 + 1×50 node-seconds over 4 nodes × 1000 s.
  EXPECT_NEAR(m.utilization, 1450.0 / 4000, 1e-9);
  EXPECT_EQ(m.arrivals, 0);
  EXPECT_EQ(m.policy_errors, 0);
}

TEST(Twin, ABackfillingPolicyStartsTheSmallJobAtOnce) {
  const LiveSnapshot snapshot = two_running_two_waiting();
  sim::TwinOptions options;
  options.horizon_s = 1000;
  const sim::TwinResult result = sim::run_twin(snapshot, bundled("easy_backfill"), options);
  // n4 is idle and job 4 ends (at 1050) before job 3's reservation (1400).
  EXPECT_DOUBLE_EQ(result.predicted_start.at(4), 1000);
  EXPECT_DOUBLE_EQ(result.predicted_start.at(3), 1400);
  EXPECT_LT(result.metrics.mean_wait_s, 495);
}

TEST(Twin, TheHorizonCutsTheRun) {
  const LiveSnapshot snapshot = two_running_two_waiting();
  sim::TwinOptions options;
  options.horizon_s = 450;  // job 3 starts at 400 and ends after the horizon
  const sim::TwinResult result = sim::run_twin(snapshot, bundled("fcfs"), options);
  EXPECT_DOUBLE_EQ(result.predicted_start.at(3), 1400);
  EXPECT_FALSE(result.predicted_start.count(4));
  EXPECT_EQ(result.metrics.finished, 2);
  EXPECT_EQ(result.metrics.still_waiting, 1);
  EXPECT_DOUBLE_EQ(result.metrics.max_wait_s, 450 + 40);  // job 4, waiting since 960
  EXPECT_LE(result.sim.end_time, 1450);
}

TEST(Twin, ArrivalsReplayTheWindowShiftedForward) {
  LiveSnapshot snapshot = two_running_two_waiting();
  snapshot.arrival_window_s = 100;
  Job late = job(9, 1, 10, 950);
  late.spec.extra.edit().dependency = "afterok:3";
  snapshot.arrivals.push_back({9, 950, late.spec});
  const sim::Workload workload = sim::twin_workload(snapshot, 300);
  // Jobs 1-4 restored, then the arrival at 950 + 100 = 1050, 1150, 1250.
  ASSERT_EQ(workload.jobs.size(), 7u);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(workload.jobs[i].restored);
  EXPECT_DOUBLE_EQ(workload.jobs[0].runtime, 400);  // limit − elapsed
  EXPECT_DOUBLE_EQ(workload.jobs[1].runtime, 200);
  EXPECT_DOUBLE_EQ(workload.jobs[2].runtime, 100);  // waiting: its limit
  for (int i = 4; i < 7; ++i) {
    EXPECT_FALSE(workload.jobs[i].restored);
    EXPECT_DOUBLE_EQ(workload.jobs[i].submit, 1050 + 100 * (i - 4));
    EXPECT_EQ(workload.jobs[i].id, 10 + (i - 4));  // above every id seen
    EXPECT_TRUE(workload.jobs[i].spec.extra->dependency.empty());
  }
  sim::TwinOptions options;
  options.horizon_s = 300;
  const sim::TwinResult result = sim::run_twin(snapshot, bundled("easy_backfill"), options);
  EXPECT_EQ(result.metrics.arrivals, 3);
  // Each arrival fits on n4 at once (job 4 leaves it at 50).
  EXPECT_EQ(result.metrics.started, 1 + 3);
}

TEST(Twin, DownAndDrainingNodesAreNotUsed) {
  for (const bool down : {true, false}) {
    LiveSnapshot snapshot = two_running_two_waiting();
    snapshot.pending[0].spec.nodes = 3;  // job 3 fits on n1-n3
    if (down) {
      snapshot.nodes[3].up = false;  // n4
    } else {
      snapshot.nodes[3].draining = true;
    }
    sim::TwinOptions options;
    options.horizon_s = 1000;
    const sim::TwinResult result = sim::run_twin(snapshot, bundled("easy_backfill"), options);
    // Without n4, job 4 backfills on n3 when job 2 leaves it (at 200) and
    // ends before job 3's reservation at 400, when n1 and n2 are free.
    EXPECT_DOUBLE_EQ(result.predicted_start.at(4), 1200) << (down ? "down" : "draining");
    EXPECT_DOUBLE_EQ(result.predicted_start.at(3), 1400) << (down ? "down" : "draining");
  }
}

TEST(Twin, SnapshotPolicyFilesAreWrittenAndLoad) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sched-twin-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  LiveSnapshot snapshot;
  // easy_backfill.lua and the lib modules it requires, as schedd lists what
  // it loaded.
  for (const char* name :
       {"easy_backfill.lua", "lib/easy.lua", "lib/moldable.lua", "lib/urgent.lua"}) {
    std::ifstream in(std::string(SCHED_SOURCE_POLICY_DIR) + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    snapshot.policy_files.push_back({name, text.str()});
  }
  const std::string path = sim::write_snapshot_policy(snapshot, dir.string());
  EXPECT_EQ(path, (dir / "easy_backfill.lua").string());
  EXPECT_NO_THROW(LuaPolicy::load(path, LuaPolicyOptions{}));

  snapshot.policy_files.push_back({"../escape.lua", "return {}"});
  EXPECT_THROW(sim::write_snapshot_policy(snapshot, dir.string()), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(dir.parent_path() / "escape.lua"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sched
