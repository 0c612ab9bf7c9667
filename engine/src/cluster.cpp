#include "sched/cluster.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace sched {

NodeIndex Cluster::add_node(std::string name, int cores) {
  if (by_name_.count(name)) throw std::invalid_argument("duplicate node name: " + name);
  const auto index = static_cast<NodeIndex>(nodes_.size());
  by_name_.emplace(name, index);
  nodes_.push_back(Node{std::move(name), std::max(cores, 1)});
  fit_partition(0);
  bump(size_by_partition_, 0, +1);
  if (idle_.size() * 64 < nodes_.size()) idle_.push_back(0);
  set_idle(index, true);
  return index;
}

void Cluster::set_gpus(NodeIndex index, int gpus) {
  nodes_.at(static_cast<std::size_t>(index)).gpus = std::max(gpus, 0);
}

void Cluster::set_sockets(NodeIndex index, int sockets) {
  Node& node = nodes_.at(static_cast<std::size_t>(index));
  node.sockets = std::clamp(sockets, 1, node.cores);
}

std::optional<NodeIndex> Cluster::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

int Cluster::usable_count() const {
  return static_cast<int>(std::count_if(nodes_.begin(), nodes_.end(),
                                        [](const Node& n) { return n.up && !n.draining; }));
}

void Cluster::bump(std::vector<int>& counts, int partition, int delta) {
  // Sized already: every node's partition went through fit_partition.
  counts[static_cast<std::size_t>(partition)] += delta;
}

void Cluster::fit_partition(int partition) {
  const auto size = static_cast<std::size_t>(partition) + 1;
  for (std::vector<int>* counts :
       {&idle_by_partition_, &releasing_by_partition_, &size_by_partition_}) {
    if (counts->size() < size) counts->resize(size, 0);
  }
}

void Cluster::add_releasing(const Node& node, int delta) {
  releasing_unpromised_ += delta;
  bump(releasing_by_partition_, node.partition, delta);
}

void Cluster::set_partition(NodeIndex index, int partition) {
  Node& node = nodes_.at(static_cast<std::size_t>(index));
  if (node.partition == partition) return;
  fit_partition(partition);
  const bool idle = is_idle(index);
  const bool releasing = counts_releasing(node);
  bump(size_by_partition_, node.partition, -1);
  if (idle) bump(idle_by_partition_, node.partition, -1);
  if (releasing) bump(releasing_by_partition_, node.partition, -1);
  node.partition = partition;
  bump(size_by_partition_, partition, +1);
  if (idle) bump(idle_by_partition_, partition, +1);
  if (releasing) bump(releasing_by_partition_, partition, +1);
}

std::vector<NodeIndex> Cluster::allocate(JobId job, int count, std::vector<NodeIndex>* promised_out,
                                         int partition) {
  const int free = partition < 0 ? idle_count() + releasing_unpromised_
                                 : idle_count(partition) + releasing_unpromised_count(partition);
  if (count > free) {
    throw std::logic_error("allocation of " + std::to_string(count) +
                           " nodes exceeds what is free");
  }
  std::vector<NodeIndex> taken(static_cast<std::size_t>(std::max(count, 0)));
  int n = 0;
  // Idle nodes, lowest index first; each word's bits are cleared at once.
  for (std::size_t word = 0; n < count && word < idle_.size();) {
    std::uint64_t bits = idle_[word];
    std::uint64_t took = 0;
    while (bits != 0 && n < count) {
      const int bit = std::countr_zero(bits);
      bits &= bits - 1;
      const auto index = static_cast<NodeIndex>(word * 64 + static_cast<std::size_t>(bit));
      Node& node = nodes_[static_cast<std::size_t>(index)];
      if (partition >= 0 && node.partition != partition) continue;
      took |= std::uint64_t{1} << bit;
      --idle_by_partition_[static_cast<std::size_t>(node.partition)];
      node.job = job;
      taken[static_cast<std::size_t>(n++)] = index;
    }
    idle_[word] &= ~took;
    ++word;
  }
  idle_count_ -= n;
  taken.resize(static_cast<std::size_t>(n));
  int missing = count - n;
  for (std::size_t i = 0; missing > 0 && i < nodes_.size(); ++i) {
    Node& node = nodes_[i];
    if (partition >= 0 && node.partition != partition) continue;
    // Only what releasing_unpromised_ counts: a down or draining node is nobody's next.
    if (counts_releasing(node)) {
      add_releasing(node, -1);
      node.promised = job;
      --missing;
      if (promised_out) promised_out->push_back(static_cast<NodeIndex>(i));
    }
  }
  return taken;
}

void Cluster::mark_releasing(NodeIndex index) {
  Node& node = nodes_.at(static_cast<std::size_t>(index));
  if (node.job == 0 || node.releasing) return;
  node.releasing = true;
  if (node.up && !node.draining) add_releasing(node, +1);
}

JobId Cluster::release(NodeIndex index) {
  Node& node = nodes_.at(static_cast<std::size_t>(index));
  if (counts_releasing(node)) add_releasing(node, -1);
  const JobId next = node.promised;
  node.job = next;
  node.promised = 0;
  node.releasing = false;
  refresh_idle(index);
  return next;
}

void Cluster::release_held(JobId job, const std::vector<NodeIndex>& nodes,
                           std::vector<JobId>& handed_to) {
  for (NodeIndex index : nodes) {
    Node& node = nodes_.at(static_cast<std::size_t>(index));
    if (node.job != job) {
      unpromise(index);  // a promised node that never came
      continue;
    }
    const bool usable = node.up && !node.draining;
    if (node.releasing && node.promised == 0 && usable) add_releasing(node, -1);
    const JobId next = node.promised;
    node.job = next;
    node.promised = 0;
    node.releasing = false;
    if (next != 0) {
      handed_to.push_back(next);
    } else if (usable) {
      set_idle(index, true);
    }
  }
}

void Cluster::assign(NodeIndex index, JobId job) {
  Node& node = nodes_.at(static_cast<std::size_t>(index));
  if (node.job != 0) {
    throw std::logic_error("node " + node.name + " is held by job " + std::to_string(node.job));
  }
  node.job = job;
  refresh_idle(index);
}

void Cluster::keep(NodeIndex index) {
  Node& node = nodes_.at(static_cast<std::size_t>(index));
  if (!node.releasing) return;
  unpromise(index);
  if (node.up && !node.draining) add_releasing(node, -1);
  node.releasing = false;
}

void Cluster::unpromise(NodeIndex index) {
  Node& node = nodes_.at(static_cast<std::size_t>(index));
  if (node.promised == 0) return;
  node.promised = 0;
  if (node.releasing && node.up && !node.draining) add_releasing(node, +1);
}

void Cluster::set_up(NodeIndex index, bool up) {
  Node& node = nodes_.at(static_cast<std::size_t>(index));
  if (node.up == up) return;
  const bool counted = counts_releasing(node);
  node.up = up;
  add_releasing(node, static_cast<int>(counts_releasing(node)) - static_cast<int>(counted));
  refresh_idle(index);
}

void Cluster::set_draining(NodeIndex index, bool draining) {
  Node& node = nodes_.at(static_cast<std::size_t>(index));
  if (node.draining == draining) return;
  const bool counted = counts_releasing(node);
  node.draining = draining;
  add_releasing(node, static_cast<int>(counts_releasing(node)) - static_cast<int>(counted));
  refresh_idle(index);
}

void Cluster::refresh_idle(NodeIndex index) {
  const Node& node = nodes_[static_cast<std::size_t>(index)];
  set_idle(index, node.up && !node.draining && node.job == 0);
}

}  // namespace sched
