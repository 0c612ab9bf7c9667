// Invasive partitions (issue 20 item 2; docs/design.md §3): jobs of a
// partition of kind "cores" hold cores of its nodes, several jobs a node.
// The CoreMap says which cores are whose; the Cluster sees a node with any
// busy core as held (kCoresShared), so the partition's idle nodes are its
// wholly free ones and nothing allocates such a node whole.
#include <algorithm>

#include "sched/engine.hpp"

namespace sched {

bool Engine::cores_partition(int index) const {
  return index >= 0 && static_cast<std::size_t>(index) < partitions_.size() &&
         partitions_[static_cast<std::size_t>(index)].spec.kind == PartitionKind::Cores;
}

int Engine::partition_cores(int index) const {
  int total = 0;
  for (const Node& node : cluster_.nodes()) {
    if (node.partition == index) total += node.cores;
  }
  return total;
}

Status Engine::set_node_sockets(const std::string& name, int sockets) {
  const auto index = cluster_.find(name);
  if (!index) return Status::not_found("no node " + name);
  if (cluster_.node(*index).sockets != sockets) {
    cluster_.set_sockets(*index, sockets);
    track_cores(*index);
    ++state_version_;
  }
  return {};
}

void Engine::track_cores(NodeIndex index) {
  const Node& node = cluster_.node(index);
  if (cores_partition(node.partition)) cores_.track(index, node.cores, node.sockets);
}

void Engine::hold_cores(Job& job, const CoreSet& cores) {
  cores_.take(job.id, cores);
  job.cores = cores;
  job.allocation.clear();
  for (const NodeCores& nc : cores) {
    // The first job on a node makes it held for the node-level view.
    if (cluster_.node(nc.node).job == 0) cluster_.assign(nc.node, kCoresShared);
    job.allocation.push_back(nc.node);
  }
}

void Engine::enact_start_cores(Job& job, const CoreSet& cores) {
  hold_cores(job, cores);
  pending_.erase(job);
  job.expected_start.reset();
  transition(job, JobState::Starting, EventType::JobStarting);
  launch_if_ready(job.id);
}

void Engine::release_cores(Job& job) {
  cores_.release(job.id, job.cores);
  for (const NodeCores& nc : job.cores) {
    const Node& node = cluster_.node(nc.node);
    if (node.job == kCoresShared && cores_.free_count(nc.node) == cores_.cores(nc.node)) {
      cluster_.release(nc.node);
    }
  }
  job.cores.clear();
}

}  // namespace sched
