// Job arrays end to end (issue 18 item 1): a Slurm batch script with
// --array=0-19%4 and -o out-%A_%a.txt on a local cluster of more nodes than
// the throttle; cancel of one task and of the whole array; a 10,000-task
// array in one request, listed as one line, that outlives a schedd restart.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <utility>
#include <vector>

#include "cluster.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string describe(const CliRun& run) {
  return "status " + std::to_string(run.status) + "\nstdout:\n" + run.out + "stderr:\n" + run.err;
}

std::int64_t id_of(const CliRun& run) {
  std::int64_t id = 0;
  std::istringstream(run.out) >> id;
  return id;
}

// The lines of `text` that contain `part`.
int lines_with(const std::string& text, const std::string& part) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(part) != std::string::npos;
  return n;
}

TEST(JobArrays, AThrottledArrayWritesOneFilePerTaskAndNeverRunsMoreThanItsThrottle) {
  LocalCluster cluster;
  for (int n = 1; n <= 6; ++n) cluster.start_agent("n" + std::to_string(n));
  ASSERT_TRUE(cluster.wait_nodes_up(6)) << cluster.logs();
  const fs::path work = cluster.work_dir();
  fs::create_directories(work);
  {
    std::ofstream script(work / "array.sh");
    script << "#!/bin/sh\n"
              "#SBATCH --array=0-19%4\n"
              "#SBATCH -o out-%A_%a.txt\n"
              "echo \"task $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID count "
              "$SLURM_ARRAY_TASK_COUNT min $SLURM_ARRAY_TASK_MIN max $SLURM_ARRAY_TASK_MAX "
              "step $SLURM_ARRAY_TASK_STEP sched $SCHED_ARRAY_TASK_ID\"\n"
              "echo \"start $(date +%s%N)\"\n"
              "sleep 1\n"
              "echo \"end $(date +%s%N)\"\n";
  }
  const CliRun submitted = run_sched(
      cluster, {"submit", "--parsable", "-D", work.string(), (work / "array.sh").string()});
  ASSERT_EQ(submitted.status, 0) << describe(submitted);
  const std::int64_t a = id_of(submitted);
  ASSERT_GT(a, 0) << describe(submitted);

  // While most tasks wait: one line for them, squeue's way.
  const CliRun queue = run_sched(cluster, {"queue", "-h"});
  ASSERT_EQ(queue.status, 0) << describe(queue);
  EXPECT_EQ(lines_with(queue.out, std::to_string(a) + "_["), 1) << queue.out;
  EXPECT_NE(queue.out.find("%4]"), std::string::npos) << queue.out;
  const CliRun expanded = run_sched(cluster, {"queue", "-h", "-r"});
  EXPECT_GE(lines_with(expanded.out, std::to_string(a) + "_"), 12) << expanded.out;

  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(cluster.wait_state(a + i, "COMPLETED", 60s)) << i << "\n" << cluster.logs();
  }
  // Each task its file, with its index; (start, +1) and (end, -1) to count overlap.
  std::vector<std::pair<long long, int>> edges;
  const std::regex start_re("start (\\d+)"), end_re("end (\\d+)");
  for (int i = 0; i < 20; ++i) {
    const fs::path file = work / ("out-" + std::to_string(a) + "_" + std::to_string(i) + ".txt");
    ASSERT_TRUE(fs::exists(file)) << file;
    const std::string text = slurp(file);
    EXPECT_NE(text.find("task " + std::to_string(i) + " of " + std::to_string(a) +
                        " count 20 min 0 max 19 step 1 sched " + std::to_string(i)),
              std::string::npos)
        << text;
    std::smatch start, end;
    ASSERT_TRUE(std::regex_search(text, start, start_re)) << text;
    ASSERT_TRUE(std::regex_search(text, end, end_re)) << text;
    edges.emplace_back(std::stoll(start[1]), +1);
    edges.emplace_back(std::stoll(end[1]), -1);
  }
  std::sort(edges.begin(), edges.end());  // an end before a start at the same instant
  int running = 0, most = 0;
  for (const auto& [time, step] : edges) most = std::max(most, running += step);
  EXPECT_LE(most, 4) << "the throttle";
  EXPECT_GE(most, 2) << "tasks did run side by side (six nodes)";
  EXPECT_EQ(cluster.job(a + 7).array_task_id, 7);
  EXPECT_EQ(cluster.job(a + 7).array_job_id, a);

  const CliRun acct = run_sched(cluster, {"acct"});
  EXPECT_NE(acct.out.find(std::to_string(a) + "_19"), std::string::npos) << describe(acct);
}

// A step (`sched run`, srun) inside an array task sees the array as the
// task's batch script does.
TEST(JobArrays, AStepOfATaskSeesItsArray) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  cluster.start_agent("n2");
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  const fs::path work = cluster.work_dir();
  fs::create_directories(work);
  const CliRun submitted = run_sched(
      cluster, {"submit", "--parsable", "-D", work.string(), "--array=2-3", "-o", "step-%a.txt",
                "--env", std::string("SCHED=") + SCHED_CLI_BIN, "--wrap",
                "$SCHED run sh -c 'echo step $SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID'"});
  ASSERT_EQ(submitted.status, 0) << describe(submitted);
  const std::int64_t a = id_of(submitted);
  ASSERT_TRUE(cluster.wait_state(a, "COMPLETED")) << cluster.logs();
  ASSERT_TRUE(cluster.wait_state(a + 1, "COMPLETED")) << cluster.logs();
  EXPECT_EQ(slurp(work / "step-2.txt"), "step 2 of " + std::to_string(a) + "\n");
  EXPECT_EQ(slurp(work / "step-3.txt"), "step 3 of " + std::to_string(a) + "\n");
}

