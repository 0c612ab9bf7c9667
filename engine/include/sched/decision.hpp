// What a policy asks for in a pass (actions) and why the engine says no (refusals: data the
// simulator and `sched stats` count per code, with want/have). Not a Status (sched/status.hpp):
// that answers a driver's input; a refusal answers one action of a pass, and the pass goes on.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sched/job.hpp"

namespace sched {

enum class PreemptMode { Requeue, Cancel };

struct Action {
  enum class Type { Start, Expand, Shrink, RequestPerf, Preempt, Reserve, Suspend, Resume };
  Type type = Type::Start;
  JobId job = 0;
  int nodes = 0;    // Start: size; Expand/Shrink: target size
  double time = 0;  // Reserve: expected start
  PreemptMode mode = PreemptMode::Requeue;
  // Start of a placed job (sched/placement.hpp): the nodes it gets, picked
  // when the start was checked; empty: any `nodes` nodes. Resume: the
  // job's own nodes (enacted with the placed starts, before the others).
  std::vector<NodeIndex> placement{};
  // Shrink: the nodes that leave, picked when the shrink was checked (the
  // policy's {nodes = ...}, or sched/shrink_choice.hpp's default); never the
  // leader.
  std::vector<NodeIndex> leaving{};
  // Start of a job of an invasive partition (issue 20 item 2): its cores,
  // picked or checked when the start was; `nodes` is then how many of the
  // partition's nodes it fills up (no free core left). Expand/Shrink of
  // such a job: `nodes` is its target size in cores, and these the cores
  // that join (taken when the expand was checked) or leave (freed once the
  // shrink is done).
  CoreSet cores{};
};

enum class RefusalCode {
  UnknownJob,      // no such job
  NotPending,      // start/reserve of a job that is not waiting
  NotRunning,      // resize/perf/preempt of a job that is not running
  OverAllocation,  // more nodes than the pass has idle
  BelowMin,        // size under the job's min_nodes
  AboveMax,        // size over the job's max_nodes
  Constraint,      // size breaks the job's node constraint
  Adapting,        // the job is in the middle of an adaptation
  MixedResize,     // expand and shrink of one job in one pass
  LeaderNode,      // the change would remove the job's leader node
  RigidJob,        // resize (or other size) of a job that cannot change size
  NotLarger,       // expand to a size not above the current one
  NotSmaller,      // shrink to a size not below the current one
  AlreadyActed,    // the job was already started or preempted in this pass
  NotRequested,    // resize of an evolving job beyond (or against) its own request
  ResizeHeld,      // a resize of a job whose last adaptation was rolled back, too soon
  Placement,       // a placed job's nodes (-w, -x, --gres), or a resumed job's, are not idle
  NotSuspended,    // resume of a job that is not suspended
  BadArgument,     // malformed call
  Partition,       // the job is another partition's (issue 20: a pass acts on its own jobs)
  CoreBusy,        // a core named for a job of an invasive partition is busy (issue 20 item 2)
  Cores,           // an invasive partition has fewer free cores than the job needs
};

std::string_view to_string(RefusalCode code);
// "start", "expand", "shrink", "request_perf", "preempt", "reserve", "suspend",
// "resume": as ctx names them.
std::string_view to_string(Action::Type type);
inline constexpr int kRefusalCodeCount = static_cast<int>(RefusalCode::Cores) + 1;

struct Refusal {
  RefusalCode code = RefusalCode::BadArgument;
  JobId job = 0;
  int want = 0;  // what was asked (nodes), when it applies
  int have = 0;  // what there is (idle nodes, a bound), when it applies
  std::string detail;

  // For people: "over_allocation: job 7 wants 8 nodes, 6 idle".
  std::string message() const;
};

// The engine's answer to one action: nothing means accepted.
using Verdict = std::optional<Refusal>;

}  // namespace sched
