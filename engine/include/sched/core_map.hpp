// Core-level allocation in an invasive partition (issue 20 item 2;
// docs/design.md §3 "Invasive partitions"): which cores of the partition's
// nodes are busy, and by whom, and where a job asking for N cores goes.
// Core ids are the node's hwloc logical core indexes (0 .. cores-1); a
// node's cores are split evenly and in order over its sockets, as hwloc
// numbers them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/job.hpp"

namespace sched {

// NodeCores and CoreSet are in sched/job.hpp (a Job holds one).
int core_count(const CoreSet& set);

class CoreMap {
 public:
  // Starts tracking a node of `cores` cores over `sockets` sockets (at
  // least 1 each; sockets above cores count as cores), all free. Tracking a
  // node again with another shape keeps its busy cores when they still
  // exist (an agent that re-registers).
  void track(NodeIndex node, int cores, int sockets);
  bool tracked(NodeIndex node) const;
  int cores(NodeIndex node) const;    // 0 when not tracked
  int sockets(NodeIndex node) const;  // 0 when not tracked
  int socket_of(NodeIndex node, int core) const;
  int free_count(NodeIndex node) const;
  // Free cores per socket, socket 0 first.
  std::vector<int> free_per_socket(NodeIndex node) const;
  // The job holding a core, 0 when free.
  JobId owner(NodeIndex node, int core) const;
  // The jobs holding cores of the node, ascending, each once.
  std::vector<JobId> holders(NodeIndex node) const;

  // Why `set` cannot be taken now: an untracked node, a core id out of
  // range or given twice, a busy core. Nothing when it can.
  struct Conflict {
    bool busy = false;  // a core is busy (else: the set is malformed)
    std::string why;
  };
  std::optional<Conflict> check(const CoreSet& set) const;
  // Marks the set busy for `job`; throws std::logic_error when check() fails.
  void take(JobId job, const CoreSet& set);
  // Frees the cores of `set` that `job` holds (others are left alone).
  void release(JobId job, const CoreSet& set);

 private:
  struct Shape {
    int sockets = 0;
    std::vector<JobId> owner;  // per core; 0: free
    int free = 0;
  };
  const Shape* shape(NodeIndex node) const;
  std::vector<Shape> nodes_;  // by node index; sockets 0: not tracked
};

// Where `count` cores go among `candidates` (node indexes, in the order
// ties are broken by), given `map`'s busy cores. Deterministic, packing:
//   - one node when one fits: the node whose cores fit in the fewest
//     sockets, then with the fewest free cores (best fit), then the first;
//   - else the fewest nodes: nodes by most free cores first, each taken
//     whole but the last;
//   - on a node: a socket that holds them all (the one with fewest free
//     cores), else sockets by most free first, each filled before the next;
//     lowest free core ids within a socket.
// Nothing when the candidates have fewer free cores than `count`.
std::optional<CoreSet> place_cores(const CoreMap& map, int count,
                                   const std::vector<NodeIndex>& candidates);

}  // namespace sched
