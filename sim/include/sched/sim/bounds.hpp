// Lower bounds on a workload's makespan, for the experiments to set their
// results against (bench/esp, bench/power; docs/experiments.md): what no
// schedule can beat, however clever.
#pragma once

#include "sched/sim/workload.hpp"

namespace sched::sim {

// Seconds `job` runs on `nodes` nodes from start to end under its model
// (sim/app_model.hpp: every AMR phase at its factor), without adaptations.
double job_seconds_on(const WorkloadJob &job, int nodes);

// The least node-seconds the job can be done in: on the size within its
// bounds (min_nodes..max_nodes; a rigid job: its request) that costs the
// fewest node-seconds. With Amdahl speedup that is its smallest size.
double least_node_seconds(const WorkloadJob &job);

// The ideal-schedule bound under a power corridor: the makespan (from time
// 0) below which no schedule holding the corridor's upper bound can finish
// the workload. A fluid relaxation, solved as a linear program (GLPK):
// every job's work is its least node-seconds, grouped by its per-node
// power (power_max_w); between two corridor changes at most `nodes` nodes
// work and Σ (power − idle) · busy nodes ≤ upper − nodes · idle_w; work may
// be split over any number of nodes at any time (no job sizes, no
// adaptation costs, no submission times). The result is at least the
// latest submit + the job's shortest run (on max_nodes nodes). The corridor
// is the workload's Corridor events (none: unbounded). `nodes` 0: the
// workload's. Throws std::invalid_argument when no schedule can finish
// (no power for any job after the last change).
double corridor_makespan_bound(const Workload &workload, double idle_w_per_node, int nodes = 0);

}  // namespace sched::sim
