// The job's MPI hostfiles and launcher variables (issue 16, mpirun inside a
// batch script): slots from the job's tasks, both formats, files the job can
// read, and a job's own setting of an MPI variable kept.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "sched/agent/mpi_hostfile.hpp"

namespace sched::agent {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string value(const EnvPairs& env, const std::string& name) {
  std::string found = "(absent)";
  int count = 0;
  for (const auto& [n, v] : env) {
    if (n == name) {
      found = v;
      ++count;
    }
  }
  return count > 1 ? "(twice)" : found;
}

proto::JobLaunch launch_of(std::vector<std::string> nodes, int tasks_per_node,
                           std::optional<int> ntasks, std::string distribution = "block") {
  proto::JobLaunch launch;
  launch.job = 7;
  launch.nodes = std::move(nodes);
  launch.tasks_per_node = tasks_per_node;
  launch.ntasks = ntasks;
  launch.distribution = distribution;
  return launch;
}

TEST(MpiHostfile, SlotsFollowTheJobsTasks) {
  EXPECT_EQ(job_slots(launch_of({"n1", "n2"}, 3, std::nullopt)), (std::vector<int>{3, 3}));
  // -n 7 over 3 nodes, block: 3 2 2 (SLURM_TASKS_PER_NODE's counts).
  EXPECT_EQ(job_slots(launch_of({"n3", "n1", "n2"}, 1, 7)), (std::vector<int>{3, 2, 2}));
  EXPECT_EQ(job_slots(launch_of({"n1", "n2"}, 1, 8, "cyclic")), (std::vector<int>{4, 4}));
}

TEST(MpiHostfile, BothFormatsKeepTheAllocationsOrder) {
  const std::vector<std::string> nodes = {"n2", "n1"};
  EXPECT_EQ(open_mpi_hostfile(nodes, {2, 1}), "n2 slots=2\nn1 slots=1\n");
  EXPECT_EQ(mpich_hostfile(nodes, {2, 1}), "n2:2\nn1:1\n");
}

TEST(MpiHostfile, FilesAreWrittenAndTheVariablesPointAtThem) {
  const fs::path dir = fs::temp_directory_path() / ("mpi_hostfile_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EnvPairs env = {{"HYDRA_LAUNCHER", "rsh"}, {"SCHED_HOSTFILE", "/forged"}};
  // -n 7 over n10 n2 n1: 3 2 2 in the allocation's order; the files sort
  // the nodes (n2 before n10), each with its own slots.
  add_mpi_hostfiles(dir.string(), launch_of({"n10", "n2", "n1"}, 1, 7), std::nullopt, env);
  EXPECT_EQ(slurp(dir / "hostfile"), "n1 slots=2\nn2 slots=2\nn10 slots=3\n");
  EXPECT_EQ(slurp(dir / "hostfile.mpich"), "n1:2\nn2:2\nn10:3\n");
  EXPECT_EQ(value(env, "SCHED_HOSTFILE"), (dir / "hostfile").string());
  EXPECT_EQ(value(env, "OMPI_MCA_orte_default_hostfile"), (dir / "hostfile").string());
  EXPECT_EQ(value(env, "SCHED_HOSTFILE_MPICH"), (dir / "hostfile.mpich").string());
  EXPECT_EQ(value(env, "HYDRA_HOST_FILE"), (dir / "hostfile.mpich").string());
  EXPECT_EQ(value(env, "OMPI_MCA_plm_rsh_agent"), "sched-mpi-agent");
  EXPECT_EQ(value(env, "HYDRA_LAUNCHER_EXEC"), "sched-mpi-agent");
  EXPECT_EQ(value(env, "OMPI_MCA_plm"), "rsh");
  EXPECT_EQ(value(env, "OMPI_MCA_rtc_hwloc_vmhole"), "none");
  // The job's own choice of launcher stays.
  EXPECT_EQ(value(env, "HYDRA_LAUNCHER"), "rsh");
  fs::remove_all(dir);
}

TEST(MpiHostfile, AnUnwritableDirectoryIsAnError) {
  EnvPairs env;
  EXPECT_THROW(
      add_mpi_hostfiles("/nonexistent/dir", launch_of({"n1"}, 1, std::nullopt), std::nullopt, env),
      std::runtime_error);
}

}  // namespace
}  // namespace sched::agent
