// A twin of the live system (issue 22 item 3, `sched policy try`): the
// simulator started from a LiveSnapshot instead of an empty cluster, run to
// a horizon with a given policy, on the same engine and Lua host as schedd
// (docs/design.md §7, docs/admin.md "Trying a policy on a twin").
//
// It runs on the snapshot's clock, from its `now` to now + horizon.
// What the twin assumes, since the live system does not know the future:
//   - a running job ends at its limit (start + time limit + the extension
//     adaptations gave it) as the engine has it, and runs at its size now;
//     one without a limit runs past the horizon;
//   - a waiting or arriving job runs for its whole time limit (its user's
//     estimate); without one, past the horizon;
//   - future arrivals replay the window's submissions shifted forward by the
//     window's length, again and again, until the horizon: a job submitted
//     at now - d arrives at now + W - d, now + 2W - d, ... (W the window).
//     They arrive without their dependency, --begin, hold and array;
//   - a dependency on a job the twin does not hold counts as met (that job
//     has ended: the engine held it, so it was submitted);
//   - priorities use the engine's default configuration (no weights): the
//     queue keeps its order by submit time.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sched/live_snapshot.hpp"
#include "sched/policy.hpp"
#include "sched/sim/simulator.hpp"

namespace sched::sim {

struct TwinOptions {
  double horizon_s = 7200;
  double tick_s = 60;  // as SimConfig::tick_s
};

// What a twin run shows of one policy, over [now, now + horizon]. Waits
// count the jobs that were waiting at the snapshot or arrived since, those
// that have not started by the horizon with their wait so far.
struct TwinMetrics {
  int waited = 0;  // jobs whose waits count
  double mean_wait_s = 0;
  double max_wait_s = 0;
  int finished = 0;            // jobs that ended within the horizon
  double mean_response_s = 0;  // end − submit over those
  double utilization = 0;      // node-seconds used / (usable nodes × horizon)
  int resizes = 0;
  int violations = 0;     // power-corridor violations
  int started = 0;        // jobs the twin started
  int still_waiting = 0;  // at the horizon
  int arrivals = 0;       // replayed arrivals
  int policy_errors = 0;
  std::string first_policy_error;
};

struct TwinResult {
  std::string policy;
  double now = 0;  // the snapshot's time
  double horizon_s = 0;
  TwinMetrics metrics;
  // The snapshot's waiting jobs: when the twin starts each (on the
  // snapshot's clock; absent when not within the horizon).
  std::map<JobId, double> predicted_start;
  SimResult sim;  // on the snapshot's clock
};

// The twin's workload from a snapshot (its jobs' runtimes as above, the
// running and waiting ones marked restored); `horizon_s` bounds the arrivals.
Workload twin_workload(const LiveSnapshot& snapshot, double horizon_s);

// Runs `policy` on a twin of `snapshot`. The policy must be fresh (not
// installed in another engine).
TwinResult run_twin(const LiveSnapshot& snapshot, std::shared_ptr<Policy> policy,
                    const TwinOptions& options);

// Writes the snapshot's policy files under `dir` (the policy file there,
// its lib modules in dir/lib) and returns the policy file's path, so that
// the very code schedd runs loads here with lib_dir = dir/lib. Throws
// std::runtime_error when the snapshot has no files or a name leaves `dir`.
std::string write_snapshot_policy(const LiveSnapshot& snapshot, const std::string& dir);

}  // namespace sched::sim
