#include "sched/shrink_choice.hpp"

#include <algorithm>

#include "sched/constraints.hpp"

namespace sched {
namespace {

bool contains(const std::vector<NodeIndex>& nodes, NodeIndex node) {
  return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
}

// Lower goes first: down, then draining, then everything else.
int leave_rank(const Node& node) {
  if (!node.up) return 0;
  if (node.draining) return 1;
  return 2;
}

}  // namespace

std::vector<NodeIndex> default_shrink_nodes(const Cluster& cluster, const Job& job, int count,
                                            const std::vector<NodeIndex>& leaving) {
  // Positions 1.. (0 is the leader), newest first; a stable sort by rank
  // keeps the newest first within each rank.
  std::vector<NodeIndex> candidates;
  for (int i = job.size() - 1; i >= 1; --i) {
    const NodeIndex node = job.allocation[static_cast<std::size_t>(i)];
    if (!contains(leaving, node)) candidates.push_back(node);
  }
  std::stable_sort(candidates.begin(), candidates.end(), [&](NodeIndex a, NodeIndex b) {
    return leave_rank(cluster.node(a)) < leave_rank(cluster.node(b));
  });
  if (static_cast<int>(candidates.size()) > count) candidates.resize(std::max(count, 0));
  // In allocation order, as the job holds them.
  std::vector<NodeIndex> chosen;
  for (NodeIndex node : job.allocation) {
    if (contains(candidates, node)) chosen.push_back(node);
  }
  return chosen;
}

std::optional<std::string> check_shrink_nodes(const Cluster& cluster, const Job& job,
                                              const std::vector<NodeIndex>& nodes, int count,
                                              const std::vector<NodeIndex>& leaving) {
  if (static_cast<int>(nodes.size()) != count) {
    return "it names " + std::to_string(nodes.size()) + " nodes; the shrink gives back " +
           std::to_string(count);
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const NodeIndex node = nodes[i];
    const std::string name = node >= 0 && node < cluster.size() ? cluster.node(node).name : "?";
    if (!contains(job.allocation, node)) return "node " + name + " is not the job's";
    if (!job.allocation.empty() && node == job.allocation.front()) {
      return "node " + name + " is its leader, which never leaves";
    }
    if (contains(leaving, node)) return "node " + name + " already leaves in this pass";
    if (std::find(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(i), node) !=
        nodes.begin() + static_cast<std::ptrdiff_t>(i)) {
      return "node " + name + " is named twice";
    }
  }
  return std::nullopt;
}

std::vector<NodeIndex> drained_nodes_of(const Cluster& cluster, const Job& job) {
  std::vector<NodeIndex> nodes;
  for (int i = 1; i < job.size(); ++i) {
    const NodeIndex node = job.allocation[static_cast<std::size_t>(i)];
    if (leave_rank(cluster.node(node)) < 2) nodes.push_back(node);
  }
  return nodes;
}

std::optional<int> drain_shrink_size(const Job& job, int size, int off) {
  const int lo = std::max(1, job.spec.min_nodes);
  return highest_allowed_at_most(job.spec.constraint, lo, job.spec.max_nodes, size - off);
}

}  // namespace sched
