// Slurm's command names end to end (issue 18 item 7): the links the build
// makes (sbatch, squeue, scontrol, scancel, sacct, sinfo, salloc, srun) run
// against a local cluster as a Slurm user would type them, with nothing but
// $SCHED_ENDPOINT to say where the cluster is.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cluster.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;

std::string describe(const CliRun& run) {
  return "status " + std::to_string(run.status) + "\nstdout:\n" + run.out + "stderr:\n" + run.err;
}

int count_of(const std::string& text, const std::string& part) {
  int n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

class SlurmCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.start_agent("n1");
    cluster_.start_agent("n2");
    ASSERT_TRUE(cluster_.wait_nodes_up(2)) << cluster_.logs();
    work_ = cluster_.work_dir();
    fs::create_directories(work_);
  }

  // `command args...` as a user's shell runs it: the links first on PATH,
  // in the work folder.
  CliRun slurm(const std::string& command, const std::vector<std::string>& args,
               std::chrono::seconds limit = std::chrono::seconds(20)) {
    TempDir dir("sched-slurm");
    const std::string err_path = dir.str() + "/stderr";
    const char* path = std::getenv("PATH");
    std::vector<std::string> argv = {
        "/usr/bin/env",
        "-C",
        work_.string(),
        "-u",
        "SCHED_JOB_ID",
        "-u",
        "SLURM_JOB_ID",
        "PATH=" + std::string(SCHED_SLURM_DIR) + ":" + (path ? path : "/usr/bin:/bin"),
        "SCHED_ENDPOINT=" + cluster_.client_endpoint(),
        command};
    argv.insert(argv.end(), args.begin(), args.end());
    Process process(argv, err_path);
    CliRun run;
    while (auto line = process.read_line(limit)) run.out += *line + "\n";
    if (const auto status = process.wait(limit); status && WIFEXITED(*status)) {
      run.status = WEXITSTATUS(*status);
    }
    std::ifstream err(err_path);
    std::stringstream text;
    text << err.rdbuf();
    run.err = text.str();
    return run;
  }

  std::int64_t sbatch(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"--parsable"};
    all.insert(all.end(), args.begin(), args.end());
    const CliRun run = slurm("sbatch", all);
    EXPECT_EQ(run.status, 0) << describe(run);
    std::int64_t id = 0;
    std::istringstream(run.out) >> id;
    EXPECT_GT(id, 0) << describe(run);
    return id;
  }

  LocalCluster cluster_;
  fs::path work_;
};

TEST_F(SlurmCommands, ABatchScriptThroughSbatchSqueueScontrolAndSacct) {
  {
    std::ofstream script(work_ / "job.sh");
    script << "#!/bin/sh\n"
              "#SBATCH -J habits\n"
              "#SBATCH -N 2\n"
              "#SBATCH -o out-%j.txt\n"
              "echo nodes=$SLURM_JOB_NUM_NODES arg=$1\n";
  }
  // -p: the job's partition since issue 20 (batch: the one there is here).
  const CliRun submitted = slurm("sbatch", {"-H", "-p", "batch", "job.sh", "first"});
  ASSERT_EQ(submitted.status, 0) << describe(submitted);
  std::int64_t id = 0;
  ASSERT_EQ(submitted.out.rfind("Submitted batch job ", 0), 0u) << describe(submitted);
  std::istringstream(submitted.out.substr(20)) >> id;
  ASSERT_GT(id, 0);
  EXPECT_EQ(submitted.err.find("ignored"), std::string::npos) << submitted.err;
  EXPECT_EQ(cluster_.job(id).partition.value_or(""), "batch");
  const std::string n = std::to_string(id);

  const CliRun queued = slurm("squeue", {"-h", "-o", "%i %j %t %R", "--me"});
  EXPECT_EQ(queued.status, 0) << describe(queued);
  EXPECT_EQ(queued.out, n + " habits PD (JobHeldUser)\n");

  const CliRun shown = slurm("scontrol", {"show", "job", n});
  EXPECT_EQ(shown.status, 0) << describe(shown);
  EXPECT_NE(shown.out.find("JobId=" + n + " JobName=habits"), std::string::npos) << shown.out;

  const CliRun released = slurm("scontrol", {"release", n});
  EXPECT_EQ(released.status, 0) << describe(released);
  ASSERT_TRUE(cluster_.wait_state(id, "COMPLETED")) << cluster_.logs();
  std::ifstream output(work_ / ("out-" + n + ".txt"));
  std::string line;
  std::getline(output, line);
  EXPECT_EQ(line, "nodes=2 arg=first");

  const CliRun accounted = slurm("sacct", {"-X", "-j", n});
  EXPECT_EQ(accounted.status, 0) << describe(accounted);
  EXPECT_NE(accounted.out.find("COMPLETED"), std::string::npos) << accounted.out;
  EXPECT_NE(accounted.out.find("habits"), std::string::npos) << accounted.out;

  const CliRun nodes = slurm("sinfo", {"-N"});
  EXPECT_EQ(nodes.status, 0) << describe(nodes);
  EXPECT_NE(nodes.out.find("n1"), std::string::npos) << nodes.out;
  EXPECT_NE(nodes.out.find("n2"), std::string::npos) << nodes.out;
}

