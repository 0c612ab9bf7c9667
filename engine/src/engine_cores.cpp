// Invasive partitions (issue 20 item 2; docs/design.md §3): jobs of a
// partition of kind "cores" hold cores of its nodes, several jobs a node.
// The CoreMap says which cores are whose; the Cluster sees a node with any
// busy core as held (kCoresShared), so the partition's idle nodes are its
// wholly free ones and nothing allocates such a node whole.
#include <algorithm>

#include "sched/core_resize.hpp"
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
  job.run.edit().cores = cores;
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
  if (job.run->expected_start) job.run.edit().expected_start.reset();
  transition(job, JobState::Starting, EventType::JobStarting);
  launch_if_ready(job.id);
}

void Engine::release_cores(Job& job) {
  cores_.release(job.id, job.run->cores);
  for (const NodeCores& nc : job.run->cores) release_if_no_core_busy(nc.node);
  if (!job.run->cores.empty()) job.run.edit().cores.clear();
}

void Engine::release_if_no_core_busy(NodeIndex index) {
  const Node& node = cluster_.node(index);
  if (node.job == kCoresShared && cores_.free_count(index) == cores_.cores(index)) {
    cluster_.release(index);
  }
}

// ---- resizing by cores (issue 20 item 2; docs/design.md §6)

void Engine::enact_resize_cores(Job& job, int to, const CoreSet& cores) {
  Resize resize;
  resize.cores = cores;
  resize.cores_from = core_count(job.run->cores);
  resize.cores_to = to;
  resize.from = job.size();
  const auto holds_on = [&job](NodeIndex node) {
    return std::find(job.allocation.begin(), job.allocation.end(), node) != job.allocation.end();
  };
  if (to > resize.cores_from) {
    resize.op = Resize::Op::Expand;
    cores_.take(job.id, cores);
    for (const NodeCores& nc : cores) {
      if (holds_on(nc.node)) continue;
      resize.added.push_back(nc.node);  // a node it gains whole: processes start there
      if (cluster_.node(nc.node).job == 0) cluster_.assign(nc.node, kCoresShared);
    }
  } else {
    resize.op = Resize::Op::Shrink;
    for (const NodeCores& nc : cores) {
      const auto it = std::find_if(job.run->cores.begin(), job.run->cores.end(),
                                   [&](const NodeCores& mine) { return mine.node == nc.node; });
      if (it != job.run->cores.end() && it->cores.size() == nc.cores.size()) {
        resize.removed.push_back(nc.node);  // it leaves the node: its processes there go
      }
    }
  }
  resize.to =
      resize.from + static_cast<int>(resize.added.size()) - static_cast<int>(resize.removed.size());
  adaptations_[job.id] = resize;
  std::string message = (resize.op == Resize::Op::Expand ? "expand " : "shrink ") +
                        std::to_string(resize.cores_from) + " -> " + std::to_string(to) + " cores";
  transition(job, JobState::Adapting, EventType::JobAdapting, std::move(message));
  launch_if_ready(job.id);
}

void Engine::finish_resize_cores(Job& job, const Resize& resize, bool ok) {
  if (ok && resize.op == Resize::Op::Expand) {
    add_cores(job.run.edit().cores, resize.cores);
    ++job.run.edit().expansions;
  } else if (ok) {
    // Narrowed once the application committed: the cores are free now.
    cores_.release(job.id, resize.cores);
    remove_cores(job.run.edit().cores, resize.cores);
    ++job.run.edit().shrinks;
  } else if (resize.op == Resize::Op::Expand) {
    cores_.release(job.id, resize.cores);  // rolled back: the new cores go back
  }
  for (const NodeCores& nc : resize.cores) release_if_no_core_busy(nc.node);
  job.allocation.clear();
  for (const NodeCores& nc : job.run->cores) job.allocation.push_back(nc.node);
  if (ok) job.run.edit().gain += resize.cores_to - resize.cores_from;
}

void Engine::suspend_cores(Job& job) {
  cores_.release(job.id, job.run->cores);
  for (const NodeCores& nc : job.run->cores) release_if_no_core_busy(nc.node);
}

void Engine::resume_cores(Job& job) {
  const CoreSet cores = job.run->cores;
  hold_cores(job, cores);
}

}  // namespace sched
