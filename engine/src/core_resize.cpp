#include "sched/core_resize.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace sched {

namespace {

bool contains(const std::vector<NodeIndex>& nodes, NodeIndex node) {
  return std::find(nodes.begin(), nodes.end(), node) != nodes.end();
}

// Free cores of one socket of `node` (lowest ids first) into `picked`, up to `left`.
void take_free(const CoreMap& map, NodeIndex node, int socket, std::vector<int>& picked,
               int& left) {
  for (int c = 0; c < map.cores(node) && left > 0; ++c) {
    if (map.socket_of(node, c) != socket || map.owner(node, c) != 0) continue;
    if (std::find(picked.begin(), picked.end(), c) != picked.end()) continue;
    picked.push_back(c);
    --left;
  }
}

// The order in which a shrink looks at a job's nodes: the others from the
// last one back, then the leader (entry 0).
std::vector<std::size_t> giving_order(std::size_t entries) {
  std::vector<std::size_t> order;
  for (std::size_t i = entries; i-- > 1;) order.push_back(i);
  order.push_back(0);
  return order;
}

}  // namespace

std::optional<CoreSet> grow_cores(const CoreMap& map, const CoreSet& held, int count,
                                  const std::vector<NodeIndex>& candidates) {
  if (count < 1) return std::nullopt;
  int free = 0;
  for (NodeIndex n : candidates) free += map.free_count(n);
  if (free < count) return std::nullopt;
  int left = count;
  std::vector<std::vector<int>> picked(held.size());
  // 1. The sockets where it has cores, most of its cores first.
  for (std::size_t i = 0; i < held.size() && left > 0; ++i) {
    const NodeIndex node = held[i].node;
    if (!contains(candidates, node)) continue;
    std::vector<int> mine(static_cast<std::size_t>(map.sockets(node)), 0);
    for (int c : held[i].cores) ++mine[static_cast<std::size_t>(map.socket_of(node, c))];
    std::vector<int> order(mine.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return mine[static_cast<std::size_t>(a)] > mine[static_cast<std::size_t>(b)];
    });
    for (int s : order) {
      if (mine[static_cast<std::size_t>(s)] > 0) take_free(map, node, s, picked[i], left);
    }
  }
  // 2. The other sockets of its nodes, most free first.
  for (std::size_t i = 0; i < held.size() && left > 0; ++i) {
    const NodeIndex node = held[i].node;
    if (!contains(candidates, node)) continue;
    const std::vector<int> free_by_socket = map.free_per_socket(node);
    std::vector<int> order(free_by_socket.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return free_by_socket[static_cast<std::size_t>(a)] >
             free_by_socket[static_cast<std::size_t>(b)];
    });
    for (int s : order) take_free(map, node, s, picked[i], left);
  }
  CoreSet out;
  for (std::size_t i = 0; i < held.size(); ++i) {
    if (picked[i].empty()) continue;
    std::sort(picked[i].begin(), picked[i].end());
    out.push_back(NodeCores{held[i].node, std::move(picked[i])});
  }
  // 3. Other nodes, packed as a start is.
  if (left > 0) {
    std::vector<NodeIndex> others;
    for (NodeIndex n : candidates) {
      const bool its =
          std::any_of(held.begin(), held.end(), [n](const NodeCores& nc) { return nc.node == n; });
      if (!its) others.push_back(n);
    }
    auto placed = place_cores(map, left, others);
    if (!placed) return std::nullopt;
    out.insert(out.end(), placed->begin(), placed->end());
  }
  return out;
}

std::optional<CoreSet> shrink_cores(const CoreMap& map, const CoreSet& held, int count) {
  if (count < 1 || held.empty() || count > core_count(held) - 1) return std::nullopt;
  std::vector<std::vector<int>> keep;
  for (const NodeCores& nc : held) keep.push_back(nc.cores);
  std::vector<std::vector<int>> give(held.size());
  int left = count;
  const auto move = [&](std::size_t i, int core) {
    keep[i].erase(std::find(keep[i].begin(), keep[i].end(), core));
    give[i].push_back(core);
    --left;
  };
  // 1. Whole nodes other than the leader, fewest of its cores first.
  std::vector<std::size_t> others;
  for (std::size_t i = held.size(); i-- > 1;) others.push_back(i);
  std::stable_sort(others.begin(), others.end(),
                   [&](std::size_t a, std::size_t b) { return keep[a].size() < keep[b].size(); });
  for (std::size_t i : others) {
    if (static_cast<int>(keep[i].size()) > left) continue;
    const std::vector<int> all = keep[i];
    for (int c : all) move(i, c);
  }
  // 2. Whole sockets, fewest of its cores first; the leader keeps one core.
  for (std::size_t i : giving_order(held.size())) {
    const NodeIndex node = held[i].node;
    std::map<int, std::vector<int>> by_socket;
    for (int c : keep[i]) by_socket[map.socket_of(node, c)].push_back(c);
    std::vector<std::vector<int>> sockets;
    for (auto& [socket, cores] : by_socket) sockets.push_back(cores);
    std::stable_sort(sockets.begin(), sockets.end(),
                     [](const auto& a, const auto& b) { return a.size() < b.size(); });
    for (const std::vector<int>& cores : sockets) {
      const int n = static_cast<int>(cores.size());
      if (n > left || (i == 0 && n >= static_cast<int>(keep[i].size()))) continue;
      for (int c : cores) move(i, c);
    }
  }
  // 3. Single cores, highest ids first.
  for (std::size_t i : giving_order(held.size())) {
    while (left > 0 && keep[i].size() > (i == 0 ? 1u : 0u)) {
      move(i, *std::max_element(keep[i].begin(), keep[i].end()));
    }
  }
  CoreSet out;
  for (std::size_t i = 0; i < held.size(); ++i) {
    if (give[i].empty()) continue;
    std::sort(give[i].begin(), give[i].end());
    out.push_back(NodeCores{held[i].node, std::move(give[i])});
  }
  return out;
}

void add_cores(CoreSet& into, const CoreSet& more) {
  for (const NodeCores& nc : more) {
    auto it = std::find_if(into.begin(), into.end(),
                           [&](const NodeCores& have) { return have.node == nc.node; });
    if (it == into.end()) {
      into.push_back(nc);
      it = into.end() - 1;
    } else {
      it->cores.insert(it->cores.end(), nc.cores.begin(), nc.cores.end());
    }
    std::sort(it->cores.begin(), it->cores.end());
    it->cores.erase(std::unique(it->cores.begin(), it->cores.end()), it->cores.end());
  }
}

void remove_cores(CoreSet& from, const CoreSet& less) {
  for (const NodeCores& nc : less) {
    for (NodeCores& have : from) {
      if (have.node != nc.node) continue;
      std::erase_if(have.cores, [&](int c) {
        return std::find(nc.cores.begin(), nc.cores.end(), c) != nc.cores.end();
      });
    }
  }
  std::erase_if(from, [](const NodeCores& nc) { return nc.cores.empty(); });
}

}  // namespace sched
