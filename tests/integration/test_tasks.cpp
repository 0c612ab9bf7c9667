// Tasks end to end (issue 16 item 1): `sched run -n` starts one process per
// task with Slurm's and sched's task variables, laid out block or cyclic and
// pinned to cores with --cpu-bind=cores; a batch script's #SBATCH -n/-c size
// the job and its steps; bad task options submit nothing. Agents are virtual
// nodes of 2 cores on this host, so a task's core k is the host's core k.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cluster.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string describe(const CliRun& run) {
  return "status " + std::to_string(run.status) + "\nstdout:\n" + run.out + "stderr:\n" + run.err;
}

// The host's first two cores are CPUs 0 and 1 (two CPUs, one thread each):
// then a bound task's Cpus_allowed_list is exactly its core's number.
bool two_plain_cores() {
  return ::sysconf(_SC_NPROCESSORS_ONLN) == 2 &&
         slurp("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list") == "0\n";
}

class Tasks : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.start_agent("n1", 2);
    cluster_.start_agent("n2", 2);
    ASSERT_TRUE(cluster_.wait_nodes_up(2)) << cluster_.logs();
    fs::create_directories(cluster_.work_dir());
  }

  // Runs `script` as a rigid job of `nodes` nodes; its output once it completed.
  std::string run_job(const std::string& script, int nodes) {
    proto::SubmitRequest request;
    request.job.name = "tasks";
    request.job.nodes = nodes;
    request.job.workdir = cluster_.work_dir();
    request.job.env["SCHED"] = SCHED_CLI_BIN;
    request.job.script = script;
    const auto id = cluster_.client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
    EXPECT_TRUE(cluster_.wait_state(id, "COMPLETED"))
        << cluster_.logs() << slurp(cluster_.job(id).output);
    return slurp(cluster_.job(id).output);
  }

  LocalCluster cluster_;
};

// Each task prints: PROCID LOCALID NODEID NTASKS TASKS_PER_NODE NNODES.
constexpr const char* kTaskLine =
    "sh -c 'echo $SLURM_PROCID $SLURM_LOCALID $SLURM_NODEID $SLURM_NTASKS "
    "$SLURM_TASKS_PER_NODE $SLURM_NNODES $SCHED_PROCID'";

TEST_F(Tasks, BlockPlacesConsecutiveTasksOnANode) {
  const std::string out =
      run_job(std::string("#!/bin/sh\n$SCHED run -n 4 -N 2 ") + kTaskLine + " | sort -n\n", 2);
  EXPECT_EQ(out,
            "0 0 0 4 2(x2) 2 0\n"
            "1 1 0 4 2(x2) 2 1\n"
            "2 0 1 4 2(x2) 2 2\n"
            "3 1 1 4 2(x2) 2 3\n");
}

TEST_F(Tasks, CyclicDealsTasksRoundRobin) {
  const std::string out =
      run_job(std::string("#!/bin/sh\n$SCHED run -n 3 -m cyclic ") + kTaskLine + " | sort -n\n", 2);
  EXPECT_EQ(out,
            "0 0 0 3 2,1 2 0\n"
            "1 0 1 3 2,1 2 1\n"
            "2 1 0 3 2,1 2 2\n");
}

TEST_F(Tasks, CpuBindCoresPinsEachTaskToItsCore) {
  const std::string script =
      "#!/bin/sh\n"
      "$SCHED run -n 4 --cpu-bind=cores sh -c "
      "'echo $SLURM_PROCID $(grep Cpus_allowed_list /proc/self/status | cut -f2)' | sort -n\n"
      "echo unbound $(grep Cpus_allowed_list /proc/self/status | cut -f2)\n";
  const std::string out = run_job(script, 2);
  std::istringstream lines(out);
  std::vector<std::string> cpus(4);
  for (int task = 0; task < 4; ++task) {
    int id = -1;
    lines >> id >> cpus[static_cast<std::size_t>(task)];
    ASSERT_EQ(id, task) << out;
  }
  std::string word, unbound;
  lines >> word >> unbound;
  ASSERT_EQ(word, "unbound") << out;
  // Local tasks 0 and 1 of each node: cores 0 and 1 of the node.
  EXPECT_EQ(cpus[0], cpus[2]) << out;
  EXPECT_EQ(cpus[1], cpus[3]) << out;
  EXPECT_NE(cpus[0], cpus[1]) << out;
  EXPECT_NE(cpus[0], unbound) << "the batch script is not pinned\n" << out;
  if (two_plain_cores()) {
    EXPECT_EQ(cpus[0], "0") << out;
    EXPECT_EQ(cpus[1], "1") << out;
  }
}

