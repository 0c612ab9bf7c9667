// Where jobs run (issue 18 item 4) on a local cluster: -w/--nodelist,
// -x/--exclude and --gres=gpu:N from `sched submit` to the node the job's
// processes run on. n3's agent declares two GPUs (--gpus, as Slurm's
// gres.conf declares them: this machine has none for hwloc to find).
#include <gtest/gtest.h>

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

class Placement : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.start_agent("n1");
    cluster_.start_agent("n2");
    cluster_.start_agent("n3", 1, {"--gpus", "2"});
    ASSERT_TRUE(cluster_.wait_nodes_up(3)) << cluster_.logs();
    work_ = cluster_.work_dir();
    fs::create_directories(work_);
  }

  CliRun submit(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"submit",       "--parsable", "-D",
                                    work_.string(), "-o",         "out-%j.txt"};
    all.insert(all.end(), args.begin(), args.end());
    return run_sched(cluster_, all);
  }

  // Submits, waits until it completed; its nodes.
  std::vector<std::string> run(const std::vector<std::string>& args,
                               std::int64_t* id_out = nullptr) {
    const CliRun submitted = submit(args);
    EXPECT_EQ(submitted.status, 0) << describe(submitted);
    std::int64_t id = 0;
    std::istringstream(submitted.out) >> id;
    EXPECT_TRUE(cluster_.wait_state(id, "COMPLETED")) << cluster_.logs();
    if (id_out) *id_out = id;
    std::vector<std::string> nodes = cluster_.job(id).nodelist;
    std::sort(nodes.begin(), nodes.end());
    return nodes;
  }

  std::string output_of(std::int64_t id) {
    std::ifstream in(work_ / ("out-" + std::to_string(id) + ".txt"));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  LocalCluster cluster_;
  fs::path work_;
};

TEST_F(Placement, NodelistAndExcludeAreHonoured) {
  // Each node in turn, so that it is not the lowest idle one (the one a job
  // without -w takes) by chance.
  for (const std::string node : {"n1", "n2", "n3"}) {
    EXPECT_EQ(run({"-w", node, "--wrap", "true"}), (std::vector<std::string>{node}));
  }
  std::int64_t named = 0;
  EXPECT_EQ(run({"-w", "n2", "--wrap", "echo $SLURM_JOB_NODELIST"}, &named),
            (std::vector<std::string>{"n2"}));
  EXPECT_EQ(output_of(named), "n2\n");
  // -w with a host list and no -N: as many nodes as it names.
  EXPECT_EQ(run({"--nodelist=n[2-3]", "--wrap", "true"}), (std::vector<std::string>{"n2", "n3"}));
  EXPECT_EQ(run({"-N", "2", "-x", "n1", "--wrap", "true"}), (std::vector<std::string>{"n2", "n3"}));

  const CliRun shown = run_sched(cluster_, {"show", std::to_string(named)});
  EXPECT_NE(shown.out.find("ReqNodeList=n2 ExcNodeList=(null)"), std::string::npos) << shown.out;
}

TEST_F(Placement, AGpuJobRunsWhereTheGpusAreAndSeesThem) {
  std::int64_t id = 0;
  EXPECT_EQ(run({"--gres=gpu:2", "--wrap", "echo $CUDA_VISIBLE_DEVICES $SLURM_GPUS_ON_NODE"}, &id),
            (std::vector<std::string>{"n3"}));
  EXPECT_EQ(output_of(id), "0,1 2\n");
  const CliRun shown = run_sched(cluster_, {"show", std::to_string(id)});
  EXPECT_NE(shown.out.find("TresPerNode=gres/gpu:2"), std::string::npos) << shown.out;
  // A job without --gres sees no GPU variable.
  std::int64_t plain = 0;
  run({"-w", "n3", "--wrap", "echo \"[${CUDA_VISIBLE_DEVICES-unset}]\""}, &plain);
  EXPECT_EQ(output_of(plain), "[unset]\n");
}

TEST_F(Placement, WhatNoNodeCanGiveIsRefusedAtSubmit) {
  const CliRun gpus = submit({"--gres=gpu:3", "--wrap", "true"});
  EXPECT_EQ(gpus.status, 1) << describe(gpus);
  EXPECT_NE(gpus.err.find("Requested node configuration is not available"), std::string::npos)
      << gpus.err;
  const CliRun unknown = submit({"-w", "n9", "--wrap", "true"});
  EXPECT_EQ(unknown.status, 1) << describe(unknown);
  EXPECT_NE(unknown.err.find("--nodelist: no node n9"), std::string::npos) << unknown.err;
  const CliRun malformed = submit({"-w", "n[3-1]", "--wrap", "true"});
  EXPECT_EQ(malformed.status, 1) << describe(malformed);
  EXPECT_NE(malformed.err.find("not a host list"), std::string::npos) << malformed.err;
  const CliRun queue = run_sched(cluster_, {"queue", "-h"});
  EXPECT_EQ(queue.out, "") << "nothing was queued";
}

}  // namespace
}  // namespace sched::testing
