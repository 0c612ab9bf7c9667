// The engine's multifactor priority (issue 18 item 5): factors at submit,
// recomputed for the whole queue once per calc period (never per pass).
#include <unordered_map>

#include "sched/engine.hpp"

namespace sched {

void Engine::compute_priority(Job& job,
                              const std::unordered_map<std::string, double>* fair_factors) {
  const PriorityConfig& config = config_.priority;
  // A factor weighted 0 adds 0 (every factor is finite, in [0, 1]): only
  // the weighted ones are computed (issue 15: all weights are 0 by default,
  // and the QOS factor walks the QOS table by name at each submission).
  const PriorityWeights& weights = config.weights;
  PriorityFactors factors;
  if (weights.age != 0) factors.age = age_factor(clock_.now() - job.submit_time, config.max_age_s);
  if (fair_factors) {
    const auto it = fair_factors->find(job.spec.user);
    factors.fairshare = it != fair_factors->end() ? it->second : 1.0;
  } else if (weights.fairshare != 0) {
    // A walk of every user's usage: only where it counts (a submission of a
    // 10,000-task array computes it per task).
    factors.fairshare = fair_share_.factor(job.spec.user, clock_.now());
  }
  if (weights.jobsize != 0) factors.jobsize = jobsize_factor(job.spec.nodes, cluster_.size());
  if (weights.qos != 0) factors.qos = qos_factor(config, job.spec.qos);
  job.weighted = weigh(factors, weights);
  // job_priority(factors, weights, nice), from the factors weighed once.
  const WeightedFactors& w = job.weighted;
  job.priority = w.age + w.fairshare + w.jobsize + w.qos - job.spec.nice;
}

void Engine::recompute_priorities(bool force) {
  const double now = clock_.now();
  if (!force) {
    // Without age or fair share weighted a job's priority never changes
    // after submit: nothing to do, whatever the period.
    if (!config_.priority.time_varying() || now < next_priority_calc_) return;
  }
  next_priority_calc_ = now + config_.priority.calc_period_s;
  const auto fair_factors = fair_share_.factors(now);
  bool changed = false;
  auto walk = pending_.listing();
  while (const Job* queued = walk.next()) {
    Job& job = *job_mut(queued->id);
    const std::int64_t before = job.priority;
    compute_priority(job, &fair_factors);
    if (job.priority != before) {
      touch(job);
      changed = true;
    }
  }
  if (!changed) return;
  pending_.rekey();
  ++state_version_;
  request_pass(PassReason::Tick);
}

void Engine::record_usage(const std::string& user, const std::string& account, double node_seconds,
                          double end_time) {
  fair_share_.charge(user, account, node_seconds, end_time);
}

}  // namespace sched
