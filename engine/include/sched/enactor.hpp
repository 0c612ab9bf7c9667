// Carries out accepted decisions. The engine has already updated its own
// state (reserved nodes, moved the job to STARTING/ADAPTING/COMPLETING) when
// it calls the enactor; results come back later as engine inputs
// (job_started, job_ended, adaptation_done). The live daemon's enactor sends
// messages to node agents; the simulator's schedules events.
#pragma once

#include <vector>

#include "sched/job.hpp"

namespace sched {

struct Resize {
  enum class Op { Expand, Shrink } op = Op::Expand;
  int from = 0;
  int to = 0;
  std::vector<NodeIndex> added;    // expand: nodes that join
  std::vector<NodeIndex> removed;  // shrink: nodes that leave (never the leader)
  // A job of an invasive partition (issue 20 item 2): the cores that join
  // (expand) or leave (shrink), by node; `added`/`removed` are then the
  // nodes it gains or loses whole, and from/to its node counts. Empty for a
  // job of whole nodes.
  CoreSet cores;
  int cores_from = 0;  // its core count before, and after
  int cores_to = 0;
};

enum class StopReason { Cancel, Timeout, Preempt, NodeFailure, Failure, Requeue };

class Enactor {
 public:
  virtual ~Enactor() = default;
  // Launch the job on job.allocation. Answer: Engine::job_started or
  // Engine::job_ended (launch failure).
  virtual void start(const Job& job) = 0;
  // Grow or shrink a running job. Answer: Engine::adaptation_done.
  virtual void resize(const Job& job, const Resize& resize) = 0;
  // Kill the job's processes. Answer: Engine::job_ended.
  virtual void stop(const Job& job, StopReason reason) = 0;
  // Ask for fresh MTCT data. Answer (maybe): Engine::perf_report.
  virtual void request_perf(const Job& job) = 0;
  // Freeze the job's processes on job.allocation (SUSPENDED already; its
  // nodes are already free for others) / thaw them (RUNNING again on the
  // same nodes). No answer: a job that cannot be frozen or thawed is ended
  // through Engine::job_ended by whoever sees it go.
  virtual void suspend(const Job& job) = 0;
  virtual void resume(const Job& job) = 0;
};

}  // namespace sched
