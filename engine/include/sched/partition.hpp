// Partitions (issue 20 item 1; docs/design.md §3 "Partitions"): named sets
// of nodes, as Slurm's. Each has its own pass, run by its own policy over
// its own jobs and nodes, its limits and its state. A node is in exactly one
// partition. With none configured, one implicit partition, "batch", holds
// every node and runs the engine's policy: the engine then behaves as it did
// before partitions existed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sched {

// up: takes and starts jobs; drain: takes no new job, starts and runs those
// it has; down: takes none and starts none (running jobs run on).
enum class PartitionState { Up, Drain, Down };
std::string_view to_string(PartitionState state);
std::optional<PartitionState> parse_partition_state(std::string_view text);

// nodes: jobs get whole nodes (the default). cores: an invasive partition
// (issue 20 item 2; sched/core_map.hpp): jobs get cores of nodes, packed by
// socket, and several jobs share a node.
enum class PartitionKind { Nodes, Cores };
std::string_view to_string(PartitionKind kind);
std::optional<PartitionKind> parse_partition_kind(std::string_view text);

// What a job submitted to the partition may ask (Slurm's partition limits).
struct PartitionLimits {
  double max_time_s = 0;      // MaxTime: the most a job's time limit may be; 0: none
  double default_time_s = 0;  // DefaultTime: a job that gives none gets it; 0: max_time_s
  int max_nodes = 0;          // MaxNodes: the most nodes a job may need at least; 0: none
  // AllowUsers / AllowGroups: who may submit; both empty: everyone. A user is
  // allowed when named, or a member of a group named.
  std::vector<std::string> users;
  std::vector<std::string> groups;
};

// One partition as configured.
struct PartitionSpec {
  std::string name;
  std::vector<std::string> nodes;  // node names, expanded (no host-list ranges)
  bool is_default = false;         // jobs that name none go here; nodes no partition names, too
  PartitionState state = PartitionState::Up;
  PartitionLimits limits;
  PartitionKind kind = PartitionKind::Nodes;
};

// The name of the one partition there is when none is configured.
inline constexpr std::string_view kImplicitPartition = "batch";

// Checks a set of partitions before anything uses them: names well formed
// ([A-Za-z0-9_.-]) and unique, no node in two partitions, at most one
// default, limits not negative. An error message naming the partition and
// the node, or nothing.
std::optional<std::string> check_partitions(const std::vector<PartitionSpec>& partitions);

// The partition a job without -p goes to: the one marked default, else the
// first. Index into `partitions`, which must not be empty.
std::size_t default_partition(const std::vector<PartitionSpec>& partitions);

}  // namespace sched
