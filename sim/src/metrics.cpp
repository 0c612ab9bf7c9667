#include "sched/sim/metrics.hpp"

#include <algorithm>
#include <limits>

namespace sched::sim {
namespace {

// Runs shorter than this count as this long in the bounded slowdown, so
// that tiny jobs do not dominate the average.
constexpr double kBsldFloorSeconds = 10;

bool finished(const JobRecord& job) { return job.start >= 0 && job.end >= 0; }

}  // namespace

Metrics compute_metrics(const std::vector<JobRecord>& jobs, int cluster_nodes, int skipped) {
  Metrics metrics;
  metrics.skipped = skipped;
  metrics.nodes = cluster_nodes;
  if (jobs.empty()) return metrics;

  double first_submit = std::numeric_limits<double>::infinity();
  double last_end = -std::numeric_limits<double>::infinity();
  double wait = 0;
  double response = 0;
  double bsld = 0;
  double node_seconds = 0;
  for (const auto& job : jobs) {
    first_submit = std::min(first_submit, job.submit);
    node_seconds += job.node_seconds;
    if (!finished(job)) continue;
    ++metrics.jobs;
    last_end = std::max(last_end, job.end);
    wait += job.start - job.submit;
    const double job_response = job.end - job.submit;
    response += job_response;
    bsld += std::max(1.0, job_response / std::max(job.end - job.start, kBsldFloorSeconds));
  }

  if (metrics.jobs > 0) {
    metrics.avg_wait = wait / metrics.jobs;
    metrics.avg_response = response / metrics.jobs;
    metrics.avg_bsld = bsld / metrics.jobs;
    metrics.makespan = std::max(0.0, last_end - first_submit);
  }
  if (metrics.makespan > 0 && cluster_nodes > 0) {
    metrics.utilization = node_seconds / (metrics.makespan * cluster_nodes);
  }
  return metrics;
}

}  // namespace sched::sim
