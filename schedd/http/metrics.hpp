// schedd's Prometheus metrics (docs/metrics.md). Lives on the daemon thread:
// it observes the engine's events (pass durations, adaptations, job ends)
// and renders the exposition text from the same figures `sched stats`
// answers with (handlers/cluster.cpp: the engine's PassStats, its pending
// queue and running jobs, the daemon's counters), so the two agree.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "prom_text.hpp"
#include "sched/engine.hpp"
#include "sched/event.hpp"

namespace sched::daemon::http {

// The daemon's own counters, as `sched stats` shows them.
struct DaemonFigures {
  double uptime_s = 0;
  std::uint64_t submitted = 0;
  std::uint64_t messages = 0;
  std::uint64_t bad_messages = 0;
};

class Metrics {
 public:
  Metrics();
  // `partition`: the event's job's partition label (event_wire.hpp).
  void on_event(const Event& event, const std::string& partition);
  // A nego.* event of a negotiated partition (issue 20; not an engine event).
  void on_nego_event(const std::string& partition, const std::string& topic) {
    ++nego_[{partition, topic}];
  }
  std::string render(const Engine& engine, const DaemonFigures& daemon) const;

 private:
  struct Adapting {
    std::string kind;  // "expand" or "shrink"
    double since = 0;
  };
  Histogram pass_duration_;
  std::map<std::string, Histogram> adaptation_duration_;                      // by kind
  std::map<std::pair<std::string, std::string>, std::uint64_t> adaptations_;  // (kind, result)
  // (end state, partition), since schedd started
  std::map<std::pair<std::string, std::string>, std::uint64_t> ended_;
  std::map<JobId, Adapting> adapting_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> nego_;  // (partition, topic)
};

}  // namespace sched::daemon::http
