// MPI launch by `sched run --mpi` (issue 16 item 2) with Debian's MPICH: the
// agents serve each step's ranks PMI-1 over PMI_FD and fence through schedd,
// so an MPI program built with mpicc.mpich starts across the job's nodes
// without mpirun. A rank that aborts or dies fails the whole step with its
// reason; a cancel kills every rank. Agents are virtual nodes on this host.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "mpi_test.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;

class Mpi : public MpiTest {
 protected:
  void SetUp() override {
    // Not a skip: CI installs MPICH (scripts/install-deps.sh), and a build
    // without it must not pass these tests.
    ASSERT_STRNE(SCHED_MPI_RANKS_MPICH_BIN, "")
        << "mpicc.mpich was not found at configure time: run scripts/install-deps.sh";
    app_ = SCHED_MPI_RANKS_MPICH_BIN;
    start_nodes(2, 2);
  }
};

TEST_F(Mpi, Pmi2BlockRanksSeeTheStepReduceAndRunWherePlaced) {
  const std::string out =
      run_job("#!/bin/sh\n$SCHED run --mpi=pmi2 -n 4 $APP | sort -n\necho status $?\n");
  // Block: ranks 0 and 1 on the first node, 2 and 3 on the second.
  EXPECT_EQ(out,
            "rank 0 size 4 sum 6 node 0 procid 0\n"
            "rank 1 size 4 sum 6 node 0 procid 1\n"
            "rank 2 size 4 sum 6 node 1 procid 2\n"
            "rank 3 size 4 sum 6 node 1 procid 3\n"
            "status 0\n");
}

TEST_F(Mpi, Pmi1CyclicRanksSeeTheStepAndRunWherePlaced) {
  const std::string out =
      run_job("#!/bin/sh\n$SCHED run --mpi=pmi1 -n 4 -m cyclic $APP | sort -n\necho status $?\n");
  EXPECT_EQ(out,
            "rank 0 size 4 sum 6 node 0 procid 0\n"
            "rank 1 size 4 sum 6 node 1 procid 1\n"
            "rank 2 size 4 sum 6 node 0 procid 2\n"
            "rank 3 size 4 sum 6 node 1 procid 3\n"
            "status 0\n");
}

TEST_F(Mpi, ARankThatAbortsFailsTheStepWithItsReason) {
  const std::string out =
      run_job("#!/bin/sh\n$SCHED run --mpi=pmi2 -n 4 $APP abort 2 >/dev/null\necho status $?\n");
  EXPECT_EQ(out.find("status 0"), std::string::npos) << out;
  EXPECT_NE(out.find("status "), std::string::npos) << out;
  // MPICH's MPI_Abort says cmd=abort over PMI; every other rank is killed for it.
  // Block placement: tasks 0 and 1 on the job's first node, 2 and 3 on its
  // second (which of n1 and n2 comes first is the allocation's choice).
  std::smatch found;
  ASSERT_TRUE(std::regex_search(out, found, std::regex("task 2 on (n[12]): MPI step failed")))
      << out;
  const std::string second = found[1];
  const std::string first = second == "n1" ? "n2" : "n1";
  for (const std::string& task :
       {"task 0 on " + first, "task 1 on " + first, "task 3 on " + second}) {
    EXPECT_NE(out.find(task + ": MPI step failed: rank 2 on " + second +
                       ": rank 2 aborted with exit code 3"),
              std::string::npos)
        << task << "\n"
        << out;
  }
}

TEST_F(Mpi, ARankThatDiesFailsTheStep) {
  const std::string out =
      run_job("#!/bin/sh\n$SCHED run --mpi=pmi2 -n 4 $APP die 1 >/dev/null\necho status $?\n");
  EXPECT_EQ(out.find("status 0"), std::string::npos) << out;
  std::smatch found;
  ASSERT_TRUE(std::regex_search(
      out, found, std::regex("task 1 on (n[12]): exited with status 5 before MPI_Finalize")))
      << out;
  const std::string first = found[1];  // block placement: tasks 0 and 1
  const std::string second = first == "n1" ? "n2" : "n1";
  EXPECT_NE(out.find("task 3 on " + second + ": MPI step failed: rank 1 on " + first),
            std::string::npos)
      << out;
}

TEST_F(Mpi, CancelKillsEveryRankOnEveryNode) { expect_cancel_kills_every_rank("pmi2", 4); }

}  // namespace
}  // namespace sched::testing
