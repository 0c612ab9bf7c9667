#include "sched/partition.hpp"

#include <array>
#include <map>
#include <set>

namespace sched {

std::string_view to_string(PartitionState state) {
  static constexpr std::array<std::string_view, 3> names = {"up", "drain", "down"};
  return names[static_cast<std::size_t>(state)];
}

std::optional<PartitionState> parse_partition_state(std::string_view text) {
  if (text == "up") return PartitionState::Up;
  if (text == "drain") return PartitionState::Drain;
  if (text == "down") return PartitionState::Down;
  return std::nullopt;
}

std::string_view to_string(PartitionKind kind) {
  return kind == PartitionKind::Cores ? "cores" : "nodes";
}

std::optional<PartitionKind> parse_partition_kind(std::string_view text) {
  if (text == "nodes") return PartitionKind::Nodes;
  if (text == "cores") return PartitionKind::Cores;
  return std::nullopt;
}

std::optional<std::string> check_partitions(const std::vector<PartitionSpec>& partitions) {
  std::set<std::string> names;
  std::map<std::string, std::string> owner;  // node → the partition that named it first
  const PartitionSpec* first_default = nullptr;
  for (const PartitionSpec& p : partitions) {
    if (p.name.empty()) return "a partition has no name";
    for (char c : p.name) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '.';
      if (!ok) return "partition name '" + p.name + "': only letters, digits, '_', '-' and '.'";
    }
    if (!names.insert(p.name).second) return "partition " + p.name + " is defined twice";
    for (const std::string& node : p.nodes) {
      auto [it, fresh] = owner.emplace(node, p.name);
      if (!fresh) {
        return "node " + node + " is in partitions " + it->second + " and " + p.name +
               ": a node is in exactly one partition";
      }
    }
    if (p.is_default) {
      if (first_default) {
        return "partitions " + first_default->name + " and " + p.name +
               " are both default: at most one may be";
      }
      first_default = &p;
    }
    const PartitionLimits& l = p.limits;
    if (l.max_time_s < 0 || l.default_time_s < 0 || l.max_nodes < 0) {
      return "partition " + p.name + ": limits may not be negative";
    }
    if (l.max_time_s > 0 && l.default_time_s > l.max_time_s) {
      return "partition " + p.name + ": default_time is over max_time";
    }
  }
  return std::nullopt;
}

std::size_t default_partition(const std::vector<PartitionSpec>& partitions) {
  for (std::size_t i = 0; i < partitions.size(); ++i) {
    if (partitions[i].is_default) return i;
  }
  return 0;
}

}  // namespace sched
