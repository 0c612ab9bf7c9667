// MPI launch by `sched run --mpi=pmix` (issue 16 item 2) with Debian's Open
// MPI: each agent hosts a PMIx server (libpmix) for the step's ranks on its
// node and the fences of MPI_Init and MPI_Finalize cross the nodes through
// schedd, so a program built with mpicc.openmpi starts across the job's
// nodes without mpirun. A rank that aborts or dies fails the step with its
// reason; a cancel kills every rank. Four agents run on this host as
// virtual nodes n1..n4 (the tests run as root: Open MPI's direct launch
// does not refuse root; only its mpirun does).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "mpi_test.hpp"
#include "test_paths.hpp"
#include "test_users.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;

class MpiPmix : public MpiTest {
 protected:
  void SetUp() override {
    // Not a skip: install-deps.sh installs Open MPI, and a build without it
    // must not pass these tests.
    ASSERT_STRNE(SCHED_MPI_RANKS_OPENMPI_BIN, "")
        << "mpicc.openmpi was not found at configure time: run scripts/install-deps.sh";
    job_name_ = "pmix";
    job_nodes_ = 4;
    app_ = SCHED_MPI_RANKS_OPENMPI_BIN;
    start_nodes(4, 2);
  }
};

TEST_F(MpiPmix, BlockRanksSeeTheStepReduceAndRunWherePlaced) {
  const std::string out =
      run_job("#!/bin/sh\n$SCHED run --mpi=pmix -n 8 $APP | sort -n\necho status $?\n");
  // Block: ranks 2k and 2k+1 on the job's node k. The allreduce of 0..7 is 28.
  std::string expected;
  for (int rank = 0; rank < 8; ++rank) {
    expected += "rank " + std::to_string(rank) + " size 8 sum 28 node " + std::to_string(rank / 2) +
                " procid " + std::to_string(rank) + "\n";
  }
  EXPECT_EQ(out, expected + "status 0\n") << cluster_.logs();
}

TEST_F(MpiPmix, CyclicRanksRunWherePlaced) {
  const std::string out =
      run_job("#!/bin/sh\n$SCHED run --mpi=pmix -n 8 -m cyclic $APP | sort -n\necho status $?\n");
  std::string expected;
  for (int rank = 0; rank < 8; ++rank) {
    expected += "rank " + std::to_string(rank) + " size 8 sum 28 node " + std::to_string(rank % 4) +
                " procid " + std::to_string(rank) + "\n";
  }
  EXPECT_EQ(out, expected + "status 0\n") << cluster_.logs();
}

TEST_F(MpiPmix, RanksOnTcpAloneReduceToo) {
  // What docs/user-guide.md offers should shared memory fail: TCP only.
  const std::string out = run_job(
      "#!/bin/sh\nOMPI_MCA_btl=self,tcp $SCHED run --mpi=pmix -n 8 $APP | grep -c 'size 8 sum "
      "28'\necho status $?\n");
  EXPECT_EQ(out, "8\nstatus 0\n") << cluster_.logs();
}

TEST_F(MpiPmix, TwoStepsOneAfterTheOtherEachStartAfresh) {
  // The agents' PMIx servers outlive a step: the second registers anew.
  const std::string out = run_job(
      "#!/bin/sh\n$SCHED run --mpi=pmix -n 4 $APP | sort -n\n"
      "$SCHED run --mpi=pmix -n 8 $APP | grep -c 'size 8 sum 28'\necho status $?\n");
  EXPECT_EQ(out,
            "rank 0 size 4 sum 6 node 0 procid 0\n"
            "rank 1 size 4 sum 6 node 1 procid 1\n"
            "rank 2 size 4 sum 6 node 2 procid 2\n"
            "rank 3 size 4 sum 6 node 3 procid 3\n"
            "8\nstatus 0\n")
      << cluster_.logs();
}

TEST_F(MpiPmix, AUsersRanksConnectToTheRootAgentsServer) {
  // The agents run as root and the ranks as alice: libpmix checks that a
  // client is the user its rank was registered as, and she must be able to
  // read what the server keeps for her namespace.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create alice and switch to her";
  const auto alice = ensure_user("alice");
  ASSERT_TRUE(alice) << "useradd alice failed";
  UserDir dir(*alice);
  proto::SubmitRequest request;
  request.job.name = "pmix-alice";
  request.job.user = "alice";
  request.job.nodes = 4;
  request.job.workdir = dir.path().string();
  request.job.env["SCHED"] = SCHED_CLI_BIN;
  request.job.env["APP"] = SCHED_MPI_RANKS_OPENMPI_BIN;
  request.job.script = "#!/bin/sh\n$SCHED run --mpi=pmix -n 8 $APP | grep -c 'size 8 sum 28'\n";
  const auto id = cluster_.client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
  const fs::path out = dir.path() / ("sched-" + std::to_string(id) + ".out");
  EXPECT_TRUE(cluster_.wait_state(id, "COMPLETED", std::chrono::seconds(90)))
      << cluster_.logs() << read_file(out);
  EXPECT_EQ(read_file(out), "8\n") << cluster_.logs();
}

