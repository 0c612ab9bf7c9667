// `nodeagent --check-config` (docs/admin.md): what would stop the agent
// from starting with these options, found without connecting or starting
// anything. CLI11 has already refused unknown keys and wrong types.
#pragma once

#include <string>
#include <vector>

#include "agent.hpp"

namespace sched::agent {

// One problem a line, "SOURCE: key: what is wrong" (key as in the config
// file, the long option without its dashes); empty when usable.
std::vector<std::string> check_options(const AgentOptions& options, const std::string& source);

}  // namespace sched::agent
