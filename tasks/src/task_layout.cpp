#include "sched/tasks/task_layout.hpp"

#include <stdexcept>

namespace sched::tasks {

std::optional<Distribution> parse_distribution(std::string_view text) {
  if (text == "block") return Distribution::Block;
  if (text == "cyclic") return Distribution::Cyclic;
  return std::nullopt;
}

std::string_view to_string(Distribution distribution) {
  return distribution == Distribution::Cyclic ? "cyclic" : "block";
}

std::optional<CpuBind> parse_cpu_bind(std::string_view text) {
  if (text == "none" || text == "no") return CpuBind::None;
  if (text == "cores") return CpuBind::Cores;
  return std::nullopt;
}

std::string_view to_string(CpuBind bind) { return bind == CpuBind::Cores ? "cores" : "none"; }

std::vector<TaskPlace> place_tasks(int tasks, int nodes, Distribution distribution) {
  if (nodes < 1) throw std::invalid_argument("a step needs at least one node");
  if (tasks < nodes) {
    throw std::invalid_argument(std::to_string(tasks) + " tasks cannot use " +
                                std::to_string(nodes) + " nodes");
  }
  std::vector<TaskPlace> places(static_cast<std::size_t>(tasks));
  if (distribution == Distribution::Cyclic) {
    for (int task = 0; task < tasks; ++task) places[task] = {task % nodes, task / nodes};
    return places;
  }
  int task = 0;
  for (int node = 0; node < nodes; ++node) {
    const int count = tasks / nodes + (node < tasks % nodes ? 1 : 0);
    for (int local = 0; local < count; ++local) places[task++] = {node, local};
  }
  return places;
}

std::vector<std::vector<int>> tasks_by_node(const std::vector<TaskPlace>& places, int nodes) {
  std::vector<std::vector<int>> out(static_cast<std::size_t>(nodes));
  for (std::size_t task = 0; task < places.size(); ++task) {
    const TaskPlace& place = places[task];
    if (place.node < 0 || place.node >= nodes) {
      throw std::invalid_argument("task " + std::to_string(task) + " is on node " +
                                  std::to_string(place.node) + " of " + std::to_string(nodes));
    }
    out[place.node].push_back(static_cast<int>(task));
  }
  return out;
}

std::string compress_counts(const std::vector<int>& counts) {
  std::string out;
  for (std::size_t i = 0; i < counts.size();) {
    std::size_t run = 1;
    while (i + run < counts.size() && counts[i + run] == counts[i]) ++run;
    if (!out.empty()) out += ',';
    out += std::to_string(counts[i]);
    if (run > 1) out += "(x" + std::to_string(run) + ")";
    i += run;
  }
  return out;
}

std::vector<int> task_cores(int local, int cpus_per_task, int cores) {
  if (local < 0 || cpus_per_task < 1 || cores < 1) {
    throw std::invalid_argument("task_cores: local " + std::to_string(local) + ", cpus per task " +
                                std::to_string(cpus_per_task) + ", cores " + std::to_string(cores));
  }
  std::vector<int> out;
  // A task never gets one core twice, even when it asks for more than the
  // node has.
  const int count = cpus_per_task < cores ? cpus_per_task : cores;
  const long first = static_cast<long>(local) * cpus_per_task;
  for (int i = 0; i < count; ++i) out.push_back(static_cast<int>((first + i) % cores));
  return out;
}

int nodes_for_tasks(int tasks, int cpus_per_task, int cores_per_node) {
  if (tasks < 1 || cpus_per_task < 1 || cores_per_node < 1) {
    throw std::invalid_argument("nodes_for_tasks: counts must be at least 1");
  }
  if (cpus_per_task > cores_per_node) {
    throw std::invalid_argument(std::to_string(cpus_per_task) + " cpus per task; nodes have " +
                                std::to_string(cores_per_node) + " cores");
  }
  const int per_node = cores_per_node / cpus_per_task;  // tasks that fit on a node
  return static_cast<int>((static_cast<long long>(tasks) + per_node - 1) / per_node);
}

}  // namespace sched::tasks