TEST_F(MpiPmix, ARankThatAbortsFailsTheStepWithItsReason) {
  const std::string out =
      run_job("#!/bin/sh\n$SCHED run --mpi=pmix -n 8 $APP abort 2 >/dev/null\necho status $?\n");
  EXPECT_EQ(out.find("status 0"), std::string::npos) << out;
  EXPECT_NE(out.find("status "), std::string::npos) << out;
  // Open MPI's MPI_Abort calls PMIx_Abort; every other rank is killed for it.
  // Rank 2 itself exits once PMIx_Abort returns, before or after the step's
  // failure reaches its node: its own reason either way.
  std::smatch found;
  ASSERT_TRUE(std::regex_search(out, found,
                                std::regex("task 2 on (n[1-4]): (MPI step failed: rank 2 on "
                                           "n[1-4]: )?rank 2 aborted with exit code 3\n")))
      << out << cluster_.logs();
  const std::string node = found[1];
  EXPECT_NE(out.find("MPI step failed: rank 2 on " + node + ": rank 2 aborted with exit code 3\n"),
            std::string::npos)
      << out;
  for (int task : {0, 1, 3, 7}) {
    EXPECT_TRUE(std::regex_search(out, std::regex("task " + std::to_string(task) +
                                                  " on n[1-4]: MPI step failed: rank 2 on ")))
        << task << "\n"
        << out;
  }
}

TEST_F(MpiPmix, ARankThatDiesFailsTheStep) {
  const std::string out =
      run_job("#!/bin/sh\n$SCHED run --mpi=pmix -n 8 $APP die 1 >/dev/null\necho status $?\n");
  EXPECT_EQ(out.find("status 0"), std::string::npos) << out;
  std::smatch found;
  ASSERT_TRUE(std::regex_search(
      out, found, std::regex("task 1 on (n[1-4]): exited with status 5 before MPI_Finalize")))
      << out << cluster_.logs();
  const std::string node = found[1];
  EXPECT_TRUE(
      std::regex_search(out, std::regex("task 6 on n[1-4]: MPI step failed: rank 1 on " + node)))
      << out;
}

TEST_F(MpiPmix, CancelKillsEveryRankOnEveryNode) { expect_cancel_kills_every_rank("pmix", 8); }

// A site whose [jobs] mpi_default is "pmix": `sched run` without --mpi
// serves PMIx. (Under --mpi=none Open MPI sees Slurm's variables and no PMI,
// and refuses to start.)
TEST(MpiPmixDefault, TheSitesDefaultServesPmixWithoutMpi) {
  ASSERT_STRNE(SCHED_MPI_RANKS_OPENMPI_BIN, "");
  ClusterOptions options;
  options.mpi_default = "pmix";
  LocalCluster cluster(options);
  cluster.start_agent("n1", 2);
  cluster.start_agent("n2", 2);
  ASSERT_TRUE(cluster.wait_nodes_up(2)) << cluster.logs();
  fs::create_directories(cluster.work_dir());
  proto::SubmitRequest request;
  request.job.name = "pmix-default";
  request.job.nodes = 2;
  request.job.workdir = cluster.work_dir();
  request.job.env["SCHED"] = SCHED_CLI_BIN;
  request.job.env["APP"] = SCHED_MPI_RANKS_OPENMPI_BIN;
  request.job.script = "#!/bin/sh\n$SCHED run -n 4 $APP | sort -n\n";
  const auto id = cluster.client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
  EXPECT_TRUE(cluster.wait_state(id, "COMPLETED", std::chrono::seconds(60))) << cluster.logs();
  EXPECT_EQ(read_file(cluster.job(id).output),
            "rank 0 size 4 sum 6 node 0 procid 0\n"
            "rank 1 size 4 sum 6 node 0 procid 1\n"
            "rank 2 size 4 sum 6 node 1 procid 2\n"
            "rank 3 size 4 sum 6 node 1 procid 3\n")
      << cluster.logs();
}

}  // namespace
}  // namespace sched::testing
