#include "sched/placement.hpp"

#include <algorithm>

namespace sched {
namespace {

bool listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

bool has_placement(const JobSpec& spec) {
  return !spec.extra->nodelist.empty() || !spec.extra->exclude.empty() ||
         spec.extra->gpus_per_node > 0;
}

bool may_use(const JobSpec& spec, const Node& node) {
  return node.gpus >= spec.extra->gpus_per_node && !listed(spec.extra->exclude, node.name);
}

std::optional<std::string> check_placement(const JobSpec& spec, const Cluster& cluster) {
  for (const std::string& name : spec.extra->nodelist) {
    const auto index = cluster.find(name);
    if (!index) return "--nodelist: no node " + name;
    if (listed(spec.extra->exclude, name)) return "--nodelist and --exclude both name " + name;
    if (!may_use(spec, cluster.node(*index))) {
      return "--nodelist: " + name + " has " + std::to_string(cluster.node(*index).gpus) +
             " GPUs; the job needs " + std::to_string(spec.extra->gpus_per_node);
    }
  }
  for (const std::string& name : spec.extra->exclude) {
    if (!cluster.find(name)) return "--exclude: no node " + name;
  }
  const auto usable = std::count_if(cluster.nodes().begin(), cluster.nodes().end(),
                                    [&](const Node& node) { return may_use(spec, node); });
  const int smallest = spec.kind == JobKind::Rigid ? spec.nodes : spec.min_nodes;
  if (usable < smallest) {
    return "Requested node configuration is not available: " + std::to_string(usable) + " nodes" +
           (spec.extra->gpus_per_node > 0
                ? " with " + std::to_string(spec.extra->gpus_per_node) + " GPUs"
                : "") +
           (spec.extra->exclude.empty() ? "" : " not excluded") + "; the job needs " +
           std::to_string(smallest);
  }
  return std::nullopt;
}

std::optional<std::vector<NodeIndex>> place(const JobSpec& spec, int size, const Cluster& cluster,
                                            const std::vector<bool>& taken) {
  const auto free = [&](NodeIndex index) {
    return cluster.idle(index) && !taken[static_cast<std::size_t>(index)] &&
           may_use(spec, cluster.node(index));
  };
  if (static_cast<int>(spec.extra->nodelist.size()) > size)
    return std::nullopt;  // a moldable's smaller start
  std::vector<NodeIndex> nodes;
  for (const std::string& name : spec.extra->nodelist) {
    const auto index = cluster.find(name);
    if (!index || !free(*index)) return std::nullopt;
    nodes.push_back(*index);
  }
  for (NodeIndex index = 0; index < cluster.size() && static_cast<int>(nodes.size()) < size;
       ++index) {
    if (free(index) && std::find(nodes.begin(), nodes.end(), index) == nodes.end()) {
      nodes.push_back(index);
    }
  }
  if (static_cast<int>(nodes.size()) < size) return std::nullopt;
  return nodes;
}

}  // namespace sched
