// The job environment built straight from schedd's launch messages: the
// batch script's (job.launch) and a step's (step.launch), which runs in the
// job's environment.
#include <gtest/gtest.h>

#include <map>

#include "sched/agent/job_env.hpp"

namespace sched::agent {
namespace {

std::map<std::string, std::string> as_map(const EnvPairs& env) {
  return std::map<std::string, std::string>(env.begin(), env.end());
}

TEST(AgentEnvWire, FromAJobLaunch) {
  proto::JobLaunch launch;
  launch.job = 42;
  launch.name = "sim";
  launch.workdir = "/home/u/run";
  launch.nodes = {"n1", "n2"};
  launch.tasks_per_node = 4;
  launch.env = {{"FOO", "bar"}, {"SCHED_JOB_ID", "7"}};
  const auto env = as_map(job_environment(launch, "n1", "tcp://10.0.0.1:7100"));
  EXPECT_EQ(env.at("SCHED_JOB_ID"), "42") << "SCHED_ is ours";
  EXPECT_EQ(env.at("SCHED_JOB_NAME"), "sim");
  EXPECT_EQ(env.at("SCHED_JOB_NODELIST"), "n1,n2");
  EXPECT_EQ(env.at("SCHED_NODEID"), "0");
  EXPECT_EQ(env.at("SCHED_NTASKS_PER_NODE"), "4");
  EXPECT_EQ(env.at("SCHED_SUBMIT_DIR"), "/home/u/run");
  EXPECT_EQ(env.at("SCHED_CLUSTER_ENDPOINT"), "tcp://10.0.0.1:7100");
  EXPECT_EQ(env.at("FOO"), "bar");
}

TEST(AgentEnvWire, AStepSeesTheJobsNodesNotItsOwn) {
  proto::StepLaunch launch;
  launch.job = 9;
  launch.step = 2;
  launch.job_name = "heat";
  launch.workdir = "/scratch";
  launch.job_nodes = {"n1", "n2", "n3"};
  launch.nodes = {"n3"};
  launch.tasks_per_node = 2;
  launch.env = {{"OMP_NUM_THREADS", "8"}};
  const auto env = as_map(job_environment(launch, "n3", "tcp://h:7100"));
  EXPECT_EQ(env.at("SCHED_JOB_ID"), "9");
  EXPECT_EQ(env.at("SCHED_JOB_NAME"), "heat");
  EXPECT_EQ(env.at("SCHED_JOB_NODELIST"), "n1,n2,n3");
  EXPECT_EQ(env.at("SCHED_JOB_NUM_NODES"), "3");
  EXPECT_EQ(env.at("SCHED_NODEID"), "2");
  EXPECT_EQ(env.at("SCHED_SUBMIT_DIR"), "/scratch");
  EXPECT_EQ(env.at("OMP_NUM_THREADS"), "8");
}

// An array task's steps see its array as its batch script does; so do its
// GPUs (srun inside a task is the usual place the variables are read).
TEST(AgentEnvWire, AStepOfAnArrayTaskSeesItsArrayAndGpus) {
  proto::StepLaunch launch;
  launch.job = 43;
  launch.job_nodes = {"n1"};
  launch.nodes = {"n1"};
  launch.gpus = 1;
  launch.array =
      proto::ArrayTaskMsg{.job_id = 40, .task_id = 3, .count = 4, .min = 0, .max = 3, .step = 1};
  const auto env = as_map(job_environment(launch, "n1", "tcp://h:7100"));
  EXPECT_EQ(env.at("SLURM_ARRAY_JOB_ID"), "40");
  EXPECT_EQ(env.at("SLURM_ARRAY_TASK_ID"), "3");
  EXPECT_EQ(env.at("SCHED_ARRAY_TASK_COUNT"), "4");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "0");
}

TEST(AgentEnvWire, ANodeOutsideTheJobIsRefused) {
  proto::JobLaunch launch;
  launch.job = 1;
  launch.nodes = {"n1"};
  EXPECT_THROW(job_environment(launch, "n9", "tcp://h:7100"), std::invalid_argument);
}

}  // namespace
}  // namespace sched::agent
