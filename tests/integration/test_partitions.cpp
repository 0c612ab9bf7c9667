// Partitions (issue 20 item 1) on a local cluster: two partitions, each run
// by its own policy, with jobs in each running on their partition's nodes
// only; refusals at submit (unknown partition, over a limit, drained); the
// PARTITION columns of `sched queue`, `sched nodes`, `sched acct` and their
// Slurm front ends; `sched partition` and its state change with its event.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cluster.hpp"

namespace sched::testing {
namespace {

namespace fs = std::filesystem;

std::string describe(const CliRun& run) {
  return "status " + std::to_string(run.status) + "\nstdout:\n" + run.out + "stderr:\n" + run.err;
}

ClusterOptions two_partitions() {
  ClusterOptions options;
  options.policy = "fcfs";  // [scheduler]: runs nothing here, each partition has its own
  options.extra_config = R"(
[partitions.batch]
nodes = "n[1-2]"
policy = "easy_backfill"
default = true
max_time = "00:10:00"

[partitions.wide]
nodes = ["n3", "n4"]
policy = "fcfs"
max_nodes = 2
default_time = 5
)";
  return options;
}

class Partitions : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* node : {"n1", "n2", "n3", "n4"}) cluster_.start_agent(node);
    ASSERT_TRUE(cluster_.wait_nodes_up(4)) << cluster_.logs();
    work_ = cluster_.work_dir();
    fs::create_directories(work_);
  }

  CliRun submit(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"submit",       "--parsable", "-D",
                                    work_.string(), "-o",         "out-%j.txt"};
    all.insert(all.end(), args.begin(), args.end());
    return run_sched(cluster_, all);
  }

  std::int64_t submitted(const std::vector<std::string>& args) {
    const CliRun run = submit(args);
    EXPECT_EQ(run.status, 0) << describe(run);
    std::int64_t id = 0;
    std::istringstream(run.out) >> id;
    return id;
  }

  std::vector<std::string> nodes_of(std::int64_t id) {
    std::vector<std::string> nodes = cluster_.job(id).nodelist;
    std::sort(nodes.begin(), nodes.end());
    return nodes;
  }

  LocalCluster cluster_{two_partitions()};
  fs::path work_;
};

