// Partitions (issue 20 item 1; sched/partition.hpp): which partition a node
// and a job are in, what a partition admits, its state and its own policy.
// The passes over them are in engine_pass.cpp.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sched/engine.hpp"
#include "sched/placement.hpp"

namespace sched {

namespace {

// Seconds as Slurm prints a time limit: [D-]HH:MM:SS.
std::string limit_text(double seconds) {
  const auto total = static_cast<long long>(std::llround(seconds));
  const long long days = total / 86400;
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%02lld:%02lld:%02lld", (total % 86400) / 3600,
                (total % 3600) / 60, total % 60);
  return days > 0 ? std::to_string(days) + "-" + buffer : std::string(buffer);
}

std::string names_of(const std::vector<Partition>& partitions) {
  std::string text;
  for (const Partition& p : partitions) text += (text.empty() ? "" : ", ") + p.spec.name;
  return text;
}

}  // namespace

Status Engine::set_partitions(std::vector<PartitionSpec> specs) {
  if (auto error = check_partitions(specs)) return Status::invalid(*error);
  if (!jobs_.empty()) {
    return Status::conflict(
        "partitions are set before any job exists (a job's partition is fixed)");
  }
  std::vector<Partition> next;
  if (specs.empty()) {
    next.push_back(Partition{PartitionSpec{std::string(kImplicitPartition),
                                           {},
                                           true,
                                           PartitionState::Up,
                                           {},
                                           PartitionKind::Nodes},
                             nullptr, nullptr, 0});
  }
  const std::size_t def = specs.empty() ? 0 : default_partition(specs);
  for (PartitionSpec& spec : specs) next.push_back(Partition{std::move(spec), nullptr, nullptr, 0});
  next[def].spec.is_default = true;
  partitioned_ = !specs.empty();
  partitions_ = std::move(next);
  default_partition_ = static_cast<int>(def);
  for (NodeIndex i = 0; i < cluster_.size(); ++i) {
    cluster_.set_partition(i, partition_of_node(cluster_.node(i).name));
    track_cores(i);
  }
  ++state_version_;
  request_pass(PassReason::Manual);
  return {};
}

int Engine::partition_of_node(const std::string& name) const {
  if (!partitioned_) return 0;
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    const auto& nodes = partitions_[i].spec.nodes;
    if (std::find(nodes.begin(), nodes.end(), name) != nodes.end()) return static_cast<int>(i);
  }
  return default_partition_;
}

std::optional<int> Engine::partition_index(std::string_view name) const {
  for (std::size_t i = 0; i < partitions_.size(); ++i) {
    if (partitions_[i].spec.name == name) return static_cast<int>(i);
  }
  return std::nullopt;
}

Status Engine::set_partition_policy(const std::string& name, std::shared_ptr<Policy> policy) {
  const auto index = partition_index(name);
  if (!index) return Status::not_found("no partition " + name);
  Partition& p = partitions_[static_cast<std::size_t>(*index)];
  p.policy = std::move(policy);
  p.consecutive_failed = 0;
  ++state_version_;
  return {};
}

std::shared_ptr<Policy> Engine::partition_policy(const std::string& name) const {
  const auto index = partition_index(name);
  if (!index) return nullptr;
  const Partition& p = partitions_[static_cast<std::size_t>(*index)];
  return p.policy ? p.policy : policy_;
}

Status Engine::set_partition_state(const std::string& name, PartitionState state,
                                   const std::string& why) {
  const auto index = partition_index(name);
  if (!index)
    return Status::not_found("no partition " + name + " (partitions: " + names_of(partitions_) +
                             ")");
  Partition& p = partitions_[static_cast<std::size_t>(*index)];
  if (p.spec.state == state) return {};
  p.spec.state = state;
  Event event;
  event.type = EventType::PartitionState;
  event.partition = name;
  event.code = std::string(to_string(state));
  event.message = why;
  emit(std::move(event));
  if (state != PartitionState::Down) request_pass(PassReason::Manual);
  return {};
}

Status Engine::set_partition_limits(const std::string& name, PartitionLimits limits) {
  const auto index = partition_index(name);
  if (!index) return Status::not_found("no partition " + name);
  PartitionSpec probe = partitions_[static_cast<std::size_t>(*index)].spec;
  probe.limits = limits;
  if (auto error = check_partitions({probe})) return Status::invalid(*error);
  partitions_[static_cast<std::size_t>(*index)].spec.limits = std::move(limits);
  return {};
}

Status Engine::admit_to_partition(const Partition& partition, JobSpec& spec) const {
  const PartitionSpec& p = partition.spec;
  if (p.state != PartitionState::Up) {
    // sbatch's words for a partition that takes no jobs.
    return Status::conflict("Partition " + p.name + " is in state " +
                            std::string(to_string(p.state)) + ": it takes no new jobs");
  }
  const PartitionLimits& l = p.limits;
  if (!l.users.empty() || !l.groups.empty()) {
    bool allowed = std::find(l.users.begin(), l.users.end(), spec.user) != l.users.end();
    if (!allowed && !l.groups.empty() && group_lookup_) {
      for (const std::string& group : group_lookup_(spec.user)) {
        if (std::find(l.groups.begin(), l.groups.end(), group) != l.groups.end()) allowed = true;
      }
    }
    if (!allowed) {
      return Status::invalid("User " + spec.user + " may not submit to partition " + p.name +
                             " (AllowUsers/AllowGroups)");
    }
  }
  if (spec.walltime <= 0) {
    spec.walltime = l.default_time_s > 0 ? l.default_time_s : l.max_time_s;
  }
  if (l.max_time_s > 0 && spec.walltime > l.max_time_s) {
    return Status::invalid("Requested time limit " + limit_text(spec.walltime) +
                           " is over partition " + p.name + "'s max_time " +
                           limit_text(l.max_time_s));
  }
  if (p.kind == PartitionKind::Cores) {
    return admit_cores(static_cast<int>(&partition - partitions_.data()), spec);
  }
  const int smallest = spec.kind == JobKind::Rigid ? spec.nodes : spec.min_nodes;
  if (l.max_nodes > 0 && smallest > l.max_nodes) {
    return Status::invalid("job needs " + std::to_string(smallest) + " nodes; partition " + p.name +
                           "'s max_nodes is " + std::to_string(l.max_nodes));
  }
  if (partitioned_) {
    const int index = static_cast<int>(&partition - partitions_.data());
    const int size = cluster_.partition_size(index);
    if (smallest > size) {
      return Status::invalid("job needs " + std::to_string(smallest) + " nodes; partition " +
                             p.name + " has " + std::to_string(size));
    }
    for (const std::string& name : spec.extra->nodelist) {
      const auto node = cluster_.find(name);
      if (node && cluster_.node(*node).partition != index) {
        return Status::invalid("node " + name + " (-w) is not in partition " + p.name);
      }
    }
  }
  return {};
}

