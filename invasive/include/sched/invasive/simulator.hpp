// The negotiation simulator (issue 20 item 4): an iScheduler and an
// iHypervisor in one process over a workload of core-level jobs,
// discrete-event. At each instant the arrivals and ends are applied, then
// the two components exchange their messages — encoded and decoded as on
// the wire, and counted — until neither has anything to send; a negotiation
// takes no simulated time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/invasive/components.hpp"

namespace sched::invasive {

struct WorkloadJob {
  std::int64_t id = 0;
  int cores = 1;      // on one node
  double submit = 0;  // seconds
  double runtime = 0;
  bool urgent = false;  // through URGENT_JOB, not the queue
};

// A reproducible workload: `count` jobs, arrivals at exponential gaps of
// mean `mean_gap_s`, sizes 1 … max_cores, runtimes 60 s … max_runtime_s;
// every `urgent_every`-th job is urgent (0: none).
std::vector<WorkloadJob> generate_workload(int count, std::uint64_t seed, double mean_gap_s,
                                           int max_cores, double max_runtime_s,
                                           int urgent_every = 0);

struct SimConfig {
  Topology topology;
  // The iHypervisor's policy; empty: no negotiation (all free cores
  // offered, the iScheduler's mapping accepted as it is).
  std::string hypervisor_policy;
  std::string scheduler_policy;
  negotiation::Params params{3, 60, 0};
};

struct JobOutcome {
  std::int64_t id = 0;
  int cores = 0;
  double submit = 0;
  double start = -1;  // -1: never started
  double end = -1;
  int extra_sockets = 0;  // of its placement (0: packed)
  bool urgent = false;
  bool suspended = false;  // it was suspended for an urgent job at some time
};

struct SimResult {
  std::vector<JobOutcome> jobs;
  double mean_wait_s = 0;
  double makespan_s = 0;
  double utilisation = 0;     // core-seconds used over cores × makespan
  double split_fraction = 0;  // jobs spanning more sockets than they need
  double mean_extra_sockets = 0;
  int unfinished = 0;
  NegotiationStats hypervisor;
  SchedulerStats scheduler;
  MessageCounts messages;
  double mean_rounds() const;
  int max_rounds() const;
};

SimResult simulate(const std::vector<WorkloadJob>& workload, const SimConfig& config);

}  // namespace sched::invasive
