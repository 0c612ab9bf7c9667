// MTCT of an MPI program that reports nothing itself (issue 16 item 3): the
// PMPI library (malleable/mpi/, preloaded) times its MPI calls and reports
// them through the agent, so the scheduler gets the job's communication over
// computation; without it, the same program gives the scheduler no MTCT.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "mpi_test.hpp"
#include "test_paths.hpp"

namespace sched::testing {
namespace {

class MpiMtct : public MpiTest {
 protected:
  void SetUp() override {
    // Not a skip: CI installs MPICH (scripts/install-deps.sh).
    ASSERT_STRNE(SCHED_MPI_WAITS_MPICH_BIN, "") << "mpicc.mpich was not found at configure time";
    ASSERT_STRNE(SCHED_MPI_MTCT_MPICH_LIB, "") << "MPICH's pkg-config file was not found";
    job_name_ = "waits";
    app_ = SCHED_MPI_WAITS_MPICH_BIN;
    env_["SCHED_MALL_MTCT_INTERVAL_S"] = "0.3";
    start_nodes(2, 1);
  }

  // 100 iterations of 20 ms on every rank plus 10 ms on rank 0 while rank 1
  // waits in MPI_Barrier: about 3 s. As with srun, the caller's environment,
  // LD_PRELOAD too, reaches the ranks.
  std::int64_t submit_waits(bool preload) {
    if (preload) env_["MTCT_LIB"] = SCHED_MPI_MTCT_MPICH_LIB;
    return submit("#!/bin/sh\nLD_PRELOAD=$MTCT_LIB $SCHED run --mpi=pmi2 -n 2 $APP 100 20 10\n");
  }
};

TEST_F(MpiMtct, ThePmpiLibraryGivesAProgramThatReportsNothingItsMtct) {
  const auto id = submit_waits(true);
  ASSERT_TRUE(cluster_.wait_state(id, "RUNNING")) << cluster_.logs();
  // Rank 1 waits at least 10 ms in MPI per 20 ms of computation, rank 0
  // computes 30 ms: the two ranks' sums give about 10/50 = 0.2 on an idle
  // machine. On a loaded one a rank waits longer for a descheduled peer
  // (0.66 was seen with the load average at 10), but communication and
  // computation swapped would give 5 or more. Under load the first figure
  // can come from a window that holds almost no waiting yet (0.0026 was
  // seen in a full ctest run), so the test waits for the job's figure to
  // reach the band and shows every figure it saw if it never does.
  std::vector<double> seen;
  const bool in_band = eventually(
      [&] {
        const std::optional<double> mtct = cluster_.job(id).mtct;
        if (!mtct) return false;
        if (seen.empty() || seen.back() != *mtct) seen.push_back(*mtct);
        return *mtct > 0.08 && *mtct < 2.0;
      },
      std::chrono::seconds(30));
  std::ostringstream figures;
  for (double v : seen) figures << v << ' ';
  EXPECT_TRUE(in_band) << "the MTCTs seen: " << figures.str() << "\n" << cluster_.logs();
  ASSERT_TRUE(cluster_.wait_state(id, "COMPLETED", std::chrono::seconds(60)))
      << cluster_.logs() << output(id);
  EXPECT_NE(output(id).find("rank 1 of 2: 100 iterations, sum 2"), std::string::npos) << output(id);
}

TEST_F(MpiMtct, WithoutItTheSameProgramGivesNoMtct) {
  const auto id = submit_waits(false);
  ASSERT_TRUE(cluster_.wait_state(id, "RUNNING")) << cluster_.logs();
  // Heartbeats carry new measurements every second here: 2 s would show one.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_FALSE(cluster_.job(id).mtct.has_value());
  ASSERT_TRUE(cluster_.wait_state(id, "COMPLETED", std::chrono::seconds(60)))
      << cluster_.logs() << output(id);
  EXPECT_NE(output(id).find("rank 0 of 2: 100 iterations, sum 2"), std::string::npos) << output(id);
}

}  // namespace
}  // namespace sched::testing
