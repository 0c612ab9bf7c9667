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
  if (idle_.size() * 64 < nodes_.size()) idle_.push_back(0);
  set_idle(index, true);
  return index;
}

void Cluster::set_gpus(NodeIndex index, int gpus) {
  nodes_.at(static_cast<std::size_t>(index)).gpus = std::max(gpus, 0);
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

std::vector<NodeIndex> Cluster::allocate(JobId job, int count,
                                         std::vector<NodeIndex>* promised_out) {
  if (count > idle_count() + releasing_unpromised_) {
    throw std::logic_error("allocation of " + std::to_string(count) +
                           " nodes exceeds what is free");
  }
  std::vector<NodeIndex> taken;
  taken.reserve(static_cast<std::size_t>(count));
  // Idle nodes, lowest index first.
  for (std::size_t word = 0; static_cast<int>(taken.size()) < count && word < idle_.size();) {
    if (idle_[word] == 0) {
      ++word;
      continue;
    }
    const auto index = static_cast<NodeIndex>(word * 64 + std::countr_zero(idle_[word]));
    set_idle(index, false);
    nodes_[static_cast<std::size_t>(index)].job = job;
    taken.push_back(index);
  }
  int missing = count - static_cast<int>(taken.size());
  for (std::size_t i = 0; missing > 0 && i < nodes_.size(); ++i) {
    Node& node = nodes_[i];
    // Only what releasing_unpromised_ counts: a down or draining node is nobody's next.
    if (node.releasing && node.promised == 0 && node.up && !node.draining) {
      node.promised = job;
      --releasing_unpromised_;
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
  if (node.up && !node.draining) ++releasing_unpromised_;
}

JobId Cluster::release(NodeIndex index) {
  Node& node = nodes_.at(static_cast<std::size_t>(index));
  if (node.releasing && node.promised == 0 && node.up && !node.draining) --releasing_unpromised_;
  const JobId next = node.promised;
  node.job = next;
  node.promised = 0;
  node.releasing = false;
  refresh_idle(index);
  return next;
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
  if (node.up && !node.draining) --releasing_unpromised_;
  node.releasing = false;
}

void Cluster::unpromise(NodeIndex index) {
  Node& node = nodes_.at(static_cast<std::size_t>(index));
  if (node.promised == 0) return;
  node.promised = 0;
  if (node.releasing && node.up && !node.draining) ++releasing_unpromised_;
}

void Cluster::set_up(NodeIndex index, bool up) {
  Node& node = nodes_.at(static_cast<std::size_t>(index));
  if (node.up == up) return;
  const bool counted = node.releasing && node.promised == 0 && node.up && !node.draining;
  node.up = up;
  const bool counts = node.releasing && node.promised == 0 && node.up && !node.draining;
  releasing_unpromised_ += static_cast<int>(counts) - static_cast<int>(counted);
  refresh_idle(index);
}

void Cluster::set_draining(NodeIndex index, bool draining) {
  Node& node = nodes_.at(static_cast<std::size_t>(index));
  if (node.draining == draining) return;
  const bool counted = node.releasing && node.promised == 0 && node.up && !node.draining;
  node.draining = draining;
  const bool counts = node.releasing && node.promised == 0 && node.up && !node.draining;
  releasing_unpromised_ += static_cast<int>(counts) - static_cast<int>(counted);
  refresh_idle(index);
}

void Cluster::refresh_idle(NodeIndex index) {
  const Node& node = nodes_[static_cast<std::size_t>(index)];
  set_idle(index, node.up && !node.draining && node.job == 0);
}

void Cluster::set_idle(NodeIndex index, bool idle) {
  if (is_idle(index) == idle) return;
  const auto i = static_cast<std::size_t>(index);
  idle_[i / 64] ^= std::uint64_t{1} << (i % 64);
  idle_count_ += idle ? 1 : -1;
}

}  // namespace sched
