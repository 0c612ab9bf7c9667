#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "sched/agent/job_env.hpp"

namespace sched::agent {
namespace {

JobEnvInput three_node_job() {
  JobEnvInput in;
  in.job_id = 42;
  in.job_name = "sim";
  in.nodes = {"n1", "n2", "n3"};
  in.this_node = "n2";
  in.tasks_per_node = 4;
  in.submit_dir = "/home/u/run";
  in.cluster_endpoint = "tcp://10.0.0.1:7101";
  return in;
}

std::map<std::string, std::string> as_map(const EnvPairs& env) {
  std::map<std::string, std::string> m;
  for (const auto& [name, value] : env) {
    EXPECT_TRUE(m.emplace(name, value).second) << "repeated name " << name;
  }
  return m;
}

TEST(AgentEnv, SetsSchedAndSlurmVariables) {
  const auto env = as_map(job_environment(three_node_job()));
  EXPECT_EQ(env.at("SCHED_JOB_ID"), "42");
  EXPECT_EQ(env.at("SCHED_JOB_NAME"), "sim");
  EXPECT_EQ(env.at("SCHED_JOB_NODELIST"), "n1,n2,n3");
  EXPECT_EQ(env.at("SCHED_JOB_NUM_NODES"), "3");
  EXPECT_EQ(env.at("SCHED_NODEID"), "1");
  EXPECT_EQ(env.at("SCHED_NTASKS_PER_NODE"), "4");
  EXPECT_EQ(env.at("SCHED_SUBMIT_DIR"), "/home/u/run");
  EXPECT_EQ(env.at("SCHED_CLUSTER_ENDPOINT"), "tcp://10.0.0.1:7101");
  EXPECT_EQ(env.at("SLURM_JOB_ID"), "42");
  // Slurm's compressed, sorted host list since issue 16 item 1.
  EXPECT_EQ(env.at("SLURM_JOB_NODELIST"), "n[1-3]");
  EXPECT_EQ(env.at("SLURM_NNODES"), "3");
  EXPECT_EQ(env.at("SLURM_NODEID"), "1");
  EXPECT_EQ(env.at("SLURM_NTASKS_PER_NODE"), "4");
}

TEST(AgentEnv, GpusAskedForAreTheFirstOfTheNode) {
  JobEnvInput in = three_node_job();
  EXPECT_EQ(as_map(job_environment(in)).count("CUDA_VISIBLE_DEVICES"), 0u) << "none asked for";
  in.gpus = 3;
  const auto env = as_map(job_environment(in));
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "0,1,2");
  EXPECT_EQ(env.at("SLURM_GPUS_ON_NODE"), "3");
}

// ---- job arrays (issue 18 item 1)
TEST(AgentEnv, AnArrayTaskGetsSlurmAndSchedArrayVariables) {
  JobEnvInput in = three_node_job();
  in.array =
      proto::ArrayTaskMsg{.job_id = 40, .task_id = 5, .count = 4, .min = 1, .max = 7, .step = 2};
  const auto env = as_map(job_environment(in));
  for (const std::string prefix : {"SLURM_", "SCHED_"}) {
    EXPECT_EQ(env.at(prefix + "ARRAY_JOB_ID"), "40");
    EXPECT_EQ(env.at(prefix + "ARRAY_TASK_ID"), "5");
    EXPECT_EQ(env.at(prefix + "ARRAY_TASK_COUNT"), "4");
    EXPECT_EQ(env.at(prefix + "ARRAY_TASK_MIN"), "1");
    EXPECT_EQ(env.at(prefix + "ARRAY_TASK_MAX"), "7");
    EXPECT_EQ(env.at(prefix + "ARRAY_TASK_STEP"), "2");
  }
  in.array->step = 0;  // a list: no step
  EXPECT_EQ(as_map(job_environment(in)).count("SLURM_ARRAY_TASK_STEP"), 0u);
  EXPECT_EQ(as_map(job_environment(three_node_job())).count("SLURM_ARRAY_TASK_ID"), 0u)
      << "not an array task";
}

TEST(AgentEnv, UserValuesWinExceptInTheSchedNamespace) {
  JobEnvInput in = three_node_job();
  in.user_env = {{"SLURM_JOB_ID", "99"},  {"SCHED_JOB_ID", "7"},
                 {"SCHED_EXTRA", "x"},    {"FOO", "bar"},
                 {"FOO", "baz"},          {"A=B", "c"},
                 {"", "empty"},           {"SCHED_MALL_TIMEOUT_MS", "500"},
                 {"OMP_NUM_THREADS", "2"}};
  const EnvPairs list = job_environment(in);
  const auto env = as_map(list);
  EXPECT_EQ(env.at("SLURM_JOB_ID"), "99");
  EXPECT_EQ(env.at("SCHED_JOB_ID"), "42");
  EXPECT_FALSE(env.contains("SCHED_EXTRA"));
  EXPECT_EQ(env.at("SCHED_MALL_TIMEOUT_MS"), "500") << "the malleable library's settings pass";
  EXPECT_EQ(env.at("FOO"), "baz");
  EXPECT_FALSE(env.contains("A=B"));
  EXPECT_FALSE(env.contains(""));
  // Ours first, then the user's in the order given.
  EXPECT_EQ(list.front().first, "SCHED_JOB_ID");
  EXPECT_EQ(list.back().first, "OMP_NUM_THREADS");
}

TEST(AgentEnv, NodeOutsideTheAllocationIsAnError) {
  JobEnvInput in = three_node_job();
  in.this_node = "n9";
  EXPECT_THROW(job_environment(in), std::invalid_argument);
}

}  // namespace
}  // namespace sched::agent
