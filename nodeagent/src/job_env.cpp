#include "sched/agent/job_env.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "sched/tasks/nodelist.hpp"

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
  JobEnvInput in{.job_id = launch.job,
                 .job_name = job_name,
                 .nodes = job_nodes,
                 .this_node = this_node,
                 .tasks_per_node = launch.tasks_per_node,
                 .submit_dir = launch.workdir,
                 .cluster_endpoint = cluster_endpoint,
                 .user_env = EnvPairs(launch.env.begin(), launch.env.end()),
                 .gpus = launch.gpus.value_or(0),
                 .array = launch.array};
  if constexpr (requires { launch.ntasks; }) in.ntasks = launch.ntasks.value_or(0);
  in.cpus_per_task = launch.cpus_per_task.value_or(1);
  if (launch.distribution) {
    in.distribution =
        tasks::parse_distribution(*launch.distribution).value_or(tasks::Distribution::Block);
  }
  return job_environment(in);
}

// SLURM_TASKS_PER_NODE of `tasks` over `nodes`; empty when they cannot be
// laid out (fewer tasks than nodes).
std::string tasks_per_node(int tasks, int nodes, tasks::Distribution distribution) {
  if (nodes < 1 || tasks < nodes) return "";
  std::vector<int> counts;
  for (const auto& ids :
       tasks::tasks_by_node(tasks::place_tasks(tasks, nodes, distribution), nodes)) {
    counts.push_back(static_cast<int>(ids.size()));
  }
  return tasks::compress_counts(counts);
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
  const int node_count = static_cast<int>(in.nodes.size());
  const std::string ntasks =
      std::to_string(in.ntasks > 0 ? in.ntasks : node_count * in.tasks_per_node);
  const std::string cpus_per_task = std::to_string(in.cpus_per_task);
  // Slurm's host list, sorted and compressed (n[1-4]); SCHED_JOB_NODELIST
  // keeps the allocation's order, leader first.
  const std::string slurm_nodelist = tasks::compress_sorted_nodelist(in.nodes);

  EnvPairs env = {
      {"SCHED_JOB_ID", id},
      {"SCHED_JOB_NAME", in.job_name},
      {"SCHED_JOB_NODELIST", nodelist},
      {"SCHED_JOB_NUM_NODES", num_nodes},
      {"SCHED_NODEID", node_id},
      {"SCHED_NTASKS_PER_NODE", per_node},
      {"SCHED_SUBMIT_DIR", in.submit_dir},
      {"SCHED_CLUSTER_ENDPOINT", in.cluster_endpoint},
      {"SCHED_NTASKS", ntasks},
      {"SCHED_CPUS_PER_TASK", cpus_per_task},
      {"SLURM_JOB_ID", id},
      {"SLURM_JOBID", id},
      {"SLURM_JOB_NAME", in.job_name},
      {"SLURM_JOB_NODELIST", slurm_nodelist},
      {"SLURM_NODELIST", slurm_nodelist},
      {"SLURM_NTASKS", ntasks},
      {"SLURM_NPROCS", ntasks},
      {"SLURM_CPUS_PER_TASK", cpus_per_task},
      {"SLURM_NNODES", num_nodes},
      {"SLURM_JOB_NUM_NODES", num_nodes},
      {"SLURM_NODEID", node_id},
      {"SLURM_NTASKS_PER_NODE", per_node},
      {"SLURM_SUBMIT_DIR", in.submit_dir},
  };
  if (const std::string counts = tasks_per_node(std::stoi(ntasks), node_count, in.distribution);
      !counts.empty()) {
    env.emplace_back("SLURM_TASKS_PER_NODE", counts);
  }
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

void set_env(EnvPairs& env, const std::string& name, const std::string& value) {
  auto it = std::find_if(env.begin(), env.end(), [&](const auto& p) { return p.first == name; });
  if (it == env.end()) {
    env.emplace_back(name, value);
    return;
  }
  it->second = value;
  env.erase(
      std::remove_if(std::next(it), env.end(), [&](const auto& p) { return p.first == name; }),
      env.end());
}

EnvPairs step_task_environment(const proto::StepLaunch& launch, int rank, int local) {
  const std::string step = std::to_string(launch.step);
  const std::string ntasks = std::to_string(launch.tasks);
  const std::string nnodes = std::to_string(launch.nodes.size());
  const std::string nodelist = tasks::compress_sorted_nodelist(launch.nodes);
  const std::string cpus = std::to_string(launch.cpus_per_task.value_or(1));
  EnvPairs env = {
      {"SCHED_STEP_ID", step},
      {"SCHED_PROCID", std::to_string(rank)},
      {"SCHED_LOCALID", std::to_string(local)},
      {"SCHED_NTASKS", ntasks},
      {"SCHED_CPUS_PER_TASK", cpus},
      {"SLURM_STEP_ID", step},
      {"SLURM_STEPID", step},
      {"SLURM_PROCID", std::to_string(rank)},
      {"SLURM_LOCALID", std::to_string(local)},
      {"SLURM_NTASKS", ntasks},
      {"SLURM_NPROCS", ntasks},
      {"SLURM_STEP_NUM_TASKS", ntasks},
      {"SLURM_CPUS_PER_TASK", cpus},
      {"SLURM_NNODES", nnodes},
      {"SLURM_STEP_NUM_NODES", nnodes},
      {"SLURM_NODELIST", nodelist},
      {"SLURM_STEP_NODELIST", nodelist},
  };
  const auto distribution = tasks::parse_distribution(launch.distribution.value_or("block"))
                                .value_or(tasks::Distribution::Block);
  if (const std::string counts =
          tasks_per_node(launch.tasks, static_cast<int>(launch.nodes.size()), distribution);
      !counts.empty()) {
    env.emplace_back("SLURM_TASKS_PER_NODE", counts);
    env.emplace_back("SLURM_STEP_TASKS_PER_NODE", counts);
  }
  if (launch.cpu_bind)
    env.emplace_back("SLURM_CPU_BIND_TYPE", *launch.cpu_bind == "cores" ? "cores" : "none");
  return env;
}

}  // namespace sched::agent
