// Multifactor priority (issue 18 item 5), after Slurm's priority/multifactor
// plugin: a pending job's priority is the weighted sum of factors in [0, 1]
// (age, fair share, job size, QOS) minus its nice value. docs/design.md §3.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace sched {

// PriorityWeight{Age,FairShare,JobSize,QOS}. All 0 by default: every job's
// priority is minus its nice, and the queue keeps its order by submit time.
struct PriorityWeights {
  double age = 0;
  double fairshare = 0;
  double jobsize = 0;
  double qos = 0;
};

struct PriorityConfig {
  PriorityWeights weights;
  // PriorityMaxAge: a job's age factor is 1 from this age on (seconds).
  double max_age_s = 7 * 86400;
  // PriorityDecayHalfLife: fair-share usage halves in this time; 0: never decays.
  double decay_half_life_s = 7 * 86400;
  // PriorityCalcPeriod: how often (seconds, on the engine's clock, checked
  // at each tick) age and fair share are recomputed and the queue re-sorted.
  double calc_period_s = 300;
  // QOS name → its priority; "normal" always exists (0).
  std::map<std::string, std::int64_t> qos = {{"normal", 0}};
  // User → fair-share shares; users not named have 1 each.
  std::map<std::string, double> shares;

  // Whether priorities change while jobs wait (age or fair share weighted):
  // only then is there anything to recompute at a calc period.
  bool time_varying() const { return weights.age != 0 || weights.fairshare != 0; }
};

// One job's factors, each in [0, 1], unweighted.
struct PriorityFactors {
  double age = 0;
  double fairshare = 0;
  double jobsize = 0;
  double qos = 0;
};

// The weighted factors of a job as sprio shows them (rounded like Slurm's
// integer priorities).
struct WeightedFactors {
  std::int64_t age = 0;
  std::int64_t fairshare = 0;
  std::int64_t jobsize = 0;
  std::int64_t qos = 0;
};
WeightedFactors weigh(const PriorityFactors& factors, const PriorityWeights& weights);

// Sum of the weighted factors minus nice.
std::int64_t job_priority(const PriorityFactors& factors, const PriorityWeights& weights,
                          std::int64_t nice);

// Age factor: min(age, max_age) / max_age (1 when max_age is 0).
double age_factor(double age_s, double max_age_s);
// Job-size factor: requested nodes / cluster nodes, at most 1 (Slurm
// without PriorityFavorSmall: larger jobs first).
double jobsize_factor(int nodes, int cluster_nodes);
// QOS factor: its priority / the highest QOS priority (0 when none is above 0).
double qos_factor(const PriorityConfig& config, const std::string& qos);

}  // namespace sched
