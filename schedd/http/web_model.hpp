// What the web view draws (GET /api/state, docs/admin.md "Web view"), kept
// on the daemon thread from the engine's events: each job's size over time
// (its start and every resize, for the Gantt chart), the jobs that ended
// recently, and a power history for the corridor chart.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sched/engine.hpp"
#include "sched/event.hpp"

namespace sched::daemon::http {

class WebModel {
 public:
  // Ended jobs the Gantt chart keeps; queue entries and power samples sent.
  static constexpr std::size_t kRecentJobs = 40;
  static constexpr std::size_t kQueueShown = 200;
  static constexpr std::size_t kPowerSamples = 600;
  static constexpr double kPowerEveryS = 2;

  // `job`: the event's job when the engine knows it.
  void on_event(const Event& event, const Job* job);
  // The event as the page's stream carries it (one JSON object).
  static std::string event_json(const Event& event, const Job* job);
  // Takes a power sample when kPowerEveryS has passed since the last.
  void sample_power(const Engine& engine, double now);
  std::string state_json(const Engine& engine, std::uint64_t submitted, double now) const;
  std::uint64_t last_seq() const { return last_seq_; }

 private:
  struct Segment {
    double time = 0;
    int nodes = 0;
  };
  struct Ended {
    JobId id = 0;
    std::string name;
    std::string user;
    std::string state;
    double start = 0;
    double end = 0;
    std::vector<Segment> segments;
  };
  struct PowerSample {
    double time, watts, lower, upper;
  };
  std::map<JobId, std::vector<Segment>> segments_;  // jobs holding nodes
  std::deque<Ended> recent_;
  std::deque<PowerSample> power_;
  std::uint64_t last_seq_ = 0;
};

}  // namespace sched::daemon::http
