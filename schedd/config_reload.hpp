// SIGHUP (docs/admin.md "Reloading the config"): schedd reads its config
// again and takes what it can take live; the rest waits for a restart, and
// the log says which keys.
#pragma once

#include <string>
#include <vector>

#include "daemon_config.hpp"

namespace sched::daemon {

// Copies into `running` the keys of `fresh` that schedd reads at each use —
// [log], the tick and policy check periods, [limits], [auth] admins,
// [jobs] allow_root_jobs, server.max_page_items, nodes.fence_timeout_s — and
// returns them as "section.key" when they changed. `restart` gets the keys
// that changed but are only read at start (endpoints, state, the policy and
// its parameters, [priority], node timing, power, ...).
std::vector<std::string> apply_live_config(DaemonConfig& running, const DaemonConfig& fresh,
                                           std::vector<std::string>& restart);

}  // namespace sched::daemon