TEST_F(Partitions, JobsRunInTheirPartitionOnItsNodes) {
  // Two jobs per partition that each take all of it: they run one after the
  // other in their own partition, never on the other's nodes.
  const std::int64_t b1 = submitted({"-N", "2", "--wrap", "sleep 1; echo $SLURM_JOB_NODELIST"});
  const std::int64_t w1 = submitted({"-p", "wide", "-N", "2", "--wrap", "sleep 1"});
  const std::int64_t b2 = submitted({"--partition=batch", "-N", "2", "--wrap", "true"});
  const std::int64_t w2 = submitted({"-p", "wide", "-N", "1", "--wrap", "true"});
  for (std::int64_t id : {b1, w1, b2, w2}) {
    EXPECT_TRUE(cluster_.wait_state(id, "COMPLETED")) << id << "\n" << cluster_.logs();
  }
  EXPECT_EQ(nodes_of(b1), (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(nodes_of(b2), (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(nodes_of(w1), (std::vector<std::string>{"n3", "n4"}));
  const auto w2_nodes = nodes_of(w2);
  ASSERT_EQ(w2_nodes.size(), 1u);
  EXPECT_TRUE(w2_nodes[0] == "n3" || w2_nodes[0] == "n4") << w2_nodes[0];
  EXPECT_EQ(cluster_.job(b1).partition.value_or(""), "batch");
  EXPECT_EQ(cluster_.job(w1).partition.value_or(""), "wide");
  // wide's default time limit (5 minutes) went to a job without -t.
  EXPECT_EQ(cluster_.job(w1).walltime, 300);
  std::ifstream out(work_ / ("out-" + std::to_string(b1) + ".txt"));
  std::stringstream text;
  text << out.rdbuf();
  EXPECT_EQ(text.str(), "n[1-2]\n");

  const CliRun shown = run_sched(cluster_, {"show", std::to_string(w1)});
  EXPECT_NE(shown.out.find("Partition=wide"), std::string::npos) << shown.out;
  const CliRun acct = run_sched(cluster_, {"acct", "-r", "wide"});
  EXPECT_EQ(acct.status, 0) << describe(acct);
  EXPECT_NE(acct.out.find("Partition"), std::string::npos) << acct.out;
  // Lines start with the JobID.
  const auto listed = [&](std::int64_t id) {
    return acct.out.find("\n" + std::to_string(id) + " ") != std::string::npos;
  };
  EXPECT_TRUE(listed(w1)) << acct.out;
  EXPECT_TRUE(listed(w2)) << acct.out;
  EXPECT_FALSE(listed(b1)) << acct.out;
  EXPECT_FALSE(listed(b2)) << acct.out;
}

TEST_F(Partitions, SubmissionsOutsideThePartitionsRulesAreRefused) {
  const CliRun unknown = submit({"-p", "gpu", "--wrap", "true"});
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.err.find("invalid partition specified: gpu (partitions: batch, wide)"),
            std::string::npos)
      << describe(unknown);
  const CliRun too_long = submit({"-t", "20", "--wrap", "true"});
  EXPECT_NE(too_long.status, 0);
  EXPECT_NE(too_long.err.find("over partition batch's max_time 00:10:00"), std::string::npos)
      << describe(too_long);
  const CliRun too_wide = submit({"-p", "wide", "-N", "3", "--wrap", "true"});
  EXPECT_NE(too_wide.status, 0);
  EXPECT_NE(too_wide.err.find("max_nodes is 2"), std::string::npos) << describe(too_wide);
  // #SBATCH -p in a script.
  const fs::path script = work_ / "job.sh";
  std::ofstream(script) << "#!/bin/sh\n#SBATCH -p wide\ntrue\n";
  const std::int64_t id = submitted({script.string()});
  EXPECT_TRUE(cluster_.wait_state(id, "COMPLETED")) << cluster_.logs();
  EXPECT_EQ(cluster_.job(id).partition.value_or(""), "wide");
}

TEST_F(Partitions, ListingsShowPartitionsAndAnAdminDrainsOne) {
  const CliRun list = run_sched(cluster_, {"partition"});
  ASSERT_EQ(list.status, 0) << describe(list);
  EXPECT_NE(list.out.find("batch*"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("easy_backfill"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("n[3-4]"), std::string::npos) << list.out;
  const CliRun one = run_sched(cluster_, {"partition", "-p", "wide"});
  ASSERT_EQ(one.status, 0) << describe(one);
  EXPECT_NE(one.out.find("wide"), std::string::npos) << one.out;
  EXPECT_EQ(one.out.find("batch"), std::string::npos) << one.out;
  const CliRun unknown = run_sched(cluster_, {"partition", "-p", "nosuch"});
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.err.find("no partition named nosuch"), std::string::npos) << describe(unknown);

  const CliRun nodes = run_sched(cluster_, {"nodes", "-N"});
  ASSERT_EQ(nodes.status, 0) << describe(nodes);
  EXPECT_NE(nodes.out.find("PARTITION"), std::string::npos) << nodes.out;
  const CliRun wide_nodes = run_sched(cluster_, {"nodes", "-N", "-p", "wide"});
  EXPECT_EQ(wide_nodes.out.find("n1 "), std::string::npos) << wide_nodes.out;
  EXPECT_NE(wide_nodes.out.find("n3 "), std::string::npos) << wide_nodes.out;

  // A job that waits (wide is full) shows in wide's queue with its partition.
  const std::int64_t holder = submitted({"-p", "wide", "-N", "2", "--wrap", "sleep 30"});
  ASSERT_TRUE(cluster_.wait_state(holder, "RUNNING")) << cluster_.logs();
  const std::int64_t waiting = submitted({"-p", "wide", "--wrap", "true"});
  const CliRun queue = run_sched(cluster_, {"queue", "-p", "wide"});
  ASSERT_EQ(queue.status, 0) << describe(queue);
  EXPECT_NE(queue.out.find("PARTITION"), std::string::npos) << queue.out;
  EXPECT_NE(queue.out.find(std::to_string(waiting)), std::string::npos) << queue.out;
  const CliRun format = run_sched(cluster_, {"queue", "-h", "-o", "%i %P"});
  EXPECT_NE(format.out.find(std::to_string(waiting) + " wide"), std::string::npos) << format.out;

  // Drained: wide takes no new job, but starts the one it holds.
  const CliRun drain =
      run_sched(cluster_, {"partition", "set", "wide", "drain", "--reason", "fix"});
  ASSERT_EQ(drain.status, 0) << describe(drain);
  const CliRun refused = submit({"-p", "wide", "--wrap", "true"});
  EXPECT_NE(refused.status, 0);
  EXPECT_NE(refused.err.find("Partition wide is in state drain"), std::string::npos)
      << describe(refused);
  ASSERT_EQ(run_sched(cluster_, {"cancel", std::to_string(holder)}).status, 0);
  EXPECT_TRUE(cluster_.wait_state(waiting, "COMPLETED")) << cluster_.logs();
  // batch is not affected.
  const std::int64_t b = submitted({"--wrap", "true"});
  EXPECT_TRUE(cluster_.wait_state(b, "COMPLETED")) << cluster_.logs();
  const CliRun events =
      run_sched(cluster_, {"events", "--since", "0", "--topic", "partition.", "--count", "1"});
  EXPECT_NE(events.out.find("\"partition\":\"wide\""), std::string::npos) << describe(events);
  EXPECT_NE(events.out.find("\"code\":\"drain\""), std::string::npos) << events.out;

  // The drain outlives a crash of schedd, with its reason; set back up, the
  // partition is up after the next one too.
  cluster_.kill_schedd(SIGKILL);
  cluster_.start_schedd();
  ASSERT_TRUE(cluster_.wait_nodes_up(4)) << cluster_.logs();
  const CliRun after = submit({"-p", "wide", "--wrap", "true"});
  EXPECT_NE(after.err.find("Partition wide is in state drain"), std::string::npos)
      << describe(after);
  const CliRun listed = run_sched(cluster_, {"partition", "-p", "wide", "--json"});
  EXPECT_NE(listed.out.find("\"state\": \"drain\""), std::string::npos) << listed.out;
  ASSERT_EQ(run_sched(cluster_, {"partition", "set", "wide", "up"}).status, 0);
  cluster_.kill_schedd(SIGKILL);
  cluster_.start_schedd();
  ASSERT_TRUE(cluster_.wait_nodes_up(4)) << cluster_.logs();
  const std::int64_t up = submitted({"-p", "wide", "--wrap", "true"});
  EXPECT_TRUE(cluster_.wait_state(up, "COMPLETED")) << cluster_.logs();
}

}  // namespace
}  // namespace sched::testing
