// The metrics of a run, with the one definition of docs/design.md §8 that the
// simulator, its reports and the benchmarks all share.
#pragma once

#include <vector>

#include "sched/job.hpp"

namespace sched::sim {

// What a run leaves behind about one job; also a row of the jobs CSV.
struct JobRecord {
  JobId id = 0;
  double submit = 0;
  double start = -1;  // -1: never started
  double end = -1;    // -1: not ended
  int nodes = 0;      // requested size
  JobKind kind = JobKind::Rigid;
  JobState state = JobState::Pending;
  double node_seconds = 0;  // Σ nodes × seconds over its allocation intervals
  int resizes = 0;          // completed expansions and shrinks
  int start_nodes = 0;      // size it started at; 0: never started
  int end_nodes = 0;        // size it ended at (still running: its size now)
};

// One change of a running job's allocation (a completed adaptation).
struct ResizeRecord {
  JobId job = 0;
  double time = 0;
  int from = 0;
  int to = 0;
};

struct Metrics {
  int jobs = 0;             // finished jobs (started and ended)
  int skipped = 0;          // workload records not simulated
  int nodes = 0;            // cluster size
  double makespan = 0;      // last end − first submit
  double avg_wait = 0;      // start − submit
  double avg_response = 0;  // end − submit
  double avg_bsld = 0;      // max(1, response / max(end − start, 10 s))
  double utilization = 0;   // Σ node_seconds / (makespan × nodes)
  int violations = 0;       // power-corridor violations (sim/power.hpp)
  double energy_j = 0;      // ∫ cluster power dt
};

// Averages are over finished jobs (start >= 0 and end >= 0); they are 0 when
// no job finished. makespan runs from the first submit of any record to the
// last end. utilization sums node_seconds over all records, so the node time
// of a job that never ended still counts; it is 0 when makespan or
// cluster_nodes is 0.
Metrics compute_metrics(const std::vector<JobRecord>& jobs, int cluster_nodes, int skipped);

}  // namespace sched::sim
