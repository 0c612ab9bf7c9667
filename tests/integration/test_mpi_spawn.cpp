// MPI_Comm_spawn under `sched run --mpi=pmix` (issue 16 item 2) with
// Debian's Open MPI: a rank's spawn reaches its agent's PMIx server, schedd
// checks it and starts the children as a new step of the job on the nodes
// the "host" info key names; the two sides meet through published keys and
// PMIx_Connect across the agents, merge, and reduce. A spawn on a node
// outside the job is refused with its reason, and the job goes on; a cancel
// kills parents and children. Four agents run here as virtual nodes n1..n4.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "mpi_test.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;

class MpiSpawn : public MpiTest {
 protected:
  void SetUp() override {
    // Not a skip: install-deps.sh installs Open MPI.
    ASSERT_STRNE(SCHED_MPI_SPAWN_OPENMPI_BIN, "")
        << "mpicc.openmpi was not found at configure time: run scripts/install-deps.sh";
    job_name_ = "spawn";
    job_nodes_ = 4;
    app_ = SCHED_MPI_SPAWN_OPENMPI_BIN;
    start_nodes(4, 2);
  }

  // What the parents (ranks 0 and 1, one on each of the job's first two
  // nodes) and 4 children, 2 on each of n3 and n4, print once merged (and
  // sorted): 6 ranks, children after parents, sum 0..5.
  static void expect_merged_six(const std::string& out) {
    EXPECT_TRUE(
        std::regex_match(out, std::regex("child rank 2 merged 6 sum 15 node n3 parent 1\n"
                                         "child rank 3 merged 6 sum 15 node n3 parent 1\n"
                                         "child rank 4 merged 6 sum 15 node n4 parent 1\n"
                                         "child rank 5 merged 6 sum 15 node n4 parent 1\n"
                                         "parent rank 0 merged 6 sum 15 node n[1-4] parent 0\n"
                                         "parent rank 1 merged 6 sum 15 node n[1-4] parent 0\n"
                                         "status 0\n")))
        << out;
  }
};

TEST_F(MpiSpawn, ChildrenStartOnTheNamedNodesAndMergeWithTheirParents) {
  const std::string out =
      run_job("#!/bin/sh\n$SCHED run --mpi=pmix -n 2 $APP n3,n3,n4,n4 4 | sort\necho status $?\n");
  expect_merged_six(out);
}

TEST_F(MpiSpawn, HostCountsAsOpenMpiWritesThem) {
  const std::string out =
      run_job("#!/bin/sh\n$SCHED run --mpi=pmix -n 2 $APP n3:2,n4:2 4 | sort\necho status $?\n");
  expect_merged_six(out);
}

TEST_F(MpiSpawn, ANodeOutsideTheJobIsRefusedAndTheJobGoesOn) {
  job_nodes_ = 2;  // two of n1..n4: the other two are not the job's
  const auto id = submit(
      "#!/bin/sh\nfor n in $(echo $SCHED_JOB_NODELIST | tr , ' '); do echo $n; done > nodes\n"
      "outside=$(for n in n1 n2 n3 n4; do grep -qx $n nodes || echo $n; done | head -1)\n"
      "inside=$(head -1 nodes)\n"
      // One spawning rank: the error comes back from MPI_Comm_spawn.
      "$SCHED run --mpi=pmix -n 1 $APP $outside,$outside 2 2>&1\necho status $?\n"
      // Two: Open MPI 4.1 cannot tell the other rank, so the step fails.
      "$SCHED run --mpi=pmix -n 2 $APP $outside 1 >two 2>&1\necho status $?\n"
      "grep -c 'task [01] on n[1-4]: MPI step failed: MPI_Comm_spawn by rank 0 refused: host '"
      "$outside' is not a node' two\n"
      // The job goes on: a spawn on its own node works.
      "$SCHED run --mpi=pmix -n 2 $APP $inside,$inside 2 | grep -c 'merged 4 sum 6'\n"
      "echo status $?\n");
  EXPECT_TRUE(cluster_.wait_state(id, "COMPLETED", std::chrono::seconds(120))) << cluster_.logs();
  const std::string out = output(id);
  EXPECT_TRUE(std::regex_search(
      out, std::regex("sched: MPI_Comm_spawn refused: host n[1-4] is not a node of job [0-9]+ "
                      "\\(n[1-4],n[1-4]\\)\n")))
      << out << cluster_.logs();
  EXPECT_TRUE(std::regex_search(out, std::regex("spawn failed: MPI_ERR_SPAWN.*\nstatus 0\n")))
      << out;
  EXPECT_TRUE(std::regex_search(out, std::regex("status [1-9][0-9]*\n2\n4\nstatus 0\n$")))
      << out << cluster_.logs();
}

TEST_F(MpiSpawn, AChildThatDiesFailsItsStepAndItsParents) {
  const std::string out = run_job(
      "#!/bin/sh\n$SCHED run --mpi=pmix -n 2 $APP n3,n3,n4,n4 4 die 1 >/dev/null\necho status "
      "$?\n");
  EXPECT_TRUE(std::regex_search(out, std::regex("status [1-9][0-9]*\n$"))) << out;
  // The child's own end, and its siblings' and parents' failure, reach the
  // parents' `sched run`.
  EXPECT_TRUE(std::regex_search(out, std::regex("task 1 on n3: spawned step [0-9]+ rank 1: "
                                                "exited with status 7 before MPI_Finalize\n")))
      << out << cluster_.logs();
  EXPECT_TRUE(std::regex_search(
      out, std::regex("task 0 on n[1-4]: MPI step failed: spawn-connected step [0-9]+: rank 1 on "
                      "n3: exited with status 7 before MPI_Finalize\n")))
      << out << cluster_.logs();
}

TEST_F(MpiSpawn, CancelKillsParentsAndChildrenOnEveryNode) {
  const fs::path pids = fs::path(cluster_.work_dir()) / "pids";
  const auto id = submit("#!/bin/sh\n$SCHED run --mpi=pmix -n 2 $APP n3,n3,n4,n4 4 hang " +
                         pids.string() + "\n");
  std::vector<int> started;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (started.size() < 6 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    started.clear();
    std::istringstream lines(read_file(pids));
    for (int pid; lines >> pid;) started.push_back(pid);
  }
  ASSERT_EQ(started.size(), 6u) << cluster_.logs() << output(id);
  cluster_.client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{id});
  ASSERT_TRUE(cluster_.wait_state(id, "CANCELLED")) << cluster_.logs();
  const auto alive = [&] {
    int n = 0;
    for (int pid : started) n += ::kill(pid, 0) == 0 ? 1 : 0;
    return n;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (alive() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(alive(), 0) << cluster_.logs();
}

}  // namespace
}  // namespace sched::testing