Status Engine::admit_cores(int index, JobSpec& spec) const {
  const std::string& name = partitions_[static_cast<std::size_t>(index)].spec.name;
  // Rigid, or malleable by cores (--cores MIN-MAX); a moldable or evolving
  // job's size there is not built.
  if (spec.kind != JobKind::Rigid && spec.kind != JobKind::Malleable) {
    return Status::invalid("partition " + name + " allocates cores: its jobs are rigid or " +
                           "malleable (by cores), not " + std::string(to_string(spec.kind)));
  }
  if (has_placement(spec)) {
    return Status::invalid(
        "partition " + name +
        " allocates cores: --nodelist, --exclude and --gres are not taken there");
  }
  if (spec.layout->cores < 0) return Status::invalid("--cores must be at least 1");
  if (spec.layout->cores == 0) {
    const long long tasks = spec.layout->ntasks > 0
                                ? spec.layout->ntasks
                                : static_cast<long long>(spec.nodes) * spec.tasks_per_node;
    const long long cores = tasks * spec.layout->cpus_per_task;
    spec.layout.edit().cores = static_cast<int>(std::min<long long>(cores, 1LL << 30));
  }
  if (spec.layout->min_cores < 0 || spec.layout->max_cores < 0) {
    return Status::invalid("--cores MIN-MAX: the bounds must be at least 1");
  }
  if (spec.kind == JobKind::Rigid) {
    if ((spec.layout->min_cores != 0 && spec.layout->min_cores != spec.layout->cores) ||
        (spec.layout->max_cores != 0 && spec.layout->max_cores != spec.layout->cores)) {
      return Status::invalid("a rigid job runs on its --cores; a core range needs a malleable job");
    }
    spec.layout.edit().min_cores = spec.layout.edit().max_cores = spec.layout->cores;
  } else {
    if (spec.layout->min_cores == 0) spec.layout.edit().min_cores = spec.layout->cores;
    if (spec.layout->max_cores == 0) spec.layout.edit().max_cores = spec.layout->cores;
    if (spec.layout->min_cores > spec.layout->cores ||
        spec.layout->cores > spec.layout->max_cores) {
      return Status::invalid("--cores: the start size " + std::to_string(spec.layout->cores) +
                             " is not in [" + std::to_string(spec.layout->min_cores) + ", " +
                             std::to_string(spec.layout->max_cores) + "]");
    }
  }
  const int total = partition_cores(index);
  if (spec.layout->min_cores > total) {
    return Status::invalid("job needs " + std::to_string(spec.layout->min_cores) +
                           " cores; partition " + name + " has " + std::to_string(total));
  }
  // It starts at its start size, or as near as the partition allows.
  spec.layout.edit().cores = std::min(spec.layout->cores, total);
  spec.layout.edit().max_cores = std::min(spec.layout->max_cores, total);
  // Its nodes are what its cores span, known when it starts.
  spec.nodes = spec.min_nodes = spec.max_nodes = 1;
  spec.layout.edit().nodes_from_tasks = false;
  return {};
}

void Engine::note_partition_failure(Partition& partition, const PolicyFailure& failure) {
  ++stats_.failed;
  ++partition.consecutive_failed;
  PolicyFailure error = failure;
  error.time = clock_.now();
  stats_.last_failure = error;
  const int limit = config_.revert_after_failures;
  const bool fallback = partition.last_good && partition.last_good != partition.policy;
  const bool give_up = limit > 0 && partition.consecutive_failed >= limit && fallback;
  Event event = policy_error_event(error, "partition " + partition.spec.name + ": " +
                                              partition.policy->name() + ": " + error.message +
                                              " (pass dropped)");
  event.partition = partition.spec.name;
  emit(std::move(event));
  if (!give_up) return;
  // Its own last good policy comes back; the other partitions never noticed.
  Event revert = policy_error_event(error, "");
  revert.type = EventType::PolicyReverted;
  revert.partition = partition.spec.name;
  revert.message = "partition " + partition.spec.name + ": policy " + partition.policy->name() +
                   " failed " + std::to_string(partition.consecutive_failed) +
                   " passes in a row (last: " + error.message + "); reverted to " +
                   partition.last_good->name() + ", the last policy that completed a pass";
  spdlog::warn("{}", revert.message);
  partition.policy = partition.last_good;
  partition.consecutive_failed = 0;
  ++stats_.reverts;
  ++state_version_;
  emit(std::move(revert));
  request_pass(PassReason::Manual);
}

}  // namespace sched