TEST(JobArrays, CancelOneTaskOrTheWholeArray) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  fs::create_directories(cluster.work_dir());
  const CliRun submitted = run_sched(cluster, {"submit", "--parsable", "-D", cluster.work_dir(),
                                               "--array=0-5:1%2", "--wrap", "sleep 30"});
  ASSERT_EQ(submitted.status, 0) << describe(submitted);
  const std::int64_t a = id_of(submitted);
  ASSERT_TRUE(cluster.wait_state(a, "RUNNING")) << cluster.logs();
  EXPECT_EQ(cluster.job(a + 2).reason, "JobArrayTaskLimit");

  const std::string a3 = std::to_string(a) + "_3";
  const CliRun show = run_sched(cluster, {"show", a3});
  ASSERT_EQ(show.status, 0) << describe(show);
  EXPECT_NE(show.out.find("JobId=" + std::to_string(a + 3)), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("ArrayJobId=" + std::to_string(a) + " ArrayTaskId=3"), std::string::npos)
      << show.out;

  const CliRun one = run_sched(cluster, {"cancel", a3});
  ASSERT_EQ(one.status, 0) << describe(one);
  ASSERT_TRUE(cluster.wait_state(a + 3, "CANCELLED")) << cluster.logs();
  EXPECT_EQ(cluster.job(a + 4).state, "PENDING") << "only that task";
  EXPECT_EQ(cluster.job(a).state, "RUNNING");

  const CliRun none = run_sched(cluster, {"cancel", std::to_string(a) + "_9"});
  EXPECT_EQ(none.status, 1) << describe(none);
  EXPECT_NE(none.err.find("no job " + std::to_string(a) + "_9"), std::string::npos) << none.err;

  const CliRun all = run_sched(cluster, {"cancel", std::to_string(a)});
  ASSERT_EQ(all.status, 0) << describe(all);
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(cluster.wait_state(a + i, "CANCELLED")) << i << "\n" << cluster.logs();
  }
}

TEST(JobArrays, TenThousandTasksGoInOneRequestListAsOneLineAndOutliveARestart) {
  LocalCluster cluster;
  cluster.start_agent("n1");
  ASSERT_TRUE(cluster.wait_nodes_up(1)) << cluster.logs();
  fs::create_directories(cluster.work_dir());
  // The submit's round trip is how long schedd spent on it (its loop does
  // nothing else meanwhile): a figure for bench/array/run.sh, not asserted.
  const auto t0 = std::chrono::steady_clock::now();
  const CliRun submitted =
      run_sched(cluster, {"submit", "--parsable", "--hold", "-D", cluster.work_dir(),
                          "--array=0-9999%5", "--wrap", "true"});
  const auto t1 = std::chrono::steady_clock::now();
  ASSERT_EQ(submitted.status, 0) << describe(submitted);
  RecordProperty("array_10k_submit_s",
                 std::to_string(std::chrono::duration<double>(t1 - t0).count()));
  const std::int64_t a = id_of(submitted);
  ASSERT_GT(a, 0);
  EXPECT_EQ(cluster.job(a + 9999).array_task_id, 9999);
  EXPECT_EQ(cluster.job(a + 9999).reason, "JobHeldUser");

  const std::string line = std::to_string(a) + "_[0-9999%5]";
  const auto q0 = std::chrono::steady_clock::now();
  const CliRun queue = run_sched(cluster, {"queue", "-h"});
  RecordProperty(
      "array_10k_queue_s",
      std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - q0).count()));
  ASSERT_EQ(queue.status, 0) << describe(queue);
  EXPECT_EQ(lines_with(queue.out, std::to_string(a)), 1) << queue.out.substr(0, 2000);
  EXPECT_EQ(lines_with(queue.out, line), 1) << queue.out.substr(0, 2000);

  cluster.kill_schedd(SIGKILL);
  cluster.start_schedd();
  const CliRun after = run_sched(cluster, {"queue", "-h"});
  EXPECT_EQ(lines_with(after.out, line), 1) << after.out.substr(0, 2000);
  // The throttle came back too: a released task past the first five waits for it.
  const CliRun release = run_sched(cluster, {"release", std::to_string(a) + "_7"});
  ASSERT_EQ(release.status, 0) << describe(release);
  EXPECT_EQ(cluster.job(a + 7).reason, "JobArrayTaskLimit");
  const CliRun release0 = run_sched(cluster, {"release", std::to_string(a) + "_0"});
  ASSERT_EQ(release0.status, 0) << describe(release0);
  EXPECT_TRUE(cluster.wait_state(a, "COMPLETED")) << cluster.logs();
}

}  // namespace
}  // namespace sched::testing
