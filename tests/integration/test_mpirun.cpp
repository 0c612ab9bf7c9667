// `mpirun` inside a batch script (issue 16 item 2): the job's hostfiles and
// sched-mpi-agent let Debian's Open MPI 4.1 (mpirun.openmpi) and MPICH 4.0
// (mpiexec.hydra) start their daemons on the job's nodes through sched's
// agents, no ssh. Agents are virtual nodes n1..n4 on this host.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "mpi_test.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;

class Mpirun : public MpiTest {
 protected:
  void SetUp() override {
    job_name_ = "mpirun";
    job_nodes_ = 4;
    job_tasks_ = 8;  // 2 slots a node
    start_nodes(4, 2);
  }

  // Runs `script` as a job of 4 nodes and 8 tasks; its output once it
  // completed.
  std::string run_job(const std::string& script, const std::string& app,
                      const std::map<std::string, std::string>& env) {
    app_ = app;
    env_ = env;
    // sched-mpi-agent is built beside sched; installed, both are on PATH.
    env_["PATH"] = fs::path(SCHED_CLI_BIN).parent_path().string() + ":/usr/bin:/bin";
    return MpiTest::run_job(script);
  }

  // Checks the 8 ranks' lines: size 8, the sum 0+…+7, and rank r on the
  // node of the hostfile's line r / 2 (each node has 2 slots; both MPIs fill
  // a node's slots before the next). `hosts` is the hostfile as the job saw it.
  static void expect_ranks_where_the_hostfile_says(const std::string& out,
                                                   const std::regex& host_line) {
    std::vector<std::string> hosts;
    std::istringstream lines(out);
    std::map<int, std::string> where;
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (std::regex_match(line, m, host_line)) {
        hosts.push_back(m[1]);
        EXPECT_EQ(m[2], "2") << line;
      } else if (std::regex_match(line, m, std::regex(R"(rank (\d+) size 8 sum 28 on (n\d))"))) {
        where[std::stoi(m[1])] = m[2];
      }
    }
    ASSERT_EQ(hosts.size(), 4u) << out;
    ASSERT_EQ(where.size(), 8u) << out;
    for (int rank = 0; rank < 8; ++rank) {
      EXPECT_EQ(where[rank], hosts[static_cast<std::size_t>(rank / 2)]) << "rank " << rank << "\n"
                                                                        << out;
    }
    EXPECT_NE(out.find("status 0"), std::string::npos) << out;
  }
};

TEST_F(Mpirun, OpenMpiMpirunRunsRanksOnTheJobsNodes) {
  ASSERT_STRNE(SCHED_MPI_WHERE_OPENMPI_BIN, "")
      << "mpicc.openmpi was not found at configure time: run scripts/install-deps.sh";
  const std::string out =
      run_job("#!/bin/sh\ncat \"$SCHED_HOSTFILE\"\nmpirun.openmpi -np 8 \"$APP\"\necho status $?\n",
              SCHED_MPI_WHERE_OPENMPI_BIN,
              {// The tests run as root, which Open MPI refuses unless told twice.
               {"OMPI_ALLOW_RUN_AS_ROOT", "1"},
               {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"},
               // Virtual nodes share one host: Open MPI's shared-memory transport
               // names its segments by the real host name, so ranks of different
               // virtual nodes would collide there (docs/user-guide.md "MPI").
               {"OMPI_MCA_btl", "self,tcp"},
               // PMIx's shared-memory store likewise (stray "PMIX ERROR" lines).
               {"PMIX_MCA_gds", "hash"}});
  expect_ranks_where_the_hostfile_says(out, std::regex(R"((n\d) slots=(\d+))"));
}

TEST_F(Mpirun, MpichHydraRunsRanksOnTheJobsNodes) {
  ASSERT_STRNE(SCHED_MPI_WHERE_MPICH_BIN, "")
      << "mpicc.mpich was not found at configure time: run scripts/install-deps.sh";
  const std::string out = run_job(
      "#!/bin/sh\ncat \"$SCHED_HOSTFILE_MPICH\"\nmpiexec.hydra -np 8 \"$APP\"\necho status $?\n",
      SCHED_MPI_WHERE_MPICH_BIN, {});
  expect_ranks_where_the_hostfile_says(out, std::regex(R"((n\d):(\d+))"));
}

TEST_F(Mpirun, TheAgentRefusesANodeOutsideTheJob) {
  const std::string out = run_job(
      "#!/bin/sh\nsched-mpi-agent -x n9 echo hello\necho status $?\n"
      "sched-mpi-agent n2 'echo on $SLURM_STEP_NODELIST; exit 3'\necho status $?\n",
      "", {});
  EXPECT_NE(out.find("n9 is not a node of job"), std::string::npos) << out;
  EXPECT_NE(out.find("status 1\n"), std::string::npos) << out;
  // The command runs on the node named, and its status comes back.
  EXPECT_NE(out.find("on n2\nstatus 3\n"), std::string::npos) << out;
}

// examples/mpi/heat_mpi.c (issue 16 item 4) computes the grid the malleable
// examples/heat/heat.c does: 8 MPI ranks over 4 nodes, once by
// `sched run --mpi=pmi2` and once by mpiexec.hydra, give one process's grid.
TEST_F(Mpirun, TheMpiHeatExampleGivesTheGridOfTheMalleableOne) {
  const fs::path examples = fs::path(SCHED_HEAT_BIN).parent_path();
  const std::string grid = " --nx 32 --ny 40 --iters 60 --out ";
  const std::string script = std::string("#!/bin/sh\n") + "$SCHED run -n 8 --mpi=pmi2 $APP" + grid +
                             "pmi.grid\n" + "mpiexec.hydra -np 8 $APP" + grid + "hydra.grid\n" +
                             "$SCHED run -N 1 -n 1 " + SCHED_HEAT_BIN + grid + "one.grid\n" +
                             "cmp pmi.grid one.grid && cmp hydra.grid one.grid && echo status $?\n";
  const std::string out =
      run_job(script, (examples / "heat_mpi_mpich").string(), {{"SCHED", SCHED_CLI_BIN}});
  EXPECT_NE(out.find("8 ranks"), std::string::npos) << out;
  EXPECT_NE(out.find("status 0"), std::string::npos) << out;
  EXPECT_GT(read_file(fs::path(cluster_.work_dir()) / "one.grid").size(), 1000u);
}

}  // namespace
}  // namespace sched::testing
