// What the MPI tests share (issue 16): a local cluster of virtual nodes, a
// job that runs a script with $SCHED (the sched command) and $APP (the MPI
// program) in its environment, and the check that a cancel kills every rank.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>

#include "cluster.hpp"

namespace sched::testing {

class MpiTest : public ::testing::Test {
 protected:
  // Starts agents n1..n`nodes` of `cores` cores each and waits for them.
  void start_nodes(int nodes, int cores);

  // The job's shape and environment, set by each fixture's SetUp.
  std::string job_name_ = "mpi";
  int job_nodes_ = 2;
  int job_tasks_ = 0;  // 0: none given
  std::string app_;
  std::map<std::string, std::string> env_;

  std::int64_t submit(const std::string& script);
  // Runs the script as a job to completion; its output.
  std::string run_job(const std::string& script,
                      std::chrono::seconds timeout = std::chrono::seconds(90));
  std::string output(std::int64_t id);
  // A step of `ranks` ranks under `--mpi=mpi` that hang (the test program's
  // `hang PIDFILE`): cancelling the job kills every one of them, on every node.
  void expect_cancel_kills_every_rank(const std::string& mpi, int ranks);

  LocalCluster cluster_;
};

}  // namespace sched::testing
