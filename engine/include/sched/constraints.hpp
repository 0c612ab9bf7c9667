// Node-count constraints of malleable jobs (docs/design.md §3): pof2 = 1,2,4,8…;
// even = 2,4,6…; odd = 1,3,5…; ncube = 1,8,27,64…; always within
// [min_nodes, max_nodes]. Shared by the engine's checks and the Lua helper
// sched.constraints.
#pragma once

#include <optional>
#include <vector>

#include "sched/job.hpp"

namespace sched {

bool is_allowed_size(NodeConstraint constraint, int nodes);

// Allowed sizes within [lo, hi], ascending.
std::vector<int> allowed_sizes(NodeConstraint constraint, int lo, int hi);

// The largest allowed size in [lo, hi] that is at most `bound`.
std::optional<int> highest_allowed_at_most(NodeConstraint constraint, int lo, int hi, int bound);

// The smallest allowed size in [lo, hi] that is at least `bound`.
std::optional<int> lowest_allowed_at_least(NodeConstraint constraint, int lo, int hi, int bound);

// Shrinking a job of `current` nodes to free `needed` nodes: the next lower
// allowed size that covers the need (the largest allowed size ≤ current −
// needed), or, when no allowed size frees that many, the smallest allowed
// size below current (frees as much as possible). Nothing when the job
// cannot shrink at all.
std::optional<int> shrink_target(NodeConstraint constraint, int lo, int hi, int current,
                                 int needed);

}  // namespace sched
