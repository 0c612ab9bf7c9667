// The pictures `sched sim --out DIR` writes beside its CSV files
// (docs/simulator.md): a Gantt chart of the jobs, utilisation and queue
// length over time, and cluster power with the corridor when power was
// modelled. Drawn after the run from its result alone (jobs, resizes,
// power samples), so the simulation itself pays nothing for them.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "sched/sim/metrics.hpp"
#include "sched/sim/simulator.hpp"

namespace sched::sim {

struct PictureOptions {
  // The Gantt chart draws at most this many jobs (the first started), so
  // that a 100,000-job trace still gives a file a browser opens.
  std::size_t max_gantt_jobs = 2000;
};

// A step function over time: from each point's time on (until the next
// point) the value holds. Times ascend; one point per time.
using StepSeries = std::vector<std::pair<double, double>>;

// Jobs waiting (submitted, not started) over time, from the first submit to
// end_time. A job that never started waits until it ended, or to the end.
StepSeries queue_length_series(const std::vector<JobRecord> &jobs, double end_time);

// Nodes allocated to jobs over time, from the first submit to end_time: a
// job holds its start size from its start, each resize's new size from the
// resize's time, and nothing from its end (end_time if it never ended).
StepSeries busy_nodes_series(const std::vector<JobRecord> &jobs,
                             const std::vector<ResizeRecord> &resizes, double end_time);

// A job's node count at start: JobRecord::start_nodes when the simulator
// recorded it; else (records made by hand) the `from` of its first resize,
// else its node time over its run, else its requested size.
int start_nodes(const JobRecord &job, const ResizeRecord *first_resize);

// Whether the run's power is worth a picture: a corridor was set or the
// power changed (every node draws idle power, so a trace without power
// estimates gives one flat line).
bool power_modelled(const std::vector<PowerSample> &power);

// Writes gantt.svg, utilisation.svg, queue.svg and, when power was
// modelled, power.svg into `dir` (which must exist); returns the paths
// written. Throws std::runtime_error naming the path on a write error.
std::vector<std::string> write_pictures(const std::string &dir, const SimResult &result,
                                        const PictureOptions &options = {});

}  // namespace sched::sim
