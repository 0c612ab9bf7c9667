#include "sched/sim/power_workload.hpp"

#include <random>
#include <string>

namespace sched::sim {
namespace {

constexpr int kNodes = 14;
constexpr int kJobs = 20;
constexpr double kInterarrivalS = 2;
constexpr double kPiWatts = 170;
constexpr double kHeatWatts = 250;

TimedEvent corridor(double time, double lower, double upper) {
  TimedEvent event;
  event.type = TimedEvent::Type::Corridor;
  event.time = time;
  event.lower_w = lower;
  event.upper_w = upper;
  return event;
}

}  // namespace

Workload make_power_experiment(const PowerExperimentOptions& options) {
  Workload workload;
  workload.source = "power";
  workload.nodes = kNodes;
  std::mt19937_64 engine(options.seed);
  for (int i = 0; i < kJobs; ++i) {
    const bool pi = i % 2 == 0;
    WorkloadJob job;
    job.id = i + 1;
    job.submit = i * kInterarrivalS;
    job.runtime = pi ? options.pi_runtime_s : options.heat_runtime_s;
    JobSpec& spec = job.spec;
    spec.name = pi ? "pi" : "heat";
    spec.nodes = 1 + static_cast<int>(engine() % 4);
    spec.kind = JobKind::Malleable;
    spec.min_nodes = 1;
    spec.max_nodes = kNodes;
    spec.power_min_w = spec.power_max_w = pi ? kPiWatts : kHeatWatts;
    spec.walltime = job.runtime;  // exact estimates, as for ESP
    // Monte-Carlo Pi scales almost perfectly; a Jacobi heat solver exchanges
    // halos every iteration.
    job.model.speedup.serial_fraction = pi ? 0.001 : 0.02;
    normalize_spec(spec);
    workload.jobs.push_back(std::move(job));
  }
  workload.events.push_back(corridor(0, 1700, 2500));
  workload.events.push_back(corridor(options.first_change_s, 1000, 1700));
  workload.events.push_back(corridor(options.second_change_s, 2500, 3500));
  return workload;
}

}  // namespace sched::sim
