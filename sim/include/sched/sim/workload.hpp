// A workload for the simulator: the jobs to submit, when, and how long each
// runs, plus timed events (docs/design.md §7). Readers for SWF, ESP and the native
// TOML format all produce this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sched/job.hpp"
#include "sched/sim/app_model.hpp"

namespace sched::sim {

struct WorkloadJob {
  JobId id = 0;        // the workload's own job number, kept in reports
  double submit = 0;   // seconds
  double runtime = 0;  // seconds the job runs at its requested size
  JobSpec spec;        // spec.walltime is the user's estimate
  AppModel model;      // how it runs on other sizes (malleable and evolving jobs)
  // Put in the engine before the run (a twin's running and waiting jobs,
  // sim/twin.hpp), not submitted by the simulator.
  bool restored = false;
};

struct TimedEvent {
  // NodeDrain: an administrator's drain (a malleable job on it is shrunk off
  // it when its constraints allow); NodeResume lifts it.
  enum class Type { Corridor, NodeDown, NodeUp, NodeDrain, NodeResume };
  double time = 0;
  Type type = Type::Corridor;
  double lower_w = 0;  // Corridor
  double upper_w = 0;  // Corridor
  std::string node;    // NodeDown, NodeUp, NodeDrain, NodeResume: node name
};

struct Workload {
  std::string source;      // file name or "esp"
  int nodes = 0;           // cluster size the workload was made for (0: unknown)
  int cores_per_node = 1;  // how SWF processor counts became nodes
  // Issue 20 item 2: the native reader's [cluster] kind = "cores": the
  // simulated nodes (cores_per_node cores over sockets_per_node sockets) are
  // one invasive partition, and jobs ask for cores ([[job]] cores).
  bool cores_partition = false;
  int sockets_per_node = 1;
  std::vector<WorkloadJob> jobs;  // in submission order (submit, then id)
  std::vector<TimedEvent> events;
  int skipped = 0;  // records read but not simulated
};

// Where a simulator takes jobs from when the workload does not hold them
// (issue 15): job `index` is made when the simulator submits it, and
// dropped once it ended. Jobs in submission order (submit, then id).
class JobSource {
 public:
  virtual ~JobSource() = default;
  virtual std::size_t size() const = 0;
  virtual WorkloadJob make(std::size_t index) const = 0;
};

// The largest time, in seconds, a workload reader accepts for a submit, a
// run time, a limit or an event (about 31.7 years). The simulator's clock
// is a double stepped from event to event: from about 1e15 s on a job's
// seconds no longer move it and a run would never end (issue 15); below
// 1e9 s a step of a microsecond still does.
inline constexpr double kMaxWorkloadSeconds = 1e9;

// A workload that cannot be read: the message names the file and line.
class WorkloadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace sched::sim
