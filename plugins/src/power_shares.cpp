#include "sched/plugins/power_shares.hpp"

#include <algorithm>

namespace sched::plugins {
namespace {

double excess(const JobWatts& job, double idle_w) { return std::max(0.0, job.watts - idle_w); }

}  // namespace

double model_node_watts(const PowerContext& ctx, double idle_w) {
  double watts = idle_w;
  for (const JobWatts& job : ctx.jobs) watts += excess(job, idle_w);
  return watts;
}

std::vector<JobWatts> split_over_jobs(double node_w, const PowerContext& ctx, double idle_w) {
  std::vector<JobWatts> out;
  if (ctx.jobs.empty()) return out;
  const double idle_part = std::max(0.0, idle_w) / static_cast<double>(ctx.jobs.size());
  double total = 0;
  for (const JobWatts& job : ctx.jobs) total += idle_part + excess(job, idle_w);
  for (const JobWatts& job : ctx.jobs) {
    // total is 0 only when idle_w is 0 and no job has an estimate: equal parts.
    const double share = total > 0 ? (idle_part + excess(job, idle_w)) / total
                                   : 1.0 / static_cast<double>(ctx.jobs.size());
    out.push_back({job.job, node_w * share});
  }
  return out;
}

}  // namespace sched::plugins
