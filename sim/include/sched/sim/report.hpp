// Writing a run's results: the per-job CSV, the metrics JSON, and the one-line
// summary printed at the end of a simulation.
#pragma once

#include <string>
#include <vector>

#include "sched/sim/metrics.hpp"

namespace sched::sim {

// Seconds as a report shows them: integral values without a decimal point
// ("5094"), others rounded to 6 decimals with trailing zeros dropped
// ("12.5"), so times read from a trace come out as they went in.
std::string format_seconds(double seconds);

// Header "id,submit,start,end,nodes,kind,state,resizes", then one row per
// record in the given order. A start or end of -1 (never happened) is left
// empty; kind and state use their usual names ("rigid", "COMPLETED"); nodes
// is the size at start, resizes the number of completed adaptations.
// Throws std::runtime_error naming the path when it cannot be written.
void write_jobs_csv(const std::string& path, const std::vector<JobRecord>& jobs);

// Header "job,time,from,to", then one row per allocation change in the given
// order. Throws std::runtime_error naming the path when it cannot be written.
void write_resizes_csv(const std::string& path, const std::vector<ResizeRecord>& resizes);

// A pretty-printed JSON object with the keys jobs, skipped, nodes, makespan,
// avg_wait, avg_response, avg_bsld, utilization, violations, energy_j, in
// that order.
// Throws std::runtime_error naming the path when it cannot be written.
void write_metrics_json(const std::string& path, const Metrics& metrics);

// One line for people, e.g. "easy: 230 jobs (0 skipped) on 32 nodes,
// makespan 7560 s, avg wait 1234.5 s, avg response 1800 s, avg bsld 3.42,
// utilization 81.3%". No trailing newline.
std::string format_summary(const std::string& policy, const Metrics& metrics);

}  // namespace sched::sim
