#include "sched/core_map.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace sched {

int core_count(const CoreSet& set) {
  int n = 0;
  for (const NodeCores& nc : set) n += static_cast<int>(nc.cores.size());
  return n;
}

void CoreMap::track(NodeIndex node, int cores, int sockets) {
  cores = std::max(cores, 1);
  sockets = std::clamp(sockets, 1, cores);
  const auto i = static_cast<std::size_t>(node);
  if (nodes_.size() <= i) nodes_.resize(i + 1);
  Shape& s = nodes_[i];
  s.sockets = sockets;
  s.owner.resize(static_cast<std::size_t>(cores), 0);
  s.free = static_cast<int>(std::count(s.owner.begin(), s.owner.end(), JobId{0}));
}

const CoreMap::Shape* CoreMap::shape(NodeIndex node) const {
  const auto i = static_cast<std::size_t>(node);
  if (node < 0 || i >= nodes_.size() || nodes_[i].sockets == 0) return nullptr;
  return &nodes_[i];
}

bool CoreMap::tracked(NodeIndex node) const { return shape(node) != nullptr; }

int CoreMap::cores(NodeIndex node) const {
  const Shape* s = shape(node);
  return s ? static_cast<int>(s->owner.size()) : 0;
}

int CoreMap::sockets(NodeIndex node) const {
  const Shape* s = shape(node);
  return s ? s->sockets : 0;
}

int CoreMap::socket_of(NodeIndex node, int core) const {
  const Shape* s = shape(node);
  if (!s) return 0;
  // Even split in id order: hwloc numbers a socket's cores consecutively.
  return core * s->sockets / static_cast<int>(s->owner.size());
}

int CoreMap::free_count(NodeIndex node) const {
  const Shape* s = shape(node);
  return s ? s->free : 0;
}

std::vector<int> CoreMap::free_per_socket(NodeIndex node) const {
  const Shape* s = shape(node);
  if (!s) return {};
  std::vector<int> free(static_cast<std::size_t>(s->sockets), 0);
  for (std::size_t c = 0; c < s->owner.size(); ++c) {
    if (s->owner[c] == 0) ++free[static_cast<std::size_t>(socket_of(node, static_cast<int>(c)))];
  }
  return free;
}

JobId CoreMap::owner(NodeIndex node, int core) const {
  const Shape* s = shape(node);
  if (!s || core < 0 || core >= static_cast<int>(s->owner.size())) return 0;
  return s->owner[static_cast<std::size_t>(core)];
}

std::vector<JobId> CoreMap::holders(NodeIndex node) const {
  const Shape* s = shape(node);
  if (!s) return {};
  std::vector<JobId> jobs;
  for (JobId j : s->owner) {
    if (j != 0) jobs.push_back(j);
  }
  std::sort(jobs.begin(), jobs.end());
  jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
  return jobs;
}

std::optional<CoreMap::Conflict> CoreMap::check(const CoreSet& set) const {
  std::vector<NodeIndex> seen;
  for (const NodeCores& nc : set) {
    const Shape* s = shape(nc.node);
    if (!s) return Conflict{false, "node " + std::to_string(nc.node) + " has no cores to share"};
    if (std::find(seen.begin(), seen.end(), nc.node) != seen.end()) {
      return Conflict{false, "a node is given twice"};
    }
    seen.push_back(nc.node);
    if (nc.cores.empty()) return Conflict{false, "a node is given no core"};
    std::vector<int> sorted = nc.cores;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      return Conflict{false, "a core is given twice"};
    }
    for (int c : sorted) {
      if (c < 0 || c >= static_cast<int>(s->owner.size())) {
        return Conflict{false, "core " + std::to_string(c) + " does not exist (the node has " +
                                   std::to_string(s->owner.size()) + ")"};
      }
      if (const JobId holder = s->owner[static_cast<std::size_t>(c)]; holder != 0) {
        return Conflict{
            true, "core " + std::to_string(c) + " is busy (job " + std::to_string(holder) + ")"};
      }
    }
  }
  return std::nullopt;
}

