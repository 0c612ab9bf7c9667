#include "mpi_test.hpp"

#include <signal.h>

#include <filesystem>
#include <sstream>
#include <thread>
#include <vector>

#include "test_paths.hpp"

namespace sched::testing {

namespace fs = std::filesystem;

void MpiTest::start_nodes(int nodes, int cores) {
  for (int n = 1; n <= nodes; ++n) cluster_.start_agent("n" + std::to_string(n), cores);
  ASSERT_TRUE(cluster_.wait_nodes_up(nodes)) << cluster_.logs();
  fs::create_directories(cluster_.work_dir());
}

std::int64_t MpiTest::submit(const std::string& script) {
  proto::SubmitRequest request;
  request.job.name = job_name_;
  request.job.nodes = job_nodes_;
  if (job_tasks_ > 0) request.job.ntasks = job_tasks_;
  request.job.workdir = cluster_.work_dir();
  request.job.env = env_;
  request.job.env["SCHED"] = SCHED_CLI_BIN;
  request.job.env["APP"] = app_;
  request.job.script = script;
  return cluster_.client().call<proto::SubmitReply>(proto::type::kSubmit, request).id;
}

std::string MpiTest::output(std::int64_t id) { return read_file(cluster_.job(id).output); }

std::string MpiTest::run_job(const std::string& script, std::chrono::seconds timeout) {
  const auto id = submit(script);
  EXPECT_TRUE(cluster_.wait_state(id, "COMPLETED", timeout)) << cluster_.logs() << output(id);
  return output(id);
}

void MpiTest::expect_cancel_kills_every_rank(const std::string& mpi, int ranks) {
  const fs::path pids = fs::path(cluster_.work_dir()) / "pids";
  const auto id = submit("#!/bin/sh\n$SCHED run --mpi=" + mpi + " -n " + std::to_string(ranks) +
                         " $APP hang " + pids.string() + "\n");
  std::vector<int> started;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (static_cast<int>(started.size()) < ranks && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    started.clear();
    std::istringstream lines(read_file(pids));
    for (int pid; lines >> pid;) started.push_back(pid);
  }
  ASSERT_EQ(static_cast<int>(started.size()), ranks) << cluster_.logs() << output(id);
  cluster_.client().call<proto::Empty>(proto::type::kCancel, proto::JobRef{id});
  ASSERT_TRUE(cluster_.wait_state(id, "CANCELLED")) << cluster_.logs();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  const auto alive = [&] {
    int n = 0;
    for (int pid : started) n += ::kill(pid, 0) == 0 ? 1 : 0;
    return n;
  };
  while (alive() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(alive(), 0) << cluster_.logs();
}

}  // namespace sched::testing
