#include "sched/priority.hpp"

#include <algorithm>
#include <cmath>

namespace sched {

WeightedFactors weigh(const PriorityFactors& factors, const PriorityWeights& weights) {
  return {std::llround(weights.age * factors.age),
          std::llround(weights.fairshare * factors.fairshare),
          std::llround(weights.jobsize * factors.jobsize), std::llround(weights.qos * factors.qos)};
}

std::int64_t job_priority(const PriorityFactors& factors, const PriorityWeights& weights,
                          std::int64_t nice) {
  const WeightedFactors w = weigh(factors, weights);
  return w.age + w.fairshare + w.jobsize + w.qos - nice;
}

double age_factor(double age_s, double max_age_s) {
  if (max_age_s <= 0) return 1;
  return std::clamp(age_s / max_age_s, 0.0, 1.0);
}

double jobsize_factor(int nodes, int cluster_nodes) {
  if (cluster_nodes <= 0) return 0;
  return std::clamp(static_cast<double>(nodes) / cluster_nodes, 0.0, 1.0);
}

double qos_factor(const PriorityConfig& config, const std::string& qos) {
  std::int64_t highest = 0;
  for (const auto& [name, priority] : config.qos) highest = std::max(highest, priority);
  const auto it = config.qos.find(qos);
  if (highest <= 0 || it == config.qos.end()) return 0;
  return std::clamp(static_cast<double>(it->second) / static_cast<double>(highest), 0.0, 1.0);
}

}  // namespace sched
