// The live state for `sched policy try` (policy.snapshot, docs/protocol.md
// §4): the engine's nodes, held and waiting jobs, the submissions of a recent
// window (the arrival pattern a twin replays), the corridor and the running
// policy with its files' text.
#pragma once

#include "sched/engine.hpp"
#include "sched/live_snapshot.hpp"
#include "sched/policy_host.hpp"

namespace sched::daemon {

// The window's arrivals are the jobs the engine holds (every job since
// schedd started; the journal's older ones are not read) submitted in
// [now - window_s, now], by submit time.
LiveSnapshot live_snapshot(const Engine& engine, const PolicyHost& policy, double window_s);

}  // namespace sched::daemon