TEST_F(Tasks, BatchScriptDirectivesSizeTheJobAndItsSteps) {
  const fs::path script = fs::path(cluster_.work_dir()) / "tasks.sh";
  std::ofstream(script) << "#!/bin/sh\n"
                           "#SBATCH -n 2 -c 1\n"
                           "echo $SLURM_NTASKS $SLURM_CPUS_PER_TASK $SLURM_TASKS_PER_NODE "
                           "$SLURM_JOB_NUM_NODES $SLURM_JOB_NODELIST\n"
                        << SCHED_CLI_BIN << " run sh -c 'echo task $SLURM_PROCID' | sort\n";
  const CliRun run =
      run_sched(cluster_, {"submit", "--parsable", "-D", cluster_.work_dir(), script.string()});
  ASSERT_EQ(run.status, 0) << describe(run);
  const std::int64_t id = std::stoll(run.out);
  ASSERT_TRUE(cluster_.wait_state(id, "COMPLETED")) << cluster_.logs();
  const auto info = cluster_.job(id);
  // 2 tasks of 1 cpu fit one node of 2 cores.
  EXPECT_EQ(info.nodelist.size(), 1u);
  EXPECT_EQ(info.ntasks, 2);
  EXPECT_EQ(slurp(info.output), "2 1 2 1 " + info.nodelist.front() + "\ntask 0\ntask 1\n");
  const CliRun show = run_sched(cluster_, {"show", std::to_string(id)});
  EXPECT_NE(show.out.find("NumTasks=2 CPUs/Task=1 Distribution=block CpuBind=none"),
            std::string::npos)
      << describe(show);

  // -n 3 needs a second node; -c 2 one node per task.
  const CliRun wide = run_sched(cluster_, {"submit", "--parsable", "-D", cluster_.work_dir(), "-n",
                                           "2", "-c", "2", "--wrap", "true"});
  ASSERT_EQ(wide.status, 0) << describe(wide);
  EXPECT_EQ(cluster_.job(std::stoll(wide.out)).req_nodes, 2);
}

TEST_F(Tasks, BadTaskOptionsSubmitNothing) {
  const auto submit = [&](const std::vector<std::string>& options) {
    std::vector<std::string> args = {"submit", "-D", cluster_.work_dir()};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"--wrap", "true"});
    return run_sched(cluster_, args);
  };
  const CliRun zero = submit({"-n", "0"});
  EXPECT_NE(zero.status, 0);
  EXPECT_NE(zero.err.find("--ntasks: '0' must be at least 1"), std::string::npos) << describe(zero);
  const CliRun many = submit({"-c", "1000"});
  EXPECT_NE(many.status, 0);
  EXPECT_NE(many.err.find("--cpus-per-task=1000 is more than the 2 cores of the cluster's nodes"),
            std::string::npos)
      << describe(many);
  const CliRun crowded = submit({"-N", "1", "-n", "3"});
  EXPECT_NE(crowded.status, 0);
  EXPECT_NE(crowded.err.find("3 tasks × 1 cpus on a node need 3 cores"), std::string::npos)
      << describe(crowded);
  const CliRun plane = submit({"-m", "plane"});
  EXPECT_NE(plane.status, 0);
  EXPECT_NE(plane.err.find("'plane' is not block or cyclic"), std::string::npos) << describe(plane);
  const CliRun queue = run_sched(cluster_, {"queue", "--json"});
  EXPECT_EQ(queue.out.find("\"id\""), std::string::npos) << "no job: " << queue.out;
}

TEST_F(Tasks, BadStepOptionsStartNothing) {
  const std::string out = run_job(
      "#!/bin/sh\n"
      "$SCHED run -n 1 -N 2 true 2>/dev/null; echo \"fewer $?\"\n"
      "$SCHED run --cpu-bind=sockets true 2>&1 | grep -c 'not none or cores'\n",
      2);
  EXPECT_EQ(out.substr(0, out.find('\n')), "fewer 1") << out;
  EXPECT_NE(out.find("\n1\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace sched::testing
