// Which nodes a shrink gives back (issue 17 item 4). A policy may name them
// (ctx:shrink(job, n, {nodes = ...})); otherwise the engine picks them: down
// nodes first, then draining ones (they are leaving the cluster anyway),
// then the newest (the tail of the allocation). The leader never leaves.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/cluster.hpp"
#include "sched/job.hpp"

namespace sched {

// `count` nodes of `job` to give back, in the engine's order, skipping the
// leader and the nodes in `leaving` (already leaving in this pass). Fewer
// when the job has fewer.
std::vector<NodeIndex> default_shrink_nodes(const Cluster& cluster, const Job& job, int count,
                                            const std::vector<NodeIndex>& leaving = {});

// Checks a policy's choice of `count` nodes for a shrink of `job`: each one
// the job's, not the leader, not already in `leaving`, none twice. An error
// for people, or nothing.
std::optional<std::string> check_shrink_nodes(const Cluster& cluster, const Job& job,
                                              const std::vector<NodeIndex>& nodes, int count,
                                              const std::vector<NodeIndex>& leaving = {});

// A drain of nodes under a malleable job: the job's nodes that are draining
// or down, other than the leader (which never leaves).
std::vector<NodeIndex> drained_nodes_of(const Cluster& cluster, const Job& job);

// The size a malleable job of size `size` shrinks to so that `off` of its
// nodes leave: the largest size its constraint and min_nodes allow that is
// at most size − off. Nothing when there is none.
std::optional<int> drain_shrink_size(const Job& job, int size, int off);

}  // namespace sched
