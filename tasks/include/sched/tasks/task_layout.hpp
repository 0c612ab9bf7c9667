// Where a step's tasks run (issue 16 item 1): which node and which local
// slot each task id gets (-m block|cyclic), which cores a task is bound to
// (--cpu-bind), and Slurm's spellings of the result (SLURM_TASKS_PER_NODE).
// Pure functions: schedd lays a step out with them, the node agent binds and
// names its tasks with them, and a PMI server can publish the same process
// map from them. docs/user-guide.md "Tasks, placement and binding".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sched::tasks {

// -m/--distribution: block puts consecutive task ids on a node (the first
// tasks % nodes nodes get one more); cyclic deals them round robin.
enum class Distribution { Block, Cyclic };
std::optional<Distribution> parse_distribution(std::string_view text);  // "block", "cyclic"
std::string_view to_string(Distribution distribution);

// --cpu-bind: none leaves a task on every CPU of its node; cores pins each
// task to its cpus-per-task cores (task_cores).
enum class CpuBind { None, Cores };
std::optional<CpuBind> parse_cpu_bind(std::string_view text);  // "none" or "no", "cores"
std::string_view to_string(CpuBind bind);

struct TaskPlace {
  int node = 0;   // index into the step's nodes
  int local = 0;  // the task's number on its node (SLURM_LOCALID)
  bool operator==(const TaskPlace&) const = default;
};

// Where each task (the index: SLURM_PROCID) runs. Throws
// std::invalid_argument unless nodes >= 1 and tasks >= nodes (every node of
// a step runs at least one task).
std::vector<TaskPlace> place_tasks(int tasks, int nodes, Distribution distribution);

// The task ids of each node, in local-id order (what an agent starts).
std::vector<std::vector<int>> tasks_by_node(const std::vector<TaskPlace>& places, int nodes);

// Slurm's compressed counts: {2, 2, 2, 1} → "2(x3),1".
std::string compress_counts(const std::vector<int>& counts);

// The node's core indexes (0-based, in the node's order) for its task
// `local`: cpus_per_task consecutive cores from local × cpus_per_task,
// wrapping round when the node has fewer cores than its tasks ask for.
// Throws std::invalid_argument unless local >= 0, cpus_per_task >= 1 and
// cores >= 1.
std::vector<int> task_cores(int local, int cpus_per_task, int cores);

// Slurm's node count for `-n` without `-N`: enough nodes of `cores_per_node`
// cores for tasks × cpus_per_task, and never more nodes than tasks. Throws
// std::invalid_argument unless all three are >= 1 and cpus_per_task <=
// cores_per_node.
int nodes_for_tasks(int tasks, int cpus_per_task, int cores_per_node);

}  // namespace sched::tasks
