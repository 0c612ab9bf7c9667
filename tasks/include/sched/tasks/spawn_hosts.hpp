// Where MPI_Comm_spawn's children go (issue 16 item 2): Open MPI passes the
// "host" info key as text (PMIX_HOST / PMIX_ADD_HOST), one name per child
// ("n3,n3,n4,n4"), names with counts ("n3:2,n4:2"), or a set of names to
// spread the children over ("n3,n4" for 4 children). schedd turns it into
// a step's layout: its nodes and a distribution, as every step has.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/tasks/task_layout.hpp"

namespace sched::tasks {

struct SpawnLayout {
  std::vector<std::string> nodes;  // in the order of their first child
  Distribution distribution = Distribution::Block;
};

// The node of each of `children` children from the host text. Throws
// std::invalid_argument with the reason: an empty name, a count that is not
// a number from 1 up, a list that names more or fewer children than asked
// (a list of distinct names without counts is spread over instead: block).
std::vector<std::string> spawn_hosts(std::string_view text, int children);

// The layout that puts child i on per_child[i]: its nodes, and block or
// cyclic, whichever tasks::place_tasks gives exactly that; nullopt when
// neither does (e.g. 3 children on one node and 1 on another).
std::optional<SpawnLayout> spawn_layout(const std::vector<std::string>& per_child);

}  // namespace sched::tasks
