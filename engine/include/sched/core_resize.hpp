// Growing and shrinking a job of an invasive partition by cores (issue 20
// item 2; docs/design.md §3 "Invasive partitions"): which free cores an
// expansion takes, near the job's own, and which of its cores a shrink gives
// back, whole nodes and sockets first. Pure functions over a CoreMap, shared
// by the pass's checks and the simulator.
#pragma once

#include <vector>

#include "sched/core_map.hpp"

namespace sched {

// `count` free cores of `map` for a job that holds `held` (its leader node
// first), nearest first: free cores of the sockets where it already has
// cores (on its nodes in order; on each, the socket with most of its cores
// first), then the other sockets of its nodes, then other nodes of
// `candidates`, packed as place_cores packs a start. Lowest ids first within
// a socket. Nothing when there are fewer free cores than `count`; a node of
// `held` that is not among `candidates` (down, draining) gets none.
std::optional<CoreSet> grow_cores(const CoreMap& map, const CoreSet& held, int count,
                                  const std::vector<NodeIndex>& candidates);

// `count` of the cores in `held` (its leader node first) to give back,
// leaving the leader node at least one: whole nodes other than the leader
// first (the ones with fewest of its cores first, later nodes first among
// equals), then whole sockets (fewest of its cores first), then single
// cores, highest ids first, other nodes before the leader. Nothing when
// `count` is not in [1, its cores - 1].
std::optional<CoreSet> shrink_cores(const CoreMap& map, const CoreSet& held, int count);

// Set arithmetic on core sets, node by node (entries keep `into`'s order;
// new nodes are appended; ids sorted; nodes left with no core dropped).
void add_cores(CoreSet& into, const CoreSet& more);
void remove_cores(CoreSet& from, const CoreSet& less);

}  // namespace sched
