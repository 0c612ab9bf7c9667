#include "sched/invasive/partition.hpp"

#include <algorithm>
#include <set>

namespace sched::invasive {

Topology Topology::uniform(int count, int sockets, int cores_per_socket) {
  Topology t;
  for (int i = 0; i < count; ++i) t.nodes.push_back("n" + std::to_string(i));
  t.sockets_per_node = sockets;
  t.cores_per_socket = cores_per_socket;
  return t;
}

int extra_sockets(const std::vector<int>& cores, int cores_per_socket) {
  if (cores.empty() || cores_per_socket <= 0) return 0;
  std::set<int> sockets;
  for (int c : cores) sockets.insert(c / cores_per_socket);
  const int needed = (static_cast<int>(cores.size()) + cores_per_socket - 1) / cores_per_socket;
  return static_cast<int>(sockets.size()) - needed;
}

int extra_sockets(const std::vector<proto::NegoPlacement>& placements, int cores_per_socket) {
  int extra = 0;
  for (const auto& p : placements) extra += extra_sockets(p.cores, cores_per_socket);
  return extra;
}

int PartitionJob::cores() const {
  int n = 0;
  for (const auto& p : placement) n += static_cast<int>(p.cores.size());
  return n;
}

Partition::Partition(Topology topology) : topology_(std::move(topology)) {
  cores_.assign(topology_.nodes.size(), std::vector<Core>(topology_.cores_per_node()));
}

int Partition::node_index(const std::string& node) const {
  auto it = std::find(topology_.nodes.begin(), topology_.nodes.end(), node);
  return it == topology_.nodes.end() ? -1 : static_cast<int>(it - topology_.nodes.begin());
}

Partition::Core* Partition::core(const std::string& node, int c) {
  const int n = node_index(node);
  if (n < 0 || c < 0 || c >= topology_.cores_per_node()) return nullptr;
  return &cores_[n][c];
}

const Partition::Core* Partition::core(const std::string& node, int c) const {
  return const_cast<Partition*>(this)->core(node, c);
}

int Partition::cores_busy() const {
  int busy = 0;
  for (const auto& node : cores_) {
    for (const Core& c : node) busy += c.owner != 0;
  }
  return busy;
}

std::vector<proto::NegoResource> Partition::free_resources() const {
  std::vector<proto::NegoResource> out;
  for (std::size_t n = 0; n < cores_.size(); ++n) {
    proto::NegoResource r{topology_.nodes[n], {}};
    for (int s = 0; s < topology_.sockets_per_node; ++s) {
      proto::NegoSocket socket{s, {}};
      for (int i = 0; i < topology_.cores_per_socket; ++i) {
        const int c = s * topology_.cores_per_socket + i;
        if (cores_[n][c].owner == 0 && cores_[n][c].kept_for == 0) socket.cores.push_back(c);
      }
      if (!socket.cores.empty()) r.sockets.push_back(std::move(socket));
    }
    if (!r.sockets.empty()) out.push_back(std::move(r));
  }
  return out;
}

bool Partition::is_free(const std::string& node, int c) const {
  const Core* k = core(node, c);
  return k && k->owner == 0 && k->kept_for == 0;
}

bool Partition::is_idle(const std::string& node, int c) const {
  const Core* k = core(node, c);
  return k && k->owner == 0;
}

std::vector<std::int64_t> Partition::job_ids() const {
  std::vector<std::int64_t> ids;
  for (const auto& [id, job] : jobs_) ids.push_back(id);
  return ids;
}

std::optional<std::string> Partition::start(std::int64_t job,
                                            std::vector<proto::NegoPlacement> placement, double now,
                                            bool urgent) {
  if (jobs_.contains(job)) return "job " + std::to_string(job) + " runs already";
  for (const auto& p : placement) {
    for (int c : p.cores) {
      const Core* k = core(p.node, c);
      if (!k) return "no core " + std::to_string(c) + " on node " + p.node;
      if (k->owner != 0 || (!urgent && k->kept_for != 0 && k->kept_for != job)) {
        return "core " + std::to_string(c) + " of " + p.node + " is not free";
      }
    }
  }
  for (const auto& p : placement) {
    for (int c : p.cores) core(p.node, c)->owner = job;
  }
  jobs_[job] = PartitionJob{job, std::move(placement), now, false};
  return std::nullopt;
}

void Partition::end(std::int64_t job) {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return;
  for (const auto& p : it->second.placement) {
    for (int c : p.cores) {
      Core* k = core(p.node, c);
      if (k->owner == job) k->owner = 0;
      if (k->kept_for == job) k->kept_for = 0;
    }
  }
  std::erase(suspended_order_, job);
  jobs_.erase(it);
}

void Partition::suspend(std::int64_t job) {
  auto it = jobs_.find(job);
  if (it == jobs_.end() || it->second.suspended) return;
  it->second.suspended = true;
  for (const auto& p : it->second.placement) {
    for (int c : p.cores) {
      Core* k = core(p.node, c);
      k->owner = 0;
      k->kept_for = job;
    }
  }
  suspended_order_.push_back(job);
}

std::vector<std::int64_t> Partition::resume_ready() {
  std::vector<std::int64_t> resumed;
  for (auto it = suspended_order_.begin(); it != suspended_order_.end();) {
    PartitionJob& j = jobs_.at(*it);
    bool ready = true;
    for (const auto& p : j.placement) {
      for (int c : p.cores) ready = ready && core(p.node, c)->owner == 0;
    }
    if (!ready) {
      ++it;
      continue;
    }
    for (const auto& p : j.placement) {
      for (int c : p.cores) {
        Core* k = core(p.node, c);
        k->owner = j.job;
        k->kept_for = 0;
      }
    }
    j.suspended = false;
    resumed.push_back(j.job);
    it = suspended_order_.erase(it);
  }
  return resumed;
}

}  // namespace sched::invasive
