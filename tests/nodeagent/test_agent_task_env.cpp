// The tasks' environment (issue 16 item 1): a job's task counts for its
// batch script, and each step task's place in the step, in SCHED_ and
// Slurm's names.
#include <gtest/gtest.h>

#include <map>

#include "sched/agent/job_env.hpp"

namespace sched::agent {
namespace {

std::map<std::string, std::string> as_map(const EnvPairs& env) {
  std::map<std::string, std::string> m;
  for (const auto& [name, value] : env) {
    EXPECT_TRUE(m.emplace(name, value).second) << "repeated name " << name;
  }
  return m;
}

JobEnvInput four_nodes() {
  JobEnvInput in;
  in.job_id = 7;
  in.nodes = {"n10", "n9", "n2", "n3"};
  in.this_node = "n9";
  in.tasks_per_node = 2;
  return in;
}

TEST(AgentTaskEnv, BatchScriptSeesTheJobsTasks) {
  JobEnvInput in = four_nodes();
  in.ntasks = 7;
  in.cpus_per_task = 3;
  const auto env = as_map(job_environment(in));
  EXPECT_EQ(env.at("SLURM_NTASKS"), "7");
  EXPECT_EQ(env.at("SLURM_NPROCS"), "7");
  EXPECT_EQ(env.at("SCHED_NTASKS"), "7");
  EXPECT_EQ(env.at("SLURM_CPUS_PER_TASK"), "3");
  EXPECT_EQ(env.at("SCHED_CPUS_PER_TASK"), "3");
  EXPECT_EQ(env.at("SLURM_TASKS_PER_NODE"), "2(x3),1");
  // Slurm's list is sorted and compressed; ours keeps the leader first.
  EXPECT_EQ(env.at("SLURM_JOB_NODELIST"), "n[2-3,9-10]");
  EXPECT_EQ(env.at("SLURM_NODELIST"), "n[2-3,9-10]");
  EXPECT_EQ(env.at("SCHED_JOB_NODELIST"), "n10,n9,n2,n3");
}

TEST(AgentTaskEnv, WithoutNtasksTheNodesTimesTasksPerNode) {
  const auto env = as_map(job_environment(four_nodes()));
  EXPECT_EQ(env.at("SLURM_NTASKS"), "8");
  EXPECT_EQ(env.at("SLURM_TASKS_PER_NODE"), "2(x4)");
  EXPECT_EQ(env.at("SLURM_CPUS_PER_TASK"), "1");
}

TEST(AgentTaskEnv, CyclicCountsFromTheLaunch) {
  proto::JobLaunch launch;
  launch.job = 3;
  launch.nodes = {"a1", "a2"};
  launch.ntasks = 3;
  launch.cpus_per_task = 2;
  launch.distribution = "cyclic";
  const auto env = as_map(job_environment(launch, "a2", "tcp://x"));
  EXPECT_EQ(env.at("SLURM_TASKS_PER_NODE"), "2,1");
  EXPECT_EQ(env.at("SLURM_CPUS_PER_TASK"), "2");
  EXPECT_EQ(env.at("SLURM_NTASKS"), "3");
}

proto::StepLaunch step_of_five() {
  proto::StepLaunch launch;
  launch.job = 9;
  launch.step = 2;
  launch.job_nodes = {"n1", "n2", "n3"};
  launch.nodes = {"n1", "n2"};
  launch.tasks = 5;
  launch.cpus_per_task = 1;
  return launch;
}

TEST(AgentTaskEnv, StepTaskKnowsItsPlaceAndTheStep) {
  const auto env = as_map(step_task_environment(step_of_five(), 3, 0));
  EXPECT_EQ(env.at("SLURM_PROCID"), "3");
  EXPECT_EQ(env.at("SCHED_PROCID"), "3");
  EXPECT_EQ(env.at("SLURM_LOCALID"), "0");
  EXPECT_EQ(env.at("SCHED_LOCALID"), "0");
  EXPECT_EQ(env.at("SLURM_STEP_ID"), "2");
  EXPECT_EQ(env.at("SLURM_NTASKS"), "5");
  EXPECT_EQ(env.at("SLURM_NPROCS"), "5");
  EXPECT_EQ(env.at("SLURM_NNODES"), "2");
  EXPECT_EQ(env.at("SLURM_NODELIST"), "n[1-2]");
  EXPECT_EQ(env.at("SLURM_STEP_NODELIST"), "n[1-2]");
  EXPECT_EQ(env.at("SLURM_TASKS_PER_NODE"), "3,2");
  EXPECT_EQ(env.at("SLURM_CPUS_PER_TASK"), "1");
}

TEST(AgentTaskEnv, StepVariablesReplaceTheJobs) {
  proto::StepLaunch launch = step_of_five();
  launch.distribution = "cyclic";
  launch.tasks = 4;
  EnvPairs env = job_environment(launch, "n2", "tcp://x");
  for (const auto& [name, value] : step_task_environment(launch, 1, 0)) set_env(env, name, value);
  const auto vars = as_map(env);  // each name once
  EXPECT_EQ(vars.at("SLURM_NTASKS"), "4");
  EXPECT_EQ(vars.at("SLURM_TASKS_PER_NODE"), "2(x2)");
  EXPECT_EQ(vars.at("SLURM_NNODES"), "2") << "the step's nodes";
  EXPECT_EQ(vars.at("SLURM_JOB_NUM_NODES"), "3") << "the job's";
  EXPECT_EQ(vars.at("SLURM_JOB_NODELIST"), "n[1-3]");
  EXPECT_EQ(vars.at("SLURM_NODEID"), "1");
}

TEST(AgentTaskEnv, SetEnvReplacesInPlaceAndDropsRepeats) {
  EnvPairs env = {{"A", "1"}, {"B", "2"}, {"A", "3"}};
  set_env(env, "A", "9");
  EXPECT_EQ(env, (EnvPairs{{"A", "9"}, {"B", "2"}}));
  set_env(env, "C", "4");
  EXPECT_EQ(env.back(), (std::pair<std::string, std::string>{"C", "4"}));
}

}  // namespace
}  // namespace sched::agent
