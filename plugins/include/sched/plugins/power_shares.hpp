// The power model (docs/design.md §7) and the split of a node's power over its jobs,
// shared by the meters.
//
// A node draws idle_w when it runs no job and a job's per-node watts when it
// runs that job. Only the excess over idle_w is the job's own, so with several
// jobs on one node (which the engine does not do today) the node draws
// idle_w + Σ max(0, estimate − idle_w): idle power counts once. A job without
// an estimate (0), or one below idle_w, adds nothing.
#pragma once

#include <vector>

#include "sched/plugins/power_meter.hpp"

namespace sched::plugins {

// The node's modelled watts.
double model_node_watts(const PowerContext& ctx, double idle_w);

// node_w split over ctx.jobs (same order): each job weighs its excess over
// idle_w plus an equal part of idle_w, so one job gets all of node_w and the
// model's own node_w splits into each job's modelled part. Empty without jobs.
std::vector<JobWatts> split_over_jobs(double node_w, const PowerContext& ctx, double idle_w);

}  // namespace sched::plugins
