// `schedd --check-config` (docs/admin.md): what would stop a config from
// working, found without starting anything — the policy (found, and it
// loads), the files the config names, the state folder's place. load_config
// has already refused unknown keys and wrong types.
#pragma once

#include <string>
#include <vector>

#include "daemon_config.hpp"

namespace sched::daemon {

// One problem a line, "FILE: KEY: what is wrong" (FILE is `source`, the
// config file or "built-in defaults"); empty when the config is usable.
// `config` has been through complete_config.
std::vector<std::string> check_config(const DaemonConfig& config, const std::string& source);

}  // namespace sched::daemon
