// schedd's log line for each event (docs/admin.md "Logs"): every job state
// change, adaptation step, node state change, policy error and auth refusal
// is logged once, here, as the event flows through schedd's event sink, in a
// stable key=value format that tools may parse:
//   event=job.failed seq=42 job=7 user=alice name=sim from=RUNNING to=FAILED
//   nodes=2 exit=1 reason="out of memory"
// Keys in that order; a key without a value for the event is left out;
// values with spaces, quotes or '=' are in double quotes (\" and \\ inside).
#pragma once

#include <spdlog/common.h>

#include <string>
#include <string_view>

#include "sched/event.hpp"
#include "sched/job.hpp"

namespace sched::daemon {

// `job`: the event's job when it has one and the engine knows it (name,
// user, exit status, end reason).
std::string event_log_line(const Event& event, const Job* job);

// info for job and node state changes; warn for failures, timeouts, nodes
// down, reverts and auth refusals; error for policy errors; debug for
// scheduling passes and reservations (one a pass).
spdlog::level::level_enum event_log_level(const Event& event);

// A value as the format writes it: bare, or quoted when it must be.
std::string log_value(std::string_view value);

}  // namespace sched::daemon
