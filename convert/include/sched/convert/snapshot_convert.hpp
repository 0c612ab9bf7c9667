// policy.snapshot's body (docs/protocol.md §4) to and from the engine's
// LiveSnapshot: schedd sends what its engine holds, `sched policy try`
// turns it back into jobs and nodes for its twin (sim/twin.hpp).
#pragma once

#include <optional>
#include <string>

#include "sched/live_snapshot.hpp"
#include "sched/proto/client_messages.hpp"

namespace sched::convert {

// Specs go without their script, environment and arguments.
proto::PolicySnapshotReply snapshot_to_wire(const LiveSnapshot& snapshot);

// An error for people naming the job whose spec is bad (`out` is then
// untouched); nothing when all is well.
std::optional<std::string> snapshot_from_wire(const proto::PolicySnapshotReply& in,
                                              LiveSnapshot& out);

}  // namespace sched::convert