TEST_F(SlurmCommands, ScancelByNameCancelsOnlyThoseJobs) {
  const auto a = sbatch({"-H", "-J", "sweep", "--wrap", "true"});
  const auto b = sbatch({"-H", "-J", "sweep", "--wrap", "true"});
  const auto keep = sbatch({"-H", "-J", "other", "--wrap", "true"});
  const CliRun cancelled = slurm("scancel", {"--me", "-n", "sweep"});
  EXPECT_EQ(cancelled.status, 0) << describe(cancelled);
  EXPECT_TRUE(cluster_.wait_state(a, "CANCELLED")) << cluster_.logs();
  EXPECT_TRUE(cluster_.wait_state(b, "CANCELLED")) << cluster_.logs();
  EXPECT_EQ(cluster_.job(keep).state, "PENDING");
  // A filter that matches nothing cancels nothing and is no error.
  const CliRun none = slurm("scancel", {"-n", "nothing-by-this-name"});
  EXPECT_EQ(none.status, 0) << describe(none);
  EXPECT_EQ(cluster_.job(keep).state, "PENDING");
  EXPECT_EQ(slurm("scancel", {std::to_string(keep)}).status, 0);
  EXPECT_TRUE(cluster_.wait_state(keep, "CANCELLED")) << cluster_.logs();
}

// salloc runs the command here with the allocation's variables; srun in it
// starts a step on the allocation's nodes; the allocation ends with it.
TEST_F(SlurmCommands, SallocRunsACommandWhoseSrunUsesTheAllocation) {
  const CliRun run = slurm("salloc",
                           {"-N", "2", "-J", "inter", "sh", "-c",
                            "echo job=$SLURM_JOB_ID nodes=$SLURM_NNODES; "
                            "srun sh -c 'echo task on node $SLURM_NODEID'; exit 3"},
                           std::chrono::seconds(40));
  EXPECT_EQ(run.status, 3) << describe(run);  // the command's status
  EXPECT_NE(run.err.find("salloc: Granted job allocation"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("salloc: Relinquishing job allocation"), std::string::npos) << run.err;
  EXPECT_EQ(count_of(run.out, "task on node 0\n"), 1) << describe(run);
  EXPECT_EQ(count_of(run.out, "task on node 1\n"), 1) << describe(run);
  const auto at = run.out.find("job=");
  ASSERT_NE(at, std::string::npos) << describe(run);
  std::int64_t id = 0;
  std::istringstream(run.out.substr(at + 4)) >> id;
  ASSERT_GT(id, 0) << describe(run);
  EXPECT_NE(run.out.find("nodes=2"), std::string::npos) << run.out;
  // Given back: the job ends and its nodes are free again.
  EXPECT_TRUE(cluster_.wait_state(id, "CANCELLED")) << cluster_.logs();
  EXPECT_EQ(cluster_.job(id).name, "inter");
  EXPECT_FALSE(fs::exists(work_ / ("sched-" + std::to_string(id) + ".out")))
      << "an allocation leaves no output file";
}

// srun outside a job makes an allocation for the command alone.
TEST_F(SlurmCommands, SrunOutsideAJobRunsTheCommandOnItsOwnAllocation) {
  const CliRun run = slurm("srun", {"-N", "2", "sh", "-c", "echo hello from $SLURM_NODEID"},
                           std::chrono::seconds(40));
  EXPECT_EQ(run.status, 0) << describe(run);
  EXPECT_EQ(count_of(run.out, "hello from 0\n"), 1) << describe(run);
  EXPECT_EQ(count_of(run.out, "hello from 1\n"), 1) << describe(run);
  // Nothing is left running or waiting once it is over (the job may still
  // be completing for a moment).
  CliRun left;
  for (int i = 0; i < 50; ++i) {
    left = slurm("squeue", {"-h"});
    if (left.status == 0 && left.out.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(left.status, 0) << describe(left);
  EXPECT_EQ(left.out, "") << left.out;
  // A failing command's status comes back.
  const CliRun failing = slurm("srun", {"false"}, std::chrono::seconds(40));
  EXPECT_EQ(failing.status, 1) << describe(failing);
}

}  // namespace
}  // namespace sched::testing
