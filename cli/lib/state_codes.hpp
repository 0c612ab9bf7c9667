// The short state names of squeue and sinfo.
#pragma once

#include <optional>
#include <string_view>

#include "sched/job.hpp"

namespace sched::cli {

// squeue's ST column: PENDING PD, STARTING CF (Slurm's CONFIGURING),
// RUNNING R, ADAPTING AD (ours), COMPLETING CG, COMPLETED CD, FAILED F,
// CANCELLED CA, TIMEOUT TO, SUSPENDED S.
std::string_view state_code(JobState state);

// A state as a user names it in a filter (squeue -t): the code ("PD") or the
// full name ("PENDING"), in any case.
std::optional<JobState> parse_state_filter(std::string_view text);

// A node's state as sinfo prints it.
enum class NodeState { Idle, Mixed, Allocated, Draining, Drained, Down };

// idle, mix, alloc, drng (draining, jobs still on it), drain, down.
std::string_view to_sinfo(NodeState state);

// Down wins over drain, drain over use; a node is mixed when some but not
// all of its CPUs are allocated.
NodeState classify_node(bool up, bool draining, int cpus_allocated, int cpus);

}  // namespace sched::cli
