// Names the node agent's headers share.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sched::agent {

using JobId = std::int64_t;   // the engine's job id (sched::JobId)
using TaskId = std::int64_t;  // one launch of the ProcessTable (processes.hpp)
// An environment as ordered NAME, value pairs.
using EnvPairs = std::vector<std::pair<std::string, std::string>>;

}  // namespace sched::agent