void CoreMap::take(JobId job, const CoreSet& set) {
  if (auto conflict = check(set)) throw std::logic_error("cores not free: " + conflict->why);
  for (const NodeCores& nc : set) {
    Shape& s = nodes_[static_cast<std::size_t>(nc.node)];
    for (int c : nc.cores) s.owner[static_cast<std::size_t>(c)] = job;
    s.free -= static_cast<int>(nc.cores.size());
  }
}

void CoreMap::release(JobId job, const CoreSet& set) {
  for (const NodeCores& nc : set) {
    if (!shape(nc.node)) continue;
    Shape& s = nodes_[static_cast<std::size_t>(nc.node)];
    for (int c : nc.cores) {
      if (c < 0 || c >= static_cast<int>(s.owner.size())) continue;
      JobId& owner = s.owner[static_cast<std::size_t>(c)];
      if (owner != job) continue;
      owner = 0;
      ++s.free;
    }
  }
}

namespace {

// `want` free cores of one node, packed by socket (see place_cores).
std::vector<int> pick_on_node(const CoreMap& map, NodeIndex node, int want) {
  const std::vector<int> free = map.free_per_socket(node);
  const int sockets = static_cast<int>(free.size());
  std::vector<int> order(static_cast<std::size_t>(sockets));
  std::iota(order.begin(), order.end(), 0);
  int best = -1;  // a socket that holds them all, with the fewest free
  for (int s : order) {
    const int f = free[static_cast<std::size_t>(s)];
    if (f >= want && (best < 0 || f < free[static_cast<std::size_t>(best)])) best = s;
  }
  if (best >= 0) {
    order = {best};
  } else {
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return free[static_cast<std::size_t>(a)] > free[static_cast<std::size_t>(b)];
    });
  }
  std::vector<int> cores;
  for (int s : order) {
    for (int c = 0; c < map.cores(node) && static_cast<int>(cores.size()) < want; ++c) {
      if (map.socket_of(node, c) == s && map.owner(node, c) == 0) cores.push_back(c);
    }
    if (static_cast<int>(cores.size()) == want) break;
  }
  std::sort(cores.begin(), cores.end());
  return cores;
}

// How many sockets `want` cores of the node take when packed.
int sockets_needed(const CoreMap& map, NodeIndex node, int want) {
  std::vector<int> free = map.free_per_socket(node);
  std::sort(free.rbegin(), free.rend());
  int n = 0;
  for (int f : free) {
    if (want <= 0) break;
    want -= f;
    ++n;
  }
  return n;
}

}  // namespace

std::optional<CoreSet> place_cores(const CoreMap& map, int count,
                                   const std::vector<NodeIndex>& candidates) {
  if (count < 1) return std::nullopt;
  int total = 0;
  for (NodeIndex n : candidates) total += map.free_count(n);
  if (total < count) return std::nullopt;
  // One node, when one fits.
  std::optional<NodeIndex> best;
  int best_sockets = 0;
  for (NodeIndex n : candidates) {
    const int free = map.free_count(n);
    if (free < count) continue;
    const int sockets = sockets_needed(map, n, count);
    if (!best || sockets < best_sockets ||
        (sockets == best_sockets && free < map.free_count(*best))) {
      best = n;
      best_sockets = sockets;
    }
  }
  if (best) return CoreSet{NodeCores{*best, pick_on_node(map, *best, count)}};
  // The fewest nodes: the emptiest first.
  std::vector<NodeIndex> order = candidates;
  std::stable_sort(order.begin(), order.end(),
                   [&](NodeIndex a, NodeIndex b) { return map.free_count(a) > map.free_count(b); });
  CoreSet set;
  int left = count;
  for (NodeIndex n : order) {
    if (left == 0) break;
    const int take = std::min(left, map.free_count(n));
    if (take == 0) continue;
    set.push_back(NodeCores{n, pick_on_node(map, n, take)});
    left -= take;
  }
  return set;
}

}  // namespace sched
