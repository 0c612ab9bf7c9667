// Cluster power over a simulated run (docs/design.md §7, §8): the series the
// simulator samples after every instant, its violations of the power
// corridor, its energy, and power.csv.
#pragma once

#include <string>
#include <vector>

namespace sched::sim {

// From `time` on (until the next sample) the cluster draws `watts`, and the
// corridor is [lower_w, upper_w]; lower = upper = 0 means no corridor.
struct PowerSample {
  double time = 0;
  double watts = 0;
  double lower_w = 0;
  double upper_w = 0;
};

struct PowerInterval {
  double from = 0;
  double to = 0;
};

struct PowerMetrics {
  int violations = 0;   // maximal intervals outside the corridor longer than the grace period
  double energy_j = 0;  // ∫ watts dt from the first sample to the end
  std::vector<PowerInterval> violation_intervals;  // the counted ones, in time order
};

// Samples in time order; the last one holds until end_time. An interval
// outside the corridor counts once, however often the power or the corridor
// changes within it, when it lasts longer than grace_s.
PowerMetrics compute_power_metrics(const std::vector<PowerSample> &samples, double end_time,
                                   double grace_s);

// The paper's count of corridor violations (Chadha et al., Table II:
// "whether the system was able to reconfigure the resources to restore the
// power corridor"), as we read it: the scheduler checks the corridor every
// `check_every_s` seconds (Slurm's SchedulerTick: our tick), and a check is a
// failure when the power is outside the corridor and has been, without a
// break, for at least `allowed_s` seconds before it (the time a
// reconfiguration gets to restore it). A long stay outside thus fails at
// every check after the allowed time; intervals (compute_power_metrics)
// count it once. Checks are at k · check_every_s, k ≥ 1, up to end_time.
// Throws std::invalid_argument when check_every_s ≤ 0 or allowed_s < 0.
int corridor_failures(const std::vector<PowerSample> &samples, double end_time,
                      double check_every_s, double allowed_s);

// Header "time,watts,lower_w,upper_w", one row per sample. Throws
// std::runtime_error naming the path when it cannot be written.
void write_power_csv(const std::string &path, const std::vector<PowerSample> &samples);

}  // namespace sched::sim
