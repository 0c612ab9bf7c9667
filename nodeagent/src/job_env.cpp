#include "sched/agent/job_env.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace sched::agent {
namespace {

bool valid_entry(const std::string& name, const std::string& value) {
  return !name.empty() && name.find_first_of(std::string_view("=\0", 2)) == std::string::npos &&
         value.find('\0') == std::string::npos;
}

std::string join(const std::vector<std::string>& items, char sep) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

// job.launch and step.launch name the job and its nodes differently; the
// rest they share.
template <class Launch>
EnvPairs launch_environment(const Launch& launch, const std::string& job_name,
                            const std::vector<std::string>& job_nodes, const std::string& this_node,
                            const std::string& cluster_endpoint) {
  return job_environment(JobEnvInput{.job_id = launch.job,
                                     .job_name = job_name,
                                     .nodes = job_nodes,
                                     .this_node = this_node,
                                     .tasks_per_node = launch.tasks_per_node,
                                     .submit_dir = launch.workdir,
                                     .cluster_endpoint = cluster_endpoint,
                                     .user_env = EnvPairs(launch.env.begin(), launch.env.end()),
                                     .gpus = launch.gpus.value_or(0),
                                     .array = launch.array});
}

}  // namespace

EnvPairs job_environment(const JobEnvInput& in) {
  const auto it = std::find(in.nodes.begin(), in.nodes.end(), in.this_node);
  if (it == in.nodes.end()) {
    throw std::invalid_argument("node '" + in.this_node + "' is not in the allocation of job " +
                                std::to_string(in.job_id));
  }
  const std::string id = std::to_string(in.job_id);
  const std::string nodelist = join(in.nodes, ',');
  const std::string num_nodes = std::to_string(in.nodes.size());
  const std::string node_id = std::to_string(it - in.nodes.begin());
  const std::string per_node = std::to_string(in.tasks_per_node);

  EnvPairs env = {
      {"SCHED_JOB_ID", id},
      {"SCHED_JOB_NAME", in.job_name},
      {"SCHED_JOB_NODELIST", nodelist},
      {"SCHED_JOB_NUM_NODES", num_nodes},
      {"SCHED_NODEID", node_id},
      {"SCHED_NTASKS_PER_NODE", per_node},
      {"SCHED_SUBMIT_DIR", in.submit_dir},
      {"SCHED_CLUSTER_ENDPOINT", in.cluster_endpoint},
      // Slurm spells the node list in its compressed form (node[1-4]); its
      // tools (scontrol show hostnames) also read the plain comma list.
      {"SLURM_JOB_ID", id},
      {"SLURM_JOBID", id},
      {"SLURM_JOB_NAME", in.job_name},
      {"SLURM_JOB_NODELIST", nodelist},
      {"SLURM_NNODES", num_nodes},
      {"SLURM_JOB_NUM_NODES", num_nodes},
      {"SLURM_NODEID", node_id},
      {"SLURM_NTASKS_PER_NODE", per_node},
      {"SLURM_SUBMIT_DIR", in.submit_dir},
  };
  if (in.gpus > 0) {
    // The job has whole nodes, but only the GPUs it asked for, as Slurm
    // gives them: the first N of the node's (CUDA numbers them from 0).
    std::string devices;
    for (int i = 0; i < in.gpus; ++i) devices += (i == 0 ? "" : ",") + std::to_string(i);
    env.emplace_back("CUDA_VISIBLE_DEVICES", devices);
    env.emplace_back("SLURM_GPUS_ON_NODE", std::to_string(in.gpus));
  }
  // ---- job arrays (issue 18 item 1)
  if (in.array) {
    const proto::ArrayTaskMsg& a = *in.array;
    for (const char* prefix : {"SCHED_", "SLURM_"}) {
      const std::string p = prefix;
      env.emplace_back(p + "ARRAY_JOB_ID", std::to_string(a.job_id));
      env.emplace_back(p + "ARRAY_TASK_ID", std::to_string(a.task_id));
      env.emplace_back(p + "ARRAY_TASK_COUNT", std::to_string(a.count));
      env.emplace_back(p + "ARRAY_TASK_MIN", std::to_string(a.min));
      env.emplace_back(p + "ARRAY_TASK_MAX", std::to_string(a.max));
      if (a.step > 0) env.emplace_back(p + "ARRAY_TASK_STEP", std::to_string(a.step));
    }
  }

  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < env.size(); ++i) index.emplace(env[i].first, i);
  for (const auto& [name, value] : in.user_env) {
    // SCHED_ is ours, except SCHED_MALL_: the malleable library's settings,
    // which users give.
    if (!valid_entry(name, value) ||
        (name.starts_with("SCHED_") && !name.starts_with("SCHED_MALL_"))) {
      continue;
    }
    const auto [slot, fresh] = index.emplace(name, env.size());
    if (fresh) {
      env.emplace_back(name, value);
    } else {
      env[slot->second].second = value;
    }
  }
  return env;
}

EnvPairs job_environment(const proto::JobLaunch& launch, const std::string& this_node,
                         const std::string& cluster_endpoint) {
  return launch_environment(launch, launch.name, launch.nodes, this_node, cluster_endpoint);
}

EnvPairs job_environment(const proto::StepLaunch& launch, const std::string& this_node,
                         const std::string& cluster_endpoint) {
  // A step runs in the job's environment: the job's nodes, not the step's.
  return launch_environment(launch, launch.job_name, launch.job_nodes, this_node, cluster_endpoint);
}

}  // namespace sched::agent
