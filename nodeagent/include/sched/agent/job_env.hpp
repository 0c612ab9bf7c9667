// The environment a job's processes see on a node: the SCHED_ variables that
// tell a process where it runs, Slurm's names for the same facts (so that
// ported scripts work), then the user's own variables.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/agent/types.hpp"
#include "sched/proto/agent_messages.hpp"
#include "sched/tasks/task_layout.hpp"

namespace sched::agent {

struct JobEnvInput {
  JobId job_id = 0;
  std::string job_name;
  std::vector<std::string> nodes;  // the allocation; the first is the leader
  std::string this_node;           // must be one of `nodes`
  int tasks_per_node = 1;
  std::string submit_dir;
  std::string cluster_endpoint;  // where the job's processes reach the engine
  EnvPairs user_env;             // as submitted
  int gpus = 0;                  // --gres=gpu:N: GPUs 0..N-1 here are the job's
  // ---- job arrays (issue 18 item 1): an array's task gets SLURM_ARRAY_*
  // and SCHED_ARRAY_* (STEP only when its indices are one range).
  std::optional<proto::ArrayTaskMsg> array;
  // ---- tasks (issue 16 item 1): SCHED_/SLURM_NTASKS (and SLURM_NPROCS),
  // _CPUS_PER_TASK and SLURM_TASKS_PER_NODE (tasks::compress_counts).
  int ntasks = 0;  // 0: nodes × tasks_per_node
  int cpus_per_task = 1;
  tasks::Distribution distribution = tasks::Distribution::Block;
};

// Returns the variables in this order: ours (SCHED_ then SLURM_), then the
// user's in submission order, each name once. A user's value replaces ours,
// in our place, for non-SCHED_ names (SLURM_ included); SCHED_ is our namespace, so every
// SCHED_ name the user gives is dropped (but SCHED_MALL_, the malleable
// library's settings). Pairs that cannot be an environment
// entry (empty name, '=' or NUL in the name, NUL in the value) are dropped;
// of repeated user names the last wins.
// Throws std::invalid_argument when this_node is not in nodes.
EnvPairs job_environment(const JobEnvInput& in);

// The same for what schedd sent: the batch script of a job.launch, or the
// tasks of a step.launch (before the step's own variables), on `this_node`,
// whose agent gives job processes `cluster_endpoint` to reach schedd. The
// one place where the launches' fields become the environment's.
EnvPairs job_environment(const proto::JobLaunch& launch, const std::string& this_node,
                         const std::string& cluster_endpoint);
EnvPairs job_environment(const proto::StepLaunch& launch, const std::string& this_node,
                         const std::string& cluster_endpoint);

// What one task of a step adds to (and replaces in) job_environment(launch):
// its place (SCHED_/SLURM_ PROCID, LOCALID, STEP_ID), the step's size
// (SCHED_/SLURM_NTASKS, SLURM_NPROCS, SLURM_STEP_NUM_TASKS), its nodes
// (SLURM_NNODES, SLURM_NODELIST, SLURM_STEP_NODELIST and _NUM_NODES),
// SLURM_TASKS_PER_NODE and SLURM_STEP_TASKS_PER_NODE from the step's layout
// (tasks::place_tasks over launch.nodes; left out when the launch's tasks
// cannot be laid over them), and SCHED_/SLURM_CPUS_PER_TASK.
EnvPairs step_task_environment(const proto::StepLaunch& launch, int rank, int local);

// Sets NAME=value in env: replaces the first NAME (removing later ones) or
// appends.
void set_env(EnvPairs& env, const std::string& name, const std::string& value);

}  // namespace sched::agent
