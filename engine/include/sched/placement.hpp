// Where a job may run (issue 18 item 4): the nodes it names (-w/--nodelist),
// the nodes it refuses (-x/--exclude) and the GPUs it needs on each node
// (--gres=gpu:N). A job without any of these runs on any nodes, counted
// only, as before; a placed job gets its nodes picked when a pass starts it
// (PassContext::start), from the nodes idle then.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/cluster.hpp"
#include "sched/job.hpp"

namespace sched {

bool has_placement(const JobSpec& spec);

// Whether `node` is one the job may have (not excluded, GPUs enough).
bool may_use(const JobSpec& spec, const Node& node);

// A placement the cluster can never meet, for people ("no node n9", "no
// node has 2 GPUs", ...), or nothing. Submissions are checked with it.
std::optional<std::string> check_placement(const JobSpec& spec, const Cluster& cluster);

// The nodes a job of `size` nodes would get now: the ones it names, then the
// lowest-index others it may use; all idle and not `taken` (by jobs placed
// earlier in the same pass). Nothing when there are not enough.
std::optional<std::vector<NodeIndex>> place(const JobSpec& spec, int size, const Cluster& cluster,
                                            const std::vector<bool>& taken);

}  // namespace sched
