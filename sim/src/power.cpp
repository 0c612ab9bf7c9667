#include "sched/sim/power.hpp"

#include <stdexcept>
#include <vector>

#include "report_text.hpp"

namespace sched::sim {
namespace {

bool outside(const PowerSample &s) {
  const bool corridor = s.lower_w > 0 || s.upper_w > 0;
  return corridor && (s.watts < s.lower_w || s.watts > s.upper_w);
}

}  // namespace

PowerMetrics compute_power_metrics(const std::vector<PowerSample> &samples, double end_time,
                                   double grace_s) {
  PowerMetrics metrics;
  double violation_since = -1;  // start of the current interval outside, or -1
  auto close_violation = [&](double at) {
    if (violation_since >= 0 && at - violation_since > grace_s) {
      ++metrics.violations;
      metrics.violation_intervals.push_back({violation_since, at});
    }
    violation_since = -1;
  };
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const PowerSample &s = samples[i];
    const double until = i + 1 < samples.size() ? samples[i + 1].time : end_time;
    if (until > s.time) metrics.energy_j += s.watts * (until - s.time);
    if (outside(s)) {
      if (violation_since < 0) violation_since = s.time;
    } else {
      close_violation(s.time);
    }
  }
  close_violation(end_time);
  return metrics;
}

int corridor_failures(const std::vector<PowerSample> &samples, double end_time,
                      double check_every_s, double allowed_s) {
  if (!(check_every_s > 0) || !(allowed_s >= 0)) {
    throw std::invalid_argument("corridor_failures: check_every_s must be > 0, allowed_s >= 0");
  }
  int failures = 0;
  double outside_since = -1;  // start of the current stay outside, or -1
  std::size_t next = 0;       // the first sample after the last one applied
  for (double check = check_every_s; check <= end_time; check += check_every_s) {
    // Apply every sample up to the check: the power from then on is the
    // last one's.
    while (next < samples.size() && samples[next].time <= check) {
      if (!outside(samples[next])) {
        outside_since = -1;
      } else if (outside_since < 0) {
        outside_since = samples[next].time;
      }
      ++next;
    }
    failures += outside_since >= 0 && check - outside_since >= allowed_s;
  }
  return failures;
}

void write_power_csv(const std::string &path, const std::vector<PowerSample> &samples) {
  plot::TextBuffer text;
  text.reserve(samples.size() * 32 + 32);
  text += "time,watts,lower_w,upper_w\n";
  for (const PowerSample &s : samples) {
    append_seconds(text, s.time);
    text += ',';
    append_seconds(text, s.watts);
    text += ',';
    append_seconds(text, s.lower_w);
    text += ',';
    append_seconds(text, s.upper_w);
    text += '\n';
  }
  write_text_file(path, text.view());
}

}  // namespace sched::sim
